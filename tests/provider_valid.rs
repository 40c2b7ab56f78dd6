//! Issue 9: sessions the engine touches stay usable. Provider-valid output (SPEC §13.1), cuts that
//! never split a tool call from its results (§12.7), compactions bound to the branch they were
//! prepared on (§13.2), labels on unknown targets.

#[path = "common/sync.rs"]
mod sync;
use futures_executor::{block_on, LocalPool};
use futures_util::task::LocalSpawnExt;
use serde_json::{json, Value};
use session_compaction::context::convert::convert_to_llm_provider_valid;
use session_compaction::context::repair::{check_provider_valid, ContextRepair, RepairKind, MISSING_TOOL_RESULT_TEXT};
use session_compaction::context::{build_session_context, LeafSelector};
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::io::ParseOptions;
use session_compaction::plan::prepare::{prepare_compaction, CompactionSettings};
use session_compaction::prompt::templates::PromptTemplates;
use session_compaction::session::engine::{CompactRun, HooksByName, NavigateRun, SessionEngine, SharedSession};
use session_compaction::session::SessionTree;
use session_compaction::summarize::{Complete, SummaryRequest};
use session_compaction::tree::IssueKind;
use session_compaction::{Error, Result};
use std::future::Future;
use std::sync::Arc;
use std::task::{Poll, Waker};
use sync::{Lock, SyncCell};

// ------------------------------------------------------------------------------------------
// Session helpers

fn entry(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": message})
}
fn user(id: &str, parent: Option<&str>, text: &str) -> Value {
    entry(id, parent, json!({"role": "user", "content": text, "timestamp": 1}))
}
fn assistant(id: &str, parent: Option<&str>, calls: &[&str]) -> Value {
    let content: Vec<Value> = calls
        .iter()
        .map(|c| json!({"type": "toolCall", "id": c, "name": "bash", "arguments": {"command": "ls"}}))
        .collect();
    entry(id, parent, json!({"role": "assistant", "content": content, "stopReason": "toolUse", "timestamp": 2}))
}
fn text(id: &str, parent: Option<&str>, t: &str) -> Value {
    entry(
        id,
        parent,
        json!({"role": "assistant", "content": [{"type": "text", "text": t}], "stopReason": "stop", "timestamp": 2}),
    )
}
fn result(id: &str, parent: Option<&str>, call: &str, size: usize) -> Value {
    entry(
        id,
        parent,
        json!({"role": "toolResult", "toolCallId": call, "toolName": "bash", "content": [{"type": "text", "text": "o".repeat(size)}], "isError": false, "timestamp": 3}),
    )
}

fn kinds(repairs: &[ContextRepair]) -> Vec<(RepairKind, Option<&str>, Option<&str>)> {
    repairs.iter().map(|r| (r.kind, r.entry_id.as_deref(), r.tool_call_id.as_deref())).collect()
}

/// Every provider-facing output of the handle satisfies SPEC §13.1, and they report the same
/// repairs.
fn assert_provider_valid(tree: &SessionTree) {
    let json: Vec<Value> = serde_json::from_str(&tree.build_session_context_json()).unwrap();
    check_provider_valid(&json).unwrap_or_else(|e| panic!("buildSessionContextJson: {e}"));
    let provider = tree.build_provider_context();
    assert_eq!(provider.messages, json, "buildSessionContextJson is the provider context's messages");
    let (llm, repairs) = tree.build_llm_messages(&PromptTemplates::default()).unwrap();
    check_provider_valid(&llm).unwrap_or_else(|e| panic!("buildLlmMessages: {e}"));
    let stored = tree.build_session_context();
    assert_eq!(stored.repairs, repairs);
    assert_eq!(provider.repairs, repairs);
    assert_eq!(tree.context_repairs(), repairs);
    assert_eq!(tree.validate().repairs, repairs);
    let stored_json: Vec<Value> = serde_json::from_str(&tree.stored_context_json()).unwrap();
    assert_eq!(stored_json, stored.messages, "the stored context is left as it is");
    let (converted, pure_repairs) =
        convert_to_llm_provider_valid(&stored.messages, &PromptTemplates::default()).unwrap();
    check_provider_valid(&converted).unwrap_or_else(|e| panic!("convertToLlm with repair: {e}"));
    assert_eq!(pure_repairs.len(), repairs.len());
}

// ------------------------------------------------------------------------------------------
// 1. Provider-valid output

#[test]
fn interrupted_turn_is_answered_with_a_synthetic_error_result_in_every_provider_output() {
    let v = vec![
        user("u0", None, "list files"),
        assistant("a1", Some("u0"), &["c1", "c2"]),
        result("t2", Some("a1"), "c1", 10),
        user("u3", Some("t2"), "never mind"),
    ];
    let tree = SessionTree::from_values(None, &v);
    assert_provider_valid(&tree);
    let ctx = tree.build_session_context();
    assert_eq!(ctx.messages.len(), 4, "buildSessionContext keeps the stored messages");
    assert_eq!(kinds(&ctx.repairs), vec![(RepairKind::MissingToolResult, Some("a1"), Some("c2"))]);
    let json: Vec<Value> = serde_json::from_str(&tree.build_session_context_json()).unwrap();
    assert_eq!(json.len(), 5);
    assert_eq!(json[3]["role"], "toolResult");
    assert_eq!(json[3]["toolCallId"], "c2");
    assert_eq!(json[3]["isError"], true);
    assert_eq!(json[3]["content"][0]["text"], MISSING_TOOL_RESULT_TEXT);
    assert_eq!(json[4]["content"], "never mind");
    // Never stored.
    assert_eq!(tree.entry_count(), 4);
    assert!(!tree.to_jsonl().contains(MISSING_TOOL_RESULT_TEXT));
}

#[test]
fn steering_message_stored_between_a_call_and_its_result_is_placed_after_the_results() {
    let v = vec![
        user("u0", None, "go"),
        assistant("a1", Some("u0"), &["c1"]),
        user("u2", Some("a1"), "also check the tests"),
        result("t3", Some("u2"), "c1", 10),
        text("a4", Some("t3"), "done"),
    ];
    let tree = SessionTree::from_values(None, &v);
    assert_provider_valid(&tree);
    assert_eq!(kinds(&tree.context_repairs()), vec![(RepairKind::MovedAfterToolResults, Some("u2"), Some("c1"))]);
    let json: Vec<Value> = serde_json::from_str(&tree.build_session_context_json()).unwrap();
    let roles: Vec<&str> = json.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "user", "assistant"]);
    assert_eq!(json[3]["content"], "also check the tests");
}

#[test]
fn navigating_to_an_assistant_answered_only_on_another_branch_stays_provider_valid_and_is_reported() {
    let v = vec![
        user("u0", None, "go"),
        assistant("a1", Some("u0"), &["c1"]),
        result("t2", Some("a1"), "c1", 10),
        text("a3", Some("t2"), "ok"),
    ];
    let mut tree = SessionTree::from_values(None, &v);
    assert!(tree.validate().issues.is_empty() && tree.context_repairs().is_empty());
    tree.set_leaf(Some("a1")).unwrap();
    assert_provider_valid(&tree);
    let report = tree.validate();
    assert_eq!(kinds(&report.repairs), vec![(RepairKind::MissingToolResult, Some("a1"), Some("c1"))]);
    let unanswered: Vec<_> = report.issues.iter().filter(|i| i.code == IssueKind::UnansweredToolCall).collect();
    assert_eq!(unanswered.len(), 1);
    assert_eq!(unanswered[0].id.as_deref(), Some("a1"));
    // The host types a new message there: the tree now has a path on which c1 is unanswered.
    tree.append_entry(user("u4", Some("a1"), "try another way")).unwrap();
    assert_provider_valid(&tree);
    let pure = session_compaction::tree::validate(&tree, None);
    assert_eq!(pure.of_kind(IssueKind::UnansweredToolCall).count(), 1);
}

#[test]
fn orphan_result_at_the_start_of_the_kept_region_is_left_out() {
    // A compaction made by an older engine (or a host) that kept from a tool result.
    let v = vec![
        user("u0", None, "go"),
        assistant("a1", Some("u0"), &["c1"]),
        result("t2", Some("a1"), "c1", 10),
        text("a3", Some("t2"), "done"),
        json!({"type": "compaction", "id": "k4", "parentId": "a3", "timestamp": "2025-01-01T00:00:01.000Z", "summary": "s", "firstKeptEntryId": "t2", "tokensBefore": 5}),
    ];
    let tree = SessionTree::from_values(None, &v);
    assert_provider_valid(&tree);
    assert_eq!(kinds(&tree.context_repairs()), vec![(RepairKind::OrphanToolResult, Some("t2"), Some("c1"))]);
    let ctx = build_session_context(&EntryList::new(&v), &LeafSelector::Last);
    assert_eq!(ctx.repairs, tree.context_repairs(), "the pure function carries the same report");
    assert_eq!(ctx.messages[1]["role"], "toolResult", "the pure function stays faithful");
}

#[test]
fn real_sessions_produce_provider_valid_contexts() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions");
    for name in ["pi-session-with-compactions.jsonl", "pi-session-large.jsonl", "pi-session-v1-format.jsonl"] {
        let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
        let (mut tree, _) = SessionTree::from_bytes(bytes, &ParseOptions::lenient()).unwrap();
        let stored = tree.build_session_context();
        assert!(check_provider_valid(&stored.messages).is_err() || stored.repairs.is_empty(), "{name}");
        assert_provider_valid(&tree);
        // Every leaf position a host may navigate to (every 40th entry, to keep the test short).
        let ids: Vec<String> = (0..tree.entry_count()).step_by(40).filter_map(|i| tree.meta(i).id.clone()).collect();
        for id in ids {
            tree.set_leaf(Some(&id)).unwrap();
            let json: Vec<Value> = serde_json::from_str(&tree.build_session_context_json()).unwrap();
            check_provider_valid(&json).unwrap_or_else(|e| panic!("{name} at {id}: {e}"));
            let (llm, _) = tree.build_llm_messages(&PromptTemplates::default()).unwrap();
            check_provider_valid(&llm).unwrap_or_else(|e| panic!("{name} at {id} (LLM): {e}"));
        }
    }
}

#[test]
fn real_sessions_report_their_interrupted_turns() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions");
    let bytes = std::fs::read(format!("{dir}/pi-session-large.jsonl")).unwrap();
    let (mut tree, _) = SessionTree::from_bytes(bytes, &ParseOptions::lenient()).unwrap();
    // The interrupted turn of this session: an assistant message that ended in an error with 16
    // tool calls, none answered (the user spoke next).
    let assistant = tree.index_of("627646b8").expect("the interrupted turn");
    assert_eq!(tree.meta(assistant).message.as_ref().map(|m| m.tool_calls.len()), Some(16));
    let next = tree.children_of(assistant)[0];
    let id = tree.meta(next).id.clone().unwrap();
    tree.set_leaf(Some(&id)).unwrap();
    let repairs = tree.context_repairs();
    let missing = repairs.iter().filter(|r| r.kind == RepairKind::MissingToolResult).count();
    assert_eq!(missing, 16);
    assert!(repairs.iter().all(|r| r.entry_id == tree.meta(assistant).id));
    assert_provider_valid(&tree);
}

// ------------------------------------------------------------------------------------------
// 2. Cuts never split a tool call from its results (SPEC §12.7)

#[test]
fn compaction_never_keeps_from_a_steering_message_inside_a_tool_exchange() {
    let v = vec![
        user("u0", None, &"x".repeat(4000)),
        assistant("a1", Some("u0"), &["c1"]),
        user("u2", Some("a1"), &"y".repeat(400)),
        result("t3", Some("u2"), "c1", 40),
        text("a4", Some("t3"), "done"),
    ];
    let list = EntryList::new(&v);
    let settings = CompactionSettings { keep_recent_tokens: 100, ..Default::default() };
    let prep = prepare_compaction(&list, &settings).expect("something to compact");
    assert_ne!(prep.first_kept_entry_id, "u2");
    assert_ne!(prep.first_kept_entry_id, "t3");
    let mut with = v.clone();
    with.push(json!({"type": "compaction", "id": "k5", "parentId": "a4", "timestamp": "2025-01-01T00:00:01.000Z", "summary": "s", "firstKeptEntryId": prep.first_kept_entry_id, "tokensBefore": 1}));
    let tree = SessionTree::from_values(None, &with);
    assert!(tree.context_repairs().iter().all(|r| r.kind != RepairKind::OrphanToolResult));
    assert_provider_valid(&tree);
}

// ------------------------------------------------------------------------------------------
// Engine fakes

struct Model;

impl Complete for Model {
    async fn complete(&self, _request: SummaryRequest) -> Result<String> {
        Ok("SUMMARY".into())
    }
}

/// A manually opened gate.
#[derive(Default)]
struct Gate {
    open: SyncCell<bool>,
    wakers: Lock<Vec<Waker>>,
}

impl Gate {
    fn open(&self) {
        self.open.set(true);
        for w in self.wakers.borrow_mut().drain(..) {
            w.wake();
        }
    }
    fn wait(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| {
            if self.open.get() {
                Poll::Ready(())
            } else {
                self.wakers.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            }
        })
    }
}

type Action = Box<dyn Fn(&mut SessionTree) -> Result<Value> + Send + Sync>;

/// Hooks that act on the session when called by name (as a host's hook would), optionally
/// after a gate opens.
struct SessionHooks {
    session: SharedSession,
    actions: Vec<(&'static str, Action)>,
    gate: Option<Arc<Gate>>,
}

impl HooksByName for SessionHooks {
    async fn call(&self, name: &str, _event: Value) -> Result<Value> {
        if let Some(g) = &self.gate {
            g.wait().await;
        }
        match self.actions.iter().find(|(n, _)| *n == name) {
            Some((_, f)) => self.session.write(|s| f(s)),
            None => Ok(Value::Null),
        }
    }
}

/// u0 (long), a1 → t2, u3, a4 → t5, a6 (a branch to compact) and a sibling branch b7 under u0.
fn compactable() -> SessionEngine {
    let v = vec![
        user("u0", None, &"x".repeat(8000)),
        assistant("a1", Some("u0"), &["c1"]),
        result("t2", Some("a1"), "c1", 4000),
        user("u3", Some("t2"), &"y".repeat(400)),
        assistant("a4", Some("u3"), &["c4"]),
        result("t5", Some("a4"), "c4", 400),
        text("a6", Some("t5"), "done"),
        user("b7", Some("u0"), "the other branch"),
    ];
    let mut tree = SessionTree::from_values(None, &v);
    tree.set_leaf(Some("a6")).unwrap();
    SessionEngine::new(tree)
}

fn run() -> CompactRun {
    CompactRun { settings: CompactionSettings { keep_recent_tokens: 300, ..Default::default() }, ..Default::default() }
}

fn hooks(engine: &SessionEngine, actions: Vec<(&'static str, Action)>) -> SessionHooks {
    SessionHooks { session: engine.session().clone(), actions, gate: None }
}

fn parent_of(engine: &SessionEngine, id: &str) -> Option<String> {
    let s = engine.session().snapshot();
    s.get_entry(id).and_then(|e| e["parentId"].as_str().map(str::to_owned))
}

// ------------------------------------------------------------------------------------------
// 3. A compaction belongs to the branch it was prepared on (SPEC §13.2)

#[test]
fn leaf_moved_during_a_compaction_leaves_the_compaction_on_its_own_branch() {
    let engine = compactable();
    let moved: Action = Box::new(|s| {
        s.set_leaf(Some("b7"))?;
        Ok(Value::Null)
    });
    let h = hooks(&engine, vec![("session.compacting", moved)]);
    let done = block_on(engine.compact(&Model, &h, &run(), None, 1.0e12)).unwrap();
    let id = done.entry["id"].as_str().unwrap().to_string();
    assert_eq!(parent_of(&engine, &id).as_deref(), Some("a6"), "appended under the prepared leaf");

    let s = engine.session().snapshot();
    assert_eq!(s.leaf_id(), Some("b7"), "the host's leaf stays where the host put it");
    let ctx = s.build_session_context();
    assert_eq!(ctx.messages.len(), 2, "the other branch's context is untouched");
    assert!(session_compaction::tree::validate(&s, None).of_kind(IssueKind::KeptEntryNotOnPath).next().is_none());
}

#[test]
fn host_turn_appended_during_a_compaction_gets_the_compaction_at_the_end_of_the_branch() {
    let engine = compactable();
    let next: Action = Box::new(|s| {
        s.append_entry(json!({"type": "message", "id": "h1", "timestamp": "t",
            "message": {"role": "user", "content": "and now?", "timestamp": 1}}))?;
        Ok(Value::Null)
    });
    let h = hooks(&engine, vec![("session.compacting", next)]);
    let done = block_on(engine.compact(&Model, &h, &run(), None, 1.0e12)).unwrap();
    // Under a6 it was a sibling of h1: the next context (h1's branch) never used it, and the
    // progress check, measuring that branch, said it made none.
    assert_eq!(done.entry["parentId"], "h1", "under the host's new leaf");
    let s = engine.session().snapshot();
    assert_eq!(s.leaf_id(), done.entry["id"].as_str(), "it is the leaf");
    assert!(!done.result.no_progress, "{:?}", (done.result.context_tokens_before, done.result.context_tokens_after));
    let messages = s.build_session_context().messages;
    assert_eq!(messages.last().and_then(|m| m.get("content")).and_then(Value::as_str), Some("and now?"), "kept");
    assert!(session_compaction::tree::validate(&s, None).issues.is_empty());
    assert_provider_valid(&s);
}

#[test]
fn progress_is_that_of_the_compactions_own_branch_when_the_host_moved_elsewhere() {
    let engine = compactable();
    // The host moves to the other branch and writes a long turn there.
    let moved: Action = Box::new(|s| {
        s.set_leaf(Some("b7"))?;
        s.append_entry(json!({"type": "message", "id": "h1", "timestamp": "t",
            "message": {"role": "user", "content": "z".repeat(60_000), "timestamp": 1}}))?;
        Ok(Value::Null)
    });
    let h = hooks(&engine, vec![("session.compacting", moved)]);
    let done = block_on(engine.compact(&Model, &h, &run(), None, 1.0e12)).unwrap();
    assert_eq!(done.entry["parentId"], "a6");
    assert_eq!(engine.session().snapshot().leaf_id(), Some("h1"));
    // Measured on the host's branch (u0, b7, h1), it was larger than before: "no progress".
    let (before, after) = (done.result.context_tokens_before.unwrap(), done.result.context_tokens_after.unwrap());
    assert!(after < before && !done.result.no_progress, "{before} -> {after}");
}

#[test]
fn leaf_unchanged_during_a_compaction_moves_to_the_compaction() {
    let engine = compactable();
    let done = block_on(engine.compact(&Model, &hooks(&engine, vec![]), &run(), None, 1.0e12)).unwrap();
    let s = engine.session().snapshot();
    assert_eq!(s.leaf_id(), done.entry["id"].as_str());
    assert_eq!(done.entry["parentId"], "a6");
    assert_provider_valid(&s);
}

#[test]
fn navigate_during_a_compaction_is_busy() {
    let engine = Arc::new(compactable());
    let gate = Arc::new(Gate::default());
    let h = SessionHooks { session: engine.session().clone(), actions: vec![], gate: Some(gate.clone()) };
    let mut pool = LocalPool::new();
    let result = Arc::new(Lock::new(None));
    {
        let (engine, result) = (engine.clone(), result.clone());
        pool.spawner()
            .spawn_local(async move {
                *result.borrow_mut() = Some(engine.compact(&Model, &h, &run(), None, 1.0e12).await);
            })
            .unwrap();
    }
    pool.run_until_stalled();
    assert!(engine.is_busy());
    let nav = block_on(engine.navigate_tree::<Model, _>(
        "b7",
        None,
        &hooks(&engine, vec![]),
        &NavigateRun::default(),
        None,
        1.0,
    ));
    assert!(matches!(nav, Err(Error::Busy)), "{nav:?}");
    gate.open();
    pool.run_until_stalled();
    assert!(result.borrow().as_ref().is_some_and(|r| r.is_ok()));
}

#[test]
fn failing_after_hook_removes_only_the_engines_own_compaction_entry() {
    let engine = compactable();
    let after: Action = Box::new(|s| {
        // The host appends its next message at the leaf (the new compaction) and a label, then
        // the hook fails.
        s.append_entry(json!({"type": "message", "id": "h1", "timestamp": "t", "message": {"role": "user", "content": "next", "timestamp": 1}}))?;
        s.append_entry(json!({"type": "label", "id": "h2", "parentId": "h1", "timestamp": "t", "targetId": "u0", "label": "start"}))?;
        Err(Error::Hook { hook: "session_compact".into(), message: "boom".into() })
    });
    let h = hooks(&engine, vec![("session_compact", after)]);
    let err = block_on(engine.compact(&Model, &h, &run(), None, 1.0e12)).unwrap_err();
    assert_eq!(err.code(), "E_HOOK");
    let s = engine.session().snapshot();
    assert_eq!(s.count_kind(session_compaction::entry::EntryKind::Compaction), 0, "the compaction is gone");
    assert_eq!(s.entry_count(), 10, "the host's entries stay");
    assert_eq!(s.get_entry("h1").unwrap()["parentId"], "a6", "re-attached where the compaction was");
    assert_eq!(s.leaf_id(), Some("h2"), "the host's leaf stays");
    assert!(session_compaction::tree::validate(&s, None).issues.is_empty());
}

#[test]
fn failing_after_hook_without_host_entries_restores_the_prepared_leaf() {
    let engine = compactable();
    let after: Action = Box::new(|_| Err(Error::Hook { hook: "session_compact".into(), message: "boom".into() }));
    let h = hooks(&engine, vec![("session_compact", after)]);
    assert!(block_on(engine.compact(&Model, &h, &run(), None, 1.0e12)).is_err());
    let s = engine.session().snapshot();
    assert_eq!((s.entry_count(), s.leaf_id()), (8, Some("a6")));
}

#[test]
fn failing_tree_hook_removes_only_the_branch_summary() {
    let engine = compactable();
    let after: Action = Box::new(|s| {
        s.append_entry(json!({"type": "message", "id": "h1", "timestamp": "t", "message": {"role": "user", "content": "typed", "timestamp": 1}}))?;
        Err(Error::Hook { hook: "session_tree".into(), message: "boom".into() })
    });
    let h = hooks(&engine, vec![("session_tree", after)]);
    let nav = NavigateRun { summarize: true, ..Default::default() };
    let err = block_on(engine.navigate_tree("b7", Some(&Model), &h, &nav, None, 1.0e12)).unwrap_err();
    assert_eq!(err.code(), "E_HOOK");
    let s = engine.session().snapshot();
    assert_eq!(s.count_kind(session_compaction::entry::EntryKind::BranchSummary), 0);
    assert!(s.get_entry("h1").is_some(), "the host's entry stays");
    assert_eq!(s.leaf_id(), Some("h1"));
}

fn supplied(first_kept: &'static str) -> Action {
    Box::new(move |_| {
        Ok(json!({"compaction": {"summary": "from the hook", "firstKeptEntryId": first_kept, "tokensBefore": 1}}))
    })
}

#[test]
fn hook_compaction_with_an_unknown_off_path_or_non_cut_point_first_kept_entry_is_refused() {
    for (id, why) in [("nope", "names no entry"), ("b7", "not on the branch"), ("t5", "not a valid cut point")] {
        let engine = compactable();
        let h = hooks(&engine, vec![("session_before_compact", supplied(id))]);
        let err = block_on(engine.compact(&Model, &h, &run(), None, 1.0e12)).unwrap_err();
        assert_eq!(err.code(), "E_HOOK", "{id}");
        let msg = err.to_string();
        assert!(msg.contains(id) && msg.contains(why), "{msg}");
        assert_eq!(engine.session().snapshot().entry_count(), 8, "nothing appended");
    }
}

#[test]
fn hook_compaction_with_a_valid_first_kept_entry_is_used() {
    let engine = compactable();
    let h = hooks(&engine, vec![("session_before_compact", supplied("u3"))]);
    let done = block_on(engine.compact(&Model, &h, &run(), None, 1.0e12)).unwrap();
    assert_eq!(done.entry["firstKeptEntryId"], "u3");
    assert!(done.from_extension);
    assert_provider_valid(&engine.session().snapshot());
}

// ------------------------------------------------------------------------------------------
// 4. Labels on unknown targets

#[test]
fn appending_a_label_on_an_unknown_target_is_not_found() {
    let mut tree = SessionTree::from_values(None, &[user("u0", None, "hi")]);
    let err = tree
        .append_entry(json!({"type": "label", "id": "l1", "timestamp": "t", "targetId": "ghost", "label": "x"}))
        .unwrap_err();
    assert_eq!((err.code(), err.to_string()), ("E_NOT_FOUND", "entry ghost: not found".to_string()));
    let err = tree.append_entry(json!({"type": "label", "id": "l1", "timestamp": "t", "label": "x"})).unwrap_err();
    assert_eq!(err.code(), "E_MISSING_FIELD");
    assert_eq!(tree.entry_count(), 1);
    tree.append_entry(json!({"type": "label", "id": "l2", "timestamp": "t", "targetId": "u0", "label": "x"})).unwrap();
    assert_eq!(tree.label("u0"), Some("x"));
}

#[test]
fn validate_reports_labels_on_unknown_targets_in_a_loaded_file() {
    let text = [
        json!({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}),
        user("u0", None, "hi"),
        json!({"type": "label", "id": "l1", "parentId": "u0", "timestamp": "t", "targetId": "ghost", "label": "x"}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n");
    let (tree, errors) = SessionTree::from_jsonl(text, &ParseOptions::lenient()).unwrap();
    assert!(errors.is_empty());
    let report = tree.validate();
    assert_eq!(report.issues.len(), 1);
    let issue = &report.issues[0];
    assert_eq!(
        (issue.code, issue.id.as_deref(), issue.related_id.as_deref(), issue.line),
        (IssueKind::LabelTargetNotFound, Some("l1"), Some("ghost"), Some(3))
    );
    assert_eq!(serde_json::to_value(issue).unwrap()["code"], "E_NOT_FOUND");
}
