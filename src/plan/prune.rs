//! Tool output pruning: replaces bulky old tool results by a short notice once enough tokens
//! would be saved, keeping the newest outputs and protected tools intact (SPEC §7). Outputs
//! superseded by a later call of the same tool on the same target go first, wherever they are
//! (SPEC §13.6, staleness-aware pruning; `staleness: false` gives the reference's behaviour).

use crate::entry::EntrySource;
use crate::entry::{EntryKind, Role};
use crate::js::{ms_value, utf16_len};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Pruning settings (SPEC §7). Token numbers are estimates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PruneConfig {
    /// Tokens of the newest tool output that are never pruned.
    #[serde(default = "default_protect")]
    pub protect_tokens: u64,
    /// Prune only when at least this many tokens are saved in total.
    #[serde(default = "default_minimum")]
    pub minimum_savings: u64,
    /// Tool names whose results are never pruned.
    #[serde(default = "default_protected_tools")]
    pub protected_tools: Vec<String>,
    /// Staleness-aware pruning (SPEC §13.6, default on): outputs superseded by a later tool
    /// result of the same tool on the same target (a later full `read` of the same path, a
    /// repeated identical call) are candidates first, even inside the protect window; then the
    /// old outputs as in SPEC §7. Protected tools stay protected. `false`: SPEC §7 alone.
    #[serde(default = "yes")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub staleness: bool,
}

fn yes() -> bool {
    true
}

fn default_protect() -> u64 {
    40_000
}
fn default_minimum() -> u64 {
    20_000
}
fn default_protected_tools() -> Vec<String> {
    vec!["skill".into(), "read".into()]
}

impl Default for PruneConfig {
    /// `{protectTokens: 40000, minimumSavings: 20000, protectedTools: ["skill", "read"],
    /// staleness: true}`.
    fn default() -> Self {
        Self {
            protect_tokens: default_protect(),
            minimum_savings: default_minimum(),
            protected_tools: default_protected_tools(),
            staleness: true,
        }
    }
}

/// One tool result chosen for pruning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct PruneCandidate {
    /// Index of the entry in the entries given (for `SessionTree.planPrune`: the entry index
    /// in file order, the same as [`PruneCandidate::entry_index`]).
    pub index: usize,
    /// Index of the entry in the session, in file order (the position of its node in
    /// `SessionTree.getTree()`). Set by the session handle only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub entry_index: Option<usize>,
    /// Position of the entry on the current branch, root first (an index into
    /// `SessionTree.branchIndices()`). Set by the session handle only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub branch_position: Option<usize>,
    /// The entry id, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub id: Option<String>,
    /// The tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub tool_name: Option<String>,
    /// Estimated tokens of the output now.
    pub tokens: u64,
    /// Estimated tokens saved by replacing it with the notice.
    pub savings: u64,
    /// The text that replaces the output: `[Output truncated - N tokens]`, or for a superseded
    /// output `[Output truncated - N tokens; superseded by …]` ([`prune_notice_superseded`]).
    pub notice: String,
    /// The later tool result that made this output stale (SPEC §13.6); absent for an output
    /// pruned for its age.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub superseded_by: Option<SupersededBy>,
}

/// What made a tool output stale: a later tool result of the same tool on the same target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct SupersededBy {
    /// Index of the later tool result in the entries given.
    pub index: usize,
    /// Its entry id, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub id: Option<String>,
    /// The later call in words: `a later full read of src/lib.rs`, `a later identical bash call`.
    pub description: String,
}

/// The decision of a pruning pass, before anything is changed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct PrunePlan {
    /// Candidates: superseded outputs first (SPEC §13.6), then old ones (SPEC §7), each group
    /// newest first; empty when the total savings stay below `minimumSavings`.
    pub candidates: Vec<PruneCandidate>,
    /// Sum of the candidates' savings.
    pub tokens_saved: u64,
    /// Candidates found before the `minimumSavings` check (for previews).
    pub considered: usize,
    /// Their total savings (for previews).
    pub potential_savings: u64,
}

/// The notice that replaces a pruned output: `[Output truncated - N tokens]`.
pub fn prune_notice(tokens: u64) -> String {
    format!("[Output truncated - {tokens} tokens]")
}

/// The notice of a superseded output (SPEC §13.6): `[Output truncated - N tokens; superseded by
/// a later full read of src/lib.rs (entry 1a2b3c4d)]` (no entry part without an id).
pub fn prune_notice_superseded(tokens: u64, by: &SupersededBy) -> String {
    match &by.id {
        Some(id) => format!("[Output truncated - {tokens} tokens; superseded by {} (entry {id})]", by.description),
        None => format!("[Output truncated - {tokens} tokens; superseded by {}]", by.description),
    }
}

/// What a tool call reads or runs, for staleness (SPEC §13.6).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    /// The tool name.
    tool: String,
    /// `JSON.stringify(arguments)`: an identical later call supersedes.
    args: String,
    /// `arguments.path` of a `read` call.
    read_path: Option<String>,
    /// A `read` of the whole file (no `offset` / `limit`): supersedes every earlier read of
    /// the path, whole or ranged. A ranged read supersedes only an identical one.
    full_read: bool,
}

impl Target {
    fn of(tool: &str, args: &Value) -> Self {
        let read_path = (tool == "read")
            .then(|| args.get("path").and_then(Value::as_str).filter(|p| !p.is_empty()).map(str::to_owned))
            .flatten();
        let ranged = ["offset", "limit"].iter().any(|k| args.get(*k).is_some_and(|v| !v.is_null()));
        Self {
            tool: tool.to_string(),
            args: crate::js::json_stringify(args),
            full_read: read_path.is_some() && !ranged,
            read_path,
        }
    }
}

/// For each tool result of `results` (indices, newest first; none pruned, none of a protected
/// tool), the newest later result of `results` that supersedes it (SPEC §13.6). Only tools with
/// two or more results are looked at; their calls' arguments are read from the assistant
/// entries that hold them (one parse per such entry).
fn superseded<S: EntrySource + ?Sized>(entries: &S, results: &[usize]) -> HashMap<usize, SupersededBy> {
    let tool_of = |i: usize| entries.meta(i).message.as_ref().and_then(|m| m.tool_name.as_deref());
    let mut per_tool: HashMap<&str, usize> = HashMap::new();
    for &i in results {
        if let Some(t) = tool_of(i) {
            *per_tool.entry(t).or_default() += 1;
        }
    }
    let repeated: Vec<usize> =
        results.iter().copied().filter(|&i| tool_of(i).is_some_and(|t| per_tool[t] > 1)).collect();
    if repeated.is_empty() {
        return HashMap::new();
    }
    let wanted: HashMap<&str, usize> = repeated
        .iter()
        .filter_map(|&i| entries.meta(i).message.as_ref()?.tool_call_id.as_deref().map(|c| (c, i)))
        .collect();
    let mut holders: Vec<usize> = Vec::new();
    for a in 0..entries.len() {
        let Some(m) = entries.meta(a).message.as_ref() else { continue };
        if m.role == Role::Assistant
            && m.tool_calls.iter().any(|c| c.id.as_deref().is_some_and(|id| wanted.contains_key(id)))
        {
            holders.push(a);
        }
    }
    let mut targets: HashMap<usize, Target> = HashMap::new();
    for a in holders {
        let entry = entries.entry(a);
        let Some(blocks) = entry.get("message").and_then(|m| m.get("content")).and_then(Value::as_array) else {
            continue;
        };
        for b in blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall")) {
            let Some(&result) = b.get("id").and_then(Value::as_str).and_then(|id| wanted.get(id)) else { continue };
            let tool = tool_of(result).unwrap_or_default();
            targets.entry(result).or_insert_with(|| Target::of(tool, b.get("arguments").unwrap_or(&Value::Null)));
        }
    }
    // Newest first, remembering the newest result per full-read path and per identical call.
    let mut full_reads: HashMap<&str, usize> = HashMap::new();
    let mut calls: HashMap<(&str, &str), usize> = HashMap::new();
    let mut out = HashMap::new();
    for &i in &repeated {
        let Some(t) = targets.get(&i) else { continue };
        let by_read =
            t.read_path.as_deref().and_then(|p| full_reads.get(p).map(|&j| (j, format!("a later full read of {p}"))));
        let by = by_read.or_else(|| {
            calls.get(&(t.tool.as_str(), t.args.as_str())).map(|&j| (j, format!("a later identical {} call", t.tool)))
        });
        if let Some((j, description)) = by {
            out.insert(i, SupersededBy { index: j, id: entries.meta(j).id.clone(), description });
        }
        if let (true, Some(p)) = (t.full_read, t.read_path.as_deref()) {
            full_reads.entry(p).or_insert(i);
        }
        calls.entry((t.tool.as_str(), t.args.as_str())).or_insert(i);
    }
    out
}

/// Chooses the tool results to prune (SPEC §7, §13.6): walk tool results newest→oldest with a
/// running token sum (already pruned ones count but are skipped); results of protected tools
/// are kept; with `staleness`, results superseded by a later result of the same tool on the same
/// target are candidates wherever they are; the others are candidates once the sum has reached
/// `protectTokens`. Nothing is pruned when the total savings are below `minimumSavings`
/// (equality prunes). Candidates: superseded first, then old ones, each newest first.
pub fn plan_prune<S: EntrySource + ?Sized>(entries: &S, config: &PruneConfig) -> PrunePlan {
    let mut accumulated: u64 = 0;
    // (index, tokens, outside the protect window) of every unpruned, unprotected tool result.
    let mut open: Vec<(usize, u64, bool)> = Vec::new();
    for i in (0..entries.len()).rev() {
        let meta = entries.meta(i);
        if meta.kind != EntryKind::Message {
            continue;
        }
        let Some(m) = meta.message.as_ref() else { continue };
        if m.role != Role::ToolResult {
            continue;
        }
        let within_window = accumulated < config.protect_tokens;
        accumulated += m.tokens;
        if m.pruned {
            continue;
        }
        let protected = m.tool_name.as_ref().is_some_and(|t| config.protected_tools.iter().any(|p| p == t));
        if !protected {
            open.push((i, m.tokens, !within_window));
        }
    }
    let mut stale = if config.staleness {
        superseded(entries, &open.iter().map(|&(i, _, _)| i).collect::<Vec<_>>())
    } else {
        HashMap::new()
    };
    let candidate = |i: usize, tokens: u64, superseded_by: Option<SupersededBy>| {
        let notice = match &superseded_by {
            Some(by) => prune_notice_superseded(tokens, by),
            None => prune_notice(tokens),
        };
        let savings = tokens.saturating_sub(utf16_len(&notice).div_ceil(4));
        let tool_name = entries.meta(i).message.as_ref().and_then(|m| m.tool_name.clone());
        PruneCandidate {
            index: i,
            entry_index: None,
            branch_position: None,
            id: entries.meta(i).id.clone(),
            tool_name,
            tokens,
            savings,
            notice,
            superseded_by,
        }
    };
    let mut candidates: Vec<PruneCandidate> = Vec::new();
    let mut aged: Vec<PruneCandidate> = Vec::new();
    for &(i, tokens, old) in &open {
        match stale.remove(&i) {
            Some(by) => candidates.push(candidate(i, tokens, Some(by))),
            None if old => aged.push(candidate(i, tokens, None)),
            None => {}
        }
    }
    candidates.append(&mut aged);
    let total: u64 = candidates.iter().map(|c| c.savings).sum();
    let considered = candidates.len();
    if candidates.is_empty() || total < config.minimum_savings {
        return PrunePlan { candidates: Vec::new(), tokens_saved: 0, considered, potential_savings: total };
    }
    PrunePlan { candidates, tokens_saved: total, considered, potential_savings: total }
}

/// The pruned form of a tool-result entry: content replaced by `notice` (a candidate's
/// [`PruneCandidate::notice`]), `prunedAt` set (ms since the epoch). Other fields are kept.
pub fn pruned_entry(entry: &Value, notice: &str, now_ms: f64) -> Value {
    let mut out = entry.clone();
    if let Some(msg) = out.get_mut("message").and_then(Value::as_object_mut) {
        msg.insert("content".into(), json!([{"type": "text", "text": notice}]));
        msg.insert("prunedAt".into(), ms_value(Some(now_ms)));
    }
    out
}

/// The result of [`prune_tool_outputs`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneResult {
    /// How many tool results were pruned.
    pub pruned_count: usize,
    /// Estimated tokens saved.
    pub tokens_saved: u64,
    /// The changed entries (whole entries, newest first) and their indices.
    pub pruned_entries: Vec<(usize, Value)>,
}

/// Prunes old tool outputs (SPEC §7). The input is not changed: the result holds the changed
/// entries, which the host writes back before rebuilding its context. `now_ms` is the
/// `prunedAt` timestamp (ms since the epoch) shared by the batch.
pub fn prune_tool_outputs<S: EntrySource + ?Sized>(entries: &S, config: &PruneConfig, now_ms: f64) -> PruneResult {
    let plan = plan_prune(entries, config);
    let pruned_entries =
        plan.candidates.iter().map(|c| (c.index, pruned_entry(&entries.entry(c.index), &c.notice, now_ms))).collect();
    PruneResult { pruned_count: plan.candidates.len(), tokens_saved: plan.tokens_saved, pruned_entries }
}
