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
