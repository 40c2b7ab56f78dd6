//! Cut points: where the kept part of a branch may start without separating a tool call
//! from its result. SPEC §4.

use crate::entry::EntrySource;
use crate::entry::{EntryKind, EntryMeta, Role};
use serde::{Deserialize, Serialize};

/// The result of [`find_cut_point`]. Indices are positions in the entries given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct CutPointResult {
    /// Index of the first entry that is kept verbatim.
    pub first_kept_entry_index: usize,
    /// Index of the entry that starts the turn the cut falls into, or -1.
    pub turn_start_index: i64,
    /// True when the cut falls inside a turn (the turn's start is summarized separately).
    pub is_split_turn: bool,
}

/// True when the kept region may start at this entry (SPEC §4.1): `message` entries with role
/// user, assistant, bashExecution (unless excluded, §12.5), hookMessage, branchSummary or
/// compactionSummary, and every `branch_summary` and `custom_message` entry.
pub fn is_valid_cut_point(meta: &EntryMeta) -> bool {
    match meta.kind {
        EntryKind::BranchSummary | EntryKind::CustomMessage => true,
        EntryKind::Message => match meta.message.as_ref() {
            Some(m) => match m.role {
                Role::User | Role::Assistant | Role::HookMessage | Role::BranchSummary | Role::CompactionSummary => {
                    true
                }
                Role::BashExecution => !m.exclude_from_context,
                _ => false,
            },
            None => false,
        },
        _ => false,
    }
}

/// True when the entry starts a turn (SPEC §4.5): a `user` or (not excluded) `bashExecution`
/// message, or a `branch_summary` / `custom_message` entry.
pub fn is_turn_start(meta: &EntryMeta) -> bool {
    match meta.kind {
        EntryKind::BranchSummary | EntryKind::CustomMessage => true,
        EntryKind::Message => match meta.message.as_ref() {
            Some(m) => m.role == Role::User || (m.role == Role::BashExecution && !m.exclude_from_context),
            None => false,
        },
        _ => false,
    }
}

/// Indices of the valid cut points in `[start_index, end_index)`, ascending. SPEC §4.1.
pub fn find_valid_cut_points<S: EntrySource + ?Sized>(entries: &S, start_index: usize, end_index: usize) -> Vec<usize> {
    let end = end_index.min(entries.len());
    (start_index..end).filter(|&i| is_valid_cut_point(entries.meta(i))).collect()
}

/// The turn start for `entry_index`: walking back from it (inclusive) to `start_index`, the first
/// turn-start entry ([`is_turn_start`]); -1 when there is none. Compaction entries are walked
/// across. SPEC §4.5.
pub fn find_turn_start_index<S: EntrySource + ?Sized>(entries: &S, entry_index: usize, start_index: usize) -> i64 {
    if entries.is_empty() {
        return -1;
    }
    let from = entry_index.min(entries.len() - 1);
    if from < start_index {
        return -1;
    }
    (start_index..=from).rev().find(|&i| is_turn_start(entries.meta(i))).map_or(-1, |i| i as i64)
}

/// Chooses where the kept region starts so that at least `keep_recent_tokens` (estimated) of
/// recent `message` entries are kept, within `[start_index, end_index)`. SPEC §4 steps 1–5, with
/// §12.8: when the sum reaches the budget at an index with no valid cut point at or after it (the
/// newest turn alone is over budget), the cut is the last valid cut point before that index
/// rather than the first of the range, so a compaction frees what it can.
pub fn find_cut_point<S: EntrySource + ?Sized>(
    entries: &S,
    start_index: usize,
    end_index: usize,
    keep_recent_tokens: u64,
) -> CutPointResult {
    let end = end_index.min(entries.len());
    let cut_points = find_valid_cut_points(entries, start_index, end);
    let Some(&first_cut) = cut_points.first() else {
        return CutPointResult { first_kept_entry_index: start_index, turn_start_index: -1, is_split_turn: false };
    };
    let mut cut = first_cut;
    let mut accumulated: u64 = 0;
    for i in (start_index..end).rev() {
        let meta = entries.meta(i);
        if meta.kind != EntryKind::Message {
            continue;
        }
        accumulated += meta.message_tokens();
        if accumulated >= keep_recent_tokens {
            // §12.8: with no valid cut point at or after i, the last one before i (all of them
            // lie before i then), so that the newest turn is kept and the rest summarized.
            cut = cut_points.iter().copied().find(|&c| c >= i).unwrap_or(cut_points[cut_points.len() - 1]);
            break;
        }
    }
    while cut > start_index {
        let prev = entries.meta(cut - 1);
        if matches!(prev.kind, EntryKind::Message | EntryKind::Compaction) {
            break;
        }
        cut -= 1;
    }
    let cut_meta = entries.meta(cut);
    let is_user = cut_meta.kind == EntryKind::Message && cut_meta.role() == Some(Role::User);
    let turn_start_index = if is_user { -1 } else { find_turn_start_index(entries, cut, start_index) };
    CutPointResult { first_kept_entry_index: cut, turn_start_index, is_split_turn: !is_user && turn_start_index != -1 }
}
