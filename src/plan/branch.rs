//! Branch summaries: which entries of an abandoned branch are summarized, within a token
//! budget. SPEC §10.

use crate::entry::message_of::branch_message_of;
use crate::entry::EntrySource;
use crate::entry::{EntryKind, Role};
use crate::plan::file_ops::FileOps;
use serde_json::Value;

/// Default context window used for the branch-summary budget when the model gives none.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// Messages selected for a branch summary (SPEC §10).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BranchEntries {
    /// The messages, oldest first (branch variant of `messageOf`, SPEC §2).
    pub messages: Vec<Value>,
    /// Files read / written / edited in the branch (and in nested branch summaries).
    pub file_ops: FileOps,
    /// Estimated tokens of the selected messages.
    pub total_tokens: u64,
}

/// Token estimate of the branch-variant message of entry `i`, or `None` when the entry
/// produces no message (tool results, settings, unknown types).
pub fn branch_message_tokens<S: EntrySource + ?Sized>(entries: &S, i: usize) -> Option<u64> {
    let meta = entries.meta(i);
    match meta.kind {
        EntryKind::Message => {
            let m = meta.message.as_ref()?;
            (m.role != Role::ToolResult).then_some(m.tokens)
        }
        EntryKind::CustomMessage => Some(0),
        EntryKind::BranchSummary | EntryKind::Compaction => Some(entries.summary_tokens(i)),
        _ => None,
    }
}

/// Selects the messages of `entries` (chronological) for a branch summary (SPEC §10): file ops
/// of every branch summary's `details` (unless `fromExtension`), then newest→oldest each
/// message and its tool-call file ops; when the next message would pass `token_budget`
/// (`0` = no limit), a compaction or branch summary is still added while the total is below
/// 90% of the budget, and the walk stops.
pub fn prepare_branch_entries<S: EntrySource + ?Sized>(entries: &S, token_budget: u64) -> BranchEntries {
    let mut out = BranchEntries::default();
    for i in 0..entries.len() {
        let meta = entries.meta(i);
        if meta.kind == EntryKind::BranchSummary && !meta.from_extension {
            out.file_ops.add_details(entries.entry(i).get("details"));
        }
    }
    let mut selected = Vec::new();
    for i in (0..entries.len()).rev() {
        let meta = entries.meta(i);
        let Some(tokens) = branch_message_tokens(entries, i) else { continue };
        if let Some(m) = meta.message.as_ref() {
            out.file_ops.add_message(m);
        }
        if token_budget > 0 && out.total_tokens + tokens > token_budget {
            let is_summary = matches!(meta.kind, EntryKind::Compaction | EntryKind::BranchSummary);
            if is_summary && (out.total_tokens as f64) < token_budget as f64 * 0.9 {
                selected.push(i);
                out.total_tokens += tokens;
            }
            break;
        }
        selected.push(i);
        out.total_tokens += tokens;
    }
    out.messages = selected.into_iter().rev().filter_map(|i| branch_message_of(&entries.entry(i))).collect();
    out
}

/// The token budget of a branch summary: `contextWindow - reserveTokens` (at least 0).
pub fn branch_token_budget(context_window: Option<u64>, reserve_tokens: u64) -> u64 {
    context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW).saturating_sub(reserve_tokens)
}
