//! The options and results of the host API (the npm package's functions and `SessionTree`
//! methods) as typed structs, and the decisions made on them: defaults, token-count arguments,
//! which entries a result holds. A binding converts these shapes and decides nothing; with the
//! `tsify` feature each one also declares its TypeScript type (camelCase, as on the wire).
//!
//! Entry and message arrays are `Vec<Value>` declared as `SessionEntry[]` / `AgentMessage[]`:
//! they cross the boundary as JSON text, never walked field by field.

use crate::context::SessionContext;
use crate::entry::UsageMeta;
use crate::error::{Error, Result};
use crate::io::{LineError, OpaqueLine, ParsedSession};
use crate::plan::branch::BranchEntries;
use crate::plan::file_ops::FileLists;
use crate::plan::prepare::FileOpsLists;
use crate::plan::prune::PruneResult;
use crate::session::engine::{CheckOutcome, CompactOutcome, NavigateOutcome};
use crate::summarize::{BranchSummary, CompactionResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A token-count argument given as a JavaScript number: negative, zero and NaN are 0, fractions
/// are dropped, and anything above `u64::MAX` (`Infinity`) is `u64::MAX`. Used for
/// `keepRecentTokens` of `findCutPoint` and `tokenBudget` of `prepareBranchEntries` (where 0
/// means "no limit").
pub fn token_count(n: f64) -> u64 {
    if n > 0.0 {
        n.min(u64::MAX as f64) as u64
    } else {
        0
    }
}

/// The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`, 2^53 - 1).
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A number of tokens given as a JavaScript number — `tokenBudget` of `prepareBranchEntries`
/// (where 0 means "no limit"), `contextTokens` of `shouldCompact`: a whole number of tokens
/// from 0 to 2^53 - 1. SPEC §10, §13.11.
///
/// # Errors
/// [`Error::Argument`] naming `name` for a negative number, a fraction, NaN, an infinity or a
/// number above 2^53 - 1 (the reference would read a negative budget as "no limit", NaN as none
/// at all and a negative context as never due).
pub fn token_budget(n: f64, name: &str) -> Result<u64> {
    if (0.0..=MAX_SAFE_INTEGER).contains(&n) && n.fract() == 0.0 {
        Ok(n as u64)
    } else {
        Err(Error::Argument {
            name: name.into(),
            reason: format!(
                "expected a whole number of tokens from 0 to 2^53 - 1, got {}",
                crate::js::format_number(n)
            ),
        })
    }
}

/// How a message names a JSON value's type (`null`, `a number`, `an array`, …).
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks that an argument is a JSON object (a message for `estimateTokens`, a preparation for
/// `compact`): `expected` says what it should be. SPEC §13.11.
///
/// # Errors
/// [`Error::Argument`] naming `name`, saying what was expected and what was given.
pub fn require_object(v: &Value, name: &str, expected: &str) -> Result<()> {
    if v.is_object() {
        Ok(())
    } else {
        Err(Error::Argument { name: name.into(), reason: format!("expected {expected}, got {}", json_kind(v)) })
    }
}

/// The error of an options object (or another typed argument) that serde could not read from
/// its JSON text `json` (one line, as `JSON.stringify` or serde writes it): an [`Error::Argument`]
/// naming the field the error lies in (`what.reserveTokens`, `what.prune.minimumSavings`) when
/// it is a wrong type or value, and saying what was expected in words (`a non-negative integer`
/// for serde's `u64`) and what was given; other errors (an unknown field, …) name `what`, with
/// serde's message without its position. SPEC §13.11.
pub fn options_error(what: &str, json: &[u8], e: &serde_json::Error) -> Error {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = match message.strip_suffix(&suffix) {
        Some(head) if e.line() != 0 => head.to_owned(),
        _ => message,
    };
    let typed = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "));
    let Some(rest) = typed else {
        return Error::Argument { name: what.into(), reason: message };
    };
    // "<given>, expected <wanted>"
    let (given, wanted) = match rest.rsplit_once(", expected ") {
        Some((g, w)) => (g, w),
        None => (rest, ""),
    };
    let wanted = match wanted {
        "u64" | "usize" | "u32" | "u16" | "u8" => "a non-negative integer".to_string(),
        "i64" | "i32" => "an integer".to_string(),
        "f64" | "f32" => "a number".to_string(),
        "a boolean" | "a string" => wanted.to_string(),
        w if w.starts_with("struct ") => "an object".to_string(),
        w => w.to_string(),
    };
    let given = given.replace("floating point ", "the number ").replace("integer ", "the number ");
    let path = json_path_at(json, e.column().saturating_sub(1));
    let name = if path.is_empty() { what.to_string() } else { format!("{what}.{}", path.join(".")) };
    Error::Argument { name, reason: format!("expected {wanted}, got {given}") }
}

/// The keys leading to byte `offset` of a one-line JSON text (array positions left out): the
/// field a serde error at that position lies in.
fn json_path_at(json: &[u8], offset: usize) -> Vec<String> {
    // One frame per open container: `Some(key)` in an object (empty before its first key),
    // `None` in an array.
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    let end = offset.min(json.len());
    while i < end {
        match json[i] {
            b'{' => {
                stack.push(Some(String::new()));
                expect_key = true;
            }
            b'[' => {
                stack.push(None);
                expect_key = false;
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
            }
            b',' => expect_key = matches!(stack.last(), Some(Some(_))),
            b'"' => {
                let start = i;
                i += 1;
                while i < json.len() && json[i] != b'"' {
                    i += if json[i] == b'\\' { 2 } else { 1 };
                }
                if expect_key {
                    let key: String =
                        json.get(start..=i).and_then(|t| serde_json::from_slice(t).ok()).unwrap_or_default();
                    if let Some(Some(k)) = stack.last_mut() {
                        *k = key;
                    }
                    expect_key = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    stack.into_iter().flatten().filter(|k| !k.is_empty()).collect()
}

/// Result of `parseSession` (SPEC §1, §13.3): the header (`null` when there is no valid header:
/// then either the header line was not JSON and `entries` holds every record, or the input is not
/// a session, `entries` is empty and every line is in `opaqueLines`), the entries in file order
/// after migration, the bad lines, whether a migration was applied, and the lines kept as
/// written. Pass the whole result to `serializeSession` to write every line back. (The JS
/// `parseSession` writes this shape with [`crate::io::parsed_session_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct ParsedSessionResult {
    /// The session header, or `null`.
    #[cfg_attr(feature = "tsify", tsify(type = "SessionHeader | null"))]
    pub header: Option<Value>,
    /// Every entry after the header, in file order.
    #[cfg_attr(feature = "tsify", tsify(type = "SessionEntry[]"))]
    pub entries: Vec<Value>,
    /// The bad lines, by line number.
    pub errors: Vec<LineError>,
    /// A v1/v2 → v3 migration was applied.
    pub migrated: bool,
    /// The lines that hold no record (malformed, blank), as written, with their places.
    pub opaque_lines: Vec<OpaqueLine>,
}

impl From<ParsedSession> for ParsedSessionResult {
    fn from(p: ParsedSession) -> Self {
        Self { header: p.header, entries: p.entries, errors: p.errors, migrated: p.migrated, opaque_lines: p.opaque }
    }
}

/// Result of `parseSessionWithIds`: `parseSession`'s result plus how many ids the v1 migration
/// drew (given ones first, then random ones).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct ParsedSessionWithIdsResult {
    /// The session header, or `null`.
    #[cfg_attr(feature = "tsify", tsify(type = "SessionHeader | null"))]
    pub header: Option<Value>,
    /// Every entry after the header, in file order.
    #[cfg_attr(feature = "tsify", tsify(type = "SessionEntry[]"))]
    pub entries: Vec<Value>,
    /// The bad lines, by line number.
    pub errors: Vec<LineError>,
    /// A v1/v2 → v3 migration was applied.
    pub migrated: bool,
    /// The lines that hold no record (malformed, blank), as written, with their places.
    pub opaque_lines: Vec<OpaqueLine>,
    /// How many ids the migration drew.
    pub generated_ids_used: usize,
}

/// [`crate::io::parse_session_with_ids`] with the ids a v1 → v2 migration assigns taken from
/// `generated_ids` in order, random ones (distinct from the given ones) once they run out, for
/// reproducible migrations. SPEC §1.
///
/// # Errors
/// Strict mode only: the error of the first bad line.
pub fn parse_session_with_id_list(
    jsonl: &str,
    options: &crate::io::ParseOptions,
    generated_ids: &[String],
) -> Result<ParsedSessionWithIdsResult> {
    let mut used = 0usize;
    let mut random = crate::io::RandomIds::with_taken(generated_ids.iter().cloned());
    let mut next = || {
        let id = generated_ids.get(used).cloned().unwrap_or_else(|| random.next_id());
        used += 1;
        id
    };
    let p = crate::io::parse_session_with_ids(jsonl.as_bytes(), options, &mut next)?;
    Ok(ParsedSessionWithIdsResult {
        header: p.header,
        entries: p.entries,
        errors: p.errors,
        migrated: p.migrated,
        opaque_lines: p.opaque,
        generated_ids_used: used,
    })
}

/// The argument of `serializeSession`: a header (optional, `null` for none), the entries, and
/// the opaque lines `parseSession` returned (optional), which go back in their places.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct SessionFile {
    /// The session header (written as the first line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "SessionHeader | null"))]
    pub header: Option<Value>,
    /// The entries, one line each.
    #[cfg_attr(feature = "tsify", tsify(type = "SessionEntry[]"))]
    pub entries: Vec<Value>,
    /// The lines kept as written (`line` is ignored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub opaque_lines: Vec<OpaqueLine>,
}

/// `serializeSession`: the header and entry texts (compact JSON, one record each) and the opaque
/// lines written in file order ([`crate::io::write_lines`]; opaque lines sorted by position,
/// stably). SPEC §1, §13.3.
///
/// # Errors
/// [`Error::Argument`] for an opaque line whose text holds a line end (it would add lines).
pub fn serialize_session_file(header: Option<&str>, entries: &[&str], opaque: &[OpaqueLine]) -> Result<String> {
    if let Some(i) = opaque.iter().position(|o| o.text.contains('\n')) {
        return Err(Error::Argument {
            name: format!("session.opaqueLines[{i}]"),
            reason: "`text` must not contain a line end".into(),
        });
    }
    let header = header.filter(|h| h.trim() != "null");
    let mut sorted: Vec<&OpaqueLine> = opaque.iter().collect();
    crate::js::sort_by_key_stable(&mut sorted, |o| o.position);
    let size = header.map_or(0, str::len)
        + entries.iter().map(|e| e.len() + 1).sum::<usize>()
        + sorted.iter().map(|o| o.text.len() + 1).sum::<usize>()
        + 1;
    let mut out = String::with_capacity(size);
    crate::io::write_lines(
        &mut out,
        header.into_iter().chain(entries.iter().copied()),
        sorted.iter().map(|o| (o.position, o.text.as_str())),
        crate::io::LineEnd::Lf,
    );
    Ok(out)
}

/// Result of `pruneToolOutputs` (SPEC §7): how many tool results were pruned, the estimated
/// tokens saved, and the changed entries (whole entries, newest first).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(rename = "PruneResult"))]
#[serde(rename_all = "camelCase")]
pub struct PruneReport {
    /// Tool results pruned.
    pub pruned_count: usize,
    /// Estimated tokens saved.
    pub tokens_saved: u64,
    /// The changed entries, in the plan's order (superseded outputs first, then old ones, each newest first).
    #[cfg_attr(feature = "tsify", tsify(type = "SessionEntry[]"))]
    pub pruned_entries: Vec<Value>,
}

impl From<PruneResult> for PruneReport {
    fn from(r: PruneResult) -> Self {
        Self {
            pruned_count: r.pruned_count,
            tokens_saved: r.tokens_saved,
            pruned_entries: r.pruned_entries.into_iter().map(|(_, e)| e).collect(),
        }
    }
}

/// Result of `collectEntriesForBranchSummary` (SPEC §10): the entries to summarize
/// (chronological) and the common ancestor of the old leaf and the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct BranchCollection {
    /// The entries to summarize, oldest first.
    #[cfg_attr(feature = "tsify", tsify(type = "SessionEntry[]"))]
    pub entries: Vec<Value>,
    /// The deepest entry on both paths, or `null`.
    pub common_ancestor_id: Option<String>,
}

/// [`crate::tree::collect_entries_for_branch_summary`] on a list of entries, with the selected
/// entries copied out. SPEC §10.
pub fn collect_branch_collection(entries: &[Value], old_leaf_id: Option<&str>, target_id: &str) -> BranchCollection {
    let list = crate::entry::EntryList::new(entries);
    let (idx, common) = crate::tree::collect_entries_for_branch_summary(&list, old_leaf_id, target_id);
    BranchCollection { entries: idx.iter().map(|&i| entries[i].clone()).collect(), common_ancestor_id: common }
}

/// Result of `prepareBranchEntries` (SPEC §10): the selected messages, the file operations as
/// lists, their estimated tokens, and the read/modified file lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct BranchEntriesResult {
    /// The messages, oldest first.
    #[cfg_attr(feature = "tsify", tsify(type = "AgentMessage[]"))]
    pub messages: Vec<Value>,
    /// Files read / written / edited.
    pub file_ops: FileOpsLists,
    /// Estimated tokens of the messages.
    pub total_tokens: u64,
    /// `{readFiles, modifiedFiles}` of `fileOps`.
    pub file_lists: FileLists,
}

impl From<BranchEntries> for BranchEntriesResult {
    fn from(r: BranchEntries) -> Self {
        Self {
            file_ops: FileOpsLists::from(&r.file_ops),
            file_lists: r.file_ops.file_lists(),
            messages: r.messages,
            total_tokens: r.total_tokens,
        }
    }
}

/// `getLastAssistantUsage`: the `usage` object of the last assistant message whose stopReason
/// is neither "aborted" nor "error". SPEC §5.
pub fn last_assistant_usage_value(entries: &[Value]) -> Option<&Value> {
    let list = crate::entry::EntryList::new(entries);
    crate::plan::prepare::last_assistant_usage(&list, 0).and_then(|(i, _)| entries[i].get("message")?.get("usage"))
}

/// Reads a `usage` object the way an assistant message's usage is read (missing numbers: NaN),
/// for `calculateContextTokens` / `calculatePromptTokens`. SPEC §5.
///
/// # Errors
/// [`Error::InvalidArgument`] when `usage` is not an object.
pub fn usage_of(usage: &Value) -> Result<UsageMeta> {
    let msg = serde_json::json!({"role": "assistant", "usage": usage});
    crate::entry::MessageMeta::from_value(&msg)
        .usage
        .ok_or_else(|| Error::InvalidArgument("`usage`: expected a usage object".into()))
}

/// One node of `SessionTree.getTree()`: every entry in file order with its links.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct TreeNode<'a> {
    /// The entry id (`null` for an entry without one).
    #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
    pub id: Option<&'a str>,
    /// The parent id, or `null` for a root.
    #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
    pub parent_id: Option<&'a str>,
    /// The entry type.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "string"))]
    pub entry_type: std::borrow::Cow<'a, str>,
    /// The message role, for `message` entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "string"))]
    pub role: Option<std::borrow::Cow<'a, str>>,
    /// The entry's label (the last `label` entry for it wins).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "string"))]
    pub label: Option<&'a str>,
    /// Estimated tokens of the entry's message (0 for other entries).
    pub tokens: u64,
    /// Ids of the children, in file order.
    #[cfg_attr(feature = "tsify", tsify(type = "string[]"))]
    pub children: Vec<&'a str>,
    /// 1-based line in the loaded file (0 for appended entries).
    pub line: usize,
}

/// Result of `SessionTree.compact()` (SPEC §9, §11): the appended compaction entry, the summary
/// result, whether a hook supplied it, and the new context.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactResult {
    /// The appended `compaction` entry.
    #[cfg_attr(feature = "tsify", tsify(type = "SessionEntry"))]
    pub compaction_entry: Value,
    /// The summary result.
    pub result: CompactionResult,
    /// The compaction came from a `session_before_compact` hook.
    pub from_extension: bool,
    /// The context of the branch after the compaction.
    pub context: SessionContext,
}

impl SessionCompactResult {
    /// The result of a finished compaction and the context built after it.
    pub fn new(done: CompactOutcome, context: SessionContext) -> Self {
        Self { compaction_entry: done.entry, result: done.result, from_extension: done.from_extension, context }
    }
}

/// Result of `SessionTree.navigateTree()` (SPEC §10).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct NavigateTreeResult {
    /// Text for the host's editor (the target user message / custom message text).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub editor_text: Option<String>,
    /// A hook cancelled, or the summary was aborted: nothing changed.
    pub cancelled: bool,
    /// The summary was aborted (present only then).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub aborted: bool,
    /// The appended `branch_summary` entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "SessionEntry"))]
    pub summary_entry: Option<Value>,
    /// The leaf after the call (`null`: before the first entry); a cancelled or aborted
    /// navigation reports the leaf it left in place.
    pub new_leaf_id: Option<String>,
}

impl NavigateTreeResult {
    /// The report of a navigation; `current_leaf` is the session's leaf after it.
    pub fn new(out: NavigateOutcome, current_leaf: Option<&str>) -> Self {
        let new_leaf_id = if out.cancelled { current_leaf.map(str::to_owned) } else { out.new_leaf_id };
        Self {
            editor_text: out.editor_text,
            cancelled: out.cancelled,
            aborted: out.aborted,
            summary_entry: out.summary_entry,
            new_leaf_id,
        }
    }
}

/// Result of `SessionTree.checkCompaction()` (SPEC §11).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct CheckCompactionResult {
    /// Tool results pruned first.
    pub pruned_count: usize,
    /// Estimated tokens saved by pruning.
    pub tokens_saved: u64,
    /// Estimated context tokens used for the threshold decision.
    pub context_tokens: f64,
    /// Why a compaction was attempted.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "\"overflow\" | \"threshold\""))]
    pub reason: Option<crate::session::events::CompactionReason>,
    /// The appended `compaction` entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "SessionEntry"))]
    pub compaction_entry: Option<Value>,
    /// The summary result of that compaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub result: Option<CompactionResult>,
    /// Overflow path: retry the turn with `context`.
    pub will_retry: bool,
    /// The context for the retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub context: Option<SessionContext>,
    /// Threshold path: the user prompt to send next.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub continue_prompt: Option<String>,
    /// The compaction was aborted.
    pub aborted: bool,
    /// `Context overflow recovery failed: …` / `Auto-compaction failed: …`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub error_message: Option<String>,
    /// A compaction was due but did not run (SPEC §11, §13.5): the breaker is paused, the
    /// overflow was already recovered in this turn, or the overflow is not one this check
    /// recovers (another model's, or not newer than the latest compaction).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "tsify",
        tsify(optional, type = "\"paused\" | \"overflowRecoveredThisTurn\" | \"otherModel\" | \"staleOverflow\"")
    )]
    pub skipped: Option<crate::session::events::SkipCause>,
}

impl From<CheckOutcome> for CheckCompactionResult {
    fn from(out: CheckOutcome) -> Self {
        let (compaction_entry, result) = match out.compaction {
            Some(c) => (Some(c.entry), Some(c.result)),
            None => (None, None),
        };
        Self {
            pruned_count: out.pruned_count,
            tokens_saved: out.tokens_saved,
            context_tokens: out.context_tokens,
            reason: out.reason,
            compaction_entry,
            result,
            will_retry: out.will_retry,
            context: out.context,
            continue_prompt: out.continue_prompt,
            aborted: out.aborted,
            error_message: out.error_message,
            skipped: out.skipped,
        }
    }
}

/// Result of `generateBranchSummary()` (SPEC §10): the summary, `{aborted: true}`, or
/// `{error}` with the failure's message (model failures are reported, never thrown).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(untagged)]
pub enum BranchSummaryOutcome {
    /// The summary.
    Summary(BranchSummary),
    /// The call was aborted.
    Aborted {
        /// Always `true`.
        #[cfg_attr(feature = "tsify", tsify(type = "true"))]
        aborted: bool,
    },
    /// The model failed.
    Error {
        /// The failure's message.
        error: String,
    },
}

impl From<Result<BranchSummary>> for BranchSummaryOutcome {
    fn from(r: Result<BranchSummary>) -> Self {
        match r {
            Ok(s) => Self::Summary(s),
            Err(Error::Aborted { .. }) => Self::Aborted { aborted: true },
            Err(Error::Summarization { message }) | Err(Error::Model { message, .. }) => Self::Error { error: message },
            Err(e) => Self::Error { error: e.to_string() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::prepare::CompactionSettings;
    use crate::session::engine::{CheckOptions, NavigateRun, RetryPolicy};
    use serde_json::json;

    #[test]
    fn token_budgets_refuse_what_is_no_number_of_tokens() {
        assert_eq!(token_budget(0.0, "tokenBudget").unwrap(), 0);
        assert_eq!(token_budget(1000.0, "tokenBudget").unwrap(), 1000);
        assert_eq!(token_budget(MAX_SAFE_INTEGER, "tokenBudget").unwrap(), 9_007_199_254_740_991);
        for (n, shown) in [
            (-1.0, "-1"),
            (1.5, "1.5"),
            (-0.5, "-0.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (2f64.powi(53), "9007199254740992"),
        ] {
            let e = token_budget(n, "tokenBudget").unwrap_err();
            assert_eq!(e.code(), "E_INVALID_ARGUMENT");
            assert_eq!(
                e.to_string(),
                format!(
                    "invalid argument `tokenBudget`: expected a whole number of tokens from 0 to 2^53 - 1, got {shown}"
                )
            );
        }
    }

    #[test]
    fn object_arguments_say_what_was_given() {
        assert!(require_object(&json!({}), "message", "a message object").is_ok());
        let e = require_object(&Value::Null, "message", "a message object").unwrap_err();
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            ("E_INVALID_ARGUMENT", "invalid argument `message`: expected a message object, got null")
        );
        let e = require_object(&json!([1]), "preparation", "a preparation object").unwrap_err();
        assert_eq!(e.to_string(), "invalid argument `preparation`: expected a preparation object, got an array");
    }

    #[test]
    fn option_errors_name_the_setting_and_what_was_given() {
        use crate::plan::prepare::CompactionSettings;
        use crate::session::engine::CheckOptions;
        let err = |what: &str, text: &str, typed: fn(&[u8]) -> serde_json::Error| {
            options_error(what, text.as_bytes(), &typed(text.as_bytes())).to_string()
        };
        let settings = |t: &[u8]| serde_json::from_slice::<CompactionSettings>(t).unwrap_err();
        let check = |t: &[u8]| serde_json::from_slice::<CheckOptions>(t).unwrap_err();
        assert_eq!(
            err("settings", r#"{"reserveTokens":null}"#, settings),
            "invalid argument `settings.reserveTokens`: expected a non-negative integer, got null"
        );
        assert_eq!(
            err("settings", r#"{"enabled":true,"keepRecentTokens":"20k"}"#, settings),
            "invalid argument `settings.keepRecentTokens`: expected a non-negative integer, got string \"20k\""
        );
        assert_eq!(
            err("settings", r#"{"reserveTokens":-5}"#, settings),
            "invalid argument `settings.reserveTokens`: expected a non-negative integer, got the number `-5`"
        );
        assert_eq!(
            err("settings", r#"{"reserveTokens":1.5}"#, settings),
            "invalid argument `settings.reserveTokens`: expected a non-negative integer, got the number `1.5`"
        );
        assert_eq!(
            err("options", r#"{"contextWindow":1000,"settings":{"reserveTokens":"x"}}"#, check),
            "invalid argument `options.settings.reserveTokens`: expected a non-negative integer, got string \"x\""
        );
        assert_eq!(
            err("options", r#"{"contextWindow":"big"}"#, check),
            "invalid argument `options.contextWindow`: expected a number, got string \"big\""
        );
        // Other errors keep serde's message, without its position.
        assert!(err("settings", r#"{"bogus":1}"#, settings)
            .starts_with("invalid argument `settings`: unknown field `bogus`"));
        assert!(!err("settings", r#"{"bogus":1}"#, settings).contains(" at line "));
    }

    #[test]
    fn token_counts_from_js_numbers() {
        assert_eq!(token_count(-5.0), 0);
        assert_eq!(token_count(f64::NAN), 0);
        assert_eq!(token_count(0.0), 0);
        assert_eq!(token_count(12.9), 12);
        assert_eq!(token_count(f64::INFINITY), u64::MAX);
    }

    #[test]
    fn options_read_with_defaults_and_clamps() {
        let check: CheckOptions =
            serde_json::from_value(json!({"contextWindow": 1000, "retry": {"maxRetries": -2, "baseDelayMs": -1}}))
                .unwrap();
        assert_eq!(check.retry, RetryPolicy { max_retries: 0, base_delay_ms: 0.0, ..RetryPolicy::default() });
        assert_eq!(check.settings, CompactionSettings::default());
        assert_eq!(check.prune, crate::plan::prune::PruneConfig::default());
        let e = serde_json::from_value::<CheckOptions>(json!({"model": "a/b"})).unwrap_err();
        assert!(e.to_string().contains("contextWindow"), "{e}");
        let nav: NavigateRun =
            serde_json::from_value(json!({"summarize": true, "customInstructions": "x", "contextWindow": 500}))
                .unwrap();
        let b = nav.branch_options();
        assert_eq!(
            (b.context_window, b.reserve_tokens, b.custom_instructions.as_deref()),
            (Some(500), None, Some("x"))
        );
        let strict: crate::io::ParseOptions = serde_json::from_value(json!({"strict": true})).unwrap();
        assert!(strict.strict);
    }

    /// Issue 11: an unknown setting or option name is refused, naming it, in every options
    /// struct (nested ones included); a model id is never empty.
    #[test]
    fn unknown_option_names_are_refused() {
        fn refused<T: serde::de::DeserializeOwned + std::fmt::Debug>(v: Value, name: &str) {
            let e = serde_json::from_value::<T>(v).unwrap_err().to_string();
            assert!(e.contains(&format!("unknown field `{name}`")), "{e}");
        }
        refused::<CompactionSettings>(json!({"keepRecentTokens": 5, "keepRecent": 5}), "keepRecent");
        refused::<crate::plan::prune::PruneConfig>(json!({"protectTokens": 5, "protect": 1}), "protect");
        refused::<crate::io::ParseOptions>(json!({"stict": true}), "stict");
        refused::<crate::session::engine::CompactRun>(json!({"customInstruction": "x"}), "customInstruction");
        refused::<crate::session::engine::CompactRun>(json!({"settings": {"tokenizer": "o200k"}}), "tokenizer");
        refused::<NavigateRun>(json!({"summarise": true}), "summarise");
        refused::<CheckOptions>(json!({"contextWindow": 9, "window": 9}), "window");
        refused::<CheckOptions>(json!({"contextWindow": 9, "retry": {"retries": 1}}), "retries");
        refused::<CheckOptions>(json!({"contextWindow": 9, "prune": {"minSavings": 1}}), "minSavings");
        refused::<crate::summarize::CompactOptions>(json!({"extraContexts": []}), "extraContexts");
        refused::<crate::summarize::BranchSummaryOptions>(json!({"reserve": 1}), "reserve");
        refused::<crate::context::convert::ConvertOptions>(json!({"repairs": true}), "repairs");
        let e = serde_json::from_value::<CheckOptions>(json!({"contextWindow": 9, "model": " "})).unwrap_err();
        assert!(e.to_string().contains("`model` must name a model"), "{e}");
        let ok: CheckOptions = serde_json::from_value(json!({"contextWindow": 9, "model": "gpt-4o"})).unwrap();
        assert_eq!(ok.model.as_deref(), Some("gpt-4o"));
    }

    #[test]
    fn results_serialize_as_the_js_shapes() {
        let out = NavigateOutcome { cancelled: true, ..Default::default() };
        assert_eq!(
            serde_json::to_value(NavigateTreeResult::new(out, Some("e2"))).unwrap(),
            json!({"cancelled": true, "newLeafId": "e2"})
        );
        let aborted: BranchSummaryOutcome = Err(Error::Aborted { what: "Branch summary".into() }).into();
        assert_eq!(serde_json::to_value(aborted).unwrap(), json!({"aborted": true}));
        let failed: BranchSummaryOutcome =
            Err(Error::Model { message: "429 rate limit".into(), status: Some(429), retry_after_ms: None }).into();
        assert_eq!(serde_json::to_value(failed).unwrap(), json!({"error": "429 rate limit"}));
        let line = LineError { line: 3, error: Error::Parse { line: 3, reason: "bad".into() } };
        assert_eq!(
            serde_json::to_value(&line).unwrap(),
            json!({"line": 3, "code": "E_PARSE", "message": "line 3: bad"})
        );
        let check = CheckCompactionResult::from(CheckOutcome { pruned_count: 2, ..Default::default() });
        assert_eq!(
            serde_json::to_value(check).unwrap(),
            json!({"prunedCount": 2, "tokensSaved": 0, "contextTokens": 0.0, "willRetry": false, "aborted": false})
        );
    }
}

/// Result of `convertToLlm(messages, {repair: true})` (SPEC §6, §13.1): the LLM messages in
/// provider-valid form and what was repaired.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct RepairedLlmMessages {
    /// The converted messages, results right after their calls.
    #[cfg_attr(feature = "tsify", tsify(type = "AgentMessage[]"))]
    pub messages: Vec<Value>,
    /// The repairs (`entryId` absent: the messages came without entries).
    pub repairs: Vec<crate::context::repair::ContextRepair>,
}
