//! Compaction preparation: what to summarize, what to keep, and the settings that decide it.
//! SPEC §5 with the deviations of §12.1–§12.3.

use crate::entry::message_of::message_of;
use crate::entry::EntrySource;
use crate::entry::{EntryKind, Role, UsageMeta};
use crate::plan::cut_point::find_cut_point;
use crate::plan::file_ops::FileOps;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Compaction settings (SPEC §5). Token numbers are estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionSettings {
    /// Automatic compaction is on.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Tokens kept free for the model's answer; compaction triggers above
    /// `contextWindow - reserveTokens`.
    #[serde(default = "default_reserve")]
    pub reserve_tokens: u64,
    /// Estimated tokens of recent messages kept verbatim.
    #[serde(default = "default_keep")]
    pub keep_recent_tokens: u64,
    /// Whether a threshold compaction is followed by "Continue if you have next steps."
    /// (absent means true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub auto_continue: Option<bool>,
    /// URL of a remote summarizer (POST `{systemPrompt, prompt}` → `{summary}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub remote_endpoint: Option<String>,
    /// What writes the summary when every model failed (SPEC §13.5): `"extractive"` (the
    /// default of automatic compaction: a session is never stuck on an overflow because the model
    /// is down) or `"none"`. A manual compaction falls back only when this is `"extractive"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub fallback: Option<Fallback>,
    /// Automatic compaction stops after this many consecutive attempts that failed or made no
    /// progress, until the context changes (default 3, SPEC §13.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub max_attempts_without_progress: Option<u32>,
    /// `"usage"`: every estimate (cut point, threshold) is scaled by the measured ratio of the
    /// provider's usage to the estimate of the same context on this branch
    /// ([`crate::plan::tokens::calibration_factor`]), in place of the adaptive keep of SPEC §5;
    /// the factor used is reported as `tokenCalibrationFactor`. Absent: estimates as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub token_calibration: Option<crate::plan::tokens::TokenCalibration>,
}

/// `compaction.fallback` (SPEC §13.5): the summarizer used when every model failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum Fallback {
    /// The extractive summarizer (no model needed).
    Extractive,
    /// No fallback: the compaction fails.
    None,
}

/// Default of [`CompactionSettings::max_attempts_without_progress`].
pub const DEFAULT_MAX_ATTEMPTS_WITHOUT_PROGRESS: u32 = 3;

impl CompactionSettings {
    /// Whether a failed compaction falls back to the extractive summarizer: automatic ones
    /// unless `fallback` is `"none"`, manual ones only when it is `"extractive"` (SPEC §13.5).
    pub fn falls_back(&self, automatic: bool) -> bool {
        match self.fallback {
            Some(Fallback::Extractive) => true,
            Some(Fallback::None) => false,
            None => automatic,
        }
    }

    /// [`CompactionSettings::max_attempts_without_progress`] or its default (3); at least 1.
    pub fn attempts_limit(&self) -> u32 {
        self.max_attempts_without_progress.unwrap_or(DEFAULT_MAX_ATTEMPTS_WITHOUT_PROGRESS).max(1)
    }
}

fn yes() -> bool {
    true
}
fn default_reserve() -> u64 {
    16384
}
fn default_keep() -> u64 {
    20000
}

impl Default for CompactionSettings {
    /// `{enabled: true, reserveTokens: 16384, keepRecentTokens: 20000}` (SPEC §5).
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
            auto_continue: None,
            remote_endpoint: None,
            fallback: None,
            max_attempts_without_progress: None,
            token_calibration: None,
        }
    }
}

/// File operations as arrays, the wire form of [`FileOps`] in a preparation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct FileOpsLists {
    /// Paths read.
    pub read: Vec<String>,
    /// Paths written.
    pub written: Vec<String>,
    /// Paths edited.
    pub edited: Vec<String>,
}

impl From<&FileOps> for FileOpsLists {
    fn from(f: &FileOps) -> Self {
        Self {
            read: f.read.iter().cloned().collect(),
            written: f.written.iter().cloned().collect(),
            edited: f.edited.iter().cloned().collect(),
        }
    }
}

impl From<&FileOpsLists> for FileOps {
    fn from(f: &FileOpsLists) -> Self {
        Self {
            read: f.read.iter().cloned().collect(),
            written: f.written.iter().cloned().collect(),
            edited: f.edited.iter().cloned().collect(),
        }
    }
}

/// What a compaction will summarize and keep (SPEC §5). Messages are agent messages as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct CompactionPreparation {
    /// Id of the first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Messages summarized into the history summary.
    #[cfg_attr(feature = "tsify", tsify(type = "AgentMessage[]"))]
    pub messages_to_summarize: Vec<Value>,
    /// Messages of the split turn before the cut (summarized separately).
    #[cfg_attr(feature = "tsify", tsify(type = "AgentMessage[]"))]
    pub turn_prefix_messages: Vec<Value>,
    /// Messages kept verbatim.
    #[cfg_attr(feature = "tsify", tsify(type = "AgentMessage[]"))]
    pub recent_messages: Vec<Value>,
    /// The cut falls inside a turn.
    pub is_split_turn: bool,
    /// Context tokens of the last fresh usage (provider count), 0 without one.
    pub tokens_before: f64,
    /// Summary of the previous compaction on the branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub previous_summary: Option<String>,
    /// Files read / written / edited by the summarized part.
    pub file_ops: FileOpsLists,
    /// The settings used.
    pub settings: CompactionSettings,
    /// Set (true) only on the preparation handed to `session_before_compact` when there is
    /// nothing to compact (SPEC §12.2): the reference rules' preparation with empty
    /// `messagesToSummarize` and `turnPrefixMessages`, so that an extension may still supply its
    /// own compaction. Absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub nothing_to_compact: bool,
    /// The context size before and after this compaction, alone and after a prune
    /// ([`crate::summarize::preview::compaction_previews`]); filled by the session handle's
    /// `prepareCompaction`, absent from [`prepare_compaction`]. Ignored by `compact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub preview: Option<crate::plan::preview::CompactionPreviews>,
    /// With `settings.tokenCalibration: "usage"`: the factor the estimates were scaled by
    /// (provider tokens per estimated token; absent without a usage to measure it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub token_calibration_factor: Option<f64>,
}

/// Intermediate numbers of a preparation, for debugging and the CLI's `plan` report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct PreparationPlan {
    /// Index of the latest compaction on the path, -1 without one.
    pub prev_compaction_index: i64,
    /// First index considered (SPEC §12.1).
    pub boundary_start: usize,
    /// One past the last index considered.
    pub boundary_end: usize,
    /// Estimated tokens of every message in the boundary.
    pub estimated_tokens: u64,
    /// Prompt tokens of the last fresh usage (0 without one).
    pub prompt_tokens: f64,
    /// `keepRecentTokens` after the adaptive ratio.
    pub effective_keep_recent_tokens: u64,
    /// The cut point.
    pub cut_point: crate::plan::cut_point::CutPointResult,
    /// Index of the last fresh assistant usage, -1 without one.
    pub usage_index: i64,
    /// The context size before and after the compaction, alone and after a prune
    /// ([`crate::summarize::preview::compaction_previews`]); filled by the session handle's
    /// `planCompaction`, absent from [`plan_compaction`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub preview: Option<crate::plan::preview::CompactionPreviews>,
    /// With `settings.tokenCalibration: "usage"`: the factor the estimates were scaled by
    /// ([`crate::plan::tokens::calibration_factor`]); absent otherwise or without a usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub token_calibration_factor: Option<f64>,
}

/// Index and usage of the last fresh assistant usage in `[from, len)`: the last assistant
/// message with a `usage` object whose stopReason is neither "aborted" nor "error". SPEC §5, §12.3.
pub fn last_assistant_usage<S: EntrySource + ?Sized>(entries: &S, from: usize) -> Option<(usize, UsageMeta)> {
    (from..entries.len()).rev().find_map(|i| {
        let m = entries.meta(i).message.as_ref()?;
        if m.role != Role::Assistant || matches!(m.stop_reason.as_deref(), Some("aborted") | Some("error")) {
            return None;
        }
        m.usage.map(|u| (i, u))
    })
}

/// Index of the last `compaction` entry, if any (from the entries' heads, [`EntrySource::head`]).
pub fn last_compaction_index<S: EntrySource + ?Sized>(entries: &S) -> Option<usize> {
    (0..entries.len()).rev().find(|&i| entries.head(i).kind == EntryKind::Compaction)
}

/// Where the kept region of the compaction at `p` starts: the index of its `firstKeptEntryId`
/// before `p`, or `p + 1` when that entry is not found there (from the heads; SPEC §12.1).
pub fn kept_start<S: EntrySource + ?Sized>(path: &S, p: usize) -> usize {
    kept_start_by(path, p, &|id, p| (0..p).find(|&i| path.head(i).id.as_deref() == Some(id)))
}

/// [`kept_start`] with the search answered by `find`: `find(id, p)` is the first index below
/// `p` whose entry has the id `id` (a host may answer it without reading every head: the wasm
/// binding reads the ids of the branch in one call).
pub fn kept_start_by<S: EntrySource + ?Sized>(
    path: &S,
    p: usize,
    find: &dyn Fn(&str, usize) -> Option<usize>,
) -> usize {
    path.head(p).first_kept_entry_id.as_deref().and_then(|id| find(id, p)).unwrap_or(p + 1)
}

/// The latest compaction of a branch and the region it kept verbatim (SPEC §5, §12.1).
/// Positions are indices into the branch (root first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct PreviousCompaction {
    /// Branch position of the `compaction` entry.
    pub branch_position: usize,
    /// Its id, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub entry_id: Option<String>,
    /// Its `firstKeptEntryId`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub first_kept_entry_id: Option<String>,
    /// Branch position where its kept region starts: the first kept entry, or one past the
    /// compaction when that entry is not on the branch before it. Everything before it was
    /// summarized; the next compaction's boundary starts here ([`PreparationPlan::boundary_start`]).
    pub kept_start: usize,
}

/// The latest compaction on `path` (root first) and where its kept region starts, or `None`
/// when the path holds no compaction. SPEC §5, §12.1.
pub fn previous_compaction<S: EntrySource + ?Sized>(path: &S) -> Option<PreviousCompaction> {
    let p = last_compaction_index(path)?;
    let meta = path.meta(p);
    Some(PreviousCompaction {
        branch_position: p,
        entry_id: meta.id.clone(),
        first_kept_entry_id: meta.first_kept_entry_id.clone(),
        kept_start: kept_start(path, p),
    })
}

/// Why a branch has nothing to compact: the reason `prepareCompaction` returns `undefined`
/// (and `compact` refuses). Serialized as its camelCase name. SPEC §5, §12.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum NothingToCompact {
    /// The branch has no entries.
    EmptyBranch,
    /// The branch ends in a compaction.
    AlreadyCompacted,
    /// The first entry to keep has no id (a compaction could not point at it).
    CutPointWithoutId,
    /// No message lies before the cut point (SPEC §12.2).
    NothingToSummarize,
}

/// Why a branch has nothing to compact, as `SessionTree.nothingToCompact()` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct NothingToCompactResult {
    /// The reason as a stable name.
    pub reason: NothingToCompact,
    /// The reason in words ([`NothingToCompact::message`]).
    pub message: String,
}

impl NothingToCompact {
    /// The reason with its words, as returned to hosts.
    pub fn result(self) -> NothingToCompactResult {
        NothingToCompactResult { reason: self, message: self.message().to_string() }
    }

    /// The reason in words, for people (`"the branch is empty"`, …).
    pub fn message(self) -> &'static str {
        match self {
            Self::EmptyBranch => "the branch is empty",
            Self::AlreadyCompacted => "the branch ends in a compaction: it is already compacted",
            Self::CutPointWithoutId => "the first entry to keep has no id",
            Self::NothingToSummarize => "nothing before the cut point to summarize (SPEC §12.2)",
        }
    }
}

/// Why [`preparation_parts`] of `path` with `plan` (the result of [`plan_compaction`]) gives
/// `None`, with each entry's message produced by `message`; `None` when there is something to
/// compact. SPEC §5, §12.2.
pub fn nothing_to_compact<S: EntrySource + ?Sized, M>(
    path: &S,
    plan: Option<&PreparationPlan>,
    message: impl Fn(usize) -> Option<M>,
) -> Option<NothingToCompact> {
    let Some(plan) = plan else {
        return Some(if path.len() == 0 { NothingToCompact::EmptyBranch } else { NothingToCompact::AlreadyCompacted });
    };
    if path.meta(plan.cut_point.first_kept_entry_index).id.is_none() {
        return Some(NothingToCompact::CutPointWithoutId);
    }
    preparation_parts(path, plan, message).is_none().then_some(NothingToCompact::NothingToSummarize)
}

/// The boundary and cut decision of a preparation, without materializing any message.
/// Returns `None` when the path is empty or ends in a compaction.
pub fn plan_compaction<S: EntrySource + ?Sized>(path: &S, settings: &CompactionSettings) -> Option<PreparationPlan> {
    plan_compaction_with(path, settings, &|p| kept_start(path, p))
}

/// [`plan_compaction`] with [`kept_start`] answered by `kept` (a host that keeps an id index of
/// the path answers it without a search; [`super::prepare_cache::PrepareCache`]).
pub fn plan_compaction_with<S: EntrySource + ?Sized>(
    path: &S,
    settings: &CompactionSettings,
    kept: &dyn Fn(usize) -> usize,
) -> Option<PreparationPlan> {
    let len = path.len();
    if len == 0 || path.head(len - 1).kind == EntryKind::Compaction {
        return None;
    }
    let prev = last_compaction_index(path);
    let boundary_start = prev.map_or(0, kept);
    let usage = last_assistant_usage(path, prev.map_or(0, |p| p + 1));
    let estimated_tokens: u64 = (boundary_start..len).map(|i| path.message_of_tokens(i)).sum();
    let mut keep = settings.keep_recent_tokens;
    let mut prompt_tokens = 0.0;
    let factor = calibration_of(path, settings);
    if let Some((_, u)) = usage {
        prompt_tokens = u.prompt_tokens();
        // Calibrated: the measured factor scales the estimates (any factor); otherwise the
        // adaptive keep of SPEC §5 (only a ratio above 1).
        let ratio = factor.unwrap_or(prompt_tokens / estimated_tokens as f64);
        if ratio.is_finite() && (ratio > 1.0 || (factor.is_some() && ratio > 0.0)) {
            keep = ((keep as f64 / ratio).floor() as u64).max(1);
        }
    }
    let cut_point = find_cut_point(path, boundary_start, len, keep);
    Some(PreparationPlan {
        prev_compaction_index: prev.map_or(-1, |p| p as i64),
        boundary_start,
        boundary_end: len,
        estimated_tokens,
        prompt_tokens,
        effective_keep_recent_tokens: keep,
        cut_point,
        usage_index: usage.map_or(-1, |(i, _)| i as i64),
        preview: None,
        token_calibration_factor: factor,
    })
}

/// The calibration factor of `path` when `settings.tokenCalibration` asks for one
/// ([`crate::plan::tokens::calibration_factor`]), else `None`.
pub fn calibration_of<S: EntrySource + ?Sized>(path: &S, settings: &CompactionSettings) -> Option<f64> {
    match settings.token_calibration {
        Some(crate::plan::tokens::TokenCalibration::Usage) => crate::plan::tokens::calibration_factor(path),
        None => None,
    }
}

/// Prepares a compaction of `path` (the branch, root→leaf). Returns `None` when the path is
/// empty, ends in a compaction, its first kept entry has no id, or nothing would be summarized
/// (SPEC §12.2). SPEC §5 with §12.1–§12.3.
pub fn prepare_compaction<S: EntrySource + ?Sized>(
    path: &S,
    settings: &CompactionSettings,
) -> Option<CompactionPreparation> {
    let plan = plan_compaction(path, settings)?;
    preparation_from_plan(path, settings, &plan)
}

/// A preparation whose messages are of any representation `M` (parsed JSON values for the pure
/// functions, JSON text spliced from stored entries for the session handle).
#[derive(Debug, Clone, PartialEq)]
pub struct PreparationParts<M> {
    /// Id of the first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Messages summarized into the history summary.
    pub messages_to_summarize: Vec<M>,
    /// Messages of the split turn before the cut.
    pub turn_prefix_messages: Vec<M>,
    /// Messages kept verbatim.
    pub recent_messages: Vec<M>,
    /// The cut falls inside a turn.
    pub is_split_turn: bool,
    /// Context tokens of the last fresh usage (provider count), 0 without one.
    pub tokens_before: f64,
    /// Summary of the previous compaction on the branch.
    pub previous_summary: Option<String>,
    /// Files read / written / edited by the summarized part.
    pub file_ops: FileOps,
}

/// The parts of the preparation of a [`PreparationPlan`] made by [`plan_compaction`] on `path`,
/// with each entry's message produced by `message` (`None`: the entry has none). Returns `None`
/// when the first kept entry has no id or nothing would be summarized (SPEC §12.2).
pub fn preparation_parts<S: EntrySource + ?Sized, M>(
    path: &S,
    plan: &PreparationPlan,
    message: impl Fn(usize) -> Option<M>,
) -> Option<PreparationParts<M>> {
    let parts = reference_preparation_parts(path, plan, message)?;
    if parts.messages_to_summarize.is_empty() && parts.turn_prefix_messages.is_empty() {
        return None;
    }
    Some(parts)
}

/// [`preparation_parts`] by the reference rules alone: also when nothing would be summarized
/// (then `messages_to_summarize` and `turn_prefix_messages` are empty; SPEC §12.2 is the
/// caller's decision). `None` only when the first kept entry has no id.
pub fn reference_preparation_parts<S: EntrySource + ?Sized, M>(
    path: &S,
    plan: &PreparationPlan,
    message: impl Fn(usize) -> Option<M>,
) -> Option<PreparationParts<M>> {
    let cut = plan.cut_point;
    let first_kept_entry_id = path.meta(cut.first_kept_entry_index).id.clone()?;
    let history_end = if cut.is_split_turn { cut.turn_start_index as usize } else { cut.first_kept_entry_index };
    let collect = |from: usize, to: usize| -> Vec<M> { (from..to).filter_map(&message).collect() };
    let messages_to_summarize = collect(plan.boundary_start, history_end);
    let turn_prefix_messages =
        if cut.is_split_turn { collect(cut.turn_start_index as usize, cut.first_kept_entry_index) } else { Vec::new() };
    let recent_messages = collect(cut.first_kept_entry_index, plan.boundary_end);
    let tokens_before = match plan.usage_index {
        i if i >= 0 => path.meta(i as usize).message.as_ref().and_then(|m| m.usage).map_or(0.0, |u| u.context_tokens()),
        _ => 0.0,
    };
    let mut file_ops = FileOps::default();
    let mut previous_summary = None;
    if plan.prev_compaction_index >= 0 {
        let p = plan.prev_compaction_index as usize;
        let entry = path.entry(p);
        previous_summary = entry.get("summary").and_then(Value::as_str).map(str::to_owned);
        if !path.meta(p).from_extension {
            file_ops.add_details(entry.get("details"));
        }
    }
    let prefix_end = if cut.is_split_turn { cut.first_kept_entry_index } else { history_end };
    for i in plan.boundary_start..prefix_end {
        if let Some(m) = path.meta(i).message.as_ref() {
            file_ops.add_message(m);
        }
    }
    Some(PreparationParts {
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        recent_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
    })
}

/// Materializes the preparation of a [`PreparationPlan`] made by [`plan_compaction`] on `path`
/// (messages as `messageOf`, SPEC §2). See [`preparation_parts`].
pub fn preparation_from_plan<S: EntrySource + ?Sized>(
    path: &S,
    settings: &CompactionSettings,
    plan: &PreparationPlan,
) -> Option<CompactionPreparation> {
    let parts = preparation_parts(path, plan, |i| message_of(&path.entry(i)))?;
    let mut prep = preparation_of(parts, settings, false);
    prep.token_calibration_factor = plan.token_calibration_factor;
    Some(prep)
}

/// The preparation `session_before_compact` sees (SPEC §11, §12.2): [`prepare_compaction`]'s,
/// or, when there is nothing to compact, the reference rules' preparation (empty
/// `messagesToSummarize` and `turnPrefixMessages`) marked `nothingToCompact: true`. `None` when
/// the path is empty, ends in a compaction, or its first kept entry has no id.
pub fn prepare_compaction_for_hooks<S: EntrySource + ?Sized>(
    path: &S,
    settings: &CompactionSettings,
) -> Option<CompactionPreparation> {
    let plan = plan_compaction(path, settings)?;
    let parts = reference_preparation_parts(path, &plan, |i| message_of(&path.entry(i)))?;
    let nothing = parts.messages_to_summarize.is_empty() && parts.turn_prefix_messages.is_empty();
    let mut prep = preparation_of(parts, settings, nothing);
    prep.token_calibration_factor = plan.token_calibration_factor;
    Some(prep)
}

/// Where a message of a result comes from: the `message` of entry `i` as the caller holds it
/// (a host with its own entry objects hands back that object), or a message derived from an
/// entry (custom message, branch or compaction summary), built here. SPEC §2.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageRef {
    /// The `message` field of entry `i` of the source (left out when the entry has none).
    Entry(usize),
    /// A message derived from an entry.
    Derived(Value),
}

/// `messageOf(entry i)` (SPEC §2) as a [`MessageRef`]: `message` entries by reference (those
/// with a message, [`EntrySource::has_message`]), custom messages and branch summaries built;
/// `None` for the other kinds.
pub fn message_ref<S: EntrySource + ?Sized>(path: &S, i: usize) -> Option<MessageRef> {
    match path.meta(i).kind {
        EntryKind::Message if path.has_message(i) => Some(MessageRef::Entry(i)),
        EntryKind::Message => None,
        EntryKind::CustomMessage | EntryKind::BranchSummary => message_of(&path.entry(i)).map(MessageRef::Derived),
        _ => None,
    }
}

/// [`prepare_compaction`] with its messages as [`MessageRef`]s: the preparation with its
/// three message lists left empty, and the lists (`messagesToSummarize`,
/// `turnPrefixMessages`, `recentMessages`). `None` when [`prepare_compaction`] is. SPEC §5, §12.
pub fn prepare_compaction_refs<S: EntrySource + ?Sized>(
    path: &S,
    settings: &CompactionSettings,
) -> Option<(CompactionPreparation, [Vec<MessageRef>; 3])> {
    preparation_refs_of(path, settings, plan_compaction(path, settings)?)
}

/// [`prepare_compaction_refs`] of the plan [`plan_compaction`] (or [`plan_compaction_with`])
/// made for `path` and `settings`.
pub fn preparation_refs_of<S: EntrySource + ?Sized>(
    path: &S,
    settings: &CompactionSettings,
    plan: PreparationPlan,
) -> Option<(CompactionPreparation, [Vec<MessageRef>; 3])> {
    let parts = preparation_parts(path, &plan, |i| message_ref(path, i))?;
    Some(preparation_refs_of_parts(parts, settings, &plan))
}

/// [`preparation_refs_of`] of the [`preparation_parts`] (messages as [`message_ref`]) of
/// `plan`: the preparation with its three message lists left empty, and the lists.
pub fn preparation_refs_of_parts(
    mut parts: PreparationParts<MessageRef>,
    settings: &CompactionSettings,
    plan: &PreparationPlan,
) -> (CompactionPreparation, [Vec<MessageRef>; 3]) {
    let lists = [
        std::mem::take(&mut parts.messages_to_summarize),
        std::mem::take(&mut parts.turn_prefix_messages),
        std::mem::take(&mut parts.recent_messages),
    ];
    let shell = PreparationParts {
        first_kept_entry_id: parts.first_kept_entry_id,
        messages_to_summarize: Vec::new(),
        turn_prefix_messages: Vec::new(),
        recent_messages: Vec::new(),
        is_split_turn: parts.is_split_turn,
        tokens_before: parts.tokens_before,
        previous_summary: parts.previous_summary,
        file_ops: parts.file_ops,
    };
    let mut prep = preparation_of(shell, settings, false);
    prep.token_calibration_factor = plan.token_calibration_factor;
    (prep, lists)
}

fn preparation_of(
    parts: PreparationParts<Value>,
    settings: &CompactionSettings,
    nothing_to_compact: bool,
) -> CompactionPreparation {
    CompactionPreparation {
        first_kept_entry_id: parts.first_kept_entry_id,
        messages_to_summarize: parts.messages_to_summarize,
        turn_prefix_messages: parts.turn_prefix_messages,
        recent_messages: parts.recent_messages,
        is_split_turn: parts.is_split_turn,
        tokens_before: parts.tokens_before,
        previous_summary: parts.previous_summary,
        file_ops: FileOpsLists::from(&parts.file_ops),
        settings: settings.clone(),
        nothing_to_compact,
        preview: None,
        token_calibration_factor: None,
    }
}

/// The context size above which [`should_compact`] triggers: `contextWindow - reserveTokens`
/// (tokens). SPEC §5. Unchecked: [`checked_compaction_threshold`] refuses a reserve that leaves
/// no room.
pub fn compaction_threshold(context_window: f64, settings: &CompactionSettings) -> f64 {
    context_window - settings.reserve_tokens as f64
}

/// `shouldCompact`: `enabled && contextTokens > contextWindow - reserveTokens`. SPEC §5.
/// Unchecked: [`checked_should_compact`] refuses a reserve that leaves no room.
pub fn should_compact(context_tokens: f64, context_window: f64, settings: &CompactionSettings) -> bool {
    settings.enabled && context_tokens > compaction_threshold(context_window, settings)
}

/// [`compaction_threshold`], refusing enabled settings whose `reserveTokens` is not below
/// `contextWindow` (the threshold would be 0 or negative: every context, even an empty one,
/// would be "over" it). With compaction disabled (`enabled: false`) nothing is compared with
/// the threshold, so any reserve is accepted and the formula's value is returned as it is
/// (0 or negative included). SPEC §13.11.
///
/// # Errors
/// [`Error::Argument`](crate::Error::Argument) (`E_INVALID_ARGUMENT`): naming `contextWindow`
/// when it is no whole number of tokens from 0 to 2^53 - 1 ([`crate::api::token_budget`]:
/// negative, a fraction, NaN or an infinity), whether compaction is enabled or not; naming
/// `reserveTokens`, with both numbers, when compaction is enabled and
/// `reserveTokens >= contextWindow` (a `contextWindow` of 0 included).
pub fn checked_compaction_threshold(context_window: f64, settings: &CompactionSettings) -> crate::Result<f64> {
    crate::api::token_budget(context_window, "contextWindow")?;
    let threshold = compaction_threshold(context_window, settings);
    if threshold > 0.0 || !settings.enabled {
        return Ok(threshold);
    }
    Err(crate::Error::Argument {
        name: "reserveTokens".into(),
        reason: format!(
            "expected less than contextWindow ({}), got {}: the compaction threshold \
             contextWindow - reserveTokens must be above 0",
            crate::js::format_number(context_window),
            settings.reserve_tokens
        ),
    })
}

/// [`should_compact`] with the check of [`checked_compaction_threshold`]. SPEC §5, §13.11.
///
/// # Errors
/// As [`checked_compaction_threshold`].
pub fn checked_should_compact(
    context_tokens: f64,
    context_window: f64,
    settings: &CompactionSettings,
) -> crate::Result<bool> {
    checked_compaction_threshold(context_window, settings)?;
    Ok(should_compact(context_tokens, context_window, settings))
}
