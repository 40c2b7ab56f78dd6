//! Cut points: where the kept part of a branch may start without separating a tool call
//! from its result. SPEC §4, with §12.7 (a cut never falls between a tool call and its results).

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

/// True when a compaction may keep `entries` from position `pos` on (`entries`: a root-first
/// branch): `pos` is a valid cut point ([`find_valid_cut_points`]: SPEC §4.1, §12.7), or an
/// entry the metadata pull-back of SPEC §4.4 reaches from one (model changes, labels, custom
/// entries, … directly before a valid cut point). What a hook-supplied `firstKeptEntryId` must
/// satisfy (SPEC §13.2).
pub fn is_valid_first_kept<S: EntrySource + ?Sized>(entries: &S, pos: usize) -> bool {
    let mut k = pos;
    while k < entries.len() {
        let meta = entries.meta(k);
        if is_valid_cut_point(meta) || matches!(meta.kind, EntryKind::Message | EntryKind::Compaction) {
            break;
        }
        k += 1;
    }
    k < entries.len() && find_valid_cut_points(entries, k, k + 1) == [k]
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

/// Indices of the valid cut points in `[start_index, end_index)`, ascending: the entries
/// [`is_valid_cut_point`] accepts that do not sit inside a tool exchange ([`tool_exchanges`],
/// SPEC §12.7). SPEC §4.1.
pub fn find_valid_cut_points<S: EntrySource + ?Sized>(entries: &S, start_index: usize, end_index: usize) -> Vec<usize> {
    let end = end_index.min(entries.len());
    let exchanges = tool_exchanges(entries, start_index, end);
    let mut blocked = exchanges.iter().peekable();
    (start_index..end)
        .filter(|&i| {
            while blocked.next_if(|r| r.end <= i).is_some() {}
            !blocked.peek().is_some_and(|r| r.contains(&i)) && is_valid_cut_point(entries.meta(i))
        })
        .collect()
}

/// True when the `message` entry `i` is an assistant message.
/// An assistant `message` entry: where a tool exchange opens ([`tool_exchanges`]).
pub fn is_assistant(meta: &EntryMeta) -> bool {
    meta.kind == EntryKind::Message && meta.role() == Some(Role::Assistant)
}

/// The inside of every tool exchange that overlaps `[start_index, end_index)` (SPEC §12.7), as
/// ascending, disjoint index ranges: for an assistant message at `a` whose calls are answered
/// by `toolResult` messages before the next assistant message, the entries strictly between
/// `a` and the last of those results. Whatever sits there (a steering user message typed while
/// the tools ran, a hook message, a bash execution) belongs to the exchange and is never the
/// first kept entry. A result that comes after a later assistant message answers nothing
/// (the provider-valid context leaves it out, SPEC §13.1).
///
/// The scan starts at the last assistant message before `start_index` (an exchange opened
/// there may reach into the range) and ends with the first exchange that closes at or after
/// `end_index`. O(entries scanned).
pub fn tool_exchanges<S: EntrySource + ?Sized>(
    entries: &S,
    start_index: usize,
    end_index: usize,
) -> Vec<std::ops::Range<usize>> {
    let len = entries.len();
    let end = end_index.min(len);
    let mut out = Vec::new();
    if start_index >= end {
        return out;
    }
    let begin = (0..start_index).rev().find(|&i| is_assistant(entries.meta(i))).unwrap_or(start_index);
    // The open exchange: its assistant's index and the last result answering it so far.
    let mut open: Option<(usize, Option<usize>)> = None;
    let close = |open: Option<(usize, Option<usize>)>, out: &mut Vec<std::ops::Range<usize>>| {
        if let Some((a, Some(last))) = open {
            if last > a + 1 && last > start_index {
                out.push(a + 1..last);
            }
        }
    };
    for i in begin..len {
        let meta = entries.meta(i);
        if is_assistant(meta) {
            close(open.take(), &mut out);
            if i >= end {
                break;
            }
            let has_calls = meta.message.as_ref().is_some_and(|m| m.tool_calls.iter().any(|c| c.id.is_some()));
            open = has_calls.then_some((i, None));
            continue;
        }
        let Some((a, last)) = open.as_mut() else {
            if i >= end {
                break;
            }
            continue;
        };
        let Some(m) = meta.message.as_ref().filter(|m| meta.kind == EntryKind::Message && m.role == Role::ToolResult)
        else {
            continue;
        };
        let calls = &entries.meta(*a).message.as_ref().map_or(&[][..], |m| &m.tool_calls[..]);
        if m.tool_call_id.as_deref().is_some_and(|t| calls.iter().any(|c| c.id.as_deref() == Some(t))) {
            *last = Some(i);
        }
    }
    close(open, &mut out);
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryList;
    use serde_json::{json, Value};

    fn msg(id: &str, message: Value) -> Value {
        json!({"type": "message", "id": id, "parentId": null, "timestamp": "2025-01-01T00:00:00Z", "message": message})
    }
    fn user(id: &str, text: &str) -> Value {
        msg(id, json!({"role": "user", "content": text.repeat(40)}))
    }
    fn call(id: &str, calls: &[&str]) -> Value {
        let blocks: Vec<Value> =
            calls.iter().map(|c| json!({"type": "toolCall", "id": c, "name": "bash", "arguments": {}})).collect();
        msg(id, json!({"role": "assistant", "content": blocks, "stopReason": "toolUse"}))
    }
    fn result(id: &str, call: &str) -> Value {
        msg(
            id,
            json!({"role": "toolResult", "toolCallId": call, "toolName": "bash", "content": [{"type": "text", "text": "out".repeat(40)}]}),
        )
    }

    #[test]
    fn steering_message_between_a_call_and_its_result_is_not_a_cut_point() {
        // u0, a1(c1,c2), t2(c1), u3 (typed while tools ran), t4(c2), a5
        let v = vec![
            user("u0", "go"),
            call("a1", &["c1", "c2"]),
            result("t2", "c1"),
            user("u3", "wait"),
            result("t4", "c2"),
            call("a5", &[]),
        ];
        let list = EntryList::new(&v);
        assert_eq!(tool_exchanges(&list, 0, v.len()), vec![2..4]);
        assert_eq!(find_valid_cut_points(&list, 0, v.len()), vec![0, 1, 5]);
        // 50 tokens are reached at u3 (t4: 30, u3: 40): before SPEC §12.7 the cut was u3.
        let cut = find_cut_point(&list, 0, v.len(), 50);
        assert_eq!(cut.first_kept_entry_index, 5);
    }

    #[test]
    fn exchange_opened_before_the_range_still_blocks_inside_it() {
        let v =
            vec![user("u0", "go"), call("a1", &["c1"]), user("u2", "steer"), result("t3", "c1"), user("u4", "next")];
        let list = EntryList::new(&v);
        assert_eq!(tool_exchanges(&list, 2, v.len()), vec![2..3]);
        assert_eq!(find_valid_cut_points(&list, 2, v.len()), vec![4]);
    }

    #[test]
    fn a_result_after_a_later_assistant_message_answers_nothing() {
        // a1's call is answered only after a3 spoke: the exchange of a1 is closed by a3.
        let v = vec![call("a1", &["c1"]), user("u2", "steer"), call("a3", &[]), result("t4", "c1"), user("u5", "x")];
        let list = EntryList::new(&v);
        assert!(tool_exchanges(&list, 0, v.len()).is_empty());
        assert_eq!(find_valid_cut_points(&list, 0, v.len()), vec![0, 1, 2, 4]);
    }

    #[test]
    fn unanswered_and_directly_answered_calls_block_nothing() {
        let v = vec![
            call("a0", &["c0"]),
            user("u1", "interrupted"),
            call("a2", &["c2"]),
            result("t3", "c2"),
            user("u4", "x"),
        ];
        let list = EntryList::new(&v);
        assert!(tool_exchanges(&list, 0, v.len()).is_empty());
        assert_eq!(find_valid_cut_points(&list, 0, v.len()), vec![0, 1, 2, 4]);
    }
}
