//! Tool output pruning: replaces bulky old tool results by a short notice once enough tokens
//! would be saved, keeping the newest outputs and protected tools intact (SPEC §7). Outputs
//! superseded by a later call of the same tool on the same target go first, wherever they are
//! (SPEC §13.6, staleness-aware pruning; `staleness: false` gives the reference's behaviour).

use crate::entry::EntrySource;
use crate::entry::{EntryKind, EntryMeta, Role, TextSpan};
use crate::js::{ms_value, utf16_len};
use crate::text_key::{same_bytes, sized, FastMap, TextKey};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;
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
    notice(tokens, None)
}

/// `[Output truncated - N tokens` then `; superseded by …` when `by` is given, then `]`,
/// written piece by piece into a text of its size (a prune writes thousands).
fn notice(tokens: u64, by: Option<&SupersededBy>) -> String {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(tokens);
    let by_len = by.map_or(0, |b| b.description.len() + b.id.as_ref().map_or(0, |id| id.len() + 8) + 16);
    let mut out = String::with_capacity(36 + digits.len() + by_len);
    out.push_str("[Output truncated - ");
    out.push_str(digits);
    out.push_str(" tokens");
    if let Some(by) = by {
        out.push_str("; superseded by ");
        out.push_str(&by.description);
        if let Some(id) = &by.id {
            out.push_str(" (entry ");
            out.push_str(id);
            out.push(')');
        }
    }
    out.push(']');
    out
}

/// The notice of a superseded output (SPEC §13.6): `[Output truncated - N tokens; superseded by
/// a later full read of src/lib.rs (entry 1a2b3c4d)]` (no entry part without an id).
pub fn prune_notice_superseded(tokens: u64, by: &SupersededBy) -> String {
    notice(tokens, Some(by))
}

/// What a tool call reads or runs, for staleness (SPEC §13.6), besides its tool.
#[derive(Debug, Clone)]
struct Target<'a> {
    /// `JSON.stringify(arguments)`: an identical later call of the same tool supersedes.
    args: &'a [u8],
    /// `arguments.path` of a `read` call.
    read_path: Option<&'a str>,
    /// A `read` of the whole file (no `offset` / `limit`): supersedes every earlier read of
    /// the path, whole or ranged. A ranged read supersedes only an identical one.
    full_read: bool,
}

/// What the staleness rule (SPEC §13.6) reads of one `toolCall` block: its id and arguments.
/// [`call_arguments`] gives those of an entry; a source may keep them
/// ([`EntrySource::call_arguments`]) so that planning a prune after every turn reads each
/// assistant entry once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallArguments {
    /// The block's `id`.
    id: String,
    /// `JSON.stringify(arguments)` (`null` when absent).
    json: String,
    /// `arguments.path` when it is a non-empty string.
    path: Option<String>,
    /// `arguments.offset` or `arguments.limit` is present and not `null`.
    ranged: bool,
}

impl CallArguments {
    fn new(id: String, args: &Value) -> Self {
        Self {
            id,
            json: crate::js::json_stringify(args),
            path: args.get("path").and_then(Value::as_str).filter(|p| !p.is_empty()).map(str::to_owned),
            ranged: ["offset", "limit"].iter().any(|k| args.get(*k).is_some_and(|v| !v.is_null())),
        }
    }

    /// The call as [`CallView`].
    fn view(&self) -> CallView<'_> {
        CallView { json: self.json.as_bytes(), path: self.path.as_deref(), ranged: self.ranged }
    }
}

/// What the staleness rule reads of a call, borrowed: from a kept [`CallArguments`], or straight
/// from an entry's metadata and text.
#[derive(Debug, Clone, Copy)]
struct CallView<'a> {
    /// `JSON.stringify(arguments)`.
    json: &'a [u8],
    path: Option<&'a str>,
    ranged: bool,
}

impl<'a> CallView<'a> {
    /// The target of this call for a result of `tool` (the result's `toolName`).
    fn target(self, tool: &'a str) -> Target<'a> {
        let read_path = if tool == "read" { self.path } else { None };
        Target { args: self.json, full_read: read_path.is_some() && !self.ranged, read_path }
    }
}

/// The [`CallArguments`] of each `toolCall` block with a string `id` in entry `i`'s
/// `message.content`, in order: read from the stored text when the source keeps one (only the
/// tool-call blocks are parsed), else from the entry's value. SPEC §13.6.
pub fn call_arguments<S: EntrySource + ?Sized>(entries: &S, i: usize) -> std::sync::Arc<[CallArguments]> {
    let text = entries.entry_text(i);
    if let Some(calls) = text.and_then(|t| call_arguments_of_meta(entries.meta(i), t.as_bytes())) {
        return calls;
    }
    if let Some(calls) = text.and_then(tool_calls_of_text) {
        return calls
            .into_iter()
            .map(|(id, arguments)| {
                let args = arguments
                    .map_or(Value::Null, |r| crate::io::parse_line_value(r.get().as_bytes()).unwrap_or(Value::Null));
                CallArguments::new(id, &args)
            })
            .collect();
    }
    let entry = entries.entry(i);
    let Some(blocks) = entry.get("message").and_then(|m| m.get("content")).and_then(Value::as_array) else {
        return std::sync::Arc::new([]);
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
        .filter_map(|b| {
            let id = b.get("id").and_then(Value::as_str)?;
            Some(CallArguments::new(id.to_string(), b.get("arguments").unwrap_or(&Value::Null)))
        })
        .collect()
}

/// [`call_arguments`] of an entry from its metadata alone, reading only the spans the byte
/// scanner recorded in `text` (the bytes of the entry's JSON text, the one `meta` was read
/// from; only the spans are checked to be UTF-8): `Some`
/// when the entry is an assistant message and every one of its tool calls with an id has its
/// [`crate::entry::ArgsText`], whose text is `JSON.stringify(arguments)` as written. `None`:
/// the text must be read.
pub fn call_arguments_of_meta(meta: &EntryMeta, text: &[u8]) -> Option<std::sync::Arc<[CallArguments]>> {
    let m = meta.message.as_ref().filter(|m| m.role == Role::Assistant)?;
    m.tool_calls
        .iter()
        .filter_map(|c| c.id.as_deref().map(|id| (id, c)))
        .map(|(id, c)| {
            let args = c.args_text?;
            let json = match args.span {
                Some(span) => span.of(text)?,
                None => "null",
            };
            Some(CallArguments { id: id.to_owned(), json: json.to_owned(), path: c.path.clone(), ranged: args.ranged })
        })
        .collect()
}

/// The `(id, arguments)` of each `toolCall` block of an entry's `message.content`, in order,
/// read from the entry's JSON text without building values for the rest (thinking, text, other
/// blocks are skipped). Blocks without a string `id` are left out, as the value path leaves them.
/// `None` when the text needs the value path to decide (a repeated key, a field of an
/// unexpected type, text that is not an object).
fn tool_calls_of_text(text: &str) -> Option<Vec<(String, Option<&RawValue>)>> {
    // A member of an object text: `None` when absent or `null`.
    fn member<'a>(members: &[(Cow<'_, str>, &'a RawValue)], key: &str) -> Option<&'a RawValue> {
        members.iter().find(|(k, _)| k == key).map(|(_, v)| *v).filter(|v| v.get() != "null")
    }
    // A string member's text; `Err` for another type.
    fn string(v: Option<&RawValue>) -> Result<Option<String>, ()> {
        match v {
            None => Ok(None),
            Some(v) if v.get().starts_with('"') => serde_json::from_slice(v.get().as_bytes()).map(Some).map_err(|_| ()),
            Some(_) => Err(()),
        }
    }
    let entry = object_members(text)?;
    let Some(message) = member(&entry, "message") else { return Some(Vec::new()) };
    let message = object_members(message.get())?;
    let Some(content) = member(&message, "content").filter(|c| c.get().starts_with('[')) else {
        return Some(Vec::new());
    };
    let blocks: Vec<&RawValue> = serde_json::from_slice(content.get().as_bytes()).ok()?;
    let mut out = Vec::new();
    for b in blocks.into_iter().filter(|b| b.get().starts_with('{')) {
        let block = object_members(b.get())?;
        if string(member(&block, "type")).ok()?.as_deref() == Some("toolCall") {
            if let Some(id) = string(member(&block, "id")).ok()? {
                out.push((id, member(&block, "arguments")));
            }
        }
    }
    Some(out)
}

/// A tool result that pruning may change (unpruned, of no protected tool), as the plan's walk
/// read it.
struct Open<'a> {
    /// Its index in the entries.
    index: usize,
    /// Its estimated tokens.
    tokens: u64,
    /// Outside the protect window.
    old: bool,
    /// Its `toolName`, numbered ([`ToolNames`]).
    tool: Option<usize>,
    /// Its `toolCallId`.
    call: Option<&'a str>,
    /// Its entry's `id`.
    id: Option<&'a str>,
}

/// The distinct tool names of a prune, numbered in the order first seen. A session uses a
/// handful, which a linear search finds; past [`ToolNames::FEW`] names they are looked up in a
/// map, so that a session of many tools still costs one lookup a result.
#[derive(Default)]
struct ToolNames<'a> {
    names: Vec<&'a str>,
    /// The names by number once there are more than [`ToolNames::FEW`] (empty before).
    index: FastMap<TextKey<'a>, usize>,
}

impl<'a> ToolNames<'a> {
    /// Names searched one by one.
    const FEW: usize = 16;

    /// The number of `name`, given one when new.
    fn number(&mut self, name: &'a str) -> usize {
        let known = if self.names.len() <= Self::FEW {
            self.names.iter().position(|n| same_bytes(n.as_bytes(), name.as_bytes()))
        } else {
            if self.index.is_empty() {
                self.index.extend(self.names.iter().enumerate().map(|(k, n)| (TextKey(n.as_bytes()), k)));
            }
            self.index.get(&TextKey(name.as_bytes())).copied()
        };
        known.unwrap_or_else(|| {
            if !self.index.is_empty() {
                self.index.insert(TextKey(name.as_bytes()), self.names.len());
            }
            self.names.push(name);
            self.names.len() - 1
        })
    }
}

/// For each tool result of `results` (indices, newest first; none pruned, none of a protected
/// tool), the newest later result of `results` that supersedes it (SPEC §13.6), by position in
/// `results`. Only tools with two or more results are looked at. A result's call is the first
/// `toolCall` block with its `toolCallId` among the assistant entries (in order; when results
/// share an id, the oldest of them has it); its arguments are taken from where the byte scanner
/// found them in the entry's text, else read once per assistant entry.
fn superseded<'a, S: EntrySource + ?Sized>(
    entries: &'a S,
    results: &[Open<'a>],
    tools: &ToolNames<'a>,
    assistants: &[usize],
) -> Vec<Option<SupersededBy>> {
    let mut out = vec![None; results.len()];
    // Each result's position, tool (numbered) and call id.
    let mut per_tool = vec![0usize; tools.names.len()];
    for r in results {
        if let Some(tool) = r.tool {
            per_tool[tool] += 1;
        }
    }
    let repeated: Vec<(usize, usize, Option<&str>)> = results
        .iter()
        .enumerate()
        .filter_map(|(k, r)| r.tool.filter(|&t| per_tool[t] > 1).map(|t| (k, t, r.call)))
        .collect();
    if repeated.is_empty() {
        return out;
    }
    let n = repeated.len();
    // The position in `repeated` of the result each call id answers.
    let mut wanted: FastMap<TextKey<'_>, usize> = sized(n);
    for (p, &(_, _, call)) in repeated.iter().enumerate() {
        if let Some(call) = call {
            wanted.insert(TextKey(call.as_bytes()), p);
        }
    }
    // The call of each position: (assistant entry, block among its tool calls), and the call as
    // the scanner found it (its arguments' text, `null` when absent; `None`: read below), taken
    // in the same visit of the entry.
    let mut call_of: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut direct: Vec<Option<CallView<'_>>> = vec![None; n];
    for &a in assistants {
        let Some(m) = entries.meta(a).message.as_ref().filter(|m| m.role == Role::Assistant) else { continue };
        for (k, c) in m.tool_calls.iter().enumerate() {
            let Some(&p) = c.id.as_deref().and_then(|id| wanted.get(&TextKey(id.as_bytes()))) else { continue };
            if call_of[p].is_some() {
                continue;
            }
            call_of[p] = Some((a, k));
            direct[p] = c.args_text.and_then(|args| {
                let json = match args.span {
                    Some(span) => span.bytes_of(entries.entry_bytes(a)?)?,
                    None => b"null",
                };
                Some(CallView { json, path: c.path.as_deref(), ranged: args.ranged })
            });
        }
    }
    drop(wanted);
    // The calls of the other assistant entries, read from their text (kept while the targets
    // borrow them).
    let mut read_calls: HashMap<usize, std::sync::Arc<[CallArguments]>> = HashMap::new();
    for (call, view) in call_of.iter().zip(&direct) {
        if let (Some((a, _)), None) = (call, view) {
            read_calls
                .entry(*a)
                .or_insert_with(|| entries.call_arguments(*a).unwrap_or_else(|| call_arguments(entries, *a)));
        }
    }
    let views: Vec<Option<CallView<'_>>> = direct
        .iter()
        .zip(&call_of)
        .zip(&repeated)
        .map(|((view, call), &(_, _, id))| match (view, call) {
            (Some(view), _) => Some(*view),
            (None, Some((a, _))) => {
                read_calls.get(a)?.iter().find(|c| Some(c.id.as_str()) == id).map(CallArguments::view)
            }
            (None, None) => None,
        })
        .collect();
    // Identical arguments have the same length: only the calls of a tool that share their
    // arguments' length with another are looked up by their text (per tool: how many calls
    // have each length).
    // (Each map has room for all its keys from the start: growing would hash every key again.)
    let mut lengths: Vec<FastMap<usize, u32>> = per_tool.iter().map(|&n| sized(n)).collect();
    for (view, &(_, tool, _)) in views.iter().zip(&repeated) {
        if let Some(v) = view {
            *lengths[tool].entry(v.json.len()).or_default() += 1;
        }
    }
    // Newest first, remembering the newest result per full-read path and per identical call
    // (per tool, by the arguments' text).
    let mut full_reads: FastMap<TextKey<'_>, usize> = sized(n);
    let mut calls: Vec<FastMap<TextKey<'_>, usize>> = per_tool.iter().map(|&n| sized(n)).collect();
    // (The maps hold positions in `results`: the later result's index and id are at hand.)
    for (&view, &(k, tool, _)) in views.iter().zip(&repeated) {
        let Some(view) = view else { continue };
        let name = tools.names[tool];
        let t = view.target(name);
        let by_read = t
            .read_path
            .and_then(|p| full_reads.get(&TextKey(p.as_bytes())).map(|&j| (j, ["a later full read of ", p].concat())));
        // The newest identical call so far, and this one remembered when it is the first (one
        // hash of the arguments' text).
        let shared_length = lengths[tool].get(&t.args.len()).is_some_and(|&n| n > 1);
        let by_call = if shared_length {
            match calls[tool].entry(TextKey(t.args)) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(k);
                    None
                }
            }
        } else {
            None
        };
        let by = by_read.or_else(|| by_call.map(|j| (j, ["a later identical ", name, " call"].concat())));
        if let Some((j, description)) = by {
            let later = &results[j];
            out[k] = Some(SupersededBy { index: later.index, id: later.id.map(str::to_owned), description });
        }
        if let (true, Some(p)) = (t.full_read, t.read_path) {
            full_reads.entry(TextKey(p.as_bytes())).or_insert(k);
        }
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
    // Every unpruned, unprotected tool result, newest first.
    let mut open: Vec<Open<'_>> = Vec::new();
    let (mut tools, mut protected_tool) = (ToolNames::default(), Vec::<Option<bool>>::new());
    // The assistant messages with tool calls, newest first (the staleness rule's calls).
    let mut assistants: Vec<usize> = Vec::new();
    for i in (0..entries.len()).rev() {
        let meta = entries.meta(i);
        if meta.kind != EntryKind::Message {
            continue;
        }
        let Some(m) = meta.message.as_ref() else { continue };
        if m.role == Role::Assistant && !m.tool_calls.is_empty() {
            assistants.push(i);
        }
        if m.role != Role::ToolResult {
            continue;
        }
        let within_window = accumulated < config.protect_tokens;
        accumulated += m.tokens;
        if m.pruned {
            continue;
        }
        let tool = m.tool_name.as_deref().map(|t| (t, tools.number(t)));
        // Whether a tool is protected, decided once per distinct name.
        let protected = tool.is_some_and(|(t, k)| {
            if protected_tool.len() <= k {
                protected_tool.resize(k + 1, None);
            }
            *protected_tool[k].get_or_insert_with(|| config.protected_tools.iter().any(|p| p == t))
        });
        if !protected {
            let call = m.tool_call_id.as_deref();
            let id = meta.id.as_deref();
            open.push(Open { index: i, tokens: m.tokens, old: !within_window, tool: tool.map(|(_, k)| k), call, id });
        }
    }
    let mut stale = if config.staleness {
        assistants.reverse();
        superseded(entries, &open, &tools, &assistants)
    } else {
        Vec::new()
    };
    // (What the walk read of the result: no second visit of its metadata.)
    let candidate = |r: &Open<'_>, superseded_by: Option<SupersededBy>| {
        let notice = match &superseded_by {
            Some(by) => prune_notice_superseded(r.tokens, by),
            None => prune_notice(r.tokens),
        };
        let savings = r.tokens.saturating_sub(utf16_len(&notice).div_ceil(4));
        PruneCandidate {
            index: r.index,
            entry_index: None,
            branch_position: None,
            id: r.id.map(str::to_owned),
            tool_name: r.tool.map(|t| tools.names[t].to_owned()),
            tokens: r.tokens,
            savings,
            notice,
            superseded_by,
        }
    };
    // Superseded outputs first, then the old ones (each newest first, as `open` is).
    let mut candidates: Vec<PruneCandidate> = Vec::with_capacity(open.len());
    let mut aged: Vec<PruneCandidate> = Vec::new();
    for (k, r) in open.iter().enumerate() {
        match stale.get_mut(k).and_then(Option::take) {
            Some(by) => candidates.push(candidate(r, Some(by))),
            None if r.old => aged.push(candidate(r, None)),
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

/// An object key as read from JSON text: borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The members of a JSON object in text order, each value left as its text; `None` for a
/// text that is not an object or that repeats a key (`JSON.parse` would merge them).
fn object_members(text: &str) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);
    impl<'de> Deserialize<'de> for Members<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                    let mut out = Vec::new();
                    while let Some((k, v)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                        out.push((k.0, v));
                    }
                    Ok(Members(out))
                }
            }
            d.deserialize_map(V)
        }
    }
    let members = serde_json::from_slice::<Members<'_>>(text.as_bytes()).ok()?.0;
    let mut seen = std::collections::HashSet::with_capacity(members.len());
    members.iter().all(|(k, _)| seen.insert(k.as_ref())).then_some(members)
}

/// Writes `{"key":value,…}` from members whose values are JSON texts.
fn push_object(out: &mut String, members: &[(&str, &str)]) {
    out.push('{');
    for (n, (k, v)) in members.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(k).unwrap_or_else(|_| "\"\"".into()));
        out.push(':');
        out.push_str(v);
    }
    out.push('}');
}

/// Sets `key` to `value` as a JavaScript assignment does: in place when present, else last.
fn assign<'a>(members: &mut Vec<(&'a str, &'a str)>, key: &'a str, value: &'a str) {
    match members.iter_mut().find(|(k, _)| *k == key) {
        Some(m) => m.1 = value,
        None => members.push((key, value)),
    }
}

/// [`pruned_entry`] on the entry's JSON text, without building a value of it: the same entry
/// (`message.content` replaced by the notice, `message.prunedAt` set, keys in the same order,
/// a new key last) written from the original text, every other member copied byte for byte.
/// `None` when the text is not an object whose `message` is an object, or repeats a key
/// (then use [`pruned_entry`]). SPEC §7.
pub fn pruned_entry_json(text: &str, notice: &str, now_ms: f64) -> Option<String> {
    let members = object_members(text)?;
    let message = members.iter().find(|(k, _)| k == "message")?.1;
    let fields = object_members(message.get())?;
    let content = serde_json::to_string(&json!([{"type": "text", "text": notice}])).ok()?;
    let pruned_at = ms_value(Some(now_ms)).to_string();
    let mut msg: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_ref(), v.get())).collect();
    assign(&mut msg, "content", &content);
    assign(&mut msg, "prunedAt", &pruned_at);
    let mut msg_text = String::with_capacity(message.get().len().min(4096) + content.len());
    push_object(&mut msg_text, &msg);
    let top: Vec<(&str, &str)> =
        members.iter().map(|(k, v)| (k.as_ref(), if k == "message" { msg_text.as_str() } else { v.get() })).collect();
    let mut out = String::with_capacity(text.len().min(4096) + msg_text.len());
    push_object(&mut out, &top);
    Some(out)
}

/// Where the parts of a pruned entry's new text lie ([`push_pruned_entry`]), counted as
/// [`crate::entry::TextSpan`]s are, from the object's `{`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplicedSpans {
    /// Where the new `message` value lies.
    pub message_span: TextSpan,
    /// Where the new `message.content` value (the notice's text block) lies.
    pub content_span: TextSpan,
}

/// [`pruned_entry_json`] by splicing at the places the byte scanner recorded
/// ([`EntryMeta::message_span`], [`crate::entry::MessageMeta::content_span`]), appended to
/// `out`: the text up to `message.content`, the notice as the new content, the text up to the
/// message's closing `}`, then `,"prunedAt":` and `pruned_at` (a JSON number,
/// [`crate::js::js_number`]), then the rest — so the output that is replaced is never read
/// again, and every other byte of the entry (whitespace included) is kept. `text` is the bytes
/// of the entry's stored text (only the kept parts are checked to be UTF-8) and `meta` its
/// metadata read from that text. Returns where the new message and content lie; `None`, with
/// `out` unchanged, when a place is not known (another reader, a repeated `content` or
/// `message` key), or the message is already pruned (`prunedAt` present): then
/// [`pruned_entry_json`] decides. SPEC §7.
pub fn push_pruned_entry(
    out: &mut String,
    text: &[u8],
    meta: &EntryMeta,
    notice: &str,
    pruned_at: &str,
) -> Option<SplicedSpans> {
    let m = meta.message.as_ref().filter(|m| !m.pruned)?;
    let (message_span, content_span) = (meta.message_span?, m.content_span?);
    let message = message_span.range_in(text)?;
    let content = content_span.range_in(text)?;
    let close = message.end.checked_sub(1)?;
    if text.get(close) != Some(&b'}') || content.start <= message.start || content.end > close {
        return None;
    }
    // Only the kept parts are read (checked to be UTF-8), never the content.
    let part = |r: std::ops::Range<usize>| text.get(r).and_then(|b| std::str::from_utf8(b).ok());
    let (head, middle, tail) = (part(0..content.start)?, part(content.end..close)?, part(close..text.len())?);
    let start = out.len();
    out.push_str(head);
    out.push_str(r#"[{"type":"text","text":"#);
    crate::js::push_json_string(out, notice);
    out.push_str("}]");
    let content_end = out.len() - start;
    out.push_str(middle);
    out.push_str(r#","prunedAt":"#);
    out.push_str(pruned_at);
    out.push_str(tail);
    // The message ends where it did, moved by what the entry grew or shrank.
    let message_end = (message_span.end as usize + (out.len() - start)).checked_sub(text.len());
    let spans = (|| {
        let lead = u32::try_from(content.start).ok()? - content_span.start;
        Some(SplicedSpans {
            message_span: TextSpan { start: message_span.start, end: u32::try_from(message_end?).ok()? },
            content_span: TextSpan {
                start: content_span.start,
                end: u32::try_from(content_end).ok()?.checked_sub(lead)?,
            },
        })
    })();
    if spans.is_none() {
        out.truncate(start);
    }
    spans
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Tool names are numbered in the order first seen, by a linear search among a few and by a
    /// map once there are many (a session of thousands of tools costs one lookup a result).
    #[test]
    fn tool_names_are_numbered_once_however_many() {
        let names: Vec<String> = (0..200).map(|k| format!("tool{k}")).collect();
        let mut tools = ToolNames::default();
        for (k, n) in names.iter().enumerate() {
            assert_eq!(tools.number(n), k);
            assert_eq!(tools.number(&names[k / 2]), k / 2);
            assert_eq!(tools.index.is_empty(), k < ToolNames::FEW, "{k} names");
        }
        assert_eq!(tools.names.len(), 200);
        assert_eq!(tools.index.len(), 200);
        assert_eq!(tools.number("tool7"), 7);
    }

    /// The spliced text, parsed, equals the value path's result; key order is kept.
    fn same_as_value_path(text: &str) -> String {
        let out = pruned_entry_json(text, "[Output truncated - 7 tokens]", 1.7e12).expect("an object entry");
        let want = pruned_entry(&serde_json::from_str(text).unwrap(), "[Output truncated - 7 tokens]", 1.7e12);
        let got: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(got, want);
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&got), keys(&want));
        assert_eq!(keys(&got["message"]), keys(&want["message"]));
        out
    }

    #[test]
    fn pruned_entry_json_rewrites_content_and_pruned_at_and_copies_the_rest() {
        let text = r#"{"type":"message","id":"t1","parentId":"a1","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"a long \"output\" \u00e9"}],"isError":false,"timestamp":1.5e12},"timestamp":"2025-01-01T00:00:00.000Z"}"#;
        let out = same_as_value_path(text);
        assert_eq!(
            out,
            r#"{"type":"message","id":"t1","parentId":"a1","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"[Output truncated - 7 tokens]"}],"isError":false,"timestamp":1.5e12,"prunedAt":1700000000000},"timestamp":"2025-01-01T00:00:00.000Z"}"#
        );
    }

    #[test]
    fn pruned_entry_json_keeps_an_existing_pruned_at_in_place_and_adds_a_missing_content() {
        same_as_value_path(r#"{"message":{"prunedAt":1,"role":"toolResult"},"type":"message"}"#);
        same_as_value_path(r#"{"type":"message","message":{}}"#);
        same_as_value_path(r#" { "type" : "message" , "message" : { "content" : "x" , "d\"k" : [1, 2] } } "#);
    }

    #[test]
    fn pruned_entry_json_declines_what_the_value_path_must_decide() {
        for text in [
            r#"{"type":"message","message":"text"}"#,
            r#"{"type":"message"}"#,
            r#"[1,2]"#,
            r#"{"type":"message","message":{"content":1,"content":2}}"#,
            r#"{"message":{},"message":{}}"#,
            "not json",
        ] {
            assert_eq!(pruned_entry_json(text, "n", 1.0), None, "{text}");
        }
    }
}
