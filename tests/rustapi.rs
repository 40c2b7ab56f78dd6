//! The native Rust API as a tokio host uses it (issue 11, "Rust hosts"): the engine and its
//! futures are `Send`, a compaction runs under `tokio::spawn` while other tasks read and append,
//! a second operation is `E_BUSY`, the system clock waits without blocking the executor, and
//! `SessionTree::new_entry_id` makes ids like pi's.

use serde_json::json;
use session_compaction::entry::EntrySource;
use session_compaction::io::ParseOptions;
use session_compaction::session::engine::{
    AbortSignal, Clock, CompactRun, Hooks, NoHooks, SessionEngine, SharedSession, SystemClock,
};
use session_compaction::session::events::{
    AutoCompactionEvent, BeforeCompactEvent, BeforeCompactReply, CompactEvent, CompactingEvent, CompactingReply,
    CompactionReason, SuppliedCompaction, TreeEvent,
};
use session_compaction::session::SessionTree;
use session_compaction::summarize::extractive::ExtractiveSummarizer;
use session_compaction::summarize::{Complete, SummaryRequest};
use session_compaction::{Error, Result};
use std::sync::Arc;
use tokio::sync::{watch, Notify};

#[allow(dead_code)] // its `main` is the example's entry point, not called here
#[path = "../examples/tokio_compact.rs"]
mod tokio_example;

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions/pi-session-large.jsonl");

fn real_session() -> SessionTree {
    let text = std::fs::read_to_string(REAL).expect("the example session");
    let (tree, errors) = SessionTree::from_jsonl(text, &ParseOptions::lenient()).expect("loads");
    assert!(errors.is_empty(), "{errors:?}");
    tree
}

fn assert_send_sync<T: Send + Sync>() {}
fn assert_send<T: Send>(_: &T) {}

#[test]
fn the_engine_and_its_futures_are_send() {
    assert_send_sync::<SessionEngine>();
    assert_send_sync::<SharedSession>();
    assert_send_sync::<SessionTree>();
    assert_send_sync::<AbortSignal>();
    let engine = SessionEngine::new(SessionTree::new(None));
    let run = CompactRun::default();
    let model = ExtractiveSummarizer::default();
    let compact = engine.compact(&model, &NoHooks, &run, None, 0.0);
    assert_send(&compact);
    let sleep = SystemClock.sleep(1.0);
    assert_send(&sleep);
}

/// A model that waits until the test opens the gate, then answers like the extractive
/// summarizer.
struct Gated {
    started: Arc<Notify>,
    release: watch::Receiver<bool>,
}

impl Complete for Gated {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        self.started.notify_one();
        let mut gate = self.release.clone();
        gate.wait_for(|open| *open).await.map_err(|e| Error::Summarization { message: e.to_string() })?;
        ExtractiveSummarizer::default().complete(request).await
    }
}

fn gated() -> (Gated, Arc<Notify>, watch::Sender<bool>) {
    let started = Arc::new(Notify::new());
    let (open, release) = watch::channel(false);
    (Gated { started: started.clone(), release }, started, open)
}

/// A `session.compacting` hook that reads the session (the lock is free during a compaction)
/// and adds a context line; the other hooks are the defaults.
struct ReadingHooks(SharedSession);

impl Hooks for ReadingHooks {
    async fn compacting(&self, event: CompactingEvent) -> Result<CompactingReply> {
        let n = self.0.read(|s| s.entry_count());
        Ok(CompactingReply {
            context: vec![format!("the session has {n} entries, {} to summarize", event.messages.len())],
            preserve_data: Some(json!({"entries": n})),
            ..Default::default()
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_compaction_runs_while_the_host_reads_and_appends() {
    let tree = real_session();
    let count = tree.entry_count();
    let prepared_leaf = tree.leaf_id().map(str::to_owned);
    let engine = Arc::new(SessionEngine::new(tree));
    let (model, started, open) = gated();
    let hooks = ReadingHooks(engine.session().clone());
    let task = {
        let engine = engine.clone();
        tokio::spawn(async move {
            let run = CompactRun { custom_instructions: Some("the open tasks".into()), ..Default::default() };
            engine.compact(&model, &hooks, &run, None, SystemClock.now_ms()).await
        })
    };
    started.notified().await;
    // The compaction waits on the model: the session is not locked meanwhile.
    assert!(engine.is_busy());
    assert_eq!(engine.session().read(|s| s.entry_count()), count);
    let id = engine.session().read(SessionTree::new_entry_id);
    let typed = json!({"type": "message", "id": id, "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "typed during the compaction", "timestamp": 1}});
    engine.session().write(|s| s.append_entry(typed)).expect("append during a compaction");
    // One operation at a time.
    let second = engine.compact(&ExtractiveSummarizer::default(), &NoHooks, &CompactRun::default(), None, 0.0).await;
    assert!(matches!(second, Err(Error::Busy)), "{second:?}");
    open.send(true).expect("the model waits");
    let done = task.await.expect("the task").expect("the compaction");
    assert!(!engine.is_busy());
    assert_eq!(done.entry["type"], "compaction");
    // At the end of the prepared branch, after the turn the host appended to it (SPEC §13.2).
    assert_ne!(prepared_leaf.as_deref(), Some(id.as_str()));
    assert_eq!(done.entry["parentId"].as_str(), Some(id.as_str()), "under the host's new entry");
    let marker = ExtractiveSummarizer::default().summarize(&probe());
    assert_eq!(done.result.summary.lines().next(), marker.lines().next(), "written by the extractive summarizer");
    let (entries, leaf) = engine.session().read(|s| (s.entry_count(), s.leaf_id().map(str::to_owned)));
    assert_eq!(entries, count + 2, "the host's entry and the compaction");
    assert_eq!(leaf.as_deref(), done.entry["id"].as_str(), "the compaction is the leaf");
    let stored = engine.session().read(|s| s.get_entry(done.entry["id"].as_str().unwrap())).expect("stored");
    assert_eq!(stored, done.entry);
    // The hook ran before the model was asked, so before the host's append.
    assert_eq!(stored["preserveData"], json!({"entries": count}), "the typed hook's preserveData");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_from_another_task_appends_nothing() {
    let tree = real_session();
    let count = tree.entry_count();
    let engine = Arc::new(SessionEngine::new(tree));
    let (model, started, _open) = gated();
    let signal = AbortSignal::new();
    let task = {
        let (engine, signal) = (engine.clone(), signal.clone());
        tokio::spawn(async move { engine.compact(&model, &NoHooks, &CompactRun::default(), Some(&signal), 0.0).await })
    };
    started.notified().await;
    signal.abort();
    let out = task.await.expect("the task");
    assert!(matches!(out, Err(Error::Aborted { .. })), "{out:?}");
    assert_eq!(engine.session().read(|s| s.entry_count()), count);
    assert!(!engine.is_busy());
}

#[test]
fn the_system_clock_tells_the_time_and_waits_under_any_executor() {
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as f64;
    assert!((SystemClock.now_ms() - wall).abs() < 5_000.0);
    let start = std::time::Instant::now();
    futures_executor::block_on(SystemClock.sleep(20.0));
    assert!(start.elapsed() >= std::time::Duration::from_millis(20), "it waited {:?}", start.elapsed());
    // A zero or negative wait resolves at once.
    futures_executor::block_on(SystemClock.sleep(-1.0));
}

#[tokio::test]
async fn the_system_clock_does_not_block_a_single_threaded_runtime() {
    // Both sleeps run on one thread at once: each is woken by its helper thread.
    let start = std::time::Instant::now();
    let (a, b) = tokio::join!(SystemClock.sleep(30.0), async {
        SystemClock.sleep(30.0).await;
        7
    });
    assert_eq!((a, b), ((), 7));
    assert!(start.elapsed() >= std::time::Duration::from_millis(30));
}

#[test]
fn new_entry_ids_are_eight_hex_digits_unique_in_the_session() {
    let mut tree = real_session();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..200 {
        let id = tree.new_entry_id();
        assert_eq!(id.len(), 8, "{id}");
        assert!(id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{id}");
        assert!(tree.index_of(&id).is_none(), "{id} is taken");
        assert!(seen.insert(id.clone()), "{id} twice");
        let entry = json!({"type": "message", "id": id, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "x", "timestamp": 1}});
        tree.append_entry(entry).unwrap();
    }
}

fn probe() -> SummaryRequest {
    SummaryRequest {
        purpose: session_compaction::summarize::Purpose::History,
        system_prompt: String::new(),
        prompt: "<conversation>\n[User]: hi\n</conversation>".into(),
        max_tokens: 1000,
        reasoning: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tokio_example_compacts_the_real_session() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions/pi-session-with-compactions.jsonl");
    let before = SessionTree::from_bytes(std::fs::read(path).unwrap(), &ParseOptions::lenient()).unwrap().0;
    let done = tokio_example::run(path).await.expect("the example runs");
    assert_eq!(done.entry["type"], "compaction");
    assert_eq!(done.entry["parentId"].as_str(), before.leaf_id());
    let prep = before.prepare_compaction(&Default::default()).expect("compactable");
    assert_eq!(done.result.first_kept_entry_id, prep.first_kept_entry_id);
    assert!(
        done.result.summary.contains("Additional focus") || done.result.summary.contains("## "),
        "{}",
        done.result.summary
    );
}

/// Typed hooks: one method per hook, each with its own event and answer.
#[derive(Default)]
struct Supplying {
    seen: std::sync::Mutex<Vec<String>>,
}

impl Hooks for Supplying {
    async fn before_compact(&self, event: BeforeCompactEvent) -> Result<BeforeCompactReply> {
        self.seen.lock().unwrap().push(format!("before:{}", event.preparation.first_kept_entry_id));
        Ok(BeforeCompactReply {
            cancel: false,
            compaction: Some(SuppliedCompaction {
                summary: "written by the host".into(),
                short_summary: None,
                first_kept_entry_id: None,
                tokens_before: Some(42.0),
                details: Some(json!({"mine": true})),
            }),
        })
    }
    async fn after_compact(&self, event: CompactEvent) -> Result<()> {
        self.seen.lock().unwrap().push(format!("after:{}", event.from_extension));
        Ok(())
    }
}

#[test]
fn typed_hooks_supply_a_compaction() {
    let tree = real_session();
    let first_kept = tree.prepare_compaction(&Default::default()).unwrap().first_kept_entry_id;
    let engine = SessionEngine::new(tree);
    let hooks = Supplying::default();
    let model = ExtractiveSummarizer::default();
    let done = futures_executor::block_on(engine.compact(&model, &hooks, &CompactRun::default(), None, 0.0)).unwrap();
    assert!(done.from_extension);
    assert_eq!(done.entry["summary"], "written by the host");
    assert_eq!(done.entry["tokensBefore"], 42.0);
    assert_eq!(done.entry["details"], json!({"mine": true}), "a supplied compaction's details as they are");
    assert_eq!(done.entry["firstKeptEntryId"].as_str(), Some(first_kept.as_str()));
    assert_eq!(*hooks.seen.lock().unwrap(), vec![format!("before:{first_kept}"), "after:true".to_string()]);
}

#[test]
fn typed_events_keep_the_js_shapes() {
    let start = serde_json::to_value(AutoCompactionEvent::AutoCompactionStart { reason: CompactionReason::Threshold });
    assert_eq!(start.unwrap(), json!({"type": "auto_compaction_start", "reason": "threshold"}));
    let end = AutoCompactionEvent::AutoCompactionEnd {
        result: None,
        aborted: false,
        will_retry: false,
        error_message: Some("Auto-compaction failed: x".into()),
    };
    assert_eq!(
        serde_json::to_value(end).unwrap(),
        json!({"type": "auto_compaction_end", "aborted": false, "willRetry": false, "errorMessage": "Auto-compaction failed: x"})
    );
    let skipped = AutoCompactionEvent::AutoCompactionSkipped {
        reason: CompactionReason::Overflow,
        cause: session_compaction::session::events::SkipCause::OverflowRecoveredThisTurn,
    };
    assert_eq!(
        serde_json::to_value(skipped).unwrap(),
        json!({"type": "auto_compaction_skipped", "reason": "overflow", "cause": "overflowRecoveredThisTurn"})
    );
    let tree =
        TreeEvent { new_leaf_id: Some("b".into()), old_leaf_id: None, summary_entry: None, from_extension: None };
    assert_eq!(
        serde_json::to_value(tree).unwrap(),
        json!({"type": "session_tree", "newLeafId": "b", "oldLeafId": null})
    );
    let compacting = CompactingEvent { session_id: json!("s1"), messages: vec![] };
    assert_eq!(
        serde_json::to_value(compacting).unwrap(),
        json!({"type": "session.compacting", "sessionId": "s1", "messages": []})
    );
    // A cancel wins over a supplied compaction; one without a string summary is E_HOOK.
    let both = json!({"cancel": true, "compaction": {"summary": 1}});
    assert!(BeforeCompactReply::from_value(&both).unwrap().cancel);
    let bad = BeforeCompactReply::from_value(&json!({"compaction": {"summary": 1}})).unwrap_err();
    assert_eq!(bad.code(), "E_HOOK");
    assert_eq!(BeforeCompactReply::from_value(&json!(null)).unwrap(), BeforeCompactReply::default());
    // A compaction never stores an empty summary (SPEC §13.5), nor a tokensBefore that is no
    // whole number of tokens.
    for bad in [
        json!({"compaction": {"summary": ""}}),
        json!({"compaction": {"summary": " \n\t"}}),
        json!({"compaction": {"summary": "\u{200b}\u{2060}\u{feff}\u{a0}"}}),
        json!({"compaction": {"summary": "\u{ad}\u{ad}\u{2066}\u{34f}"}}),
        json!({"compaction": {"summary": "S", "tokensBefore": -5}}),
        json!({"compaction": {"summary": "S", "tokensBefore": 1.5}}),
        json!({"compaction": {"summary": "S", "tokensBefore": "10"}}),
    ] {
        let e = BeforeCompactReply::from_value(&bad).unwrap_err();
        assert_eq!(e.code(), "E_HOOK", "{bad}");
    }
    let ok = BeforeCompactReply::from_value(&json!({"compaction": {"summary": "S", "tokensBefore": 10}})).unwrap();
    assert_eq!(ok.compaction.unwrap().tokens_before, Some(10.0));
}

/// Records the prompts it is asked, answers like the extractive summarizer.
#[derive(Default)]
struct Recording(std::sync::Mutex<Vec<SummaryRequest>>);

impl Complete for Recording {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        let answer = ExtractiveSummarizer::default().summarize(&request);
        self.0.lock().unwrap().push(request);
        Ok(answer)
    }
}

#[test]
fn the_compaction_builder_names_its_options() {
    let engine = SessionEngine::new(real_session());
    let model = Recording::default();
    let hooks = ReadingHooks(engine.session().clone());
    let call = engine
        .compaction(&model)
        .hooks(&hooks)
        .custom_instructions("the failing test")
        .keep_recent_tokens(4_000)
        .context_window(200_000.0)
        .now_ms(1_765_274_400_000.0);
    let done = futures_executor::block_on(call.run()).expect("compacts");
    assert_eq!(done.entry["timestamp"], "2025-12-09T10:00:00.000Z");
    assert!(done.entry["preserveData"]["entries"].is_u64(), "the hooks ran");
    let asked = model.0.lock().unwrap();
    let history = asked.iter().find(|r| r.purpose != session_compaction::summarize::Purpose::Short).unwrap();
    assert!(history.prompt.contains("Additional focus: the failing test"), "{}", history.prompt);
    assert!(history.prompt.contains("to summarize"), "the hook's context line");
    // keep_recent_tokens reached the preparation: the same cut as planned with 4000.
    let settings =
        session_compaction::plan::prepare::CompactionSettings { keep_recent_tokens: 4_000, ..Default::default() };
    let planned = real_session().prepare_compaction(&settings).unwrap();
    assert_eq!(done.result.first_kept_entry_id, planned.first_kept_entry_id);
}

#[test]
fn the_navigation_builder_summarizes_the_branch_left() {
    let tree = real_session();
    let branch = tree.branch_indices().to_vec();
    let target = tree.meta(branch[branch.len() / 2]).id.clone().unwrap();
    let old_leaf = tree.leaf_id().unwrap().to_string();
    let engine = SessionEngine::new(tree);
    let model = ExtractiveSummarizer::default();
    let out = futures_executor::block_on(engine.navigation(&target).model(&model).summarize(true).now_ms(0.0).run())
        .expect("navigates");
    assert!(!out.cancelled);
    let entry = out.summary_entry.expect("a branch summary");
    assert_eq!(entry["type"], "branch_summary");
    assert_eq!(entry["fromId"].as_str(), Some(old_leaf.as_str()));
    assert_eq!(engine.session().read(|s| s.leaf_id().map(str::to_owned)), out.new_leaf_id);
    // Without a model, summarizing is refused (nothing moves).
    let refused = futures_executor::block_on(engine.navigation(&old_leaf).summarize(true).run());
    assert_eq!(refused.unwrap_err().code(), "E_INVALID_ARGUMENT");
}

/// Collects the events of automatic compaction.
#[derive(Default)]
struct Collect(std::sync::Mutex<Vec<AutoCompactionEvent>>);

impl session_compaction::session::engine::EventSink for Collect {
    fn emit(&self, event: AutoCompactionEvent) {
        self.0.lock().unwrap().push(event);
    }
}

#[tokio::test]
async fn the_auto_compaction_builder_recovers_an_overflow() {
    let tree = real_session();
    let last = *tree.branch_indices().last().unwrap();
    let message = tree.entry(last)["message"].clone();
    let engine = SessionEngine::new(tree);
    let candidates = [ExtractiveSummarizer::default()];
    let events = Collect::default();
    // A 50k window: the last reply's usage (~178k tokens) overflows it, so this is overflow
    // recovery (same model, newer than the last compaction): compact, then retry the turn.
    let out = engine.auto_compaction(&message, 50_000.0, &candidates).events(&events).run().await.expect("checks");
    assert_eq!(out.reason, Some(CompactionReason::Overflow));
    assert!(out.will_retry && out.compaction.is_some() && out.context.is_some());
    let events = events.0.lock().unwrap();
    assert_eq!(events[0], AutoCompactionEvent::AutoCompactionStart { reason: CompactionReason::Overflow });
    assert!(matches!(events[1], AutoCompactionEvent::AutoCompactionEnd { aborted: false, will_retry: true, .. }));
}
