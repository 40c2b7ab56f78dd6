//! Preview figures: what a compaction, alone or after a prune, would leave of the context. The
//! shapes only; [`crate::summarize::preview`] computes them (it needs the summary budgets and
//! the file-operations template). Tokens are estimates (SPEC §3) on the basis of `compact`'s
//! `contextTokensBefore`/`contextTokensAfter`: the built context, no provider usage (SPEC §13.5).

use serde::{Deserialize, Serialize};

/// The context size around one compaction, the summary budgeted at its `maxTokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct CompactionPreview {
    /// Context tokens before: the estimate of the built context, without provider usage —
    /// what `compact` reports as `contextTokensBefore` (SPEC §13.5, §13.7); after the prune in
    /// a combined preview.
    pub context_tokens_before: f64,
    /// Estimated tokens of what the summary replaces: the messages summarized (history and
    /// turn prefix) and the previous compaction's summary.
    pub summarized_tokens: u64,
    /// The new summary at its budget: the history request's `maxTokens` when there is history,
    /// the turn-prefix request's for a split turn, the text around them (separator, previous
    /// summary or "No prior history.") and the file-operation blocks.
    pub summary_tokens: u64,
    /// Estimated tokens of the messages kept verbatim.
    pub kept_tokens: u64,
    /// `contextTokensBefore - summarizedTokens + summaryTokens`, at least
    /// `keptTokens + summaryTokens`.
    pub context_tokens_after: f64,
}

/// A prune followed by a compaction of the pruned branch (the order automatic compaction
/// uses, SPEC §7, §11).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct PruneCompactionPreview {
    /// Tool outputs the prune replaces (SPEC §7, §13.6; only outputs the model still sees).
    pub pruned_count: usize,
    /// Estimated tokens the prune saves.
    pub prune_tokens_saved: u64,
    /// Context tokens after the prune.
    pub context_tokens_after_prune: f64,
    /// The compaction of the pruned branch; absent when there is nothing to compact then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub compaction: Option<CompactionPreview>,
    /// Context tokens after both (after the prune alone without a compaction).
    pub context_tokens_after: f64,
}

/// The previews of a plan: the compaction alone, and prune + compaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct CompactionPreviews {
    /// The compaction alone; absent when there is nothing to compact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub compaction: Option<CompactionPreview>,
    /// Pruning first, then the compaction.
    pub with_prune: PruneCompactionPreview,
}
