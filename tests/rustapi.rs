//! The native Rust API as a tokio host uses it (issue 11, "Rust hosts"): the engine and its
//! futures are `Send`, a compaction runs under `tokio::spawn` while other tasks read and append,
//! a second operation is `E_BUSY`, the system clock waits without blocking the executor, and
//! `SessionTree::new_entry_id` makes ids like pi's.

use serde_json::{json, Value};
use session_compaction::io::ParseOptions;
use session_compaction::session::engine::{
    AbortSignal, Clock, CompactRun, Hooks, NoHooks, SessionEngine, SharedSession, SystemClock,
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

/// A `session.compacting` hook that reads the session (the lock is free during a compaction).
struct ReadingHooks(SharedSession);

impl Hooks for ReadingHooks {
    async fn call(&self, name: &str, _event: Value) -> Result<Value> {
        if name == "session.compacting" {
            let n = self.0.read(|s| s.entry_count());
            return Ok(json!({"context": [format!("the session has {n} entries")]}));
        }
        Ok(Value::Null)
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
    assert_eq!(done.entry["parentId"].as_str(), prepared_leaf.as_deref(), "under the prepared leaf");
    let marker = ExtractiveSummarizer::default().summarize(&probe());
    assert_eq!(done.result.summary.lines().next(), marker.lines().next(), "written by the extractive summarizer");
    let (entries, leaf) = engine.session().read(|s| (s.entry_count(), s.leaf_id().map(str::to_owned)));
    assert_eq!(entries, count + 2, "the host's entry and the compaction");
    assert_eq!(leaf.as_deref(), Some(id.as_str()), "the host's leaf stays where the host put it");
    let stored = engine.session().read(|s| s.get_entry(done.entry["id"].as_str().unwrap())).expect("stored");
    assert_eq!(stored, done.entry);
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
