//! The typed payloads of the engine's host interface (SPEC §11, §13.5): the events each hook
//! receives, what a hook may answer, and the events of automatic compaction. Each serializes to
//! the JSON shape the JavaScript API uses (`type` tag, camelCase fields), so the wasm binding
//! hands them to JS callbacks as they are.

use crate::error::{Error, Result};
use crate::plan::prepare::CompactionPreparation;
use crate::summarize::CompactionResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why automatic compaction ran (SPEC §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CompactionReason {
    /// The last reply said the context overflowed: compact, then retry the turn.
    Overflow,
    /// The context passed `contextWindow - reserveTokens`: compact, then continue.
    Threshold,
}

impl CompactionReason {
    /// `"overflow"` or `"threshold"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionReason::Overflow => "overflow",
            CompactionReason::Threshold => "threshold",
        }
    }
}

/// Why a due automatic compaction did not run (SPEC §13.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SkipCause {
    /// The overflow was already recovered once in this turn (`"overflowRecoveredThisTurn"`).
    OverflowRecoveredThisTurn,
    /// The breaker is open after repeated attempts without progress (`"paused"`).
    Paused,
    /// The overflow error came from another model than the host's current one (`"otherModel"`;
    /// SPEC §11: only the same model's overflow is recovered).
    OtherModel,
    /// The overflow error is not newer than the latest compaction (`"staleOverflow"`; SPEC §11:
    /// that compaction already answered it).
    StaleOverflow,
}

impl SkipCause {
    /// `"overflowRecoveredThisTurn"`, `"paused"`, `"otherModel"` or `"staleOverflow"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipCause::OverflowRecoveredThisTurn => "overflowRecoveredThisTurn",
            SkipCause::Paused => "paused",
            SkipCause::OtherModel => "otherModel",
            SkipCause::StaleOverflow => "staleOverflow",
        }
    }
}

/// An event of automatic compaction (`onEvent` in JS), SPEC §11, §13.5. Serialized with its
/// `type` (`auto_compaction_start`, …) and camelCase fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum AutoCompactionEvent {
    /// An attempt starts.
    AutoCompactionStart {
        /// Overflow recovery or threshold.
        reason: CompactionReason,
    },
    /// An attempt ended: with its result, aborted, or failed (`error_message`).
    AutoCompactionEnd {
        /// The summary result when the compaction was appended.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Box<CompactionResult>>,
        /// The attempt was aborted.
        aborted: bool,
        /// The host should retry the turn (overflow path, compaction appended and made progress;
        /// without progress `false`, with `error_message` saying why, SPEC §13.5).
        will_retry: bool,
        /// `Context overflow recovery failed: …` / `Auto-compaction failed: …`.
        #[serde(skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    /// The compaction left the context at or above its estimate before, or above the threshold.
    AutoCompactionNoProgress {
        /// Overflow recovery or threshold.
        reason: CompactionReason,
        /// Estimated built-context tokens before.
        context_tokens_before: Option<f64>,
        /// Estimated built-context tokens after.
        context_tokens_after: Option<f64>,
    },
    /// The breaker opened after `attempts` consecutive attempts without progress.
    AutoCompactionPaused {
        /// The limit that was reached (`maxAttemptsWithoutProgress`).
        attempts: u32,
    },
    /// A due compaction did not run.
    AutoCompactionSkipped {
        /// What was due.
        reason: CompactionReason,
        /// Why it did not run.
        cause: SkipCause,
    },
}

/// `session_before_compact`: the preparation the compaction will use (SPEC §11).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "session_before_compact", rename_all = "camelCase")]
pub struct BeforeCompactEvent {
    /// The preparation (`nothingToCompact: true` when the rules find nothing to compact).
    pub preparation: CompactionPreparation,
    /// The entries of the branch being compacted, root first.
    pub branch_entries: Vec<Value>,
    /// The run's custom instructions (`null` when none).
    pub custom_instructions: Option<String>,
}

/// A compaction a `session_before_compact` hook supplies instead of the engine's summary.
#[derive(Debug, Clone, PartialEq)]
pub struct SuppliedCompaction {
    /// The summary text (required).
    pub summary: String,
    /// The short summary (default `""`).
    pub short_summary: Option<String>,
    /// The first kept entry (default: the preparation's; checked against the branch, SPEC §12.7).
    pub first_kept_entry_id: Option<String>,
    /// Tokens before (default: the preparation's).
    pub tokens_before: Option<f64>,
    /// Stored as the entry's `details` as they are (any shape); none when absent.
    pub details: Option<Value>,
}

/// What a `session_before_compact` hook answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeCompactReply {
    /// Cancel the compaction (`E_CANCELLED`).
    pub cancel: bool,
    /// Use this compaction (`fromExtension: true`) instead of the engine's summary.
    pub compaction: Option<SuppliedCompaction>,
}

impl BeforeCompactReply {
    /// Reads a hook's JSON answer (`{cancel?, compaction?}`; `null`: nothing): `cancel` counts
    /// when it is `true`; a `compaction` that is not an object is ignored; one without a string
    /// `summary`, with a blank one (a compaction never stores an empty summary, SPEC §13.5) or
    /// with a `tokensBefore` that is no whole number of tokens is [`Error::Hook`]. A cancel wins
    /// over a supplied compaction.
    pub fn from_value(v: &Value) -> Result<Self> {
        if v.get("cancel").and_then(Value::as_bool) == Some(true) {
            return Ok(Self { cancel: true, compaction: None });
        }
        let Some(c) = v.get("compaction").filter(|c| c.is_object()) else { return Ok(Self::default()) };
        let refuse = |message: String| Error::Hook { hook: "session_before_compact".into(), message };
        let summary = c
            .get("summary")
            .and_then(Value::as_str)
            .ok_or_else(|| refuse("the returned compaction has no string `summary`".into()))?;
        if crate::prompt::frames::is_blank(summary) {
            return Err(refuse(
                "the returned compaction's `summary` is empty: a compaction never stores an empty summary".into(),
            ));
        }
        let tokens_before = match c.get("tokensBefore") {
            None | Some(Value::Null) => None,
            Some(t) => {
                Some(t.as_f64().filter(|n| crate::api::token_budget(*n, "tokensBefore").is_ok()).ok_or_else(|| {
                    refuse(format!("the returned compaction's `tokensBefore` is no whole number of tokens ({t})"))
                })?)
            }
        };
        Ok(Self {
            cancel: false,
            compaction: Some(SuppliedCompaction {
                summary: summary.to_string(),
                short_summary: c.get("shortSummary").and_then(Value::as_str).map(str::to_owned),
                first_kept_entry_id: c.get("firstKeptEntryId").and_then(Value::as_str).map(str::to_owned),
                tokens_before,
                details: c.get("details").cloned(),
            }),
        })
    }
}

/// `session.compacting`: the messages about to be summarized (SPEC §11).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "session.compacting", rename_all = "camelCase")]
pub struct CompactingEvent {
    /// The session header's `id` (`null` when none).
    pub session_id: Value,
    /// The messages to summarize, then the split turn's prefix.
    pub messages: Vec<Value>,
}

/// What a `session.compacting` hook answers: how to shape the summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactingReply {
    /// Replaces the history/update instructions.
    pub prompt: Option<String>,
    /// Lines of `<additional-context>`.
    pub context: Vec<String>,
    /// Stored as the compaction entry's `preserveData`.
    pub preserve_data: Option<Value>,
}

impl CompactingReply {
    /// Reads a hook's JSON answer (`{prompt?, context?, preserveData?}`; `null`: nothing): a
    /// non-string `prompt` is ignored, non-string `context` items are left out, a `null`
    /// `preserveData` is none.
    pub fn from_value(v: &Value) -> Self {
        Self {
            prompt: v.get("prompt").and_then(Value::as_str).map(str::to_owned),
            context: v
                .get("context")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                .unwrap_or_default(),
            preserve_data: v.get("preserveData").filter(|p| !p.is_null()).cloned(),
        }
    }
}

/// `session_compact`: the compaction entry was appended (SPEC §11). A failing hook removes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "session_compact", rename_all = "camelCase")]
pub struct CompactEvent {
    /// The appended `compaction` entry.
    pub compaction_entry: Value,
    /// It came from a `session_before_compact` hook.
    pub from_extension: bool,
}

/// What a navigation would summarize (the `preparation` of [`BeforeTreeEvent`], SPEC §10).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreePreparation {
    /// Where the navigation goes.
    pub target_id: String,
    /// The leaf it leaves (`null`: before the first entry).
    pub old_leaf_id: Option<String>,
    /// The common ancestor of the old leaf and the target.
    pub common_ancestor_id: Option<String>,
    /// The entries of the branch being left, after the common ancestor.
    pub entries_to_summarize: Vec<Value>,
    /// The host asked for a summary.
    pub user_wants_summary: bool,
}

/// `session_before_tree`: a navigation is about to happen (SPEC §10, §11).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "session_before_tree")]
pub struct BeforeTreeEvent {
    /// What the navigation would summarize.
    pub preparation: TreePreparation,
}

/// A branch summary a `session_before_tree` hook supplies.
#[derive(Debug, Clone, PartialEq)]
pub struct SuppliedBranchSummary {
    /// The summary text (`""` when the hook gave none).
    pub summary: String,
    /// Stored as the entry's `details` when present.
    pub details: Option<Value>,
}

/// What a `session_before_tree` hook answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeTreeReply {
    /// Cancel the navigation (nothing changes).
    pub cancel: bool,
    /// Use this summary instead of asking the model.
    pub summary: Option<SuppliedBranchSummary>,
}

impl BeforeTreeReply {
    /// Reads a hook's JSON answer (`{cancel?, summary?: {summary, details?}}`; `null`:
    /// nothing): `cancel` counts when it is `true`; a `summary` that is not an object is ignored.
    pub fn from_value(v: &Value) -> Self {
        Self {
            cancel: v.get("cancel").and_then(Value::as_bool) == Some(true),
            summary: v.get("summary").filter(|s| s.is_object()).map(|s| SuppliedBranchSummary {
                summary: s.get("summary").and_then(Value::as_str).unwrap_or_default().to_string(),
                details: s.get("details").filter(|d| !d.is_null()).cloned(),
            }),
        }
    }
}

/// `session_tree`: the navigation happened (SPEC §10, §11). A failing hook undoes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "session_tree", rename_all = "camelCase")]
pub struct TreeEvent {
    /// The new leaf (`null`: before the first entry).
    pub new_leaf_id: Option<String>,
    /// The leaf before.
    pub old_leaf_id: Option<String>,
    /// The appended `branch_summary` entry, when one was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_entry: Option<Value>,
    /// The summary came from a `session_before_tree` hook (present with `summaryEntry`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_extension: Option<bool>,
}
