//! Staleness-aware pruning (SPEC §13.6): outputs superseded by a later call of the same tool on
//! the same target are pruned first, wherever they are; range reads, edits in between and
//! protected tools; the notice names what superseded the output; `staleness: false` is SPEC §7.

use serde_json::{json, Value};
use session_compaction::entry::EntryList;
use session_compaction::plan::prune::{plan_prune, prune_tool_outputs, PruneConfig, PrunePlan};
use session_compaction::session::SessionTree;

/// 4 000 chars = 1 000 estimated tokens.
fn output(tag: &str) -> String {
    format!("{tag} {}", "y".repeat(3999 - tag.len()))
}

fn msg(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": message})
}

/// A session built turn by turn: each call is an assistant message with one tool call and its
/// result, ids `a<n>` / `t<n>`.
struct Builder {
    entries: Vec<Value>,
    n: usize,
}

impl Builder {
    fn new() -> Self {
        let first = msg("u0", None, json!({"role": "user", "content": "work on the parser", "timestamp": 1}));
        Self { entries: vec![first], n: 0 }
    }
    fn last_id(&self) -> String {
        self.entries.last().and_then(|e| e["id"].as_str()).unwrap_or_default().to_string()
    }
    fn call(mut self, tool: &str, args: Value) -> Self {
        self.n += 1;
        let (a, t, c) = (format!("a{}", self.n), format!("t{}", self.n), format!("call{}", self.n));
        let parent = self.last_id();
        self.entries.push(msg(
            &a,
            Some(&parent),
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": c, "name": tool, "arguments": args}],
                   "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 2}),
        ));
        self.entries.push(msg(
            &t,
            Some(&a),
            json!({"role": "toolResult", "toolCallId": c, "toolName": tool,
                   "content": [{"type": "text", "text": output(&t)}], "isError": false, "timestamp": 3}),
        ));
        self
    }
    fn read(self, path: &str) -> Self {
        self.call("read", json!({"path": path}))
    }
}

/// Everything inside the protect window, no minimum, only `skill` protected.
fn config() -> PruneConfig {
    PruneConfig { protect_tokens: 40_000, minimum_savings: 0, protected_tools: vec!["skill".into()], staleness: true }
}

fn ids(plan: &PrunePlan) -> Vec<String> {
    plan.candidates.iter().map(|c| c.id.clone().unwrap_or_default()).collect()
}

fn plan(entries: &[Value], config: &PruneConfig) -> PrunePlan {
    plan_prune(&EntryList::new(entries), config)
}

#[test]
fn a_file_read_three_times_keeps_only_the_newest_output() {
    let entries = Builder::new().read("src/a.rs").read("src/a.rs").read("src/a.rs").entries;
    let p = plan(&entries, &config());
    assert_eq!(ids(&p), ["t2", "t1"], "superseded, newest first");
    for c in &p.candidates {
        let by = c.superseded_by.as_ref().expect("superseded");
        assert_eq!(by.id.as_deref(), Some("t3"), "the newest read supersedes both");
        assert_eq!(by.index, 6);
        assert_eq!(by.description, "a later full read of src/a.rs");
        assert_eq!(
            c.notice,
            "[Output truncated - 1000 tokens; superseded by a later full read of src/a.rs (entry t3)]"
        );
        assert_eq!(c.savings, 1000 - (c.notice.len() as u64).div_ceil(4));
    }
    assert_eq!(p.tokens_saved, p.candidates.iter().map(|c| c.savings).sum::<u64>());
    // SPEC §7 alone keeps all three: they are inside the protect window.
    let reference = plan(&entries, &PruneConfig { staleness: false, ..config() });
    assert!(reference.candidates.is_empty());
    // Pruning writes the notice and prunedAt; the input is untouched.
    let r = prune_tool_outputs(&EntryList::new(&entries), &config(), 1.7e12);
    assert_eq!(r.pruned_count, 2);
    let (i, e) = &r.pruned_entries[0];
    assert_eq!(*i, 4);
    assert_eq!(e["message"]["content"], json!([{"type": "text", "text": p.candidates[0].notice}]));
    assert_eq!(e["message"]["prunedAt"].as_f64(), Some(1.7e12));
    assert_eq!(entries[4]["message"]["content"][0]["text"], output("t2"));
}

#[test]
fn a_range_read_does_not_supersede_a_full_read_but_a_full_read_supersedes_a_range_read() {
    let entries =
        Builder::new().read("src/a.rs").call("read", json!({"path": "src/a.rs", "offset": 10, "limit": 20})).entries;
    assert!(plan(&entries, &config()).candidates.is_empty(), "t1 is the only full read");

    let entries =
        Builder::new().call("read", json!({"path": "src/a.rs", "offset": 10, "limit": 20})).read("src/a.rs").entries;
    let p = plan(&entries, &config());
    assert_eq!(ids(&p), ["t1"]);
    assert_eq!(p.candidates[0].superseded_by.as_ref().unwrap().description, "a later full read of src/a.rs");

    // The same range twice: an identical call; another range or another file: no.
    let range = json!({"path": "src/a.rs", "offset": 10, "limit": 20});
    let entries = Builder::new()
        .call("read", range.clone())
        .call("read", json!({"path": "src/a.rs", "offset": 30, "limit": 20}))
        .read("src/b.rs")
        .call("read", range)
        .entries;
    let p = plan(&entries, &config());
    assert_eq!(ids(&p), ["t1"]);
    assert_eq!(p.candidates[0].superseded_by.as_ref().unwrap().description, "a later identical read call");
    assert_eq!(p.candidates[0].superseded_by.as_ref().unwrap().id.as_deref(), Some("t4"));
    // `offset: null` is no range.
    let entries = Builder::new().read("src/a.rs").call("read", json!({"path": "src/a.rs", "offset": null})).entries;
    assert_eq!(ids(&plan(&entries, &config())), ["t1"]);
}

#[test]
fn an_edit_in_between_neither_supersedes_nor_protects_the_earlier_read() {
    let edit = json!({"path": "src/a.rs", "oldText": "x", "newText": "y"});
    // read, edit, read: the second read shows the file as it is now.
    let entries = Builder::new().read("src/a.rs").call("edit", edit.clone()).read("src/a.rs").entries;
    let p = plan(&entries, &config());
    assert_eq!(ids(&p), ["t1"], "the edit's own output stays");
    assert_eq!(p.candidates[0].superseded_by.as_ref().unwrap().id.as_deref(), Some("t3"));
    // read then edit: nothing later read the file again.
    let entries = Builder::new().read("src/a.rs").call("edit", edit).entries;
    assert!(plan(&entries, &config()).candidates.is_empty());
}

#[test]
fn a_repeated_identical_command_supersedes_the_earlier_run() {
    let entries = Builder::new()
        .call("bash", json!({"command": "cargo test"}))
        .call("bash", json!({"command": "cargo build"}))
        .call("bash", json!({"command": "cargo test"}))
        .entries;
    let p = plan(&entries, &config());
    assert_eq!(ids(&p), ["t1"]);
    let c = &p.candidates[0];
    assert_eq!(c.notice, "[Output truncated - 1000 tokens; superseded by a later identical bash call (entry t3)]");
    // Arguments compare as JavaScript's JSON.stringify writes them: another key is another call.
    let entries = Builder::new()
        .call("bash", json!({"command": "cargo test"}))
        .call("bash", json!({"command": "cargo test", "timeout": 60}))
        .entries;
    assert!(plan(&entries, &config()).candidates.is_empty());
}

#[test]
fn protected_tools_stay_protected() {
    // The default config protects `read` (and `skill`): three reads stay.
    let entries = Builder::new().read("src/a.rs").read("src/a.rs").read("src/a.rs").entries;
    let defaults = PruneConfig { minimum_savings: 0, ..PruneConfig::default() };
    assert!(defaults.staleness, "on by default");
    assert!(plan(&entries, &defaults).candidates.is_empty());
    let entries = Builder::new().call("skill", json!({"name": "x"})).call("skill", json!({"name": "x"})).entries;
    assert!(plan(&entries, &config()).candidates.is_empty());
    // An already pruned output neither counts as a candidate nor supersedes anything.
    let mut entries =
        Builder::new().call("bash", json!({"command": "ls"})).call("bash", json!({"command": "ls"})).entries;
    entries[4]["message"]["prunedAt"] = json!(1);
    assert!(plan(&entries, &config()).candidates.is_empty());
}

#[test]
fn superseded_outputs_come_first_then_old_ones_and_the_minimum_counts_both() {
    // 12 distinct bash outputs (12 000 tokens) then two identical ones; window 3 000 tokens.
    let mut b = Builder::new();
    for k in 0..12 {
        b = b.call("bash", json!({"command": format!("step {k}")}));
    }
    let entries = b.call("bash", json!({"command": "make"})).call("bash", json!({"command": "make"})).entries;
    let cfg = PruneConfig { protect_tokens: 3000, ..config() };
    let p = plan(&entries, &cfg);
    let got = ids(&p);
    assert_eq!(got[0], "t13", "the superseded output first, though inside the window");
    assert_eq!(got[1..], ["t11", "t10", "t9", "t8", "t7", "t6", "t5", "t4", "t3", "t2", "t1"].map(String::from));
    assert!(p.candidates[1..].iter().all(|c| c.superseded_by.is_none()));
    // Below the minimum nothing is pruned, the superseded output included.
    let strict = PruneConfig { minimum_savings: p.tokens_saved + 1, ..cfg };
    let none = plan(&entries, &strict);
    assert!(none.candidates.is_empty());
    assert_eq!(none.potential_savings, p.tokens_saved);
}

#[test]
fn the_session_handle_agrees_and_reports_entry_indices() {
    // A compaction and another branch make branch positions differ from entry indices.
    let mut entries = Builder::new().read("src/a.rs").read("src/a.rs").entries;
    entries.insert(1, msg("side", Some("u0"), json!({"role": "user", "content": "elsewhere", "timestamp": 1})));
    let header =
        json!({"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"});
    let tree = SessionTree::from_values(Some(header), &entries);
    let p = tree.plan_prune(&config());
    assert_eq!(ids(&p), ["t1"]);
    assert_eq!(p.candidates[0].index, 3, "entry index of t1");
    assert_eq!(p.candidates[0].superseded_by.as_ref().unwrap().index, 5, "entry index of t2");
}

#[path = "common/cases.rs"]
mod cases;

/// One step of a random session for the rule's model below.
#[derive(Debug, Clone)]
enum Op {
    /// An assistant message with tool calls: (tool, arguments variant, id: a new one or an
    /// earlier call's, so that ids repeat now and then).
    Calls(Vec<(u8, u8, Option<u8>)>),
    /// A tool result answering the `k`-th call made so far (from the end), with its own tool
    /// name or another, already pruned or not, of this size.
    Result { back: u8, other_tool: bool, pruned: bool, size: u16 },
}

const TOOLS: [&str; 5] = ["read", "bash", "edit", "skill", "write"];

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        2 => prop::collection::vec((0u8..5, 0u8..8, prop::option::weighted(0.1, any::<u8>())), 1..3).prop_map(Op::Calls),
        3 => (0u8..4, prop::bool::weighted(0.1), prop::bool::weighted(0.1), 1u16..3000)
            .prop_map(|(back, other_tool, pruned, size)| Op::Result { back, other_tool, pruned, size }),
    ]
}

/// The arguments of variant `v`: whole and ranged reads of a few paths, a few commands, and
/// long texts that begin and end alike.
fn arguments(v: u8) -> Value {
    match v {
        0 | 1 => json!({"path": format!("src/{v}.rs")}),
        2 => json!({"path": "src/0.rs", "offset": 10}),
        3 => json!({"path": "src/1.rs", "limit": null}),
        4 => json!({"command": "make", "path": ""}),
        // Long texts of one length that differ only in the middle.
        5 | 6 => json!({"path": "src/0.rs", "content": format!("{}{v}{}", "x".repeat(40), "y".repeat(40))}),
        _ => Value::Null,
    }
}

fn random_session(ops: &[Op]) -> Vec<Value> {
    let mut entries = vec![msg("u0", None, json!({"role": "user", "content": "go", "timestamp": 1}))];
    let mut calls: Vec<(String, &str)> = Vec::new();
    for (n, op) in ops.iter().enumerate() {
        let parent = entries.last().and_then(|e| e["id"].as_str()).map(str::to_owned);
        let id = format!("e{n}");
        let message = match op {
            Op::Calls(list) => {
                let blocks: Vec<Value> = list
                    .iter()
                    .enumerate()
                    .map(|(k, &(tool, args, reuse))| {
                        let call = match reuse {
                            Some(r) if !calls.is_empty() => calls[usize::from(r) % calls.len()].0.clone(),
                            _ => format!("c{n}_{k}"),
                        };
                        calls.push((call.clone(), TOOLS[usize::from(tool)]));
                        let mut block = json!({"type": "toolCall", "id": call, "name": TOOLS[usize::from(tool)]});
                        if args != 7 {
                            block["arguments"] = arguments(args);
                        }
                        block
                    })
                    .collect();
                json!({"role": "assistant", "content": blocks, "provider": "p", "model": "m", "stopReason": "toolUse"})
            }
            Op::Result { back, other_tool, pruned, size } => {
                let Some((call, tool)) = calls.iter().rev().nth(usize::from(*back) % calls.len().max(1)).cloned()
                else {
                    continue;
                };
                let tool = if *other_tool { "bash" } else { tool };
                let mut m = json!({"role": "toolResult", "toolCallId": call, "toolName": tool,
                    "content": [{"type": "text", "text": "o".repeat(usize::from(*size) * 4)}], "isError": false});
                if *pruned {
                    m["prunedAt"] = json!(1);
                }
                m
            }
        };
        entries.push(msg(&id, parent.as_deref(), message));
    }
    entries
}

/// SPEC §7 and §13.6 restated over the JSON values, one rule at a time with linear searches:
/// `(index, superseded by, description)` of each candidate in the plan's order.
fn model(entries: &[Value], config: &PruneConfig) -> Vec<(usize, Option<(usize, String)>)> {
    let m = |i: usize| &entries[i]["message"];
    let tokens = |i: usize| {
        let text: usize =
            m(i)["content"].as_array().map_or(0, |b| b.iter().filter_map(|b| b["text"].as_str()).map(str::len).sum());
        text.div_ceil(4)
    };
    // Newest first: (index, tokens, outside the window) of the unpruned, unprotected results.
    let mut open = Vec::new();
    let mut sum = 0;
    for i in (0..entries.len()).rev().filter(|&i| m(i)["role"] == "toolResult") {
        let within = sum < config.protect_tokens as usize;
        sum += tokens(i);
        let tool = m(i)["toolName"].as_str();
        if m(i).get("prunedAt").is_some() || tool.is_some_and(|t| config.protected_tools.iter().any(|p| p == t)) {
            continue;
        }
        open.push((i, !within));
    }
    let tool_of = |i: usize| m(i)["toolName"].as_str();
    let repeated: Vec<usize> = open
        .iter()
        .map(|&(i, _)| i)
        .filter(|&i| tool_of(i).is_some_and(|t| open.iter().filter(|&&(j, _)| tool_of(j) == Some(t)).count() > 1))
        .collect();
    // A result's call: the first block with its id, if it is the oldest repeated result of that id.
    let call_of = |i: usize| -> Option<&Value> {
        let id = m(i)["toolCallId"].as_str()?;
        if repeated.iter().rev().find(|&&j| m(j)["toolCallId"].as_str() == Some(id)) != Some(&i) {
            return None;
        }
        entries.iter().filter(|e| e["message"]["role"] == "assistant").find_map(|e| {
            e["message"]["content"].as_array()?.iter().find(|b| b["type"] == "toolCall" && b["id"].as_str() == Some(id))
        })
    };
    let mut full_reads: Vec<(String, usize)> = Vec::new();
    let mut seen_calls: Vec<(String, String, usize)> = Vec::new();
    let mut by: Vec<(usize, (usize, String))> = Vec::new();
    for &i in &repeated {
        let Some(call) = call_of(i) else { continue };
        let tool = tool_of(i).unwrap_or_default().to_string();
        let args = call.get("arguments").cloned().unwrap_or(Value::Null);
        let text = serde_json::to_string(&args).unwrap();
        let path = args["path"].as_str().filter(|p| !p.is_empty() && tool == "read").map(str::to_owned);
        let ranged = ["offset", "limit"].iter().any(|k| args.get(*k).is_some_and(|v| !v.is_null()));
        let by_read = path.as_ref().and_then(|p| {
            full_reads.iter().find(|(q, _)| q == p).map(|&(_, j)| (j, format!("a later full read of {p}")))
        });
        let by_call = match seen_calls.iter().find(|(t, a, _)| *t == tool && *a == text) {
            Some(&(_, _, j)) => Some((j, format!("a later identical {tool} call"))),
            None => {
                seen_calls.push((tool.clone(), text, i));
                None
            }
        };
        if let Some(b) = by_read.or(by_call) {
            by.push((i, b));
        }
        if let (Some(p), false) = (path, ranged) {
            if !full_reads.iter().any(|(q, _)| *q == p) {
                full_reads.push((p, i));
            }
        }
    }
    let stale = |i: usize| by.iter().find(|(j, _)| *j == i).map(|(_, b)| b.clone());
    let mut out: Vec<(usize, Option<(usize, String)>)> =
        open.iter().filter_map(|&(i, _)| stale(i).map(|b| (i, Some(b)))).collect();
    out.extend(open.iter().filter(|&&(i, old)| old && stale(i).is_none()).map(|&(i, _)| (i, None)));
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: cases::cases(256), ..Default::default() })]

    /// The plan, from parsed values and from a session handle loaded from the file's bytes (its
    /// own reader and the places it records), is the rule's: the same candidates in the same
    /// order, superseded by the same results. Ids repeat, results name another tool, arguments
    /// are absent, `null`, ranged or identical.
    #[test]
    fn the_plan_is_the_rule_s(ops in proptest::collection::vec(op(), 1..60), protect in 0u64..6000) {
        let entries = random_session(&ops);
        let config = PruneConfig { protect_tokens: protect, minimum_savings: 0, protected_tools: vec!["skill".into()], staleness: true };
        let want = model(&entries, &config);
        let got = |p: &PrunePlan| -> Vec<(usize, Option<(usize, String)>)> {
            p.candidates.iter().map(|c| (c.index, c.superseded_by.as_ref().map(|b| (b.index, b.description.clone())))).collect()
        };
        proptest::prop_assert_eq!(&got(&plan_prune(&EntryList::new(&entries), &config)), &want);
        let header = json!({"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"});
        let text: String = std::iter::once(&header).chain(&entries).map(|e| format!("{e}\n")).collect();
        let (tree, _) = SessionTree::from_bytes(text.into_bytes(), &session_compaction::io::ParseOptions::lenient()).unwrap();
        // The handle's entry indices are the list's (no header among the entries).
        proptest::prop_assert_eq!(&got(&tree.plan_prune(&config)), &want);
    }
}
