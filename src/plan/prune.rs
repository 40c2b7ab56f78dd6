//! Tool output pruning: replaces bulky old tool results by a short notice once enough tokens
//! would be saved, keeping the newest outputs and protected tools intact. SPEC §7.

use crate::entry::EntrySource;
use crate::entry::{EntryKind, Role};
use crate::js::{ms_value, utf16_len};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Pruning settings (SPEC §7). Token numbers are estimates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
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
    /// `{protectTokens: 40000, minimumSavings: 20000, protectedTools: ["skill", "read"]}`.
    fn default() -> Self {
        Self {
            protect_tokens: default_protect(),
            minimum_savings: default_minimum(),
            protected_tools: default_protected_tools(),
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
}

/// The decision of a pruning pass, before anything is changed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct PrunePlan {
    /// Candidates newest first; empty when the total savings stay below `minimumSavings`.
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

/// Chooses the tool results to prune (SPEC §7): walk tool results newest→oldest with a running
/// token sum (already pruned ones count but are skipped); results while the sum is below
/// `protectTokens`, or of protected tools, are kept; the rest are candidates. Nothing is pruned
/// when the total savings are below `minimumSavings` (equality prunes).
pub fn plan_prune<S: EntrySource + ?Sized>(entries: &S, config: &PruneConfig) -> PrunePlan {
    let mut accumulated: u64 = 0;
    let mut candidates = Vec::new();
    let mut total: u64 = 0;
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
        if within_window || protected {
            continue;
        }
        let notice_tokens = utf16_len(&prune_notice(m.tokens)).div_ceil(4);
        let savings = m.tokens.saturating_sub(notice_tokens);
        total += savings;
        candidates.push(PruneCandidate {
            index: i,
            entry_index: None,
            branch_position: None,
            id: meta.id.clone(),
            tool_name: m.tool_name.clone(),
            tokens: m.tokens,
            savings,
        });
    }
    let considered = candidates.len();
    if candidates.is_empty() || total < config.minimum_savings {
        return PrunePlan { candidates: Vec::new(), tokens_saved: 0, considered, potential_savings: total };
    }
    PrunePlan { candidates, tokens_saved: total, considered, potential_savings: total }
}

/// The pruned form of a tool-result entry: content replaced by the notice, `prunedAt` set
/// (ms since the epoch). Other fields are kept as they are.
pub fn pruned_entry(entry: &Value, tokens: u64, now_ms: f64) -> Value {
    let mut out = entry.clone();
    if let Some(msg) = out.get_mut("message").and_then(Value::as_object_mut) {
        msg.insert("content".into(), json!([{"type": "text", "text": prune_notice(tokens)}]));
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
        plan.candidates.iter().map(|c| (c.index, pruned_entry(&entries.entry(c.index), c.tokens, now_ms))).collect();
    PruneResult { pruned_count: plan.candidates.len(), tokens_saved: plan.tokens_saved, pruned_entries }
}
