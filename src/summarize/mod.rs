//! Summaries: the prompts of a compaction and of a branch summary, the calls to the host's
//! model, and how the answers are composed. The engine never talks to a model itself: it hands
//! each [`SummaryRequest`] to a [`Complete`] implementation (a JavaScript callback, a remote
//! endpoint, an extractive summarizer, a test double). SPEC §9, §10.

pub mod extractive;
pub mod preview;
pub mod remote;

use crate::context::convert::convert_to_llm;
use crate::entry::EntrySource;
use crate::error::{Error, Result};
use crate::host::{MaybeBoxFuture, MaybeSend, MaybeSync};
use crate::plan::branch::{branch_token_budget, prepare_branch_entries};
use crate::plan::file_ops::{FileLists, FileOps};
use crate::plan::prepare::CompactionPreparation;
use crate::prompt::frames::Frames;
use crate::prompt::serialize::serialize_conversation;
use crate::prompt::templates::{self as prompts, PromptTemplates};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::future::Future;

/// Why a summary is requested (the `purpose` of a request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum Purpose {
    /// First summary of the history (no previous summary).
    History,
    /// Update of the previous compaction's summary with newer history.
    Update,
    /// Summary of the early part of a split turn.
    TurnPrefix,
    /// One or two sentences about the kept recent messages.
    Short,
    /// Summary of a branch the user navigated away from.
    Branch,
}

/// One model call the engine needs: the host turns it into a request to its model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct SummaryRequest {
    /// What this summary is for.
    pub purpose: Purpose,
    /// The system prompt (`summarization-system.md`).
    pub system_prompt: String,
    /// The user prompt: conversation, optional previous summary and context, instructions.
    pub prompt: String,
    /// Output budget in tokens (SPEC §9 budgets).
    pub max_tokens: u64,
    /// Reasoning effort to ask for (`"high"` for compaction requests; absent for branches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub reasoning: Option<String>,
}

/// The host's model: answers one request with the summary text. Errors: return
/// [`Error::Summarization`] for a model failure or [`Error::Aborted`] when cancelled.
///
/// Natively an implementation is `Send + Sync` and its future `Send` (so a compaction can be
/// `tokio::spawn`ed); on `wasm32` neither is required ([`crate::host::MaybeSend`]). An
/// `async fn complete(&self, request: SummaryRequest) -> Result<String>` implements it.
pub trait Complete: MaybeSend + MaybeSync {
    /// Asks the model; resolves to the text of its answer.
    fn complete(&self, request: SummaryRequest) -> impl Future<Output = Result<String>> + MaybeSend;

    /// Who writes this model's answers, as a compaction's result reports it (`summarizer`,
    /// SPEC §13.5): [`Summarizer::Model`] (the default) for a model,
    /// [`Summarizer::Extractive`] for the extractive summarizer.
    fn summarizer(&self) -> Summarizer {
        Summarizer::Model
    }
}

/// [`Complete`] through a pointer: [`compact`] and [`generate_branch_summary`] run one copy of
/// their code for every host model (each model's future is boxed) instead of one per model type.
pub(crate) trait CompleteDyn: MaybeSend + MaybeSync {
    /// [`Complete::complete`], its future boxed.
    fn complete_boxed(&self, request: SummaryRequest) -> MaybeBoxFuture<'_, Result<String>>;
    /// [`Complete::summarizer`].
    fn summarizer_dyn(&self) -> Summarizer;
}

impl<C: Complete> CompleteDyn for C {
    fn complete_boxed(&self, request: SummaryRequest) -> MaybeBoxFuture<'_, Result<String>> {
        Box::pin(self.complete(request))
    }
    fn summarizer_dyn(&self) -> Summarizer {
        self.summarizer()
    }
}

/// Any [`Complete`] behind a pointer, itself a [`Complete`] of one type: code generic over the
/// model (the session engine's compaction, called with a host model and with the retrying
/// candidates of an automatic compaction) is compiled once when it is given this.
pub(crate) struct DynModel<'a>(pub(crate) &'a dyn CompleteDyn);

impl Complete for DynModel<'_> {
    fn complete(&self, request: SummaryRequest) -> impl Future<Output = Result<String>> + MaybeSend {
        self.0.complete_boxed(request)
    }
    fn summarizer(&self) -> Summarizer {
        self.0.summarizer_dyn()
    }
}

/// Options of [`compact`] (SPEC §9, §11).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactOptions {
    /// Extra focus appended to the history/update instructions as `Additional focus: …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub custom_instructions: Option<String>,
    /// Replaces the history/update instruction template (set by a `session.compacting` hook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub prompt_override: Option<String>,
    /// Lines of `<additional-context>` (from a `session.compacting` hook).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub extra_context: Vec<String>,
}

/// File lists stored in a summary entry's `details`.
#[cfg_attr(feature = "tsify", tsify::declare)]
pub type SummaryDetails = FileLists;

/// Which summarizer wrote a compaction (SPEC §13.5), as the session engine reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum Summarizer {
    /// The host's model (`complete`, a candidate, or the remote endpoint).
    Model,
    /// The extractive summarizer: the fallback when the model failed (`fallbackReason` says
    /// why), or the host's model itself ([`Complete::summarizer`]).
    Extractive,
    /// A `session_before_compact` hook supplied the compaction.
    Extension,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The result of [`compact`]: what the host appends as a `compaction` entry. SPEC §9.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// The summary with the file-operation blocks appended.
    pub summary: String,
    /// One or two sentences about the kept messages.
    pub short_summary: String,
    /// First entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Context tokens before compaction (provider count).
    pub tokens_before: f64,
    /// `{readFiles, modifiedFiles}`.
    pub details: SummaryDetails,
    /// Which summarizer wrote it; set by the session engine (absent from [`compact`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub summarizer: Option<Summarizer>,
    /// Why the fallback summarizer was used: the model's error (SPEC §13.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub fallback_reason: Option<String>,
    /// The purposes whose answer was longer than the request's `maxTokens` (estimated) and was
    /// cut at a paragraph ([`bound_to_max_tokens`], SPEC §13.5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub truncated: Vec<Purpose>,
    /// The short summary failed with this error: `shortSummary` is `""` and the compaction entry
    /// has none; the history summary is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub short_summary_error: Option<String>,
    /// Estimated tokens of the built context before the compaction (SPEC §3 per message, no
    /// provider usage; session engine only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub context_tokens_before: Option<f64>,
    /// Estimated tokens of the built context after the compaction (session engine only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub context_tokens_after: Option<f64>,
    /// The compaction did not bring the context below the threshold: the estimate after is not
    /// below the estimate before, or is still above `contextWindow - reserveTokens` when the
    /// window is known (session engine only, SPEC §13.5).
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub no_progress: bool,
}

/// The text a model answer stands for when there is nothing to summarize.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";
/// The separator between the history summary and a split turn's prefix summary.
pub const TURN_CONTEXT_SEPARATOR: &str = "\n\n---\n\n**Turn Context (split turn):**\n\n";
/// The summary of an empty branch selection.
pub const NO_CONTENT: &str = "No content to summarize";

/// Output budget of the history/update request: `floor(0.8 · reserveTokens)`.
pub fn history_max_tokens(reserve_tokens: u64) -> u64 {
    reserve_tokens * 8 / 10
}
/// Output budget of the turn-prefix request: `floor(0.5 · reserveTokens)`.
pub fn turn_prefix_max_tokens(reserve_tokens: u64) -> u64 {
    reserve_tokens / 2
}
/// Output budget of the short request: `min(512, floor(0.2 · reserveTokens))`.
pub fn short_max_tokens(reserve_tokens: u64) -> u64 {
    (reserve_tokens * 2 / 10).min(512)
}
/// Output budget of a branch summary.
pub const BRANCH_MAX_TOKENS: u64 = 2048;

/// Bounds a model's answer by its request's budget (SPEC §13.5): when its estimate
/// (`ceil(UTF-16 units / 4)`, SPEC §3) exceeds `max_tokens`, it is cut to at most
/// `4 · max_tokens` UTF-16 units, at the last paragraph break (blank line) that keeps at least
/// half of that, else at the last line break, else at the last space, else at a character
/// boundary, and trailing blanks are removed. Returns the text and whether it was cut.
/// `max_tokens == 0` means no bound.
pub fn bound_to_max_tokens(text: String, max_tokens: u64) -> (String, bool) {
    let units = crate::js::utf16_len(&text);
    if max_tokens == 0 || units.div_ceil(4) <= max_tokens {
        return (text, false);
    }
    let budget = max_tokens.saturating_mul(4);
    let mut used = 0u64;
    let mut end = 0usize;
    for (i, c) in text.char_indices() {
        used += c.len_utf16() as u64;
        if used > budget {
            break;
        }
        end = i + c.len_utf8();
    }
    let head = &text[..end];
    let min = end / 2;
    let cut = [head.rfind("\n\n"), head.rfind('\n'), head.rfind(' ')]
        .into_iter()
        .flatten()
        .find(|&at| at >= min)
        .unwrap_or(end);
    (head[..cut].trim_end().to_string(), true)
}

/// `E_MODEL` when a compaction's answer is empty or only blanks (SPEC §13.5): a compaction never
/// stores an empty summary; the history and turn-prefix requests fail the compaction (or its
/// fallback runs), an empty short summary is a `shortSummaryError`. A branch summary's empty
/// answer is the reference's rule (the preamble alone, SPEC §10) and is not checked.
fn non_empty(text: &str, purpose: Purpose) -> Result<()> {
    if crate::prompt::frames::is_blank(text) {
        let name = match purpose {
            Purpose::History => "history",
            Purpose::Update => "summary update",
            Purpose::TurnPrefix => "turn prefix",
            Purpose::Short => "short summary",
            Purpose::Branch => "branch summary",
        };
        return Err(Error::Model {
            message: format!("the model's answer to the {name} request is empty"),
            status: None,
            retry_after_ms: None,
        });
    }
    Ok(())
}

/// A model's answer as it enters a summary: its frame tags escaped (SPEC §13.4), then bounded
/// by the request's budget; a cut is recorded in `truncated`.
fn settle_answer(
    text: &str,
    purpose: Purpose,
    max_tokens: u64,
    frames: &Frames,
    truncated: &mut Vec<Purpose>,
) -> String {
    let (text, cut) = bound_to_max_tokens(frames.neutralize(text).into_owned(), max_tokens);
    if cut && !truncated.contains(&purpose) {
        truncated.push(purpose);
    }
    text
}

/// Assembles a prompt (SPEC §9): `<conversation>`, then `<previous-summary>` and
/// `<additional-context>` when present, then the instructions; the frames of the embedded
/// templates are protected (see [`assemble_prompt_with`]).
pub fn assemble_prompt(
    conversation: &str,
    previous_summary: Option<&str>,
    context: &[String],
    instructions: &str,
) -> String {
    assemble_prompt_with(&Frames::default(), conversation, previous_summary, context, instructions)
}

/// Assembles a prompt (SPEC §9, §13.4): `<conversation>\n{conversation}\n</conversation>`, then
/// `<previous-summary>` and `<additional-context>` (one `- line` per context line) when
/// present, then the instructions. The previous summary and the context lines are content:
/// their frame tags are escaped ([`Frames::neutralize_summary`], [`Frames::neutralize`]). The
/// conversation must already be safe (see [`Frames::neutralize_messages`]); the instructions
/// are the templates' own text and are used as they are.
pub fn assemble_prompt_with(
    frames: &Frames,
    conversation: &str,
    previous_summary: Option<&str>,
    context: &[String],
    instructions: &str,
) -> String {
    use crate::prompt::frames as f;
    let mut p = String::with_capacity(conversation.len() + instructions.len() + 128);
    p.push_str(f::CONVERSATION_OPEN);
    p.push_str(conversation);
    p.push_str(f::CONVERSATION_CLOSE);
    if let Some(prev) = previous_summary {
        p.push_str(f::PREVIOUS_SUMMARY_OPEN);
        p.push_str(&frames.neutralize_summary(prev));
        p.push_str(f::PREVIOUS_SUMMARY_CLOSE);
    }
    if !context.is_empty() {
        p.push_str(f::ADDITIONAL_CONTEXT_OPEN);
        for line in context {
            p.push_str("- ");
            p.push_str(&frames.neutralize(line));
            p.push('\n');
        }
        p.push_str(f::ADDITIONAL_CONTEXT_CLOSE);
    }
    p.push_str(instructions);
    p
}

/// `Additional focus: …` after the instructions; the custom text is content (SPEC §13.4).
fn with_focus(instructions: String, custom: Option<&str>, frames: &Frames) -> String {
    match custom.filter(|c| !c.is_empty()) {
        Some(c) => format!("{instructions}\n\nAdditional focus: {}", frames.neutralize(c)),
        None => instructions,
    }
}

/// The `<conversation>` transcript of agent messages, their frame tags escaped (SPEC §8, §13.4).
fn conversation_of(messages: &[Value], templates: &PromptTemplates, frames: &Frames) -> Result<String> {
    let safe = frames.neutralize_messages(messages);
    Ok(serialize_conversation(&convert_to_llm(&safe, templates)?))
}

/// The requests of a compaction before the short summary (SPEC §9): the history/update request
/// when there is history, and the turn-prefix request for a split turn with a non-empty prefix.
/// Custom instructions are appended (`Additional focus: …`) to the history/update request, or to
/// the turn-prefix request when there is no history (SPEC §12.9: they are never dropped).
pub fn compaction_requests(
    prep: &CompactionPreparation,
    options: &CompactOptions,
    templates: &PromptTemplates,
) -> Result<(Option<SummaryRequest>, Option<SummaryRequest>)> {
    let system_prompt = templates.render(prompts::SUMMARIZATION_SYSTEM, &Value::Null)?;
    let reserve = prep.settings.reserve_tokens;
    let history = if prep.messages_to_summarize.is_empty() {
        None
    } else {
        let (purpose, template) = match prep.previous_summary {
            Some(_) => (Purpose::Update, prompts::COMPACTION_UPDATE_SUMMARY),
            None => (Purpose::History, prompts::COMPACTION_SUMMARY),
        };
        // A prompt that replaces the template (a `session.compacting` hook's) adds its own tags to
        // this request's frames, as an installed template would (SPEC §13.4).
        let (base, frames) = match &options.prompt_override {
            Some(p) => (p.clone(), Cow::Owned(templates.frames().with_text(p))),
            None => (templates.render(template, &Value::Null)?, Cow::Borrowed(templates.frames())),
        };
        let instructions = with_focus(base, options.custom_instructions.as_deref(), &frames);
        let conversation = conversation_of(&prep.messages_to_summarize, templates, &frames)?;
        Some(SummaryRequest {
            purpose,
            system_prompt: system_prompt.clone(),
            prompt: assemble_prompt_with(
                &frames,
                &conversation,
                prep.previous_summary.as_deref(),
                &options.extra_context,
                &instructions,
            ),
            max_tokens: history_max_tokens(reserve),
            reasoning: Some("high".into()),
        })
    };
    let prefix = if prep.is_split_turn && !prep.turn_prefix_messages.is_empty() {
        let conversation = conversation_of(&prep.turn_prefix_messages, templates, templates.frames())?;
        let base = templates.render(prompts::COMPACTION_TURN_PREFIX, &Value::Null)?;
        // §12.9: with no history request to carry them, the custom instructions go here.
        let focus = if history.is_none() { options.custom_instructions.as_deref() } else { None };
        let instructions = with_focus(base, focus, templates.frames());
        Some(SummaryRequest {
            purpose: Purpose::TurnPrefix,
            system_prompt,
            prompt: assemble_prompt_with(templates.frames(), &conversation, None, &[], &instructions),
            max_tokens: turn_prefix_max_tokens(reserve),
            reasoning: Some("high".into()),
        })
    } else {
        None
    };
    Ok((history, prefix))
}

/// Composes the summary from the answers (SPEC §9): split turn → history (or "No prior
/// history.") + separator + prefix; else the history answer; else the previous summary; else
/// "No prior history.".
pub fn compose_summary(prep: &CompactionPreparation, history: Option<String>, prefix: Option<String>) -> String {
    compose_parts(prep.previous_summary.as_deref(), history, prefix)
}

/// [`compose_summary`] on its inputs alone: the previous summary and the two answers (also
/// used by [`preview`] to budget a summary before any answer exists).
pub fn compose_parts(previous_summary: Option<&str>, history: Option<String>, prefix: Option<String>) -> String {
    match (history, prefix) {
        (h, Some(p)) => format!("{}{TURN_CONTEXT_SEPARATOR}{p}", h.as_deref().unwrap_or(NO_PRIOR_HISTORY)),
        (Some(h), None) => h,
        (None, None) => previous_summary.unwrap_or(NO_PRIOR_HISTORY).to_string(),
    }
}

/// The short-summary request: the recent messages with the composed summary as
/// `<previous-summary>`.
pub fn short_request(
    prep: &CompactionPreparation,
    composed: &str,
    options: &CompactOptions,
    templates: &PromptTemplates,
) -> Result<SummaryRequest> {
    let conversation = conversation_of(&prep.recent_messages, templates, templates.frames())?;
    let instructions = templates.render(prompts::COMPACTION_SHORT_SUMMARY, &Value::Null)?;
    Ok(SummaryRequest {
        purpose: Purpose::Short,
        system_prompt: templates.render(prompts::SUMMARIZATION_SYSTEM, &Value::Null)?,
        prompt: assemble_prompt_with(
            templates.frames(),
            &conversation,
            Some(composed),
            &options.extra_context,
            &instructions,
        ),
        max_tokens: short_max_tokens(prep.settings.reserve_tokens),
        reasoning: Some("high".into()),
    })
}

/// Appends `part` to a composed summary (SPEC §12.10): an empty part changes nothing; otherwise
/// the text's trailing whitespace (JavaScript `trimEnd`) is removed and `"\n\n" + part` appended.
pub fn append_part(mut text: String, part: &str) -> String {
    if part.is_empty() {
        return text;
    }
    text.truncate(text.trim_end_matches(crate::js::is_js_whitespace).len());
    text.push_str("\n\n");
    text.push_str(part);
    text
}

/// Appends the file-operation blocks to a summary as its last part (SPEC §8, §12.10: after a
/// blank line; nothing when both lists are empty; one line per path, §13.4:
/// [`format_file_blocks`](prompts::format_file_blocks)) and returns the lists.
pub fn with_file_blocks(summary: String, ops: &FileOps, templates: &PromptTemplates) -> Result<(String, FileLists)> {
    let lists = ops.file_lists();
    let blocks = prompts::format_file_blocks(templates, &lists.read_files, &lists.modified_files)?;
    Ok((append_part(summary, &blocks), lists))
}

/// Runs a compaction's model calls and composes the result (SPEC §9). The history/update and
/// turn-prefix requests are both started before either is awaited; the short summary follows.
/// Each answer is escaped (SPEC §13.4) and bounded by its request's `maxTokens` (SPEC §13.5,
/// `truncated`). A failed short summary keeps the history summary: `shortSummary` is `""` and
/// `shortSummaryError` says why. Errors: a failed history/update or turn-prefix request (the
/// first failure wins), an abort, or a template error.
pub fn compact<'a, C: Complete>(
    prep: &'a CompactionPreparation,
    model: &'a C,
    options: &'a CompactOptions,
    templates: &'a PromptTemplates,
) -> impl Future<Output = Result<CompactionResult>> + 'a {
    compact_with(prep, model, options, templates)
}

/// [`compact`] over any model: one future type for all of them.
async fn compact_with(
    prep: &CompactionPreparation,
    model: &dyn CompleteDyn,
    options: &CompactOptions,
    templates: &PromptTemplates,
) -> Result<CompactionResult> {
    let (history_req, prefix_req) = compaction_requests(prep, options, templates)?;
    let ask = |req: Option<SummaryRequest>| async move {
        match req {
            Some(r) => {
                let (purpose, max) = (r.purpose, r.max_tokens);
                let text = model.complete_boxed(r).await?;
                non_empty(&text, purpose).map(|()| Some((purpose, max, text)))
            }
            None => Ok(None),
        }
    };
    let (history, prefix) = futures_util::future::join(ask(history_req), ask(prefix_req)).await;
    let (history, prefix) = (history?, prefix?);
    let frames = templates.frames();
    let mut truncated = Vec::new();
    let mut settle = |a: Option<(Purpose, u64, String)>| {
        a.map(|(purpose, max, text)| settle_answer(&text, purpose, max, frames, &mut truncated))
    };
    let (history, prefix) = (settle(history), settle(prefix));
    let composed = compose_summary(prep, history, prefix);
    let short_req = short_request(prep, &composed, options, templates)?;
    let short_max = short_req.max_tokens;
    let short = model.complete_boxed(short_req).await.and_then(|t| non_empty(&t, Purpose::Short).map(|()| t));
    let (short_summary, short_summary_error) = match short {
        Ok(text) => (settle_answer(&text, Purpose::Short, short_max, frames, &mut truncated), None),
        Err(e @ Error::Aborted { .. }) => return Err(e),
        Err(e) => (String::new(), Some(e.to_string())),
    };
    let (summary, details) = with_file_blocks(composed, &(&prep.file_ops).into(), templates)?;
    Ok(CompactionResult {
        summary,
        short_summary,
        first_kept_entry_id: prep.first_kept_entry_id.clone(),
        tokens_before: prep.tokens_before,
        details,
        summarizer: None,
        fallback_reason: None,
        truncated,
        short_summary_error,
        context_tokens_before: None,
        context_tokens_after: None,
        no_progress: false,
    })
}

/// Options of [`generate_branch_summary`] (SPEC §10).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchSummaryOptions {
    /// The model's context window (default 128000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub context_window: Option<u64>,
    /// Tokens kept free (default 16384); the budget is `contextWindow - reserveTokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub reserve_tokens: Option<u64>,
    /// Instructions that replace the branch-summary template (`branch-summary.md`) when given
    /// and non-empty (SPEC §10; unlike a compaction, where they are appended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub custom_instructions: Option<String>,
}

/// A branch summary: what the host stores in a `branch_summary` entry (`details` = the lists).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct BranchSummary {
    /// Preamble + model text + file blocks (or "No content to summarize").
    pub summary: String,
    /// Files only read in the branch.
    pub read_files: Vec<String>,
    /// Files written or edited in the branch.
    pub modified_files: Vec<String>,
    /// The model's answer was longer than the request's `maxTokens` and was cut (SPEC §13.5).
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub truncated: bool,
}

/// The branch-summary request for `entries` (chronological), or `None` with the selection's
/// file lists when nothing is selected.
pub fn branch_summary_request<S: EntrySource + ?Sized>(
    entries: &S,
    options: &BranchSummaryOptions,
    templates: &PromptTemplates,
) -> Result<(Option<SummaryRequest>, FileOps)> {
    let budget = branch_token_budget(options.context_window, options.reserve_tokens.unwrap_or(16384));
    let selection = prepare_branch_entries(entries, budget);
    if selection.messages.is_empty() {
        return Ok((None, selection.file_ops));
    }
    let conversation = conversation_of(&selection.messages, templates, templates.frames())?;
    // SPEC §10: the host's instructions replace the branch-summary template (no `Additional
    // focus`); they are content, so their frame tags are escaped (SPEC §13.4).
    let instructions = match options.custom_instructions.as_deref().filter(|c| !c.is_empty()) {
        Some(custom) => templates.frames().neutralize(custom).into_owned(),
        None => templates.render(prompts::BRANCH_SUMMARY, &Value::Null)?,
    };
    let req = SummaryRequest {
        purpose: Purpose::Branch,
        system_prompt: templates.render(prompts::SUMMARIZATION_SYSTEM, &Value::Null)?,
        prompt: assemble_prompt_with(templates.frames(), &conversation, None, &[], &instructions),
        max_tokens: BRANCH_MAX_TOKENS,
        reasoning: None,
    };
    Ok((Some(req), selection.file_ops))
}

/// Summarizes a branch the user leaves (SPEC §10): selects messages newest→oldest within the
/// budget, asks the model, and returns preamble + answer + file blocks. An empty selection gives
/// "No content to summarize" without calling the model. Errors: the model's error.
pub fn generate_branch_summary<'a, S: EntrySource, C: Complete>(
    entries: &'a S,
    model: &'a C,
    options: &'a BranchSummaryOptions,
    templates: &'a PromptTemplates,
) -> impl Future<Output = Result<BranchSummary>> + 'a {
    branch_summary_with(entries, model, options, templates)
}

/// [`generate_branch_summary`] over any model and any entry source: one future type.
async fn branch_summary_with(
    entries: &dyn EntrySource,
    model: &dyn CompleteDyn,
    options: &BranchSummaryOptions,
    templates: &PromptTemplates,
) -> Result<BranchSummary> {
    let (request, ops) = branch_summary_request(entries, options, templates)?;
    let Some(request) = request else {
        return Ok(BranchSummary {
            summary: NO_CONTENT.into(),
            read_files: Vec::new(),
            modified_files: Vec::new(),
            truncated: false,
        });
    };
    let max = request.max_tokens;
    let mut cut = Vec::new();
    let text = settle_answer(&model.complete_boxed(request).await?, Purpose::Branch, max, templates.frames(), &mut cut);
    let preamble = templates.render(prompts::BRANCH_SUMMARY_PREAMBLE, &Value::Null)?;
    let (summary, lists) = with_file_blocks(append_part(preamble, &text), &ops, templates)?;
    Ok(BranchSummary {
        summary,
        read_files: lists.read_files,
        modified_files: lists.modified_files,
        truncated: !cut.is_empty(),
    })
}
