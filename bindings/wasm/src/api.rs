//! Pure functions of the JavaScript API (camelCase names of the reference). Each converts its
//! arguments, calls the core function named in its doc, and converts the result back.

use super::convert::{
    arg_index, arg_number, arg_opt_number, arg_opt_string, arg_string, arg_strings, bad_arg, error_js, from_option,
    from_serde, js_kind, js_text, parse_js, stringify, to_typed, to_value, to_values,
};
use super::options::to_options;
use super::reader::{Channel, JsEntries, JsRead, ListState};
use super::tokens::{compaction_options, counter_of, counter_option, on_entries, on_values, with_counts, COUNT_TOKENS};
use session_compaction::api as host;
use session_compaction::context::LeafSelector;
use session_compaction::entry::{EntryList, EntrySource, JsonRead, Shape};
use session_compaction::io::ParseOptions;
use session_compaction::plan::prepare::MessageRef;
use session_compaction::plan::prepare::{CompactionSettings, FileOpsLists};
use session_compaction::plan::prune::PruneConfig;
use session_compaction::prompt::templates::PromptTemplates;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

thread_local! {
    /// The prompt templates in force for this module instance (defaults plus overrides).
    pub(crate) static TEMPLATES: RefCell<PromptTemplates> = RefCell::new(PromptTemplates::default());
}

/// A clone of the templates in force (never held across a call into JavaScript).
pub(crate) fn templates() -> PromptTemplates {
    TEMPLATES.with(|t| t.borrow().clone())
}

/// The overloads of `convertToLlm`: the array without options, `{messages, repairs}` with
/// `{repair: true}` (SPEC §6, §13.1). Declared before the generated signature, so TypeScript
/// picks the matching one.
#[wasm_bindgen(typescript_custom_section)]
const TS_CONVERT_TO_LLM: &str = r#"
/** `convertToLlm(messages, {repair: true})`: made provider-valid first, then converted (SPEC §6, §13.1). */
export function convertToLlm(messages: AgentMessage[], options: ConvertOptions & { repair: true }): RepairedLlmMessages;
/** `convertToLlm(messages)`: agent messages → LLM messages, in order (SPEC §6). */
export function convertToLlm(messages: AgentMessage[], options?: ConvertOptions & { repair?: false }): AgentMessage[];
"#;

/// The `countTokens` overloads (SPEC §3): with an async counter, the functions that estimate
/// return a Promise. Declared before the generated signatures, so TypeScript picks them first;
/// the synchronous overload comes first (an untyped argument keeps the synchronous result).
#[wasm_bindgen(typescript_custom_section)]
const TS_COUNT_TOKENS: &str = r#"
/** A tokenizer: the tokens of a text (SPEC §3). Synchronous, or asynchronous: then the call that uses it returns a Promise. A result that is not a non-negative number (or a throw, a rejection) is `E_INVALID_ARGUMENT` naming `countTokens`. */
export type CountTokens = (text: string) => number | Promise<number>;
/** `countTokens` of the functions that estimate tokens (default: chars/4, SPEC §3). The engine decides which text of each message is counted; the counter maps text to tokens. */
export interface TokenCountOptions { countTokens?: CountTokens }
/** A synchronous counter: the call returns its value. */
export interface SyncTokenCount { countTokens?: (text: string) => number }
/** An asynchronous counter: the call returns a Promise. */
export interface AsyncTokenCount { countTokens: (text: string) => Promise<number> }
export function estimateTokens(message: AgentMessage, options?: SyncTokenCount): number;
export function estimateTokens(message: AgentMessage, options: AsyncTokenCount): Promise<number>;
export function estimateTokens(message: AgentMessage, options?: TokenCountOptions): number | Promise<number>;
export function findCutPoint(entries: SessionEntry[], startIndex: number, endIndex: number, keepRecentTokens: number, options?: SyncTokenCount): CutPointResult;
export function findCutPoint(entries: SessionEntry[], startIndex: number, endIndex: number, keepRecentTokens: number, options: AsyncTokenCount): Promise<CutPointResult>;
export function findCutPoint(entries: SessionEntry[], startIndex: number, endIndex: number, keepRecentTokens: number, options?: TokenCountOptions): CutPointResult | Promise<CutPointResult>;
/** `prepareCompaction(pathEntries, settings?)`: what a compaction of the branch `pathEntries` (root first) summarizes and keeps, or `undefined` when there is nothing to compact; the message lists hold your own `message` objects. SPEC §5, §12. */
export function prepareCompaction(pathEntries: SessionEntry[], settings?: Partial<CompactionSettings> & SyncTokenCount): CompactionPreparation | undefined;
export function prepareCompaction(pathEntries: SessionEntry[], settings: Partial<CompactionSettings> & AsyncTokenCount): Promise<CompactionPreparation | undefined>;
export function prepareCompaction(pathEntries: SessionEntry[], settings?: Partial<CompactionSettings> & TokenCountOptions): CompactionPreparation | undefined | Promise<CompactionPreparation | undefined>;
/** The synchronous form once more, last: what `ReturnType<typeof prepareCompaction>` gives. */
export function prepareCompaction(pathEntries: SessionEntry[], settings?: Partial<CompactionSettings> & SyncTokenCount): CompactionPreparation | undefined;
export function previewCompaction(pathEntries: SessionEntry[], settings?: Partial<CompactionSettings> & SyncTokenCount, pruneConfig?: Partial<PruneConfig>): CompactionPreviews;
export function previewCompaction(pathEntries: SessionEntry[], settings: Partial<CompactionSettings> & AsyncTokenCount, pruneConfig?: Partial<PruneConfig>): Promise<CompactionPreviews>;
export function previewCompaction(pathEntries: SessionEntry[], settings?: Partial<CompactionSettings> & TokenCountOptions, pruneConfig?: Partial<PruneConfig>): CompactionPreviews | Promise<CompactionPreviews>;
export function estimateContextTokens(pathEntries: SessionEntry[], options?: SyncTokenCount): number;
export function estimateContextTokens(pathEntries: SessionEntry[], options: AsyncTokenCount): Promise<number>;
export function estimateContextTokens(pathEntries: SessionEntry[], options?: TokenCountOptions): number | Promise<number>;
export function prepareBranchEntries(entries: SessionEntry[], tokenBudget?: number, options?: SyncTokenCount): BranchEntriesResult;
export function prepareBranchEntries(entries: SessionEntry[], tokenBudget: number | undefined, options: AsyncTokenCount): Promise<BranchEntriesResult>;
export function prepareBranchEntries(entries: SessionEntry[], tokenBudget?: number, options?: TokenCountOptions): BranchEntriesResult | Promise<BranchEntriesResult>;
export interface SessionTree {
  prepareCompaction(settings: Partial<CompactionSettings> & AsyncTokenCount, pruneConfig?: Partial<PruneConfig>): Promise<CompactionPreparation | undefined>;
  prepareCompaction(settings?: Partial<CompactionSettings> & TokenCountOptions, pruneConfig?: Partial<PruneConfig>): CompactionPreparation | undefined | Promise<CompactionPreparation | undefined>;
  planCompaction(settings: Partial<CompactionSettings> & AsyncTokenCount, pruneConfig?: Partial<PruneConfig>): Promise<PreparationPlan | undefined>;
  planCompaction(settings?: Partial<CompactionSettings> & TokenCountOptions, pruneConfig?: Partial<PruneConfig>): PreparationPlan | undefined | Promise<PreparationPlan | undefined>;
  estimateContextTokens(options: AsyncTokenCount): Promise<number>;
  estimateContextTokens(options?: TokenCountOptions): number | Promise<number>;
  nothingToCompact(settings: Partial<CompactionSettings> & AsyncTokenCount): Promise<NothingToCompactResult | undefined>;
  nothingToCompact(settings?: Partial<CompactionSettings> & TokenCountOptions): NothingToCompactResult | undefined | Promise<NothingToCompactResult | undefined>;
  planPrune(config: Partial<PruneConfig> & AsyncTokenCount): Promise<PrunePlan>;
  planPrune(config?: Partial<PruneConfig> & TokenCountOptions): PrunePlan | Promise<PrunePlan>;
  pruneToolOutputs(config: Partial<PruneConfig> & AsyncTokenCount, now?: number): Promise<PruneOutcome>;
  pruneToolOutputs(config?: Partial<PruneConfig> & TokenCountOptions, now?: number): PruneOutcome | Promise<PruneOutcome>;
}
"#;

/// What `estimateTokens` expects as its message.
const MESSAGE_OBJECT: &str = "a message object ({role, content, ...})";

/// `estimateTokens(message, {countTokens?})`: `ceil(chars / 4)` in UTF-16 units, or the
/// host's `countTokens` of the text the estimate counts (a Promise when it returns one). SPEC §3.
#[wasm_bindgen(js_name = estimateTokens, unchecked_return_type = "number")]
pub fn estimate_tokens(
    #[wasm_bindgen(unchecked_param_type = "AgentMessage")] message: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "SyncTokenCount")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let counter = counter_option(&options, "options")?;
    if counter.is_none() {
        // An object is read in place; anything else (an array, a Proxy of one, a value whose read
        // throws) through `JSON.stringify`, whose failure is the error.
        let read = JsRead::new(message.clone());
        let meta = match read.shape() {
            Ok(Shape::Object) => session_compaction::entry::read_message(&read).ok(),
            _ => None,
        };
        let meta = match meta {
            Some(m) => m,
            None => {
                let v = to_value(&message, "message")?;
                session_compaction::api::require_object(&v, "message", MESSAGE_OBJECT).map_err(error_js)?;
                session_compaction::entry::MessageMeta::from_value(&v)
            }
        };
        return Ok(JsValue::from_f64(meta.tokens as f64));
    }
    let message = to_value(&message, "message")?;
    session_compaction::api::require_object(&message, "message", MESSAGE_OBJECT).map_err(error_js)?;
    let text = session_compaction::plan::tokens::counted_text(&message);
    with_counts(
        counter,
        move || vec![text],
        move |counts| {
            let tokens = match counts {
                Some(c) => c[0],
                None => session_compaction::entry::estimate_tokens(&message),
            };
            Ok(JsValue::from_f64(tokens as f64))
        },
    )
}

/// Sets `object[key] = value` on a result object built here.
fn set(object: &JsValue, key: &str, value: &JsValue) -> Result<(), JsValue> {
    js_sys::Reflect::set(object, &JsValue::from_str(key), value).map(|_| ())
}

/// `findCutPoint(entries, startIndex, endIndex, keepRecentTokens, {countTokens?})`. SPEC §4.
#[wasm_bindgen(js_name = findCutPoint, unchecked_return_type = "CutPointResult")]
pub fn find_cut_point(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
    #[wasm_bindgen(js_name = startIndex, unchecked_param_type = "number")] start_index: JsValue,
    #[wasm_bindgen(js_name = endIndex, unchecked_param_type = "number")] end_index: JsValue,
    #[wasm_bindgen(js_name = keepRecentTokens, unchecked_param_type = "number")] keep_recent_tokens: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "SyncTokenCount")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let entries = JsEntries::read(&entries, "entries")?;
    let (start, end) = (arg_index(&start_index, "startIndex")?, arg_index(&end_index, "endIndex")?);
    let keep = host::token_count(arg_number(&keep_recent_tokens, "keepRecentTokens")?);
    let counter = counter_option(&options, "options")?;
    on_entries(counter, entries, move |list, _| {
        from_serde(&session_compaction::plan::cut_point::find_cut_point(list, start, end, keep))
    })
}

/// `prepareCompaction(pathEntries, settings?)` → the preparation or `undefined`. SPEC §5, §12.
/// The entries are read in place and on demand ([`JsEntries`]): whole only from the latest
/// compaction's kept region on, that region's first entry found by one `JSON.stringify` of the
/// ids (an entry read whole that cannot be read is `E_INVALID_ARGUMENT` naming it; one never
/// read whole is no error); the message lists hold the caller's own `message` objects (custom
/// messages and branch summaries are built). The package's entry calls it with `unchanged` (`pkg-template/shared/pure.js`):
/// how many leading elements of `pathEntries` are the objects of its last call, whose metadata
/// and id index the engine kept ([`ListState`],
/// [`session_compaction::plan::prepare_cache::PrepareCache`]), so a call after appending entries
/// reads only those; the result is the same. Without `unchanged` nothing is kept. Declared in
/// `TS_COUNT_TOKENS` (the glue's argument is not part of the API).
#[wasm_bindgen(js_name = prepareCompaction, skip_typescript)]
pub fn prepare_compaction(
    #[wasm_bindgen(js_name = pathEntries)] path_entries: JsValue,
    settings: JsValue,
    unchanged: Option<f64>,
) -> Result<JsValue, JsValue> {
    let counter = counter_of(&settings, "settings")?;
    let settings: CompactionSettings = to_options(&settings, "settings", &[COUNT_TOKENS])?;
    let mut state = match unchanged {
        Some(_) => ListState::take(Channel::Prepare),
        None => ListState::default(),
    };
    if counter.is_some() {
        let entries = JsEntries::read(&path_entries, "pathEntries")?;
        return on_entries(counter, entries, move |list, entries| {
            match session_compaction::plan::prepare::prepare_compaction_refs(list, &settings) {
                Some((shell, lists)) => preparation_js(&shell, &lists, entries),
                None => Ok(JsValue::UNDEFINED),
            }
        });
    }
    let (entries, known) = state.entries(&path_entries, "pathEntries", unchanged.unwrap_or(0.0) as usize)?;
    let source: &dyn EntrySource = &entries;
    state.prepare.sync(source, known);
    let refs = state.prepare.prepare_refs_by(source, &settings, &|id, p| entries.find_id(id, p));
    entries.check()?;
    let out = match refs {
        Some((shell, lists)) => preparation_js(&shell, &lists, &entries)?,
        None => JsValue::UNDEFINED,
    };
    if unchanged.is_some() {
        state.keep(Channel::Prepare, entries);
    }
    Ok(out)
}

/// A preparation whose three message lists are `lists` ([`MessageRef`]s into `entries`).
fn preparation_js(
    shell: &session_compaction::plan::prepare::CompactionPreparation,
    lists: &[Vec<MessageRef>; 3],
    entries: &JsEntries,
) -> Result<JsValue, JsValue> {
    let out = from_serde(shell)?;
    for (key, list) in ["messagesToSummarize", "turnPrefixMessages", "recentMessages"].iter().zip(lists) {
        set(&out, key, &entries.messages(list)?.into())?;
    }
    Ok(out)
}

/// `previewCompaction(pathEntries, settings?, pruneConfig?)` → the context size before and after
/// a compaction of the branch, alone and after a prune (`{compaction?, withPrune}`; the summary
/// budgeted at its `maxTokens`). Core: `summarize::preview::compaction_previews`.
#[wasm_bindgen(js_name = previewCompaction, unchecked_return_type = "CompactionPreviews")]
pub fn preview_compaction(
    #[wasm_bindgen(js_name = pathEntries, unchecked_param_type = "SessionEntry[]")] path_entries: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompactionSettings> & SyncTokenCount")] settings: JsValue,
    #[wasm_bindgen(js_name = pruneConfig, unchecked_optional_param_type = "Partial<PruneConfig>")]
    prune_config: JsValue,
) -> Result<JsValue, JsValue> {
    let (counter, settings, prune) = compaction_options(&settings, &prune_config)?;
    let entries = JsEntries::read(&path_entries, "pathEntries")?;
    let templates = templates();
    on_entries(counter, entries, move |list, _| {
        let previews = session_compaction::summarize::preview::compaction_previews(list, &settings, &prune, &templates)
            .map_err(error_js)?;
        from_serde(&previews)
    })
}

/// `shouldCompact(contextTokens, contextWindow, settings?)`. SPEC §5. `E_INVALID_ARGUMENT` when
/// `contextTokens` is no whole number of tokens from 0 to 2^53 - 1, or when compaction is
/// enabled and `reserveTokens >= contextWindow` (SPEC §13.11).
#[wasm_bindgen(js_name = shouldCompact)]
pub fn should_compact(
    #[wasm_bindgen(js_name = contextTokens, unchecked_param_type = "number")] context_tokens: JsValue,
    #[wasm_bindgen(js_name = contextWindow, unchecked_param_type = "number")] context_window: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompactionSettings>")] settings: JsValue,
) -> Result<bool, JsValue> {
    let tokens = arg_number(&context_tokens, "contextTokens")?;
    let tokens = session_compaction::api::token_budget(tokens, "contextTokens").map_err(error_js)? as f64;
    let window = arg_number(&context_window, "contextWindow")?;
    counter_of(&settings, "settings")?;
    let settings: CompactionSettings = to_options(&settings, "settings", &[COUNT_TOKENS])?;
    session_compaction::plan::prepare::checked_should_compact(tokens, window, &settings).map_err(error_js)
}

/// `compactionThreshold(contextWindow, settings?)`: the context size above which
/// `shouldCompact` triggers, `contextWindow - reserveTokens` (tokens). SPEC §5.
/// `E_INVALID_ARGUMENT` when compaction is enabled and `reserveTokens >= contextWindow`
/// (SPEC §13.11).
#[wasm_bindgen(js_name = compactionThreshold)]
pub fn compaction_threshold(
    #[wasm_bindgen(js_name = contextWindow, unchecked_param_type = "number")] context_window: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompactionSettings>")] settings: JsValue,
) -> Result<f64, JsValue> {
    let window = arg_number(&context_window, "contextWindow")?;
    counter_of(&settings, "settings")?;
    let settings: CompactionSettings = to_options(&settings, "settings", &[COUNT_TOKENS])?;
    session_compaction::plan::prepare::checked_compaction_threshold(window, &settings).map_err(error_js)
}

/// `estimateContextTokens(pathEntries, {countTokens?})`: last fresh usage + estimates after it.
/// SPEC §12.3.
#[wasm_bindgen(js_name = estimateContextTokens, unchecked_return_type = "number")]
pub fn estimate_context_tokens(
    #[wasm_bindgen(js_name = pathEntries, unchecked_param_type = "SessionEntry[]")] path_entries: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "SyncTokenCount")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let entries = JsEntries::read(&path_entries, "pathEntries")?;
    let counter = counter_option(&options, "options")?;
    on_entries(counter, entries, |list, _| {
        Ok(JsValue::from_f64(session_compaction::plan::overflow::estimate_context_tokens(list)))
    })
}

/// `isContextOverflow(assistantMessage, contextWindow?)`. SPEC §11.
#[wasm_bindgen(js_name = isContextOverflow)]
pub fn is_context_overflow(
    #[wasm_bindgen(js_name = assistantMessage, unchecked_param_type = "AgentMessage")] message: JsValue,
    #[wasm_bindgen(js_name = contextWindow, unchecked_optional_param_type = "number")] context_window: JsValue,
) -> Result<bool, JsValue> {
    let window = arg_opt_number(&context_window, "contextWindow")?;
    Ok(session_compaction::plan::overflow::is_context_overflow(&to_value(&message, "assistantMessage")?, window))
}

/// `buildSessionContext(entries, leafId?)`: `undefined` → last entry, `null` → empty. SPEC §6.
/// The entries are read in place and on demand ([`JsEntries`]): the heads of all of them in one
/// `JSON.stringify` ([`JsEntries::read_heads`]), whole only the context's messages (an entry read
/// whole that cannot be read is `E_INVALID_ARGUMENT` naming it; one never read whole is no
/// error); `messages` holds the caller's own `message` objects (summaries and custom messages
/// are built). The package's entry calls it with
/// `unchanged` (`pkg-template/shared/pure.js`): how many leading elements of `entries` are the
/// objects of its last call; the engine kept their metadata, tree index, last branch and context
/// decision ([`ListState`], [`session_compaction::context::ContextCache`]), so a call after
/// appending entries under the leaf reads only those; the result is the same. Without
/// `unchanged` nothing is kept. Declared in `TS_BUILD_SESSION_CONTEXT`.
#[wasm_bindgen(js_name = buildSessionContext, skip_typescript)]
pub fn build_context(
    entries: JsValue,
    #[wasm_bindgen(js_name = leafId)] leaf_id: JsValue,
    unchanged: Option<f64>,
) -> Result<JsValue, JsValue> {
    let leaf = leaf_selector(&leaf_id)?;
    let mut state = match unchanged {
        Some(_) => ListState::take(Channel::Context),
        None => ListState::default(),
    };
    let (list, known) = state.entries(&entries, "entries", unchanged.unwrap_or(0.0) as usize)?;
    // The context's tree reads the head of every entry not known from the last call.
    list.read_heads(known);
    let source: &dyn EntrySource = &list;
    state.context.sync(source, known);
    let plan = state.context.plan(source, &leaf);
    list.check()?;
    let out = context_js(plan, &list)?;
    if unchanged.is_some() {
        state.keep(Channel::Context, list);
    }
    Ok(out)
}

/// The declaration of `buildSessionContext` (its export skips the generated one: the glue's
/// extra argument is not part of the API).
#[wasm_bindgen(typescript_custom_section)]
const TS_BUILD_SESSION_CONTEXT: &str = r#"
/**
 * `buildSessionContext(entries, leafId?)`: the context of the branch ending at `leafId`
 * (`undefined` → the last entry, `null` → empty; an unknown id → the last entry). `messages`
 * holds your own `message` objects; summaries and custom messages are built. SPEC §6.
 */
export function buildSessionContext(entries: SessionEntry[], leafId?: string | null): SessionContext;
"#;

/// The `SessionContext` of `plan` over `entries`: its settings, and its messages with the
/// caller's own `message` objects (summaries and custom messages built).
fn context_js(plan: session_compaction::context::ContextPlan, entries: &JsEntries) -> Result<JsValue, JsValue> {
    let out = from_serde(&plan.settings)?;
    let refs: Vec<MessageRef> = plan
        .items
        .iter()
        .filter_map(|item| {
            if item.is_entry_message() {
                Some(MessageRef::Entry(item.index()))
            } else {
                item.materialize(entries as &dyn EntrySource).map(MessageRef::Derived)
            }
        })
        .collect();
    let messages: JsValue = entries.messages(&refs)?.into();
    set(&out, "messages", &messages)?;
    Ok(out)
}

/// Reads a `leafId` argument.
pub(crate) fn leaf_selector(v: &JsValue) -> Result<LeafSelector, JsValue> {
    if v.is_undefined() {
        Ok(LeafSelector::Last)
    } else if v.is_null() {
        Ok(LeafSelector::BeforeFirst)
    } else {
        v.as_string().map(LeafSelector::Id).ok_or_else(|| bad_arg("leafId", "expected a string, null or undefined"))
    }
}

/// `convertToLlm(messages, options?)`: agent messages → LLM messages (SPEC §6). With
/// `{repair: true}` the messages are made provider-valid first and the result is
/// `{messages, repairs}` (SPEC §13.1).
#[wasm_bindgen(js_name = convertToLlm, unchecked_return_type = "AgentMessage[] | RepairedLlmMessages")]
pub fn convert_to_llm(
    #[wasm_bindgen(unchecked_param_type = "AgentMessage[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ConvertOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let options: session_compaction::context::convert::ConvertOptions = to_typed(&options, "options")?;
    if !options.repair && super::safe::is_array(&messages) == Ok(true) {
        return convert_in_place(&messages);
    }
    let values = to_values(&messages, "messages")?;
    if options.repair {
        let (messages, repairs) =
            session_compaction::context::convert::convert_to_llm_provider_valid(&values, &templates())
                .map_err(error_js)?;
        return from_serde(&session_compaction::api::RepairedLlmMessages { messages, repairs });
    }
    from_serde(&session_compaction::context::convert::convert_to_llm(&values, &templates()).map_err(error_js)?)
}

/// `convertToLlm(messages)` of an array, read in place: a message conversion leaves as it is
/// ([`unchanged_by_conversion`](session_compaction::context::convert::unchanged_by_conversion)
/// of its `role` and `prunedAt`) is the caller's own object, as the reference hands it back;
/// the others are converted from their JSON one by one. A message with a `toJSON` method is
/// read through it, as `JSON.stringify` reads it. Errors as [`to_value`] (naming `messages[i]`).
fn convert_in_place(messages: &JsValue) -> Result<JsValue, JsValue> {
    use js_sys::Reflect;
    use session_compaction::context::convert::{convert_message, unchanged_by_conversion};
    let length = Reflect::get(messages, &JsValue::from_str("length"))
        .map_err(|_| bad_arg("messages", "cannot read its length"))?;
    let len = super::convert::entry_count(&length);
    super::convert::ensure_room("messages", len)?;
    let templates = templates();
    let out = js_sys::Array::new();
    let key = |name: &str| JsValue::from_str(name);
    let (role_key, pruned_key, to_json_key) = (key("role"), key("prunedAt"), key("toJSON"));
    for i in 0..len {
        let what = || format!("messages[{i}]");
        let unreadable = |_| bad_arg(&what(), "cannot be read (a throwing getter or a revoked Proxy?)");
        let m = Reflect::get_u32(messages, i as u32).map_err(unreadable)?;
        if m.is_object() && !Reflect::get(&m, &to_json_key).map_err(unreadable)?.is_function() {
            let role = Reflect::get(&m, &role_key).map_err(unreadable)?.as_string();
            let pruned = Reflect::get(&m, &pruned_key).map_err(unreadable)?;
            // Present in its JSON: what `JSON.stringify` writes (not undefined, a function or a symbol).
            let pruned = !(pruned.is_undefined() || pruned.is_function() || pruned.is_symbol());
            if role.is_some_and(|r| unchanged_by_conversion(&r, pruned)) {
                out.push(&m);
                continue;
            }
        }
        if let Some(converted) = convert_message(&to_value(&m, &what())?, &templates).map_err(error_js)? {
            out.push(&from_serde(&converted)?);
        }
    }
    Ok(out.into())
}

/// `serializeConversation(llmMessages)`: the text the summarizer reads. SPEC §8.
#[wasm_bindgen(js_name = serializeConversation)]
pub fn serialize_conversation(
    #[wasm_bindgen(unchecked_param_type = "AgentMessage[]")] messages: JsValue,
) -> Result<String, JsValue> {
    js_text(
        session_compaction::prompt::serialize::serialize_conversation(&to_values(&messages, "messages")?),
        "serializeConversation()",
        "serialize fewer messages at a time",
    )
}

/// `pruneToolOutputs(entries, config?, now?)` → `{prunedCount, tokensSaved, prunedEntries}`;
/// the argument is never mutated. `now`: ms since the epoch (default `Date.now()`). SPEC §7.
#[wasm_bindgen(js_name = pruneToolOutputs, unchecked_return_type = "PruneResult")]
pub fn prune_tool_outputs(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<PruneConfig>")] config: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "number")] now: JsValue,
) -> Result<JsValue, JsValue> {
    let values = to_values(&entries, "entries")?;
    let config: PruneConfig = to_typed(&config, "config")?;
    let now = arg_opt_number(&now, "now")?.unwrap_or_else(js_sys::Date::now);
    let r = session_compaction::plan::prune::prune_tool_outputs(&EntryList::new(&values), &config, now);
    from_serde(&host::PruneReport::from(r))
}

/// `collectEntriesForBranchSummary(entries, oldLeafId, targetId)`. SPEC §10.
#[wasm_bindgen(js_name = collectEntriesForBranchSummary, unchecked_return_type = "BranchCollection")]
pub fn collect_entries_for_branch_summary(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
    #[wasm_bindgen(js_name = oldLeafId, unchecked_param_type = "string | null")] old_leaf_id: JsValue,
    #[wasm_bindgen(js_name = targetId, unchecked_param_type = "string")] target_id: JsValue,
) -> Result<JsValue, JsValue> {
    let values = to_values(&entries, "entries")?;
    let old_leaf_id = arg_opt_string(&old_leaf_id, "oldLeafId")?;
    let target_id = arg_string(&target_id, "targetId")?;
    from_serde(&host::collect_branch_collection(&values, old_leaf_id.as_deref(), &target_id))
}

/// `prepareBranchEntries(entries, tokenBudget?, {countTokens?})` (0 or `undefined` = no limit;
/// a negative, NaN or above 2^53 - 1 budget is `E_INVALID_ARGUMENT`, SPEC §13.11). SPEC §10.
#[wasm_bindgen(js_name = prepareBranchEntries, unchecked_return_type = "BranchEntriesResult")]
pub fn prepare_branch_entries(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
    #[wasm_bindgen(js_name = tokenBudget, unchecked_optional_param_type = "number")] token_budget: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "SyncTokenCount")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let values = to_values(&entries, "entries")?;
    let budget = match arg_opt_number(&token_budget, "tokenBudget")? {
        None => 0,
        Some(n) => session_compaction::api::token_budget(n, "tokenBudget").map_err(error_js)?,
    };
    let counter = counter_option(&options, "options")?;
    on_values(counter, values, move |list| {
        let r = session_compaction::plan::branch::prepare_branch_entries(list, budget);
        from_serde(&host::BranchEntriesResult::from(r))
    })
}

/// `parseSession(jsonl, {strict?})` → `{header, entries, errors, migrated, opaqueLines}`.
/// Lenient by default: every line is kept (malformed and blank ones in `opaqueLines` with their
/// line number and position) and each bad one reported with its line number; with
/// `strict: true` the first bad line throws (`E_PARSE`, `E_MISSING_FIELD`, `E_HEADER`). The
/// raw load of `SessionTree.fromJsonl` ([`session_compaction::io::scan_session_str`]), the
/// records spliced into one JSON text ([`session_compaction::io::parsed_session_json`]) that
/// `JSON.parse` reads: linear in the input, no value built in wasm. SPEC §1, §13.3.
#[wasm_bindgen(js_name = parseSession, unchecked_return_type = "ParsedSessionResult")]
pub fn parse_session(
    #[wasm_bindgen(unchecked_param_type = "string")] jsonl: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ParseSessionOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let jsonl = arg_string(&jsonl, "jsonl")?;
    let opts: ParseOptions = to_typed(&options, "options")?;
    let raw = session_compaction::io::scan_session_str(&jsonl, &opts).map_err(error_js)?;
    let text = session_compaction::io::parsed_session_json(&raw, jsonl.as_bytes());
    drop((raw, jsonl));
    parse_js(&text)
}

/// `serializeSession({header, entries, opaqueLines?})` → JSONL text: the header first, one entry
/// per line, and the opaque lines `parseSession` returned (`{position, text}`; `line` is
/// ignored) put back in their places, so that a load and save keeps every line. A `text` with a
/// line end, or a position that is not a non-negative integer, is `E_INVALID_ARGUMENT`.
/// SPEC §1, §13.3.
#[wasm_bindgen(js_name = serializeSession)]
pub fn serialize_session(
    #[wasm_bindgen(unchecked_param_type = "SessionFile")] session: JsValue,
) -> Result<String, JsValue> {
    use serde_json::value::RawValue;
    /// The argument as `JSON.stringify` wrote it: each record's text is written as it is (no
    /// value is built, so any depth goes through).
    #[derive(serde::Deserialize)]
    struct Raw<'a> {
        #[serde(borrow, default)]
        header: Option<&'a RawValue>,
        #[serde(borrow, default)]
        entries: Option<Vec<&'a RawValue>>,
        #[serde(default, rename = "opaqueLines")]
        opaque_lines: Option<Vec<session_compaction::io::OpaqueLine>>,
    }
    if session.is_undefined() || session.is_null() {
        return Err(bad_arg("session", "expected {header?, entries, opaqueLines?}"));
    }
    let text = stringify(&session, "session")?;
    let file: Raw<'_> = serde_json::from_slice(text.as_bytes()).map_err(|e| bad_arg("session", e))?;
    let entries = file.entries.ok_or_else(|| bad_arg("session.entries", "expected an array"))?;
    let entries: Vec<&str> = entries.iter().map(|e| e.get()).collect();
    let opaque = file.opaque_lines.unwrap_or_default();
    let text = host::serialize_session_file(file.header.map(RawValue::get), &entries, &opaque).map_err(error_js)?;
    js_text(text, "serializeSession()", "write the header and the entries one line at a time")
}

/// `validateSession(entries)` → the validation report, with the repairs the context of the
/// branch ending at the last entry needs (the default leaf of `buildSessionContext`); never
/// changes anything. SPEC §1, §10, §13.1.
#[wasm_bindgen(js_name = validateSession, unchecked_return_type = "ContextValidation")]
pub fn validate_session(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
) -> Result<JsValue, JsValue> {
    let values = to_values(&entries, "entries")?;
    let list = EntryList::new(&values);
    let mut report = session_compaction::context::validate_context(&list, None, values.len().checked_sub(1));
    // A function or `undefined` read as `null` is named as the caller gave it.
    for issue in &mut report.issues {
        let Some(index) = issue.index else { continue };
        if issue.code == session_compaction::tree::IssueKind::NotAnObject && values[index].is_null() {
            let given = js_sys::Reflect::get_u32(&entries, index as u32).unwrap_or(JsValue::NULL);
            if given.is_function() || given.is_undefined() || given.is_symbol() {
                let kind = format!("{}, read as null", js_kind(&given));
                issue.message = session_compaction::tree::not_an_object_message(index, &kind);
            }
        }
    }
    from_serde(&report)
}

/// The default compaction settings (SPEC §5); the JS entry exposes them frozen as
/// `DEFAULT_COMPACTION_SETTINGS`.
#[wasm_bindgen(js_name = defaultCompactionSettings, unchecked_return_type = "CompactionSettings")]
pub fn default_compaction_settings() -> Result<JsValue, JsValue> {
    from_serde(&CompactionSettings::default())
}

/// The default pruning configuration (SPEC §7); exposed as `DEFAULT_PRUNE_CONFIG`.
#[wasm_bindgen(js_name = defaultPruneConfig, unchecked_return_type = "PruneConfig")]
pub fn default_prune_config() -> Result<JsValue, JsValue> {
    from_serde(&PruneConfig::default())
}

/// `setPromptTemplate(name, text)`: replaces one template (file name, e.g.
/// `"compaction-summary.md"`) for this module instance. Errors `E_TEMPLATE` for an unknown name
/// or a template that does not parse. SPEC §9.
#[wasm_bindgen(js_name = setPromptTemplate)]
pub fn set_prompt_template(
    #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<(), JsValue> {
    let (name, text) = (arg_string(&name, "name")?, arg_string(&text, "text")?);
    TEMPLATES.with(|t| t.borrow_mut().set(&name, &text)).map_err(error_js)
}

/// `resetPromptTemplates()`: restores every default template. SPEC §9.
#[wasm_bindgen(js_name = resetPromptTemplates)]
pub fn reset_prompt_templates() {
    TEMPLATES.with(|t| t.borrow_mut().reset());
}

/// `getPromptTemplate(name)`: the template text in force (`""` for an unknown name).
#[wasm_bindgen(js_name = getPromptTemplate)]
pub fn get_prompt_template(#[wasm_bindgen(unchecked_param_type = "string")] name: JsValue) -> Result<String, JsValue> {
    let name = arg_string(&name, "name")?;
    Ok(TEMPLATES.with(|t| t.borrow().get(&name).to_string()))
}

/// `promptTemplateNames()`: the ten template names.
#[wasm_bindgen(js_name = promptTemplateNames)]
pub fn prompt_template_names() -> Vec<String> {
    session_compaction::prompt::templates::TEMPLATE_NAMES.iter().map(|s| s.to_string()).collect()
}

/// `formatFileOperations(readFiles, modifiedFiles)`: the `<read-files>` / `<modified-files>`
/// block. SPEC §8.
#[wasm_bindgen(js_name = formatFileOperations)]
pub fn format_file_operations(
    #[wasm_bindgen(js_name = readFiles, unchecked_param_type = "string[]")] read_files: JsValue,
    #[wasm_bindgen(js_name = modifiedFiles, unchecked_param_type = "string[]")] modified_files: JsValue,
) -> Result<String, JsValue> {
    let (read_files, modified_files) =
        (arg_strings(&read_files, "readFiles")?, arg_strings(&modified_files, "modifiedFiles")?);
    session_compaction::prompt::templates::format_file_operations(&templates(), &read_files, &modified_files)
        .map_err(error_js)
}

// ---- Lower-level functions of the reference (thin forwarders; the conformance ops use them) ----

/// `findValidCutPoints(entries, startIndex, endIndex)`: indices in `[startIndex, endIndex)` where
/// a cut may fall. SPEC §4.
#[wasm_bindgen(js_name = findValidCutPoints, unchecked_return_type = "number[]")]
pub fn find_valid_cut_points(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
    #[wasm_bindgen(js_name = startIndex, unchecked_param_type = "number")] start_index: JsValue,
    #[wasm_bindgen(js_name = endIndex, unchecked_param_type = "number")] end_index: JsValue,
) -> Result<JsValue, JsValue> {
    let list = JsEntries::read(&entries, "entries")?;
    let (start, end) = (arg_index(&start_index, "startIndex")?, arg_index(&end_index, "endIndex")?);
    // Through `dyn EntrySource`, as the other callers: one copy of the function in the module.
    let list: &dyn EntrySource = &list;
    from_serde(&session_compaction::plan::cut_point::find_valid_cut_points(list, start, end))
}

/// `findTurnStartIndex(entries, entryIndex, startIndex)`: index of the entry starting the turn
/// that contains `entryIndex`, or -1. SPEC §4.
#[wasm_bindgen(js_name = findTurnStartIndex)]
pub fn find_turn_start_index(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
    #[wasm_bindgen(js_name = entryIndex, unchecked_param_type = "number")] entry_index: JsValue,
    #[wasm_bindgen(js_name = startIndex, unchecked_param_type = "number")] start_index: JsValue,
) -> Result<f64, JsValue> {
    let list = JsEntries::read(&entries, "entries")?;
    let (entry, start) = (arg_index(&entry_index, "entryIndex")?, arg_index(&start_index, "startIndex")?);
    let list: &dyn EntrySource = &list;
    Ok(session_compaction::plan::cut_point::find_turn_start_index(list, entry, start) as f64)
}

/// `getLastAssistantUsage(entries)`: the `usage` of the last assistant message whose
/// stopReason is neither "aborted" nor "error", or `undefined`. SPEC §5.
#[wasm_bindgen(js_name = getLastAssistantUsage, unchecked_return_type = "Usage | undefined")]
pub fn get_last_assistant_usage(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
) -> Result<JsValue, JsValue> {
    let values = to_values(&entries, "entries")?;
    from_option(host::last_assistant_usage_value(&values))
}

/// Reads a `usage` argument ([`host::usage_of`]).
fn usage_meta(usage: &JsValue) -> Result<session_compaction::entry::UsageMeta, JsValue> {
    host::usage_of(&to_value(usage, "usage")?).map_err(error_js)
}

/// `calculateContextTokens(usage)`: `totalTokens || input + output + cacheRead + cacheWrite`
/// (provider tokens). SPEC §5.
#[wasm_bindgen(js_name = calculateContextTokens)]
pub fn calculate_context_tokens(
    #[wasm_bindgen(unchecked_param_type = "Usage")] usage: JsValue,
) -> Result<f64, JsValue> {
    Ok(usage_meta(&usage)?.context_tokens())
}

/// `calculatePromptTokens(usage)`: `input + cacheRead + cacheWrite`, or the context tokens when
/// that is 0 (provider tokens). SPEC §5.
#[wasm_bindgen(js_name = calculatePromptTokens)]
pub fn calculate_prompt_tokens(#[wasm_bindgen(unchecked_param_type = "Usage")] usage: JsValue) -> Result<f64, JsValue> {
    Ok(usage_meta(&usage)?.prompt_tokens())
}

/// `extractFileOpsFromMessage(message)`: the files an assistant message's tool calls read,
/// wrote and edited (de-duplicated, first-seen order). SPEC §8.
#[wasm_bindgen(js_name = extractFileOpsFromMessage, unchecked_return_type = "FileOpsLists")]
pub fn extract_file_ops_from_message(
    #[wasm_bindgen(unchecked_param_type = "AgentMessage")] message: JsValue,
) -> Result<JsValue, JsValue> {
    let ops = session_compaction::plan::file_ops::extract_file_ops_from_message(&to_value(&message, "message")?);
    from_serde(&FileOpsLists::from(&ops))
}

/// `computeFileLists(fileOps)`: `{readFiles, modifiedFiles}` (read minus modified; written ∪
/// edited; JavaScript sort order). SPEC §8.
#[wasm_bindgen(js_name = computeFileLists, unchecked_return_type = "FileLists")]
pub fn compute_file_lists(
    #[wasm_bindgen(js_name = fileOps, unchecked_param_type = "FileOpsLists")] file_ops: JsValue,
) -> Result<JsValue, JsValue> {
    let lists: FileOpsLists = to_typed(&file_ops, "fileOps")?;
    from_serde(&session_compaction::plan::file_ops::FileOps::from(&lists).file_lists())
}

/// `contentText(content)`: the text of a message's `content` (the string itself, or its text
/// blocks' texts joined with `""`; `""` otherwise). SPEC §8.
#[wasm_bindgen(js_name = contentText)]
pub fn content_text(#[wasm_bindgen(unchecked_param_type = "unknown")] content: JsValue) -> Result<String, JsValue> {
    let content = to_value(&content, "content")?;
    js_text(
        session_compaction::prompt::serialize::content_text(Some(&content)),
        "contentText()",
        "read the text blocks one by one",
    )
}

/// `parseJsonlLenient(text)`: every line that parses as JSON, in order (blank and malformed
/// lines skipped). SPEC §1.
#[wasm_bindgen(js_name = parseJsonlLenient, unchecked_return_type = "unknown[]")]
pub fn parse_jsonl_lenient(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> Result<JsValue, JsValue> {
    let text = arg_string(&text, "text")?;
    from_serde(&session_compaction::io::parse_jsonl_lenient(&text))
}

/// `parseSessionWithIds(jsonl, generatedIds, {strict?})`: [`parse_session`] with the ids a v1→v2
/// migration assigns taken from `generatedIds` in order (random ones once they run out), for
/// reproducible migrations. `generatedIdsUsed` counts the ids drawn. SPEC §1.
#[wasm_bindgen(js_name = parseSessionWithIds, unchecked_return_type = "ParsedSessionWithIdsResult")]
pub fn parse_session_with_ids(
    #[wasm_bindgen(unchecked_param_type = "string")] jsonl: JsValue,
    #[wasm_bindgen(js_name = generatedIds, unchecked_param_type = "string[]")] generated_ids: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ParseSessionOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let jsonl = arg_string(&jsonl, "jsonl")?;
    let generated_ids = arg_strings(&generated_ids, "generatedIds")?;
    let opts: ParseOptions = to_typed(&options, "options")?;
    from_serde(&host::parse_session_with_id_list(&jsonl, &opts, &generated_ids).map_err(error_js)?)
}
