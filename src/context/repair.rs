//! Provider-valid message order (SPEC §13.1): the one repair every output meant for a model goes
//! through (the handle's `buildSessionContextJson` and `buildLlmMessages`, `convertToLlm` when
//! asked for it, the retry context of overflow recovery), and the report `buildSessionContext`
//! and `validate()` carry.
//!
//! OpenAI, Anthropic and the AI SDK reject a request in which a tool call has no result, a tool
//! result answers no call of the assistant message before it, or another message sits between
//! a call and its results. A stored session can hold all three: an interrupted turn leaves calls
//! unanswered, a user message typed while the tools ran is stored between the call and its
//! results, a navigation or a hook-supplied compaction can start the context inside an
//! exchange. The repair, over the messages in order:
//!
//! - a `toolResult` is kept only right after the assistant message whose call it answers (only
//!   other results of that assistant in between); a result answering no call of the nearest
//!   assistant message before it is left out ([`RepairKind::OrphanToolResult`]), and so is a second
//!   result for the same call ([`RepairKind::DuplicateToolResult`]);
//! - a message stored between a call and its result (a steering message, a hook message, a bash
//!   execution) is placed right after the results ([`RepairKind::MovedAfterToolResults`]);
//! - every tool call is answered before the next non-result message: a call without a result is
//!   given a synthetic error result ([`synthetic_tool_result`], never stored in the session;
//!   [`RepairKind::MissingToolResult`]).
//!
//! - every tool call of the context has its own non-empty id, as the providers require (a
//!   request with two `tool_use` blocks of one id, or an empty id, is refused): a call whose id
//!   is not a string, is empty, or was already used by an earlier call of the context gets a new
//!   one (`{id}_2`, `call_1`, …, unused in the context), and so does the result that answers it
//!   ([`RepairKind::RenamedToolCallId`]). Results still pair with calls by their stored ids.
//!
//! Messages of other roles are never changed, dropped or reordered among themselves. The
//! decision is taken from [`MessageMeta`] alone ([`plan_repair`]); [`RepairPlan::apply`] and the
//! handle's JSON splicing materialize it (a message whose ids are renamed is written again,
//! [`RepairPlan::with_ids`]).

use crate::entry::{MessageMeta, Role};
use crate::text_key::{sized, FastMap, TextKey};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The text of a synthetic result supplied for a tool call without a recorded result.
pub const MISSING_TOOL_RESULT_TEXT: &str = "No result was recorded for this tool call";

/// What one repair did (serialized in camelCase: `"missingToolResult"`, …). SPEC §13.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum RepairKind {
    /// A tool call had no result before the next non-result message: a synthetic error result
    /// ([`MISSING_TOOL_RESULT_TEXT`]) was supplied. `entryId`: the assistant message's entry.
    MissingToolResult,
    /// A tool result answered no call of the assistant message before it: left out.
    /// `entryId`: the result's entry.
    OrphanToolResult,
    /// A second result for a call that was already answered: left out. `entryId`: the result's
    /// entry.
    DuplicateToolResult,
    /// A message stored between a tool call and its result (for example a steering message
    /// typed while tools ran) was placed right after the results. `entryId`: the moved
    /// message's entry; `toolCallId`: the first result it was moved behind.
    MovedAfterToolResults,
    /// A tool call's id was not a string, was empty, or was used by an earlier call of the
    /// context: the call (and its result) carry a new id. `entryId`: the assistant message's
    /// entry; `toolCallId`: the id as stored (absent when it was no string).
    RenamedToolCallId,
}

/// One repair of a context (SPEC §13.1): `{kind, entryId?, toolCallId?, messageIndex}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct ContextRepair {
    /// What was done.
    pub kind: RepairKind,
    /// The entry the message concerned comes from (absent for messages given without entries,
    /// as in `convertToLlm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub entry_id: Option<String>,
    /// The tool call concerned (absent for a result without `toolCallId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub tool_call_id: Option<String>,
    /// Position of the message concerned in the messages before the repair (for a missing
    /// result: the assistant message).
    pub message_index: usize,
}

/// One message of the repaired order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepairStep {
    /// Input message `i`, unchanged.
    Message(usize),
    /// A synthetic error result for tool call `call` (position among the `toolCall` blocks) of
    /// the assistant message `message`.
    MissingResult {
        /// The assistant message (input position).
        message: usize,
        /// Its tool call (index into [`MessageMeta::tool_calls`]).
        call: usize,
    },
}

/// New tool call ids of one input message ([`RepairKind::RenamedToolCallId`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdFix {
    /// An assistant message: per `toolCall` block (in content order, as
    /// [`MessageMeta::tool_calls`]), its new id, or `None` when it keeps its own.
    Calls(Vec<Option<String>>),
    /// A tool result: the new id of the call it answers (its `toolCallId` in the output).
    Result(String),
}

/// The repaired order of a message list and what was repaired.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RepairPlan {
    /// The output, in order.
    pub steps: Vec<RepairStep>,
    /// The repairs, in the order they were decided.
    pub repairs: Vec<ContextRepair>,
    /// The input messages whose tool call ids the output renames: (input position, new ids),
    /// by position.
    pub id_fixes: Vec<(usize, IdFix)>,
}

/// The assistant message whose calls are being answered.
struct Open {
    message: usize,
    /// Per tool call: answered (a call without a string id never is: it gets a synthetic result).
    answered: Vec<bool>,
    /// Non-result messages held back until the calls are answered.
    deferred: Vec<usize>,
    /// How many of `deferred` were already reported as moved.
    reported: usize,
}

impl Open {
    fn pending(&self) -> bool {
        self.answered.iter().any(|a| !a)
    }
}

/// Decides the provider-valid order of messages given by their metadata (`None`: a message
/// without tool calls or results, such as a summary). `entry_id(i)`: the entry id of message `i`
/// for the report. O(messages + tool calls).
pub fn plan_repair(messages: &[Option<&MessageMeta>], entry_id: &dyn Fn(usize) -> Option<String>) -> RepairPlan {
    let mut plan = RepairPlan { steps: Vec::with_capacity(messages.len()), ..RepairPlan::default() };
    let mut open: Option<Open> = None;
    let calls_of = |i: usize| messages[i].map_or(&[][..], |m| &m.tool_calls[..]);
    // Every string id of the context's calls (new ids avoid them; gathered when the first new
    // id is made, which most contexts never need), the ids kept so far (by the first call of
    // the context that has each) and the new ids made so far.
    let mut stored: Option<IdSet<'_>> = None;
    let call_count: usize = messages.iter().map(|m| m.map_or(0, |m| m.tool_calls.len())).sum();
    let mut kept: IdSet<'_> = sized(call_count);
    let mut made: Vec<String> = Vec::new();
    // The vectors of the exchange closed last, reused by the next one (most assistant messages
    // of a coding session open an exchange).
    let mut spare: (Vec<bool>, Vec<usize>) = Default::default();
    let close = |open: Option<Open>, plan: &mut RepairPlan, spare: &mut (Vec<bool>, Vec<usize>)| {
        let Some(mut o) = open else { return };
        for (k, done) in o.answered.iter().enumerate() {
            if !done {
                plan.steps.push(RepairStep::MissingResult { message: o.message, call: k });
                plan.repairs.push(ContextRepair {
                    kind: RepairKind::MissingToolResult,
                    entry_id: entry_id(o.message),
                    // The call as stored (the synthetic result carries its id in the output).
                    tool_call_id: calls_of(o.message)[k].id.clone(),
                    message_index: o.message,
                });
            }
        }
        plan.steps.extend(o.deferred.drain(..).map(RepairStep::Message));
        o.answered.clear();
        *spare = (o.answered, o.deferred);
    };
    for (i, meta) in messages.iter().enumerate() {
        let role = meta.map_or(Role::Other, |m| m.role);
        match role {
            Role::Assistant => {
                close(open.take(), &mut plan, &mut spare);
                plan.steps.push(RepairStep::Message(i));
                let calls = calls_of(i);
                if !calls.is_empty() {
                    // Made when the first call needs a new id.
                    let mut fix: Vec<Option<String>> = Vec::new();
                    for (k, c) in calls.iter().enumerate() {
                        if c.id
                            .as_deref()
                            .is_some_and(|id| !id.is_empty() && kept.insert(TextKey(id.as_bytes()), 0).is_none())
                        {
                            continue;
                        }
                        fix.resize(calls.len(), None);
                        let stored = stored.get_or_insert_with(|| {
                            let mut all: IdSet<'_> = sized(call_count);
                            for id in
                                (0..messages.len()).flat_map(|i| calls_of(i).iter().filter_map(|c| c.id.as_deref()))
                            {
                                all.insert(TextKey(id.as_bytes()), 0);
                            }
                            all
                        });
                        let new = new_call_id(c.id.as_deref(), stored, &made);
                        made.push(new.clone());
                        fix[k] = Some(new);
                        plan.repairs.push(ContextRepair {
                            kind: RepairKind::RenamedToolCallId,
                            entry_id: entry_id(i),
                            tool_call_id: c.id.clone(),
                            message_index: i,
                        });
                    }
                    if !fix.is_empty() {
                        plan.id_fixes.push((i, IdFix::Calls(fix)));
                    }
                    let (mut answered, deferred) = std::mem::take(&mut spare);
                    answered.resize(calls.len(), false);
                    open = Some(Open { message: i, answered, deferred, reported: 0 });
                }
            }
            Role::ToolResult => {
                let id = meta.and_then(|m| m.tool_call_id.as_deref());
                let matching = |o: &Open, want_answered: bool| {
                    let id = id?;
                    calls_of(o.message)
                        .iter()
                        .zip(&o.answered)
                        .position(|(c, &a)| a == want_answered && c.id.as_deref() == Some(id))
                };
                let unanswered = open.as_ref().and_then(|o| matching(o, false));
                if let (Some(k), Some(o)) = (unanswered, open.as_mut()) {
                    o.answered[k] = true;
                    plan.steps.push(RepairStep::Message(i));
                    if let Some(IdFix::Calls(fix)) = plan.id_fix(o.message) {
                        if let Some(new) = fix[k].clone() {
                            plan.id_fixes.push((i, IdFix::Result(new)));
                        }
                    }
                    for &d in &o.deferred[o.reported..] {
                        plan.repairs.push(ContextRepair {
                            kind: RepairKind::MovedAfterToolResults,
                            entry_id: entry_id(d),
                            tool_call_id: id.map(str::to_owned),
                            message_index: d,
                        });
                    }
                    o.reported = o.deferred.len();
                    if !o.pending() {
                        plan.steps.extend(o.deferred.drain(..).map(RepairStep::Message));
                        o.reported = 0;
                    }
                } else {
                    let kind = if open.as_ref().and_then(|o| matching(o, true)).is_some() {
                        RepairKind::DuplicateToolResult
                    } else {
                        RepairKind::OrphanToolResult
                    };
                    plan.repairs.push(ContextRepair {
                        kind,
                        entry_id: entry_id(i),
                        tool_call_id: id.map(str::to_owned),
                        message_index: i,
                    });
                }
            }
            _ => match open.as_mut().filter(|o| o.pending()) {
                Some(o) => o.deferred.push(i),
                None => plan.steps.push(RepairStep::Message(i)),
            },
        }
    }
    close(open, &mut plan, &mut spare);
    plan
}

/// A set of tool call ids (the keys; the values are not read): the staleness rule's map of
/// texts, so that its code is compiled once.
type IdSet<'a> = FastMap<TextKey<'a>, usize>;

/// A new id for a call whose stored id (`stored_id`) is not a string, empty, or already used:
/// `{id}_2`, `{id}_3`, … (`call_1`, `call_2`, … without a usable id), the first that no call of
/// the context has (`stored`) and the output has not used.
fn new_call_id(stored_id: Option<&str>, stored: &IdSet<'_>, made: &[String]) -> String {
    let (base, from) = match stored_id.filter(|s| !s.is_empty()) {
        Some(id) => (id, 2),
        None => ("call", 1),
    };
    let taken = |c: &str| stored.get(&TextKey(c.as_bytes())).is_some() || made.iter().any(|m| m == c);
    (from..).map(|n| format!("{base}_{n}")).find(|c| !taken(c)).unwrap_or_default()
}

impl RepairPlan {
    /// True when nothing had to be repaired (the output is the input).
    pub fn is_identity(&self) -> bool {
        self.repairs.is_empty()
    }

    /// The id call `call` of the assistant message `message` (described by `meta`) has in the
    /// output: its new one ([`IdFix`]), else its own.
    pub fn call_id<'a>(&'a self, message: usize, meta: Option<&'a MessageMeta>, call: usize) -> Option<&'a str> {
        if let Some(IdFix::Calls(fix)) = self.id_fix(message) {
            if let Some(Some(new)) = fix.get(call) {
                return Some(new);
            }
        }
        meta.and_then(|m| m.tool_calls.get(call)).and_then(|c| c.id.as_deref())
    }

    /// The new ids of input message `i`, if the output renames any.
    pub fn id_fix(&self, i: usize) -> Option<&IdFix> {
        self.id_fixes.binary_search_by_key(&i, |(k, _)| *k).ok().map(|k| &self.id_fixes[k].1)
    }

    /// Whether the output writes input message `i` with other tool call ids than stored.
    pub fn renames(&self, i: usize) -> bool {
        self.id_fix(i).is_some()
    }

    /// [`RepairPlan::with_ids`] in place.
    fn fix_ids(&self, i: usize, v: &mut Value) {
        match self.id_fix(i) {
            Some(IdFix::Calls(fix)) => {
                let Some(blocks) = v.get_mut("content").and_then(Value::as_array_mut) else { return };
                let calls = blocks.iter_mut().filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"));
                for (block, new) in calls.zip(fix) {
                    if let (Some(new), Some(o)) = (new, block.as_object_mut()) {
                        o.insert("id".into(), Value::String(new.clone()));
                    }
                }
            }
            Some(IdFix::Result(new)) => {
                if let Some(o) = v.as_object_mut() {
                    o.insert("toolCallId".into(), Value::String(new.clone()));
                }
            }
            None => {}
        }
    }

    /// Input message `i` (`v`) as the output has it: its tool call ids (an assistant's `toolCall`
    /// blocks, a result's `toolCallId`) renamed as planned; unchanged otherwise.
    pub fn with_ids(&self, i: usize, mut v: Value) -> Value {
        self.fix_ids(i, &mut v);
        v
    }

    /// The synthetic result for call `call` of the assistant message `message` (`assistant`,
    /// described by `meta`), with the call's id in the output.
    pub fn synthetic(&self, assistant: &Value, meta: Option<&MessageMeta>, message: usize, call: usize) -> Value {
        let c = meta.and_then(|m| m.tool_calls.get(call));
        synthetic_tool_result(
            self.call_id(message, meta, call).unwrap_or_default(),
            c.and_then(|c| c.name.as_deref()),
            assistant.get("timestamp"),
        )
    }

    /// The repaired messages: `messages` in the planned order, their tool call ids renamed as
    /// planned, with the synthetic results ([`synthetic_tool_result`]) built from the assistant
    /// messages' `toolCall` blocks. `metas[i]` must describe `messages[i]` (as given to
    /// [`plan_repair`]).
    pub fn apply(&self, messages: &[Value], metas: &[Option<&MessageMeta>]) -> Vec<Value> {
        self.steps
            .iter()
            .map(|step| match *step {
                RepairStep::Message(i) => self.with_ids(i, messages[i].clone()),
                RepairStep::MissingResult { message, call } => {
                    self.synthetic(&messages[message], metas[message], message, call)
                }
            })
            .collect()
    }
}

/// A synthetic error result for a tool call without a recorded result (SPEC §13.1):
/// `{role: "toolResult", toolCallId, toolName, content: [{type: "text", text:
/// MISSING_TOOL_RESULT_TEXT}], isError: true, timestamp}` with the assistant message's
/// `timestamp` (ms since the epoch; left out when it has none). Never stored in the session.
pub fn synthetic_tool_result(tool_call_id: &str, tool_name: Option<&str>, timestamp: Option<&Value>) -> Value {
    let mut m = json!({
        "role": "toolResult",
        "toolCallId": tool_call_id,
        "toolName": tool_name.unwrap_or_default(),
        "content": [{"type": "text", "text": MISSING_TOOL_RESULT_TEXT}],
        "isError": true,
    });
    if let Some(ts) = timestamp {
        m["timestamp"] = ts.clone();
    }
    m
}

/// Repairs a list of messages (agent or LLM messages) given without entries (`entryId` absent
/// in the report): `(repaired messages, repairs)`. SPEC §13.1.
pub fn repair_messages(messages: &[Value]) -> (Vec<Value>, Vec<ContextRepair>) {
    let metas: Vec<MessageMeta> = messages.iter().map(MessageMeta::from_value).collect();
    let refs: Vec<Option<&MessageMeta>> = metas.iter().map(Some).collect();
    let plan = plan_repair(&refs, &|_| None);
    if plan.is_identity() {
        return (messages.to_vec(), Vec::new());
    }
    (plan.apply(messages, &refs), plan.repairs)
}

/// Checks the provider rules of SPEC §13.1 on a list of messages: every tool call has a
/// non-empty string id that no other call of the list has, every `toolResult` follows the
/// assistant message (or a result of it) whose call it answers, each call is answered once,
/// and every call is answered before the next non-result message. `Err` names the first
/// violation. Used by the tests and available to hosts that build their own lists.
pub fn check_provider_valid(messages: &[Value]) -> Result<(), String> {
    let mut pending: Vec<String> = Vec::new();
    let mut answered: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut in_results = false;
    for (i, m) in messages.iter().enumerate() {
        let meta = MessageMeta::from_value(m);
        match meta.role {
            Role::ToolResult => {
                let id = meta.tool_call_id.unwrap_or_default();
                if !in_results {
                    return Err(format!("message {i}: tool result {id} does not follow an assistant message"));
                }
                match pending.iter().position(|p| *p == id) {
                    Some(k) => answered.push(pending.remove(k)),
                    None if answered.contains(&id) => {
                        return Err(format!("message {i}: tool call {id} is answered twice"));
                    }
                    None => return Err(format!("message {i}: tool result {id} answers no call of its assistant")),
                }
            }
            role => {
                if let Some(p) = pending.first() {
                    return Err(format!("message {i}: tool call {p} is not answered before it"));
                }
                answered.clear();
                in_results = role == Role::Assistant;
                if in_results {
                    pending = Vec::with_capacity(meta.tool_calls.len());
                    for c in meta.tool_calls {
                        match c.id {
                            Some(id) if !id.is_empty() && seen.insert(id.clone()) => pending.push(id),
                            Some(id) if !id.is_empty() => {
                                return Err(format!("message {i}: tool call id {id} is used by an earlier call"));
                            }
                            _ => return Err(format!("message {i}: a tool call has no non-empty string id")),
                        }
                    }
                }
            }
        }
    }
    match pending.first() {
        Some(p) => Err(format!("end: tool call {p} is not answered")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(t: &str) -> Value {
        json!({"role": "user", "content": t, "timestamp": 1})
    }
    fn assistant(calls: &[&str]) -> Value {
        let blocks: Vec<Value> =
            calls.iter().map(|c| json!({"type": "toolCall", "id": c, "name": "bash", "arguments": {}})).collect();
        json!({"role": "assistant", "content": blocks, "stopReason": "toolUse", "timestamp": 7})
    }
    fn result(call: &str) -> Value {
        json!({"role": "toolResult", "toolCallId": call, "toolName": "bash", "content": [], "isError": false, "timestamp": 8})
    }
    fn kinds(r: &[ContextRepair]) -> Vec<(RepairKind, Option<&str>, usize)> {
        r.iter().map(|r| (r.kind, r.tool_call_id.as_deref(), r.message_index)).collect()
    }

    #[test]
    fn repeated_empty_and_missing_call_ids_get_new_ones_with_their_results() {
        let mut no_id = assistant(&["x"]);
        no_id["content"][0]["id"] = json!(7);
        let msgs = vec![
            user("q"),
            assistant(&["d", "d", ""]),
            result("d"),
            result(""),
            assistant(&["d"]),
            result("d"),
            assistant(&["d_2"]),
            result("d_2"),
            no_id,
            user("next"),
        ];
        assert!(check_provider_valid(&msgs).is_err());
        let (out, repairs) = repair_messages(&msgs);
        check_provider_valid(&out).unwrap();
        let ids = |m: &Value| -> Vec<String> {
            m["content"].as_array().map_or(vec![], |b| b.iter().map(|c| c["id"].to_string()).collect())
        };
        // The first `d` keeps its id; the repeated one, the empty one and later ones get new ids,
        // unused by any stored call (`d_2` is one); a number is no id.
        assert_eq!(ids(&out[1]), ["\"d\"", "\"d_3\"", "\"call_1\""]);
        assert_eq!((out[2]["toolCallId"].clone(), out[3]["toolCallId"].clone()), (json!("d"), json!("call_1")));
        // `d`'s second call had no result: a synthetic one with its new id.
        assert_eq!(out[4], synthetic_tool_result("d_3", Some("bash"), Some(&json!(7))));
        assert_eq!(ids(&out[5]), ["\"d_4\""]);
        assert_eq!(out[6]["toolCallId"], json!("d_4"));
        assert_eq!(ids(&out[7]), ["\"d_2\""], "a stored id used once is kept");
        assert_eq!(out[8]["toolCallId"], json!("d_2"));
        assert_eq!(ids(&out[9]), ["\"call_2\""]);
        assert_eq!(out[10], synthetic_tool_result("call_2", Some("bash"), Some(&json!(7))));
        assert_eq!(out[11], user("next"));
        let renamed: Vec<(Option<&str>, usize)> = repairs
            .iter()
            .filter(|r| r.kind == RepairKind::RenamedToolCallId)
            .map(|r| (r.tool_call_id.as_deref(), r.message_index))
            .collect();
        assert_eq!(renamed, vec![(Some("d"), 1), (Some(""), 1), (Some("d"), 4), (None, 8)]);
        // The stored messages are not changed.
        assert_eq!(msgs[1]["content"][1]["id"], json!("d"));
    }

    #[test]
    fn interrupted_turn_gets_a_synthetic_error_result() {
        let msgs = vec![user("go"), assistant(&["c1", "c2"]), result("c1"), user("stop, do this instead")];
        let (out, repairs) = repair_messages(&msgs);
        assert_eq!(kinds(&repairs), vec![(RepairKind::MissingToolResult, Some("c2"), 1)]);
        assert_eq!(out.len(), 5);
        assert_eq!(out[3], synthetic_tool_result("c2", Some("bash"), Some(&json!(7))));
        assert_eq!(out[3]["isError"], json!(true));
        assert_eq!(out[3]["content"][0]["text"], json!(MISSING_TOOL_RESULT_TEXT));
        assert_eq!(out[4], msgs[3]);
        check_provider_valid(&out).unwrap();
        assert!(check_provider_valid(&msgs).is_err());
    }

    #[test]
    fn steering_message_typed_while_tools_ran_moves_after_the_results() {
        let msgs =
            vec![user("go"), assistant(&["c1", "c2"]), result("c1"), user("steer"), result("c2"), assistant(&[])];
        let (out, repairs) = repair_messages(&msgs);
        assert_eq!(kinds(&repairs), vec![(RepairKind::MovedAfterToolResults, Some("c2"), 3)]);
        assert_eq!(
            out,
            vec![msgs[0].clone(), msgs[1].clone(), msgs[2].clone(), msgs[4].clone(), msgs[3].clone(), msgs[5].clone()]
        );
        check_provider_valid(&out).unwrap();
    }

    #[test]
    fn orphan_and_duplicate_results_are_left_out() {
        // The context opens with a result (a cut inside an exchange), then a result answered twice,
        // then a result of an earlier assistant that arrives after a later one spoke.
        let msgs = vec![
            result("c0"),
            assistant(&["c1"]),
            result("c1"),
            result("c1"),
            assistant(&["c2"]),
            result("c1"),
            result("c2"),
        ];
        let (out, repairs) = repair_messages(&msgs);
        assert_eq!(
            kinds(&repairs),
            vec![
                (RepairKind::OrphanToolResult, Some("c0"), 0),
                (RepairKind::DuplicateToolResult, Some("c1"), 3),
                (RepairKind::OrphanToolResult, Some("c1"), 5),
            ]
        );
        assert_eq!(out, vec![msgs[1].clone(), msgs[2].clone(), msgs[4].clone(), msgs[6].clone()]);
        check_provider_valid(&out).unwrap();
    }

    #[test]
    fn parallel_calls_answered_in_any_order_are_left_alone() {
        let msgs = vec![user("go"), assistant(&["a", "b", "c"]), result("c"), result("a"), result("b"), user("next")];
        let (out, repairs) = repair_messages(&msgs);
        assert!(repairs.is_empty());
        assert_eq!(out, msgs);
    }

    #[test]
    fn unanswered_calls_at_the_end_are_answered_before_held_back_messages() {
        let msgs = vec![assistant(&["c1"]), user("typed while it ran"), json!({"role": "custom", "content": "x"})];
        let (out, repairs) = repair_messages(&msgs);
        assert_eq!(kinds(&repairs), vec![(RepairKind::MissingToolResult, Some("c1"), 0)]);
        assert_eq!(out[1]["toolCallId"], json!("c1"));
        assert_eq!(&out[2..], &msgs[1..]);
    }

    #[test]
    fn entry_ids_name_the_entries_in_the_report() {
        let msgs = [assistant(&["c1"]), user("u")];
        let metas: Vec<MessageMeta> = msgs.iter().map(MessageMeta::from_value).collect();
        let refs: Vec<Option<&MessageMeta>> = metas.iter().map(Some).collect();
        let plan = plan_repair(&refs, &|i| Some(format!("e{i}")));
        assert_eq!(
            plan.steps,
            vec![RepairStep::Message(0), RepairStep::MissingResult { message: 0, call: 0 }, RepairStep::Message(1)]
        );
        assert_eq!(plan.repairs[0].entry_id.as_deref(), Some("e0"));
        let ser = serde_json::to_value(&plan.repairs[0]).unwrap();
        assert_eq!(ser, json!({"kind": "missingToolResult", "entryId": "e0", "toolCallId": "c1", "messageIndex": 0}));
    }
}
