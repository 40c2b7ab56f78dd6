//! Asynchronous exports: `compact`, `generateBranchSummary`, and the pipeline methods of
//! `SessionTree` (`compact`, `navigateTree`, `checkCompaction`, `abortCompaction`). Every model
//! call and hook is a JavaScript callback returning a Promise. Conversions only; the logic is
//! [`session_compaction::summarize`] and [`session_compaction::session::engine`].

use super::api::templates;
use super::convert::{arg_string, bad_arg, error_js, from_serde, to_required, to_value, to_values};
use super::host::{get, host_model, link_signal, HostModel, JsClock, JsEvents, JsHooks};
use super::options::{
    check_known_keys, to_options, to_required_options, BRANCH_CALL_KEYS, CANDIDATE_KEYS, CHECK_KEYS, MODEL_CALL_KEYS,
    NAVIGATE_KEYS, SESSION_CALL_KEYS,
};
use super::session::SessionTree;
use super::tokens::{counter_of, host_counter};
use js_sys::Promise;
use session_compaction::api::{BranchSummaryOutcome, CheckCompactionResult, NavigateTreeResult, SessionCompactResult};
use session_compaction::entry::EntryList;
use session_compaction::plan::prepare::CompactionPreparation;
use session_compaction::session::engine::{CheckOptions, CompactRun, NavigateRun};
use session_compaction::summarize::{BranchSummaryOptions, CompactOptions, SummaryRequest};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

/// The JavaScript-only parts of the async API: callbacks, hooks, `AbortSignal`. The data parts
/// of the options and every result are the core's structs (`CompactOptions`,
/// `BranchSummaryOptions`, `SessionCompactOptions` = `CompactRun`, `NavigateTreeOptions` =
/// `NavigateRun`, `CheckCompactionOptions` = `CheckOptions`, and the results of
/// `session_compaction::api`); the interfaces below add the callbacks to them (TypeScript
/// merges interfaces of one name).
#[wasm_bindgen(typescript_custom_section)]
const TS_ASYNC: &'static str = r#"
/** What `complete` receives: one summary to write. */
export interface CompleteRequest extends SummaryRequest { signal?: AbortSignal }
/** The host's model: resolves to the summary text. Reject with an Error carrying `status` and `headers` (or `retryAfterMs`) to enable retries. */
export type CompleteFn = (request: CompleteRequest) => Promise<string>;
/** The model of an async call (a `complete` callback, or the URL of a remote summarizer: POST `{systemPrompt, prompt, purpose, maxTokens}` → `{summary}`; without both, `settings.remoteEndpoint` of the call or of the preparation is used) and its `AbortSignal`. Unknown option names are `E_INVALID_ARGUMENT`. */
export interface ModelCallOptions {
  complete?: CompleteFn; remoteEndpoint?: string; signal?: AbortSignal;
  /** Timeout of one request to `remoteEndpoint`, ms (default 120000): then `E_REMOTE` and the request is aborted. */
  remoteTimeoutMs?: number;
}
/** Options of `compact()`. */
export interface CompactCallOptions extends CompactOptions, ModelCallOptions {}
/** Options of `generateBranchSummary()`. */
export interface BranchSummaryCallOptions extends BranchSummaryOptions, ModelCallOptions {
  complete: CompleteFn;
  /** The host's tokenizer for the summary budget (SPEC §3, §10); default chars/4. */
  countTokens?: CountTokens;
}
/** A value a hook returns, or a Promise of it; `undefined` / `null` (or returning nothing) changes nothing. A hook that throws or rejects fails the operation with `E_HOOK`. */
export type HookReturn<T> = T | undefined | null | void | Promise<T | undefined | null | void>;
/** A compaction a `session_before_compact` hook supplies instead of a model summary: stored as is with `fromExtension: true` (SPEC §11); `firstKeptEntryId` and `tokensBefore` default to the preparation's, `details` is stored as given (left out: none). */
export interface HookCompaction { summary: string; shortSummary?: string; firstKeptEntryId?: string; tokensBefore?: number; details?: unknown }
/** What `session_before_compact` may return: `cancel: true` stops the compaction (`E_CANCELLED`, nothing appended); a `compaction` is used instead of summarizing. */
export interface SessionBeforeCompactResult { cancel?: boolean; compaction?: HookCompaction }
/** What `session.compacting` may return: `prompt` replaces the history/update instruction template, `context` lines go into `<additional-context>`, `preserveData` is stored on the compaction entry. */
export interface SessionCompactingResult { prompt?: string; context?: string[]; preserveData?: unknown }
/** A branch summary a `session_before_tree` hook supplies instead of a model summary (stored with `fromExtension: true`). */
export interface HookBranchSummary { summary: string; details?: unknown }
/** What `session_before_tree` may return: `cancel: true` leaves the leaf where it is (`cancelled: true`); a `summary` is used instead of summarizing the abandoned branch. */
export interface SessionBeforeTreeResult { cancel?: boolean; summary?: HookBranchSummary }
/** Hooks keyed by event name; what each may return is its result type (the after-hooks' values are not read). */
export interface SessionHooks {
  session_before_compact?: (event: { type: "session_before_compact"; preparation: CompactionPreparation; branchEntries: SessionEntry[]; customInstructions?: string; signal?: AbortSignal }) => HookReturn<SessionBeforeCompactResult>;
  "session.compacting"?: (event: { type: "session.compacting"; sessionId: string | null; messages: AgentMessage[] }) => HookReturn<SessionCompactingResult>;
  session_compact?: (event: { type: "session_compact"; compactionEntry: SessionEntry; fromExtension: boolean }) => HookReturn<unknown>;
  session_before_tree?: (event: { type: "session_before_tree"; preparation: { targetId: string; oldLeafId: string | null; commonAncestorId: string | null; entriesToSummarize: SessionEntry[]; userWantsSummary: boolean }; signal?: AbortSignal }) => HookReturn<SessionBeforeTreeResult>;
  session_tree?: (event: { type: "session_tree"; newLeafId: string | null; oldLeafId: string | null; summaryEntry?: SessionEntry; fromExtension?: boolean }) => HookReturn<unknown>;
}
/** The callbacks of `SessionTree.compact()`; `settings.countTokens` counts the cut point, `tokensBefore` and the progress check (SPEC §3; default chars/4). */
export interface SessionCompactOptions extends ModelCallOptions { hooks?: SessionHooks }
/** The callbacks of `SessionTree.navigateTree()`; `countTokens` counts the branch-summary budget (SPEC §3, §10; default chars/4). */
export interface NavigateTreeOptions extends ModelCallOptions { hooks?: SessionHooks; countTokens?: CountTokens }
/** Events of automatic compaction (SPEC §11, §13.5): start and end of an attempt; a compaction that left the context above the threshold (`no_progress`); the breaker opening after `attempts` attempts without progress (`paused`); a due compaction that did not run (`skipped`). */
export type AutoCompactionEvent =
  | { type: "auto_compaction_start"; reason: "overflow" | "threshold" }
  | { type: "auto_compaction_end"; result?: CompactionResult; aborted: boolean; willRetry: boolean; errorMessage?: string }
  | { type: "auto_compaction_no_progress"; reason: "overflow" | "threshold"; contextTokensBefore: number; contextTokensAfter: number }
  | { type: "auto_compaction_paused"; attempts: number }
  | { type: "auto_compaction_skipped"; reason: "overflow" | "threshold"; cause: "paused" | "overflowRecoveredThisTurn" | "otherModel" | "staleOverflow" };
/** A candidate model of automatic compaction. */
export interface CompactionCandidate { complete: CompleteFn; model?: string }
/** The callbacks of `SessionTree.checkCompaction()`: the candidate models (or one `complete`, or the remote summarizer at `remoteEndpoint`, else at `settings.remoteEndpoint`), hooks, events; `settings.countTokens` counts the threshold estimate, the pruned tokens and the compaction (SPEC §3; default chars/4). */
export interface CheckCompactionOptions extends ModelCallOptions {
  candidates?: CompactionCandidate[]; hooks?: SessionHooks;
  onEvent?: (event: { type: "auto_compaction_start"; reason: "overflow" | "threshold" } | { type: "auto_compaction_end"; result?: CompactionResult; aborted: boolean; willRetry: boolean; errorMessage?: string }) => void;
}
"#;

fn need_model(model: Option<HostModel>) -> Result<HostModel, JsValue> {
    model
        .ok_or_else(|| bad_arg("options", "pass `complete` (a function returning Promise<string>) or `remoteEndpoint`"))
}

/// `compact(preparation, options)` → `Promise<CompactionResult>`: the model calls of a
/// compaction through `options.complete` or `options.remoteEndpoint`. SPEC §9.
#[wasm_bindgen(js_name = compact, unchecked_return_type = "Promise<CompactionResult>")]
pub fn compact_preparation(
    #[wasm_bindgen(unchecked_param_type = "CompactionPreparation")] preparation: JsValue,
    #[wasm_bindgen(unchecked_param_type = "CompactCallOptions")] options: JsValue,
) -> Promise {
    let prep: Result<CompactionPreparation, JsValue> =
        to_required(&preparation, "preparation", "a preparation object (the result of prepareCompaction)");
    let opts: Result<CompactOptions, JsValue> = to_options(&options, "options", MODEL_CALL_KEYS);
    future_to_promise(async move {
        let (prep, opts) = (prep?, opts?);
        let (signal, js_signal) = link_signal(&get(&options, "signal"));
        let model = need_model(host_model(&options, prep.settings.remote_endpoint.as_deref(), &js_signal)?)?;
        let templates = templates();
        let result = signal
            .race("Compaction", session_compaction::summarize::compact(&prep, &model, &opts, &templates))
            .await
            .map_err(error_js)?;
        from_serde(&result)
    })
}

/// `generateBranchSummary(entries, options)` → `{summary, readFiles, modifiedFiles}`,
/// `{aborted: true}` or `{error}` (never rejects for model failures). SPEC §10.
#[wasm_bindgen(js_name = generateBranchSummary, unchecked_return_type = "Promise<BranchSummaryOutcome>")]
pub fn generate_branch_summary(
    #[wasm_bindgen(unchecked_param_type = "SessionEntry[]")] entries: JsValue,
    #[wasm_bindgen(unchecked_param_type = "BranchSummaryCallOptions")] options: JsValue,
) -> Promise {
    let values = to_values(&entries, "entries");
    let opts: Result<BranchSummaryOptions, JsValue> = to_options(&options, "options", BRANCH_CALL_KEYS);
    let counter = counter_of(&options, "options").map(host_counter);
    future_to_promise(async move {
        let (values, opts, counter) = (values?, opts?, counter?);
        let (signal, js_signal) = link_signal(&get(&options, "signal"));
        let model = need_model(host_model(&options, None, &js_signal)?)?;
        let templates = templates();
        let list = EntryList::new(&values);
        // The budget counted by the host's `countTokens`, when given (SPEC §3, §10).
        let summary = async {
            match counter.count_entries(&list).await? {
                Some(tokens) => {
                    let counted = session_compaction::plan::tokens::Recounted::new(&list, &tokens);
                    session_compaction::summarize::generate_branch_summary(&counted, &model, &opts, &templates).await
                }
                None => session_compaction::summarize::generate_branch_summary(&list, &model, &opts, &templates).await,
            }
        };
        let out = signal.race("Branch summary", summary).await;
        from_serde(&BranchSummaryOutcome::from(out))
    })
}

/// `extractiveSummary(request)`: the deterministic summary of the summarizer that needs no model
/// (the entry exports it as `extractiveSummarizer`, an async `complete`).
#[wasm_bindgen(js_name = extractiveSummary)]
pub fn extractive_summary(
    #[wasm_bindgen(unchecked_param_type = "SummaryRequest")] request: JsValue,
) -> Result<String, JsValue> {
    let req: SummaryRequest = to_required(&request, "request", "a request object")?;
    Ok(session_compaction::summarize::extractive::extractive_summary(&req))
}

/// `extractiveSummarizer(request)` → `Promise<string>`: a deterministic `complete`
/// implementation that needs no model (sections quoted from the conversation, marked as
/// extractive in the first line). Pass it wherever a `complete` callback is expected.
// An `async fn` export is declared as `Promise<…>` of its return type: "string" gives `Promise<string>`.
#[wasm_bindgen(js_name = extractiveSummarizer, unchecked_return_type = "string")]
pub async fn extractive_summarizer(
    #[wasm_bindgen(unchecked_param_type = "CompleteRequest")] request: JsValue,
) -> Result<JsValue, JsValue> {
    extractive_summary(request).map(JsValue::from)
}

#[wasm_bindgen(js_class = SessionTree)]
impl SessionTree {
    /// Runs the whole compaction pipeline on the current branch (SPEC §9, §11) and resolves to
    /// `{compactionEntry, result, fromExtension, context}`. Rejects with `E_BUSY` (another
    /// compaction runs), `E_CANCELLED` ("Compaction cancelled"), `E_ABORTED`, `E_HOOK`,
    /// `E_ALREADY_COMPACTED`, `E_NOTHING_TO_COMPACT`, `E_MODEL`/`E_REMOTE`. Nothing is appended
    /// on failure.
    #[wasm_bindgen(js_name = compact, unchecked_return_type = "Promise<SessionCompactResult>")]
    pub fn compact_session(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SessionCompactOptions")] options: JsValue,
    ) -> Promise {
        let engine = self.engine.clone();
        let run: Result<CompactRun, JsValue> = to_options(&options, "options", SESSION_CALL_KEYS);
        let counter = counter_of(&get(&options, "settings"), "options.settings").map(host_counter);
        let call = self.pending.enter();
        future_to_promise(async move {
            let counter = counter?;
            let mut run = run?;
            run.count_tokens = counter;
            let (signal, js_signal) = link_signal(&get(&options, "signal"));
            call.start(&signal);
            let model = need_model(host_model(&options, run.settings.remote_endpoint.as_deref(), &js_signal)?)?;
            let hooks = JsHooks::of(&options, js_signal)?;
            engine.set_templates(templates());
            let done =
                engine.compact(&model, &hooks, &run, Some(&signal), js_sys::Date::now()).await.map_err(error_js)?;
            let context = engine.session().read(|s| s.build_session_context());
            from_serde(&SessionCompactResult::new(done, context))
        })
    }

    /// Navigates to `targetId` (SPEC §10), optionally summarizing the branch being left; resolves
    /// to `{editorText?, cancelled, aborted?, summaryEntry?, newLeafId}`.
    #[wasm_bindgen(js_name = navigateTree, unchecked_return_type = "Promise<NavigateTreeResult>")]
    pub fn navigate_tree(
        &self,
        #[wasm_bindgen(js_name = targetId, unchecked_param_type = "string")] target_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "NavigateTreeOptions")] options: JsValue,
    ) -> Promise {
        let engine = self.engine.clone();
        let target_id = arg_string(&target_id, "targetId");
        let run: Result<NavigateRun, JsValue> = to_options(&options, "options", NAVIGATE_KEYS);
        let counter = counter_of(&options, "options").map(host_counter);
        let call = self.pending.enter();
        future_to_promise(async move {
            let counter = counter?;
            let (target_id, mut run) = (target_id?, run?);
            run.count_tokens = counter;
            let (signal, js_signal) = link_signal(&get(&options, "signal"));
            call.start(&signal);
            let model = host_model(&options, None, &js_signal)?;
            let hooks = JsHooks::of(&options, js_signal)?;
            engine.set_templates(templates());
            let out = engine
                .navigate_tree(&target_id, model.as_ref(), &hooks, &run, Some(&signal), js_sys::Date::now())
                .await
                .map_err(error_js)?;
            let leaf = engine.session().read(|s| s.leaf_id().map(str::to_owned));
            from_serde(&NavigateTreeResult::new(out, leaf.as_deref()))
        })
    }

    /// Automatic compaction after a model turn (SPEC §11): prune, then the overflow or the
    /// threshold path; see [`session_compaction::session::engine::SessionEngine::check_compaction`]. Never rejects
    /// for a failed compaction: `errorMessage` says "Context overflow recovery failed: …" or
    /// "Auto-compaction failed: …".
    #[wasm_bindgen(js_name = checkCompaction, unchecked_return_type = "Promise<CheckCompactionResult>")]
    pub fn check_compaction(
        &self,
        #[wasm_bindgen(js_name = assistantMessage, unchecked_param_type = "AgentMessage")] assistant_message: JsValue,
        #[wasm_bindgen(unchecked_param_type = "CheckCompactionOptions")] options: JsValue,
    ) -> Promise {
        let engine = self.engine.clone();
        let message = to_value(&assistant_message, "assistantMessage");
        let check: Result<CheckOptions, JsValue> = to_required_options(&options, "options", CHECK_KEYS);
        let counter = counter_of(&get(&options, "settings"), "options.settings").map(host_counter);
        let call = self.pending.enter();
        future_to_promise(async move {
            let counter = counter?;
            let (message, mut check) = (message?, check?);
            check.count_tokens = counter;
            let (signal, js_signal) = link_signal(&get(&options, "signal"));
            call.start(&signal);
            let mut candidates = Vec::new();
            let list = get(&options, "candidates");
            if super::safe::is_array(&list).map_err(|_| bad_arg("options.candidates", "cannot be read"))? {
                let n = get(&list, "length").as_f64().unwrap_or(0.0) as u32;
                for i in 0..n {
                    let what = format!("options.candidates[{i}]");
                    let c = js_sys::Reflect::get_u32(&list, i).map_err(|_| bad_arg(&what, "cannot be read"))?;
                    let f = get(&c, "complete");
                    let f = if f.is_function() {
                        check_known_keys(&c, &what, CANDIDATE_KEYS)?;
                        f
                    } else {
                        c.clone()
                    };
                    let func = f
                        .dyn_into::<js_sys::Function>()
                        .map_err(|_| bad_arg(&what, "each candidate needs `complete`"))?;
                    candidates.push(HostModel::of_function(func, &js_signal));
                }
            } else if !list.is_undefined() && !list.is_null() {
                return Err(bad_arg("options.candidates", "expected an array of {complete, model?}"));
            }
            if candidates.is_empty() {
                // The one `complete`, else the remote summarizer (`remoteEndpoint`, else
                // `settings.remoteEndpoint`).
                let model = host_model(&options, check.settings.remote_endpoint.as_deref(), &js_signal)?;
                candidates.push(model.ok_or_else(|| {
                    bad_arg(
                        "options",
                        "pass `candidates`, `complete`, or a `remoteEndpoint` (in the options or in `settings`)",
                    )
                })?);
            }
            let hooks = JsHooks::of(&options, js_signal)?;
            let on_event = get(&options, "onEvent");
            if !on_event.is_undefined() && !on_event.is_null() && !on_event.is_function() {
                return Err(bad_arg("options.onEvent", "expected a function (event) => void"));
            }
            let events = JsEvents(on_event);
            engine.set_templates(templates());
            let out = engine
                .check_compaction(&message, &check, &candidates, &hooks, &JsClock, &events, Some(&signal))
                .await
                .map_err(error_js)?;
            from_serde(&CheckCompactionResult::from(out))
        })
    }

    /// Aborts the running compaction or navigation, if any (it rejects with `E_ABORTED` /
    /// resolves cancelled; nothing is appended), and those called and not started yet (in the
    /// same tick as the call: they start aborted).
    #[wasm_bindgen(js_name = abortCompaction)]
    pub fn abort_compaction(&self) {
        self.engine.abort();
        self.pending.abort();
    }

    /// True while a compaction or navigation runs on this session, and from the call on (its
    /// work starts in a later microtask).
    #[wasm_bindgen(getter, js_name = isCompacting)]
    pub fn is_compacting(&self) -> bool {
        self.engine.is_busy() || self.pending.any()
    }
}
