//! The orchestration engine (SPEC §9–§11) with recording fakes: a `Complete` that logs every
//! request and answers per purpose (or fails / blocks on demand), hooks that log and reply per
//! event name, a fake clock that records sleeps (no real sleeping), and an event sink.
//! Concurrency (parallel requests, abort while pending, E_BUSY) is driven with
//! `futures_executor::LocalPool`.

#[path = "common/sync.rs"]
mod sync;
use futures_executor::{block_on, LocalPool};
use futures_util::task::LocalSpawnExt;
use serde_json::{json, Value};
use session_compaction::js::format_iso_timestamp;
use session_compaction::plan::prepare::{CompactionSettings, Fallback};
use session_compaction::plan::prune::PruneConfig;
use session_compaction::prompt::templates::{self as prompts, PromptTemplates};
use session_compaction::session::engine::{
    AbortSignal, CheckOptions, Clock, CompactRun, EventSink, HooksByName, NavigateRun, NoHooks, RetryPolicy,
    SessionEngine, CONTINUE_PROMPT,
};
use session_compaction::session::events::{AutoCompactionEvent, CompactionReason, SkipCause};
use session_compaction::session::SessionTree;
use session_compaction::summarize::{Complete, Purpose, SummaryRequest, TURN_CONTEXT_SEPARATOR};
use session_compaction::{Error, Result};
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::task::{Poll, Waker};
use sync::{Lock, SyncCell};

// ------------------------------------------------------------------------------------------
// Fakes

/// A manually resolved future: everything waiting on it resumes when the test opens it.
#[derive(Default)]
struct Gate {
    open: SyncCell<bool>,
    wakers: Lock<Vec<Waker>>,
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
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

/// One timeline shared by the fakes: "hook:<name>", "model:<name>:<purpose>", "sleep:<ms>".
type Log = Arc<Lock<Vec<String>>>;

fn purpose_name(p: Purpose) -> &'static str {
    match p {
        Purpose::History => "history",
        Purpose::Update => "update",
        Purpose::TurnPrefix => "turnPrefix",
        Purpose::Short => "short",
        Purpose::Branch => "branch",
    }
}

fn canned(p: Purpose) -> &'static str {
    match p {
        Purpose::History => "HISTORY-SUMMARY",
        Purpose::Update => "UPDATE-SUMMARY",
        Purpose::TurnPrefix => "PREFIX-SUMMARY",
        Purpose::Short => "SHORT-SUMMARY",
        Purpose::Branch => "BRANCH-SUMMARY",
    }
}

/// The recording fake model.
struct FakeModel {
    name: String,
    log: Log,
    requests: Lock<Vec<SummaryRequest>>,
    /// Scripted outcomes, consumed one per call (after the gate); canned text when empty.
    script: Lock<VecDeque<Result<String>>>,
    /// When set, calls (of `gate_purpose`, or all) wait for the gate before answering.
    gate: Lock<Option<Arc<Gate>>>,
    gate_purpose: SyncCell<Option<Purpose>>,
    finished: SyncCell<usize>,
}

impl FakeModel {
    fn new(name: &str, log: &Log) -> Self {
        Self {
            name: name.into(),
            log: log.clone(),
            requests: Lock::default(),
            script: Lock::default(),
            gate: Lock::default(),
            gate_purpose: SyncCell::new(None),
            finished: SyncCell::new(0),
        }
    }
    fn fail_with(&self, e: Error) -> &Self {
        self.script.borrow_mut().push_back(Err(e));
        self
    }
    fn answer(&self, text: &str) -> &Self {
        self.script.borrow_mut().push_back(Ok(text.into()));
        self
    }
    fn block(&self, purpose: Option<Purpose>) -> Arc<Gate> {
        let g = Gate::new();
        *self.gate.borrow_mut() = Some(g.clone());
        self.gate_purpose.set(purpose);
        g
    }
    fn purposes(&self) -> Vec<Purpose> {
        self.requests.borrow().iter().map(|r| r.purpose).collect()
    }
    fn request(&self, p: Purpose) -> SummaryRequest {
        self.requests.borrow().iter().find(|r| r.purpose == p).cloned().unwrap_or_else(|| panic!("no {p:?} request"))
    }
}

impl Complete for FakeModel {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        self.log.borrow_mut().push(format!("model:{}:{}", self.name, purpose_name(request.purpose)));
        let purpose = request.purpose;
        self.requests.borrow_mut().push(request);
        let gate = self.gate.borrow().clone();
        if let Some(g) = gate {
            if self.gate_purpose.get().map_or(true, |p| p == purpose) {
                g.wait().await;
            }
        }
        self.finished.set(self.finished.get() + 1);
        let scripted = self.script.borrow_mut().pop_front();
        scripted.unwrap_or_else(|| Ok(canned(purpose).to_string()))
    }
}

/// A shared fake model as a candidate (candidates are a slice of one `Complete` type).
struct Shared(Arc<FakeModel>);

impl Complete for Shared {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        self.0.complete(request).await
    }
}

type HookFn = Box<dyn Fn(&Value) -> Result<Value> + Send + Sync>;

/// What a fake hook does.
enum Reply {
    Value(Value),
    Fail(String),
    /// Waits for the gate, then returns the value.
    Gated(Arc<Gate>, Value),
    Func(HookFn),
}

#[derive(Default)]
struct FakeHooks {
    log: Log,
    events: Lock<Vec<(String, Value)>>,
    replies: Lock<HashMap<String, Reply>>,
    /// The hooks it has (`has`); `None`: all of them.
    listening: Option<Vec<String>>,
}

impl FakeHooks {
    fn new(log: &Log) -> Self {
        Self { log: log.clone(), ..Default::default() }
    }
    /// Has only the hooks `names` (the engine must neither build nor call the others).
    fn only(mut self, names: &[&str]) -> Self {
        self.listening = Some(names.iter().map(|n| n.to_string()).collect());
        self
    }
    fn on(self, name: &str, reply: Reply) -> Self {
        self.replies.borrow_mut().insert(name.into(), reply);
        self
    }
    fn names(&self) -> Vec<String> {
        self.events.borrow().iter().map(|(n, _)| n.clone()).collect()
    }
    fn event(&self, name: &str) -> Value {
        self.events
            .borrow()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, e)| e.clone())
            .unwrap_or_else(|| panic!("no {name} event"))
    }
}

impl HooksByName for FakeHooks {
    fn has(&self, name: &str) -> bool {
        self.listening.as_ref().map_or(true, |l| l.iter().any(|n| n == name))
    }
    async fn call(&self, name: &str, event: Value) -> Result<Value> {
        assert!(self.has(name), "{name} was called although it has no listener");
        self.log.borrow_mut().push(format!("hook:{name}"));
        assert_eq!(event["type"], json!(name), "the event carries its type");
        self.events.borrow_mut().push((name.to_string(), event.clone()));
        let gated = match self.replies.borrow().get(name) {
            None => return Ok(Value::Null),
            Some(Reply::Value(v)) => return Ok(v.clone()),
            Some(Reply::Fail(m)) => return Err(Error::Hook { hook: name.into(), message: m.clone() }),
            Some(Reply::Func(f)) => return f(&event),
            Some(Reply::Gated(g, v)) => (g.clone(), v.clone()),
        };
        gated.0.wait().await;
        Ok(gated.1)
    }
}

/// A fake clock: `sleep` records the requested ms, advances `now` and returns at once (or waits
/// for a gate when one is set).
struct FakeClock {
    now: SyncCell<f64>,
    sleeps: Lock<Vec<f64>>,
    log: Log,
    gate: Lock<Option<Arc<Gate>>>,
}

impl FakeClock {
    fn new(now: f64, log: &Log) -> Self {
        Self { now: SyncCell::new(now), sleeps: Lock::default(), log: log.clone(), gate: Lock::default() }
    }
    fn sleeps(&self) -> Vec<f64> {
        self.sleeps.borrow().clone()
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> f64 {
        self.now.get()
    }
    async fn sleep(&self, ms: f64) {
        self.sleeps.borrow_mut().push(ms);
        self.log.borrow_mut().push(format!("sleep:{ms}"));
        self.now.set(self.now.get() + ms);
        let gate = self.gate.borrow().clone();
        if let Some(g) = gate {
            g.wait().await;
        }
    }
}

#[derive(Default)]
struct Events(Lock<Vec<Value>>);

impl EventSink for Events {
    fn emit(&self, event: AutoCompactionEvent) {
        self.0.borrow_mut().push(serde_json::to_value(&event).expect("an event serializes"));
    }
}

impl Events {
    fn all(&self) -> Vec<Value> {
        self.0.borrow().clone()
    }
    fn types(&self) -> Vec<String> {
        self.0.borrow().iter().map(|e| e["type"].as_str().unwrap_or_default().to_string()).collect()
    }
}

fn spawn<T: 'static>(pool: &LocalPool, fut: impl Future<Output = T> + 'static) -> Arc<Lock<Option<T>>> {
    let slot = Arc::new(Lock::new(None));
    let out = slot.clone();
    pool.spawner()
        .spawn_local(async move {
            let r = fut.await;
            *out.borrow_mut() = Some(r);
        })
        .expect("spawn");
    slot
}

fn take<T>(slot: &Arc<Lock<Option<T>>>) -> T {
    slot.borrow_mut().take().expect("the task has finished")
}

// ------------------------------------------------------------------------------------------
// Sessions

const T0: f64 = 1_700_000_000_000.0;
const T_COMPACT: f64 = T0 + 60_000.0;
const MODEL: &str = "anthropic/claude-test";

fn text(tag: &str) -> String {
    // 400 UTF-16 units = 100 estimated tokens.
    let mut s = format!("{tag} ");
    while s.len() < 400 {
        s.push('x');
    }
    s
}

fn header() -> Value {
    json!({"type": "session", "version": 3, "id": "sess-1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"})
}

fn entry(id: &str, parent: Option<&str>, ts: f64, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": format_iso_timestamp(ts), "message": message})
}

fn user(id: &str, parent: Option<&str>, ts: f64) -> Value {
    entry(id, parent, ts, json!({"role": "user", "content": text(id), "timestamp": ts}))
}

fn usage(total: u64) -> Value {
    json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total})
}

fn assistant_msg(content: Value, ts: f64, total: u64) -> Value {
    json!({"role": "assistant", "content": content, "provider": "anthropic", "model": "claude-test",
           "usage": usage(total), "stopReason": "stop", "timestamp": ts})
}

fn assistant(id: &str, parent: Option<&str>, ts: f64, total: u64) -> Value {
    entry(id, parent, ts, assistant_msg(json!([{"type": "text", "text": text(id)}]), ts, total))
}

/// e1 user, e2 assistant, e3 user, e4 assistant (100 tokens each). With keepRecentTokens 150
/// the cut is e3 (a user message: no split turn); e1, e2 are summarized.
fn simple_entries() -> Vec<Value> {
    vec![
        user("e1", None, T0),
        assistant("e2", Some("e1"), T0 + 1000.0, 300),
        user("e3", Some("e2"), T0 + 2000.0),
        assistant("e4", Some("e3"), T0 + 3000.0, 900),
    ]
}

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings { reserve_tokens: 1000, keep_recent_tokens: keep, ..Default::default() }
}

fn simple_engine() -> SessionEngine {
    SessionEngine::new(SessionTree::from_values(Some(header()), &simple_entries()))
}

fn run(keep: u64) -> CompactRun {
    CompactRun { settings: settings(keep), custom_instructions: None, ..Default::default() }
}

/// e1 user, e2 assistant, e3 user (turn start), e4 assistant reading src/a.rs and editing
/// src/b.rs, e5/e6 tool results, e7 assistant. keepRecentTokens 100 cuts at e7: a split turn
/// with history [e1, e2] and prefix [e3..e6].
fn split_entries() -> Vec<Value> {
    let calls = json!([
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/a.rs"}},
        {"type": "toolCall", "id": "c2", "name": "edit", "arguments": {"path": "src/b.rs", "old": "x", "new": "y"}},
    ]);
    let result = |id: &str, parent: &str, call: &str, name: &str| {
        entry(
            id,
            Some(parent),
            T0 + 5000.0,
            json!({"role": "toolResult", "toolCallId": call, "toolName": name,
            "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": T0 + 5000.0}),
        )
    };
    vec![
        user("e1", None, T0),
        assistant("e2", Some("e1"), T0 + 1000.0, 300),
        user("e3", Some("e2"), T0 + 2000.0),
        entry("e4", Some("e3"), T0 + 3000.0, assistant_msg(calls, T0 + 3000.0, 500)),
        result("e5", "e4", "c1", "read"),
        result("e6", "e5", "c2", "edit"),
        assistant("e7", Some("e6"), T0 + 6000.0, 700),
    ]
}

fn split_engine() -> SessionEngine {
    SessionEngine::new(SessionTree::from_values(Some(header()), &split_entries()))
}

fn compaction_count(engine: &SessionEngine) -> usize {
    let s = engine.session().snapshot();
    (0..s.entry_count()).filter(|&i| s.raw(i).contains("\"type\":\"compaction\"")).count()
}

fn leaf(engine: &SessionEngine) -> Option<String> {
    engine.session().snapshot().leaf_id().map(str::to_owned)
}

fn render(name: &str) -> String {
    PromptTemplates::default().render(name, &Value::Null).unwrap()
}

fn no_model() -> Option<&'static FakeModel> {
    None
}

// ------------------------------------------------------------------------------------------
// compact: requests, prompts, the entry

#[test]
fn compact_refuses_a_context_window_that_is_no_whole_number_of_tokens() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    for w in [-5.0, 200_000.5, 2f64.powi(53), f64::INFINITY] {
        let r = CompactRun { context_window: Some(w), ..run(150) };
        let e = block_on(engine.compact(&model, &NoHooks, &r, None, T_COMPACT)).unwrap_err();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT", "{w}");
        assert!(e.to_string().contains("`contextWindow`"), "{e}");
    }
    assert!(model.purposes().is_empty(), "refused before any model call");
    let r = CompactRun { context_window: Some(200_000.0), ..run(150) };
    assert!(block_on(engine.compact(&model, &NoHooks, &r, None, T_COMPACT)).is_ok());
}

#[test]
fn the_result_names_the_extractive_summarizer_when_it_is_the_model() {
    use session_compaction::summarize::extractive::ExtractiveSummarizer;
    use session_compaction::summarize::Summarizer;
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let out = block_on(simple_engine().compact(&model, &NoHooks, &run(150), None, T_COMPACT)).unwrap();
    assert_eq!((out.result.summarizer, out.result.fallback_reason), (Some(Summarizer::Model), None));
    let extractive = ExtractiveSummarizer::default();
    let out = block_on(simple_engine().compact(&extractive, &NoHooks, &run(150), None, T_COMPACT)).unwrap();
    assert_eq!((out.result.summarizer, out.result.fallback_reason), (Some(Summarizer::Extractive), None));
    assert!(out.result.summary.contains("xtractive"), "{}", out.result.summary);
}

#[test]
fn compact_history_and_short_requests_and_entry() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let out = block_on(engine.compact(&model, &NoHooks, &run(150), None, T_COMPACT)).unwrap();

    assert_eq!(model.purposes(), vec![Purpose::History, Purpose::Short]);
    let history = model.request(Purpose::History);
    let short = model.request(Purpose::Short);
    assert_eq!(history.max_tokens, 800, "floor(0.8 · 1000)");
    assert_eq!(short.max_tokens, 200, "min(512, floor(0.2 · 1000))");
    assert_eq!(history.reasoning.as_deref(), Some("high"));
    assert_eq!(history.system_prompt, render(prompts::SUMMARIZATION_SYSTEM));
    // history: e1 and e2 only; instructions = the first-summary template.
    assert!(history.prompt.starts_with("<conversation>\n[User]: e1 "), "{}", history.prompt);
    assert!(history.prompt.contains("[Assistant]: e2 "));
    assert!(!history.prompt.contains("e3 x"));
    assert!(!history.prompt.contains("<previous-summary>\n"), "no previous summary block");
    assert!(!history.prompt.contains("<additional-context>\n"), "no context block");
    assert!(history.prompt.ends_with(&format!("</conversation>\n\n{}", render(prompts::COMPACTION_SUMMARY))));
    // short: the kept messages with the composed summary as previous summary.
    assert!(short.prompt.starts_with("<conversation>\n[User]: e3 "), "{}", short.prompt);
    assert!(short.prompt.contains("<previous-summary>\nHISTORY-SUMMARY\n</previous-summary>\n\n"));
    assert!(short.prompt.ends_with(&render(prompts::COMPACTION_SHORT_SUMMARY)));

    // The entry.
    let e = &out.entry;
    assert!(!out.from_extension);
    assert_eq!(e["type"], "compaction");
    assert_eq!(e["parentId"], "e4", "parent = the old leaf");
    assert_eq!(e["timestamp"], json!(format_iso_timestamp(T_COMPACT)));
    assert_eq!(e["summary"], "HISTORY-SUMMARY");
    assert_eq!(e["shortSummary"], "SHORT-SUMMARY");
    assert_eq!(e["firstKeptEntryId"], "e3");
    assert_eq!(e["tokensBefore"], json!(900));
    assert_eq!(e["details"], json!({"readFiles": [], "modifiedFiles": []}));
    assert!(e.get("fromExtension").is_none());
    assert!(e.get("preserveData").is_none());
    let id = e["id"].as_str().unwrap().to_string();
    assert!(!id.is_empty());
    assert_eq!(out.result.summary, "HISTORY-SUMMARY");

    let s = engine.session().snapshot();
    assert_eq!(s.entry_count(), 5);
    assert_eq!(s.leaf_id(), Some(id.as_str()), "the compaction becomes the leaf");
    assert_eq!(s.get_entry(&id).as_ref(), Some(e), "stored as returned");
    // The saved line writes the whole number as JSON.stringify does: 900, not 900.0.
    let line = s.raw(4);
    assert!(line.contains(r#","tokensBefore":900,"#), "{line}");
    assert!(!line.contains("900.0"), "{line}");
    assert!(s.to_jsonl().contains(r#""tokensBefore":900,"#));
    let ctx = s.build_session_context();
    assert_eq!(ctx.messages.len(), 3);
    assert_eq!(ctx.messages[0]["role"], "compactionSummary");
    assert_eq!(ctx.messages[0]["summary"], "HISTORY-SUMMARY");
    assert_eq!(ctx.messages[1]["content"], json!(text("e3")));
    assert_eq!(ctx.messages[2]["content"][0]["text"], json!(text("e4")));
    drop(s);
    assert!(!engine.is_busy());
}

#[test]
fn compact_split_turn_merges_history_and_prefix_with_file_blocks() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = split_engine();
    let out = block_on(engine.compact(&model, &NoHooks, &run(100), None, T_COMPACT)).unwrap();
    assert_eq!(model.purposes(), vec![Purpose::History, Purpose::TurnPrefix, Purpose::Short]);
    let prefix = model.request(Purpose::TurnPrefix);
    assert_eq!(prefix.max_tokens, 500, "floor(0.5 · 1000)");
    assert_eq!(model.request(Purpose::History).max_tokens, 800);
    assert_eq!(model.request(Purpose::Short).max_tokens, 200);
    assert!(prefix.prompt.starts_with("<conversation>\n[User]: e3 "));
    assert!(prefix.prompt.contains("[Assistant tool calls]: read(path=\"src/a.rs\")"), "{}", prefix.prompt);
    assert!(prefix.prompt.ends_with(&format!("</conversation>\n\n{}", render(prompts::COMPACTION_TURN_PREFIX))));

    let composed = format!("HISTORY-SUMMARY{TURN_CONTEXT_SEPARATOR}PREFIX-SUMMARY");
    assert_eq!(TURN_CONTEXT_SEPARATOR, "\n\n---\n\n**Turn Context (split turn):**\n\n");
    assert!(model
        .request(Purpose::Short)
        .prompt
        .contains(&format!("<previous-summary>\n{composed}\n</previous-summary>")));
    let blocks =
        prompts::format_file_operations(&PromptTemplates::default(), &["src/a.rs".into()], &["src/b.rs".into()])
            .unwrap();
    assert!(blocks.contains("<read-files>\nsrc/a.rs\n</read-files>"), "{blocks}");
    assert!(blocks.contains("<modified-files>\nsrc/b.rs\n</modified-files>"), "{blocks}");
    assert_eq!(
        out.entry["summary"],
        json!(format!("{composed}\n\n{blocks}")),
        "a blank line before the blocks (§12.10)"
    );
    assert_eq!(out.entry["firstKeptEntryId"], "e7");
    assert_eq!(out.entry["details"], json!({"readFiles": ["src/a.rs"], "modifiedFiles": ["src/b.rs"]}));
    assert_eq!(out.entry["parentId"], "e7");
}

#[test]
fn history_and_turn_prefix_are_requested_in_parallel() {
    let log = Log::default();
    let model = Arc::new(FakeModel::new("m", &log));
    let gate = model.block(None);
    let engine = Arc::new(split_engine());
    let mut pool = LocalPool::new();
    let (e, m) = (engine.clone(), model.clone());
    let slot = spawn(&pool, async move { e.compact(&*m, &NoHooks, &run(100), None, T_COMPACT).await });
    pool.run_until_stalled();
    // Both blocked in the model: both were started before either completed.
    assert_eq!(model.purposes(), vec![Purpose::History, Purpose::TurnPrefix]);
    assert_eq!(model.finished.get(), 0);
    assert!(slot.borrow().is_none());
    assert!(engine.is_busy());
    assert_eq!(compaction_count(&engine), 0, "nothing appended while the model runs");
    gate.open();
    pool.run_until_stalled();
    let out = take(&slot).unwrap();
    assert_eq!(model.purposes(), vec![Purpose::History, Purpose::TurnPrefix, Purpose::Short]);
    assert_eq!(model.finished.get(), 3);
    assert_eq!(out.entry["firstKeptEntryId"], "e7");
    assert!(!engine.is_busy());
}

#[test]
fn short_waits_for_history_and_prefix() {
    // The short request is only made once both answers are in (it needs the composed summary).
    let log = Log::default();
    let model = Arc::new(FakeModel::new("m", &log));
    let gate = model.block(Some(Purpose::TurnPrefix));
    let engine = Arc::new(split_engine());
    let mut pool = LocalPool::new();
    let (e, m) = (engine.clone(), model.clone());
    let slot = spawn(&pool, async move { e.compact(&*m, &NoHooks, &run(100), None, T_COMPACT).await });
    pool.run_until_stalled();
    assert_eq!(model.purposes(), vec![Purpose::History, Purpose::TurnPrefix]);
    assert_eq!(model.finished.get(), 1, "history answered, prefix pending");
    gate.open();
    pool.run_until_stalled();
    assert!(take(&slot).is_ok());
    assert_eq!(model.purposes(), vec![Purpose::History, Purpose::TurnPrefix, Purpose::Short]);
}

#[test]
fn update_prompt_frame_order_with_previous_summary_context_and_focus() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let first = block_on(engine.compact(&model, &NoHooks, &run(150), None, T_COMPACT)).unwrap();
    let cid = first.entry["id"].as_str().unwrap().to_string();
    engine.session().write(|s| {
        s.append_entry(user("e5", Some(&cid), T_COMPACT + 1000.0)).unwrap();
        s.append_entry(assistant("e6", Some("e5"), T_COMPACT + 2000.0, 400)).unwrap();
    });
    let model2 = FakeModel::new("m2", &log);
    let hooks = FakeHooks::new(&log)
        .on("session.compacting", Reply::Value(json!({"context": ["ticket ABC-1", "keep it short"]})));
    let run2 =
        CompactRun { settings: settings(150), custom_instructions: Some("the parser".into()), ..Default::default() };
    let out = block_on(engine.compact(&model2, &hooks, &run2, None, T_COMPACT + 5000.0)).unwrap();
    assert_eq!(model2.purposes(), vec![Purpose::Update, Purpose::Short]);
    let p = model2.request(Purpose::Update).prompt;
    assert_eq!(model2.request(Purpose::Update).max_tokens, 800);
    let conv = p.find("<conversation>\n").unwrap();
    let prev = p.find("<previous-summary>\nHISTORY-SUMMARY\n</previous-summary>\n\n").unwrap();
    let ctx = p.find("<additional-context>\n- ticket ABC-1\n- keep it short\n</additional-context>\n\n").unwrap();
    let instr = p.find(&render(prompts::COMPACTION_UPDATE_SUMMARY)).unwrap();
    assert_eq!(conv, 0);
    assert!(conv < prev && prev < ctx && ctx < instr, "{p}");
    assert!(p.ends_with("\n\nAdditional focus: the parser"), "{p}");
    // §12.1: the previous compaction's kept region (e3, e4) is summarized again.
    assert!(p.contains("[User]: e3 ") && p.contains("[Assistant]: e4 "));
    assert!(!p.contains("[User]: e1 "));
    // The short request carries the context lines too, not the focus.
    let short = model2.request(Purpose::Short).prompt;
    assert!(short
        .contains("<previous-summary>\nUPDATE-SUMMARY\n</previous-summary>\n\n<additional-context>\n- ticket ABC-1"));
    assert!(!short.contains("Additional focus"));
    assert_eq!(out.entry["summary"], "UPDATE-SUMMARY");
    assert_eq!(out.entry["parentId"], "e6");
}

#[test]
fn custom_instructions_append_focus_to_history() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let r = CompactRun {
        settings: settings(150),
        custom_instructions: Some("error handling".into()),
        ..Default::default()
    };
    block_on(engine.compact(&model, &NoHooks, &r, None, T_COMPACT)).unwrap();
    let p = model.request(Purpose::History).prompt;
    assert!(p.ends_with(&format!("{}\n\nAdditional focus: error handling", render(prompts::COMPACTION_SUMMARY))));
}

#[test]
fn already_compacted_and_nothing_to_compact() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    block_on(engine.compact(&model, &NoHooks, &run(150), None, T_COMPACT)).unwrap();
    let calls = model.requests.borrow().len();
    let hooks = FakeHooks::new(&log);
    let err = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap_err();
    assert_eq!(err, Error::AlreadyCompacted);
    assert_eq!(err.to_string(), "Already compacted");
    assert_eq!(err.code(), "E_ALREADY_COMPACTED");
    assert_eq!(model.requests.borrow().len(), calls, "no model call");
    assert!(hooks.names().is_empty(), "no hook call");
    assert!(!engine.is_busy());

    // Everything fits in keepRecentTokens: nothing would be summarized (§12.2).
    let engine = simple_engine();
    let err = block_on(engine.compact(&model, &hooks, &run(100_000), None, T_COMPACT)).unwrap_err();
    assert_eq!(err, Error::NothingToCompact);
    assert_eq!(err.to_string(), "Nothing to compact");
    assert_eq!(err.code(), "E_NOTHING_TO_COMPACT");
    assert_eq!(compaction_count(&engine), 0);
    assert!(!engine.is_busy());

    // An empty session.
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &[]));
    assert_eq!(
        block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap_err(),
        Error::NothingToCompact
    );
}

#[test]
fn compacts_a_real_session() {
    let path = format!("{}/examples/sessions/pi-session-with-compactions.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let (tree, errors) = SessionTree::from_jsonl(text, &Default::default()).unwrap();
    assert!(errors.is_empty());
    let old_leaf = tree.leaf_id().unwrap().to_string();
    let before = tree.entry_count();
    let engine = SessionEngine::new(tree);
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let hooks = FakeHooks::new(&log);
    let out = block_on(engine.compact(&model, &hooks, &CompactRun::default(), None, T_COMPACT)).unwrap();
    let purposes = model.purposes();
    assert_eq!(purposes.last(), Some(&Purpose::Short));
    assert!(purposes.contains(&Purpose::Update), "the session has earlier compactions: {purposes:?}");
    for r in model.requests.borrow().iter() {
        let expected = match r.purpose {
            Purpose::History | Purpose::Update => 13107,
            Purpose::TurnPrefix => 8192,
            Purpose::Short => 512,
            Purpose::Branch => unreachable!(),
        };
        assert_eq!(r.max_tokens, expected, "{:?}", r.purpose);
    }
    assert_eq!(out.entry["parentId"], json!(old_leaf));
    let s = engine.session().snapshot();
    assert_eq!(s.entry_count(), before + 1);
    assert_eq!(s.build_session_context().messages[0]["role"], "compactionSummary");
    assert_eq!(hooks.names(), vec!["session_before_compact", "session.compacting", "session_compact"]);
    assert_eq!(hooks.event("session.compacting")["sessionId"], json!("ffae836b-9420-4060-ac13-7745215f90ff"));
}

// ------------------------------------------------------------------------------------------
// compact: hooks

#[test]
fn hooks_run_in_order_with_their_events() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = Arc::new(split_engine());
    let e1 = engine.clone();
    let e2 = engine.clone();
    let hooks = FakeHooks::new(&log)
        .on(
            "session_before_compact",
            Reply::Func(Box::new(move |_| {
                // Hooks may call back into the session: no borrow is held.
                assert!(e1.is_busy());
                assert_eq!(e1.session().read(|s| s.entry_count()), 7);
                Ok(Value::Null)
            })),
        )
        .on(
            "session_compact",
            Reply::Func(Box::new(move |ev| {
                let s = e2.session().snapshot();
                assert_eq!(s.leaf_id(), ev["compactionEntry"]["id"].as_str(), "appended before session_compact");
                Ok(json!({"ignored": true}))
            })),
        );
    let r = CompactRun { settings: settings(100), custom_instructions: Some("focus".into()), ..Default::default() };
    let out = block_on(engine.compact(&model, &hooks, &r, None, T_COMPACT)).unwrap();
    assert_eq!(
        *log.borrow(),
        vec![
            "hook:session_before_compact",
            "hook:session.compacting",
            "model:m:history",
            "model:m:turnPrefix",
            "model:m:short",
            "hook:session_compact",
        ]
    );
    let before = hooks.event("session_before_compact");
    assert_eq!(before["customInstructions"], "focus");
    assert_eq!(before["preparation"]["firstKeptEntryId"], "e7");
    assert_eq!(before["preparation"]["isSplitTurn"], true);
    let branch_ids: Vec<&str> =
        before["branchEntries"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(branch_ids, ["e1", "e2", "e3", "e4", "e5", "e6", "e7"]);
    let compacting = hooks.event("session.compacting");
    assert_eq!(compacting["sessionId"], "sess-1");
    // messages = toSummarize (e1, e2) + turn prefix (e3..e6)
    let msgs = compacting["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 6);
    assert_eq!(msgs[0]["content"], json!(text("e1")));
    assert_eq!(msgs[5]["role"], "toolResult");
    let after = hooks.event("session_compact");
    assert_eq!(after["compactionEntry"], out.entry);
    assert_eq!(after["fromExtension"], false);
}

#[test]
fn before_compact_cancel() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let hooks = FakeHooks::new(&log).on("session_before_compact", Reply::Value(json!({"cancel": true})));
    let err = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap_err();
    assert_eq!(err, Error::Cancelled);
    assert_eq!(err.code(), "E_CANCELLED");
    assert_eq!(err.to_string(), "Compaction cancelled");
    assert!(model.requests.borrow().is_empty());
    assert_eq!(hooks.names(), vec!["session_before_compact"]);
    assert_eq!(compaction_count(&engine), 0);
    assert_eq!(leaf(&engine).as_deref(), Some("e4"));
    assert!(!engine.is_busy());
    // `cancel: false` does not cancel.
    let hooks = FakeHooks::new(&log).on("session_before_compact", Reply::Value(json!({"cancel": false})));
    assert!(block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).is_ok());
}

#[test]
fn hook_supplied_compaction_is_used_as_is() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let details = json!({"readFiles": ["x.rs"], "modifiedFiles": ["y.rs"]});
    let hooks = FakeHooks::new(&log).on(
        "session_before_compact",
        Reply::Value(json!({"compaction": {"summary": "EXT SUMMARY", "firstKeptEntryId": "e2", "tokensBefore": 4242, "details": details}})),
    );
    let out = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap();
    assert!(model.requests.borrow().is_empty(), "no model call");
    assert_eq!(hooks.names(), vec!["session_before_compact", "session_compact"], "no session.compacting");
    assert!(out.from_extension);
    let e = &out.entry;
    assert_eq!(e["summary"], "EXT SUMMARY");
    assert_eq!(e["firstKeptEntryId"], "e2");
    assert_eq!(e["tokensBefore"], json!(4242));
    assert_eq!(e["details"], details);
    assert_eq!(e["fromExtension"], true);
    assert_eq!(e["parentId"], "e4");
    assert_eq!(hooks.event("session_compact")["fromExtension"], true);
    assert_eq!(hooks.event("session_compact")["compactionEntry"], *e);
    let s = engine.session().snapshot();
    assert_eq!(s.leaf_id(), e["id"].as_str());
    let line = s.raw(s.entry_count() - 1);
    assert!(line.contains(r#","tokensBefore":4242,"#), "{line}");
    let ctx = s.build_session_context();
    assert_eq!(ctx.messages[0]["summary"], "EXT SUMMARY");
    assert_eq!(ctx.messages.len(), 4, "summary + e2, e3, e4 kept");
}

#[test]
fn hook_supplied_compaction_keeps_its_own_details() {
    // An extension's details may have any shape (§5 ignores them for file ops because of that).
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let details = json!({"tool": "my-ext", "version": 2});
    let hooks = FakeHooks::new(&log)
        .on("session_before_compact", Reply::Value(json!({"compaction": {"summary": "EXT", "details": details}})));
    let out = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap();
    assert_eq!(out.entry["details"], details);
    let stored = engine.session().snapshot().get_entry(out.entry["id"].as_str().unwrap()).unwrap();
    assert_eq!(stored["details"], details);
    // No details supplied: none stored.
    let engine = simple_engine();
    let hooks =
        FakeHooks::new(&log).on("session_before_compact", Reply::Value(json!({"compaction": {"summary": "EXT"}})));
    let out = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap();
    assert!(out.entry.get("details").is_none(), "{}", out.entry);
}

#[test]
fn hook_supplied_compaction_defaults_to_the_preparation() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let hooks =
        FakeHooks::new(&log).on("session_before_compact", Reply::Value(json!({"compaction": {"summary": "ONLY"}})));
    let out = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap();
    assert_eq!(out.entry["firstKeptEntryId"], "e3");
    assert_eq!(out.entry["tokensBefore"], json!(900));
    assert_eq!(out.entry["fromExtension"], true);
    let s = engine.session().snapshot();
    assert!(s.raw(s.entry_count() - 1).contains(r#","tokensBefore":900,"#), "{}", s.raw(s.entry_count() - 1));
    drop(s);
    // A compaction without a string summary is a hook error; nothing is appended.
    let engine = simple_engine();
    let hooks = FakeHooks::new(&log).on("session_before_compact", Reply::Value(json!({"compaction": {"summary": 7}})));
    let err = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap_err();
    assert_eq!(err.code(), "E_HOOK");
    assert_eq!(compaction_count(&engine), 0);
    assert!(model.requests.borrow().is_empty());
}

#[test]
fn compacting_hook_prompt_context_and_preserve_data() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let hooks = FakeHooks::new(&log).on(
        "session.compacting",
        Reply::Value(json!({"prompt": "SUMMARIZE LIKE A PIRATE", "context": ["line one", "line two"], "preserveData": {"k": [1, 2]}})),
    );
    let r = CompactRun { settings: settings(150), custom_instructions: Some("ships".into()), ..Default::default() };
    let out = block_on(engine.compact(&model, &hooks, &r, None, T_COMPACT)).unwrap();
    let p = model.request(Purpose::History).prompt;
    assert!(p.contains("</conversation>\n\n<additional-context>\n- line one\n- line two\n</additional-context>\n\nSUMMARIZE LIKE A PIRATE"), "{p}");
    assert!(p.ends_with("SUMMARIZE LIKE A PIRATE\n\nAdditional focus: ships"));
    assert!(!p.contains(&render(prompts::COMPACTION_SUMMARY)), "the hook's prompt replaces the base template");
    assert!(model
        .request(Purpose::Short)
        .prompt
        .contains("<additional-context>\n- line one\n- line two\n</additional-context>"));
    assert_eq!(out.entry["preserveData"], json!({"k": [1, 2]}));
    let s = engine.session().snapshot();
    assert_eq!(s.get_entry(out.entry["id"].as_str().unwrap()).unwrap()["preserveData"], json!({"k": [1, 2]}));
}

#[test]
fn failing_hooks_fail_with_e_hook_and_append_nothing() {
    for failing in ["session_before_compact", "session.compacting"] {
        let log = Log::default();
        let model = FakeModel::new("m", &log);
        let engine = simple_engine();
        let hooks = FakeHooks::new(&log).on(failing, Reply::Fail("boom".into()));
        let err = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap_err();
        assert_eq!(err.code(), "E_HOOK", "{failing}");
        assert_eq!(err, Error::Hook { hook: failing.into(), message: "boom".into() });
        assert!(err.to_string().contains("boom"));
        assert!(model.requests.borrow().is_empty(), "{failing}: no model call");
        assert_eq!(compaction_count(&engine), 0);
        assert_eq!(leaf(&engine).as_deref(), Some("e4"));
        assert!(!engine.is_busy());
    }
}

#[test]
fn a_failing_after_hook_fails_with_e_hook_and_rolls_the_entry_back() {
    // session_compact runs after the append: a failure is reported and the entry is removed
    // again, so a failing hook never leaves anything appended (issue: hooks).
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let (count_before, leaf_before) = {
        let s = engine.session().snapshot();
        (s.entry_count(), s.leaf_id().map(str::to_owned))
    };
    let hooks = FakeHooks::new(&log).on("session_compact", Reply::Fail("late".into()));
    let err = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap_err();
    assert_eq!(err, Error::Hook { hook: "session_compact".into(), message: "late".into() });
    assert_eq!(compaction_count(&engine), 0);
    let s = engine.session().snapshot();
    assert_eq!(s.entry_count(), count_before);
    assert_eq!(s.leaf_id().map(str::to_owned), leaf_before);
    drop(s);
    assert!(!engine.is_busy());
}

#[test]
fn model_failure_appends_nothing() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    model.fail_with(Error::Model { message: "invalid api key".into(), status: Some(401), retry_after_ms: None });
    let engine = simple_engine();
    let err = block_on(engine.compact(&model, &NoHooks, &run(150), None, T_COMPACT)).unwrap_err();
    assert_eq!(err.code(), "E_MODEL");
    assert_eq!(err.to_string(), "invalid api key");
    assert_eq!(compaction_count(&engine), 0);
    assert!(!engine.is_busy());
    // The short request failing keeps the history summary (SPEC §13.5): the short one is left
    // out and the failure reported.
    let model = FakeModel::new("m", &log);
    model.answer("H").fail_with(Error::Summarization { message: "short failed".into() });
    let done = block_on(engine.compact(&model, &NoHooks, &run(150), None, T_COMPACT)).unwrap();
    assert_eq!(done.result.short_summary_error.as_deref(), Some("Summarization failed: short failed"));
    assert_eq!(done.entry["summary"], "H");
    assert!(done.entry.get("shortSummary").is_none());
    assert_eq!(compaction_count(&engine), 1);
}

// ------------------------------------------------------------------------------------------
// compact: abort and busy

/// Where a compaction is held while the test aborts it.
#[derive(Clone, Copy, Debug)]
enum HoldAt {
    BeforeHook,
    CompactingHook,
    History,
    Short,
}

fn aborted_while_pending(at: HoldAt, external: bool) {
    let log = Log::default();
    let model = Arc::new(FakeModel::new("m", &log));
    let gate = Gate::new();
    let mut hooks = FakeHooks::new(&log);
    match at {
        HoldAt::BeforeHook => hooks = hooks.on("session_before_compact", Reply::Gated(gate.clone(), Value::Null)),
        HoldAt::CompactingHook => hooks = hooks.on("session.compacting", Reply::Gated(gate.clone(), Value::Null)),
        HoldAt::History => *model.gate.borrow_mut() = Some(gate.clone()),
        HoldAt::Short => {
            *model.gate.borrow_mut() = Some(gate.clone());
            model.gate_purpose.set(Some(Purpose::Short));
        }
    }
    let hooks = Arc::new(hooks);
    let engine = Arc::new(simple_engine());
    let signal = AbortSignal::new();
    let mut pool = LocalPool::new();
    let (e, m, h, sig) = (engine.clone(), model.clone(), hooks.clone(), signal.clone());
    let slot = spawn(&pool, async move {
        let sig = external.then_some(sig);
        e.compact(&*m, &*h, &run(150), sig.as_ref(), T_COMPACT).await
    });
    pool.run_until_stalled();
    assert!(slot.borrow().is_none(), "{at:?}: held");
    assert!(engine.is_busy());
    let expected_last = match at {
        HoldAt::BeforeHook => "hook:session_before_compact",
        HoldAt::CompactingHook => "hook:session.compacting",
        HoldAt::History => "model:m:history",
        HoldAt::Short => "model:m:short",
    };
    assert_eq!(log.borrow().last().map(String::as_str), Some(expected_last));
    if external {
        signal.abort();
    } else {
        engine.abort();
    }
    pool.run_until_stalled();
    let err = take(&slot).unwrap_err();
    assert_eq!(err, Error::Aborted { what: "Compaction".into() }, "{at:?}");
    assert_eq!(err.code(), "E_ABORTED");
    assert_eq!(log.borrow().last().map(String::as_str), Some(expected_last), "{at:?}: nothing ran after the abort");
    assert!(!hooks.names().contains(&"session_compact".to_string()));
    assert_eq!(compaction_count(&engine), 0, "{at:?}: nothing appended");
    assert_eq!(leaf(&engine).as_deref(), Some("e4"));
    assert!(!engine.is_busy(), "{at:?}: busy released");
    // Releasing the held future later changes nothing.
    gate.open();
    pool.run_until_stalled();
    assert_eq!(compaction_count(&engine), 0);
    // The engine works again afterwards (a fresh signal for the next run).
    let fresh = FakeModel::new("m2", &log);
    assert!(block_on(engine.compact(&fresh, &NoHooks, &run(150), None, T_COMPACT)).is_ok());
}

#[test]
fn abort_during_before_compact_hook() {
    aborted_while_pending(HoldAt::BeforeHook, false);
    aborted_while_pending(HoldAt::BeforeHook, true);
}

#[test]
fn abort_during_compacting_hook() {
    aborted_while_pending(HoldAt::CompactingHook, false);
    aborted_while_pending(HoldAt::CompactingHook, true);
}

#[test]
fn abort_during_history_model_call() {
    aborted_while_pending(HoldAt::History, false);
    aborted_while_pending(HoldAt::History, true);
}

#[test]
fn abort_during_short_model_call() {
    aborted_while_pending(HoldAt::Short, false);
    aborted_while_pending(HoldAt::Short, true);
}

#[test]
fn abort_from_inside_a_hook_that_then_resolves() {
    // The signal fires while the hook runs and the hook still returns: the run stops there.
    for name in ["session_before_compact", "session.compacting"] {
        let log = Log::default();
        let model = FakeModel::new("m", &log);
        let engine = simple_engine();
        let signal = AbortSignal::new();
        let sig = signal.clone();
        let hooks = FakeHooks::new(&log).on(
            name,
            Reply::Func(Box::new(move |_| {
                sig.abort();
                Ok(Value::Null)
            })),
        );
        let err = block_on(engine.compact(&model, &hooks, &run(150), Some(&signal), T_COMPACT)).unwrap_err();
        assert_eq!(err, Error::Aborted { what: "Compaction".into() }, "{name}");
        assert!(model.requests.borrow().is_empty());
        assert_eq!(compaction_count(&engine), 0);
        assert!(!engine.is_busy());
    }
}

#[test]
fn an_already_aborted_signal_stops_before_any_hook() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let hooks = FakeHooks::new(&log);
    let signal = AbortSignal::new();
    signal.abort();
    assert!(signal.is_aborted());
    let err = block_on(engine.compact(&model, &hooks, &run(150), Some(&signal), T_COMPACT)).unwrap_err();
    assert_eq!(err.code(), "E_ABORTED");
    assert!(hooks.names().is_empty());
    assert!(model.requests.borrow().is_empty());
    assert_eq!(compaction_count(&engine), 0);
}

#[test]
fn second_operation_while_one_runs_is_busy() {
    let log = Log::default();
    let model = Arc::new(FakeModel::new("m", &log));
    let gate = model.block(None);
    let engine = Arc::new(simple_engine());
    let mut pool = LocalPool::new();
    let (e, m) = (engine.clone(), model.clone());
    let slot = spawn(&pool, async move { e.compact(&*m, &NoHooks, &run(150), None, T_COMPACT).await });
    pool.run_until_stalled();
    assert!(engine.is_busy());
    assert_eq!(model.purposes(), vec![Purpose::History]);

    let other = FakeModel::new("other", &log);
    let hooks = FakeHooks::new(&log);
    let err = block_on(engine.compact(&other, &hooks, &run(150), None, T_COMPACT)).unwrap_err();
    assert_eq!(err, Error::Busy);
    assert_eq!(err.code(), "E_BUSY");
    assert!(hooks.names().is_empty() && other.requests.borrow().is_empty(), "rejected before anything ran");
    let err =
        block_on(engine.navigate_tree("e2", no_model(), &hooks, &NavigateRun::default(), None, T_COMPACT)).unwrap_err();
    assert_eq!(err.code(), "E_BUSY");
    assert_eq!(leaf(&engine).as_deref(), Some("e4"));
    assert!(engine.is_busy(), "the rejected call did not release the running one");

    gate.open();
    pool.run_until_stalled();
    let out = take(&slot).unwrap();
    assert_eq!(out.entry["summary"], "HISTORY-SUMMARY");
    assert!(!engine.is_busy());
    assert_eq!(compaction_count(&engine), 1);
}

#[test]
fn abort_without_a_running_operation_is_harmless() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    engine.abort();
    assert!(!engine.is_busy());
    assert!(block_on(engine.compact(&model, &NoHooks, &run(150), None, T_COMPACT)).is_ok());
}

// ------------------------------------------------------------------------------------------
// navigate_tree

/// e1 user, e2 assistant, then two branches: e3 user → e4 assistant (reads a.rs) and
/// e5 user → e6 assistant (edits b.rs, the leaf), plus a custom_message e7 under e2.
fn tree_entries() -> Vec<Value> {
    let read = json!([{"type": "text", "text": "reading"}, {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "a.rs"}}]);
    let edit = json!([{"type": "text", "text": "editing"}, {"type": "toolCall", "id": "w1", "name": "edit", "arguments": {"path": "b.rs"}}]);
    vec![
        user("e1", None, T0),
        assistant("e2", Some("e1"), T0 + 1000.0, 300),
        user("e3", Some("e2"), T0 + 2000.0),
        entry("e4", Some("e3"), T0 + 3000.0, assistant_msg(read, T0 + 3000.0, 400)),
        json!({"type": "custom_message", "id": "e7", "parentId": "e2", "timestamp": format_iso_timestamp(T0 + 3500.0),
               "customType": "note", "content": [{"type": "text", "text": "custom "}, {"type": "text", "text": "note"}], "display": true}),
        user("e5", Some("e2"), T0 + 4000.0),
        entry("e6", Some("e5"), T0 + 5000.0, assistant_msg(edit, T0 + 5000.0, 500)),
    ]
}

fn tree_engine() -> SessionEngine {
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &tree_entries()));
    assert_eq!(leaf(&engine).as_deref(), Some("e6"));
    engine
}

fn summarize() -> NavigateRun {
    NavigateRun { summarize: true, ..Default::default() }
}

/// A hook without a listener is neither built nor called (the `session_before_compact` event
/// holds the whole branch as JSON); the operation goes on as on the default answer, with the same
/// result as with every hook answering nothing.
#[test]
fn hooks_without_a_listener_are_not_called() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let answering_nothing = FakeHooks::new(&log);
    let all = simple_engine();
    let with_all = block_on(all.compact(&model, &answering_nothing, &run(150), None, T_COMPACT)).unwrap();
    assert_eq!(answering_nothing.names(), vec!["session_before_compact", "session.compacting", "session_compact"]);
    let branch = answering_nothing.event("session_before_compact")["branchEntries"].as_array().unwrap().len();
    assert_eq!(branch, 4, "a listener gets the whole branch");

    for only in [&[][..], &["session_compact"][..], &["session_before_compact"][..], &["session.compacting"][..]] {
        let hooks = FakeHooks::new(&log).only(only);
        let engine = simple_engine();
        let out = block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap();
        assert_eq!(hooks.names(), only, "only the hooks it has are called");
        let without_id = |e: &Value| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("id");
            e
        };
        assert_eq!(
            without_id(&out.entry),
            without_id(&with_all.entry),
            "the same compaction as with hooks answering nothing ({only:?})"
        );
        assert_eq!(compaction_count(&engine), 1);
    }

    let hooks = FakeHooks::new(&log).only(&["session_tree"]);
    let engine = tree_engine();
    let out =
        block_on(engine.navigate_tree("e3", no_model(), &hooks, &NavigateRun::default(), None, T_COMPACT)).unwrap();
    assert_eq!(hooks.names(), vec!["session_tree"]);
    assert_eq!(out.new_leaf_id.as_deref(), Some("e2"));
    let hooks = FakeHooks::new(&log).only(&["session_before_tree"]);
    let engine = tree_engine();
    block_on(engine.navigate_tree("e3", no_model(), &hooks, &NavigateRun::default(), None, T_COMPACT)).unwrap();
    assert_eq!(hooks.names(), vec!["session_before_tree"]);
}

#[test]
fn navigate_to_a_user_message_returns_its_text_and_leaves_its_parent() {
    let log = Log::default();
    let hooks = FakeHooks::new(&log);
    let engine = tree_engine();
    let out =
        block_on(engine.navigate_tree("e3", no_model(), &hooks, &NavigateRun::default(), None, T_COMPACT)).unwrap();
    assert_eq!(out.editor_text, Some(text("e3")));
    assert_eq!(out.new_leaf_id.as_deref(), Some("e2"));
    assert!(!out.cancelled && !out.aborted && out.summary_entry.is_none());
    assert_eq!(leaf(&engine).as_deref(), Some("e2"));
    assert_eq!(hooks.names(), vec!["session_before_tree", "session_tree"]);
    let prep = &hooks.event("session_before_tree")["preparation"];
    assert_eq!(prep["targetId"], "e3");
    assert_eq!(prep["oldLeafId"], "e6");
    assert_eq!(prep["commonAncestorId"], "e2");
    assert_eq!(prep["userWantsSummary"], false);
    let ids: Vec<&str> =
        prep["entriesToSummarize"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["e5", "e6"]);
    let after = hooks.event("session_tree");
    assert_eq!(after["newLeafId"], "e2");
    assert_eq!(after["oldLeafId"], "e6");
    assert!(after.get("summaryEntry").is_none());
    assert_eq!(engine.session().snapshot().entry_count(), 7, "nothing appended");
}

#[test]
fn navigate_to_other_targets() {
    let log = Log::default();
    let engine = tree_engine();
    // An assistant message: the target itself.
    let out =
        block_on(engine.navigate_tree("e4", no_model(), &NoHooks, &NavigateRun::default(), None, T_COMPACT)).unwrap();
    assert_eq!(out.new_leaf_id.as_deref(), Some("e4"));
    assert_eq!(out.editor_text, None);
    assert_eq!(leaf(&engine).as_deref(), Some("e4"));
    // A custom_message: its parent, with its text for the editor.
    let out =
        block_on(engine.navigate_tree("e7", no_model(), &NoHooks, &NavigateRun::default(), None, T_COMPACT)).unwrap();
    assert_eq!(out.new_leaf_id.as_deref(), Some("e2"));
    assert_eq!(out.editor_text.as_deref(), Some("custom note"));
    // The root user message: before the first entry.
    let hooks = FakeHooks::new(&log);
    let out =
        block_on(engine.navigate_tree("e1", no_model(), &hooks, &NavigateRun::default(), None, T_COMPACT)).unwrap();
    assert_eq!(out.new_leaf_id, None);
    assert_eq!(out.editor_text, Some(text("e1")));
    assert_eq!(leaf(&engine), None);
    assert!(engine.session().snapshot().build_session_context().messages.is_empty());
    assert_eq!(hooks.event("session_tree")["newLeafId"], Value::Null);
    // Unknown target.
    let err = block_on(engine.navigate_tree("nope", no_model(), &NoHooks, &NavigateRun::default(), None, T_COMPACT))
        .unwrap_err();
    assert_eq!(err.code(), "E_NOT_FOUND");
    assert!(!engine.is_busy());
}

#[test]
fn navigate_with_summary_appends_a_branch_summary() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let hooks = FakeHooks::new(&log);
    let engine = tree_engine();
    let r = NavigateRun { summarize: true, custom_instructions: Some("the edit".into()), ..Default::default() };
    let out = block_on(engine.navigate_tree("e3", Some(&model), &hooks, &r, None, T_COMPACT)).unwrap();
    assert_eq!(model.purposes(), vec![Purpose::Branch]);
    let req = model.request(Purpose::Branch);
    assert_eq!(req.max_tokens, 2048);
    assert_eq!(req.reasoning, None);
    assert!(req.prompt.starts_with("<conversation>\n[User]: e5 "), "{}", req.prompt);
    assert!(!req.prompt.contains("e3 x"), "only the branch being left");
    // The instructions replace the branch-summary template (SPEC §10).
    assert!(req.prompt.ends_with("</conversation>\n\nthe edit"), "{}", req.prompt);
    assert!(!req.prompt.contains(&render(prompts::BRANCH_SUMMARY)));

    let e = out.summary_entry.clone().expect("summary entry");
    assert_eq!(e["type"], "branch_summary");
    assert_eq!(e["parentId"], "e2", "child of the new leaf");
    assert_eq!(e["fromId"], "e6", "the leaf navigated away from (§12.6)");
    assert_eq!(e["timestamp"], json!(format_iso_timestamp(T_COMPACT)));
    let blocks = prompts::format_file_operations(&PromptTemplates::default(), &[], &["b.rs".into()]).unwrap();
    assert_eq!(
        e["summary"],
        json!(format!("{}\n\nBRANCH-SUMMARY\n\n{blocks}", render(prompts::BRANCH_SUMMARY_PREAMBLE))),
        "parts joined by blank lines (§12.10)"
    );
    assert_eq!(e["details"], json!({"readFiles": [], "modifiedFiles": ["b.rs"]}));
    assert!(e.get("fromExtension").is_none());
    assert_eq!(out.editor_text, Some(text("e3")));
    assert_eq!(out.new_leaf_id.as_deref(), e["id"].as_str(), "the summary becomes the leaf");
    assert_eq!(leaf(&engine).as_deref(), e["id"].as_str());
    let after = hooks.event("session_tree");
    assert_eq!(after["newLeafId"], e["id"]);
    assert_eq!(after["oldLeafId"], "e6");
    assert_eq!(after["summaryEntry"], e);
    assert_eq!(after["fromExtension"], false);
    assert_eq!(hooks.event("session_before_tree")["preparation"]["userWantsSummary"], true);
    let ctx = engine.session().snapshot().build_session_context();
    assert_eq!(ctx.messages.last().unwrap()["role"], "branchSummary");
    assert_eq!(ctx.messages.last().unwrap()["fromId"], "e6");
}

#[test]
fn navigate_summary_to_the_root_has_no_parent() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = tree_engine();
    let out = block_on(engine.navigate_tree("e1", Some(&model), &NoHooks, &summarize(), None, T_COMPACT)).unwrap();
    let e = out.summary_entry.unwrap();
    assert_eq!(e["parentId"], Value::Null);
    assert_eq!(e["fromId"], "e6");
    // The common ancestor is e1 itself: e2, e5, e6 are left.
    let p = model.request(Purpose::Branch).prompt;
    assert!(
        p.starts_with("<conversation>\n[Assistant]: e2 ") && p.contains("[User]: e5 ") && !p.contains("[User]: e1 "),
        "{p}"
    );
    // From there (leaf = the root summary) to e4: the summary branch is left.
    assert_eq!(leaf(&engine).as_deref(), e["id"].as_str());
}

#[test]
fn navigate_without_an_old_leaf_summarizes_nothing() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = tree_engine();
    engine.session().write(|s| s.set_leaf(None)).unwrap();
    let out = block_on(engine.navigate_tree("e4", Some(&model), &NoHooks, &summarize(), None, T_COMPACT)).unwrap();
    assert!(out.summary_entry.is_none());
    assert!(model.requests.borrow().is_empty());
    assert_eq!(leaf(&engine).as_deref(), Some("e4"));
}

#[test]
fn navigate_summary_needs_a_model_or_a_hook() {
    let engine = tree_engine();
    let err = block_on(engine.navigate_tree("e3", no_model(), &NoHooks, &summarize(), None, T_COMPACT)).unwrap_err();
    assert_eq!(err.code(), "E_INVALID_ARGUMENT");
    assert_eq!(leaf(&engine).as_deref(), Some("e6"));
    assert!(!engine.is_busy());
}

#[test]
fn navigate_hook_cancel_changes_nothing() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let hooks = FakeHooks::new(&log).on("session_before_tree", Reply::Value(json!({"cancel": true})));
    let engine = tree_engine();
    let out = block_on(engine.navigate_tree("e3", Some(&model), &hooks, &summarize(), None, T_COMPACT)).unwrap();
    assert!(out.cancelled);
    assert!(!out.aborted);
    assert!(out.summary_entry.is_none() && out.editor_text.is_none());
    assert!(model.requests.borrow().is_empty());
    assert_eq!(hooks.names(), vec!["session_before_tree"]);
    assert_eq!(leaf(&engine).as_deref(), Some("e6"));
    assert_eq!(engine.session().snapshot().entry_count(), 7);
    assert!(!engine.is_busy());
}

#[test]
fn navigate_hook_failure_is_e_hook() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let hooks = FakeHooks::new(&log).on("session_before_tree", Reply::Fail("nope".into()));
    let engine = tree_engine();
    let err = block_on(engine.navigate_tree("e3", Some(&model), &hooks, &summarize(), None, T_COMPACT)).unwrap_err();
    assert_eq!(err, Error::Hook { hook: "session_before_tree".into(), message: "nope".into() });
    assert_eq!(leaf(&engine).as_deref(), Some("e6"));
    assert_eq!(engine.session().snapshot().entry_count(), 7);
    assert!(!engine.is_busy());
}

#[test]
fn navigate_hook_supplied_summary() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let details = json!({"custom": 1});
    let hooks = FakeHooks::new(&log)
        .on("session_before_tree", Reply::Value(json!({"summary": {"summary": "EXT BRANCH", "details": details}})));
    let engine = tree_engine();
    let out = block_on(engine.navigate_tree("e4", Some(&model), &hooks, &summarize(), None, T_COMPACT)).unwrap();
    assert!(model.requests.borrow().is_empty(), "no model call");
    let e = out.summary_entry.unwrap();
    assert_eq!(e["summary"], "EXT BRANCH", "used as is (no preamble, no file blocks)");
    assert_eq!(e["details"], details);
    assert_eq!(e["fromExtension"], true);
    assert_eq!(e["parentId"], "e4");
    assert_eq!(e["fromId"], "e6");
    assert_eq!(hooks.event("session_tree")["fromExtension"], true);

    // Without summarize the hook's summary is not used.
    let engine = tree_engine();
    let out =
        block_on(engine.navigate_tree("e4", Some(&model), &hooks, &NavigateRun::default(), None, T_COMPACT)).unwrap();
    assert!(out.summary_entry.is_none());
    assert_eq!(leaf(&engine).as_deref(), Some("e4"));
    assert_eq!(engine.session().snapshot().entry_count(), 7);
}

fn navigate_aborted(hold_in_hook: bool, external: bool) {
    let log = Log::default();
    let model = Arc::new(FakeModel::new("m", &log));
    let gate = Gate::new();
    let mut hooks = FakeHooks::new(&log);
    if hold_in_hook {
        hooks = hooks.on("session_before_tree", Reply::Gated(gate.clone(), Value::Null));
    } else {
        *model.gate.borrow_mut() = Some(gate.clone());
    }
    let hooks = Arc::new(hooks);
    let engine = Arc::new(tree_engine());
    let signal = AbortSignal::new();
    let mut pool = LocalPool::new();
    let (e, m, h, sig) = (engine.clone(), model.clone(), hooks.clone(), signal.clone());
    let slot = spawn(&pool, async move {
        let sig = external.then_some(sig);
        e.navigate_tree("e3", Some(&*m), &*h, &summarize(), sig.as_ref(), T_COMPACT).await
    });
    pool.run_until_stalled();
    assert!(slot.borrow().is_none());
    assert!(engine.is_busy());
    assert_eq!(model.requests.borrow().len(), usize::from(!hold_in_hook));
    if external {
        signal.abort();
    } else {
        engine.abort();
    }
    pool.run_until_stalled();
    let out = take(&slot).unwrap();
    assert!(out.cancelled && out.aborted, "{out:?}");
    assert!(out.summary_entry.is_none());
    assert_eq!(leaf(&engine).as_deref(), Some("e6"), "leaf unchanged");
    assert_eq!(engine.session().snapshot().entry_count(), 7);
    assert!(!hooks.names().contains(&"session_tree".to_string()));
    assert!(!engine.is_busy());
    gate.open();
    pool.run_until_stalled();
    assert_eq!(leaf(&engine).as_deref(), Some("e6"));
}

#[test]
fn navigate_abort_during_hook_and_model() {
    navigate_aborted(true, false);
    navigate_aborted(true, true);
    navigate_aborted(false, false);
    navigate_aborted(false, true);
}

// ------------------------------------------------------------------------------------------
// check_compaction

fn check_options(window: f64) -> CheckOptions {
    CheckOptions {
        context_window: window,
        model: Some(MODEL.into()),
        settings: settings(150),
        prune: PruneConfig::default(),
        retry: RetryPolicy::default(),
        count_tokens: Default::default(),
    }
}

/// A check on `engine` with the last branch entry's message as the assistant message.
struct Check {
    log: Log,
    clock: FakeClock,
    events: Events,
    hooks: FakeHooks,
}

impl Check {
    fn new() -> Self {
        let log = Log::default();
        Self { clock: FakeClock::new(T_COMPACT, &log), events: Events::default(), hooks: FakeHooks::new(&log), log }
    }
    fn run(
        &self,
        engine: &SessionEngine,
        msg: &Value,
        opts: &CheckOptions,
        candidates: &[FakeModel],
    ) -> Result<session_compaction::session::engine::CheckOutcome> {
        block_on(engine.check_compaction(msg, opts, candidates, &self.hooks, &self.clock, &self.events, None))
    }
}

fn last_message(engine: &SessionEngine) -> Value {
    let s = engine.session().snapshot();
    s.get_entry(s.leaf_id().unwrap()).unwrap()["message"].clone()
}

#[test]
fn a_reserve_not_below_the_window_is_refused() {
    use session_compaction::plan::prepare::{
        checked_compaction_threshold, checked_should_compact, compaction_threshold,
    };
    let s = |reserve| CompactionSettings { reserve_tokens: reserve, ..Default::default() };
    assert_eq!(checked_compaction_threshold(200_000.0, &s(16384)).unwrap(), 183_616.0);
    assert!(checked_should_compact(183_617.0, 200_000.0, &s(16384)).unwrap());
    assert!(!checked_should_compact(183_616.0, 200_000.0, &s(16384)).unwrap());
    // The unchecked formula (the reference's, what the vectors use) is unchanged.
    assert_eq!(compaction_threshold(200_000.0, &s(300_000)), -100_000.0);
    for (window, reserve) in [(200_000.0, 300_000), (1.0, 16384), (100.0, 100), (0.0, 0), (-5.0, 0), (f64::NAN, 1)] {
        let e = checked_compaction_threshold(window, &s(reserve)).unwrap_err();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT", "{window} {reserve}");
        assert!(checked_should_compact(0.0, window, &s(reserve)).is_err());
    }
    // Compaction disabled: nothing is compared with the threshold, so no reserve is refused;
    // nothing is due and the threshold is the formula's value (SPEC §13.11).
    let off = |reserve| CompactionSettings { enabled: false, ..s(reserve) };
    assert_eq!(checked_compaction_threshold(200_000.0, &off(300_000)).unwrap(), -100_000.0);
    assert_eq!(checked_compaction_threshold(100.0, &off(100)).unwrap(), 0.0);
    assert!(!checked_should_compact(500_000.0, 200_000.0, &off(300_000)).unwrap());
    assert!(!checked_should_compact(500_000.0, 200_000.0, &off(16384)).unwrap());
    // A window that is no whole number of tokens is refused, compaction enabled or not.
    for window in [200_000.5, -5.0, f64::INFINITY, f64::NAN] {
        for settings in [s(16384), off(16384)] {
            let e = checked_compaction_threshold(window, &settings).unwrap_err();
            assert!(e.to_string().starts_with("invalid argument `contextWindow`: expected a whole number"), "{e}");
        }
    }
    let e = checked_compaction_threshold(200_000.0, &s(300_000)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument `reserveTokens`: expected less than contextWindow (200000), got 300000: the \
         compaction threshold contextWindow - reserveTokens must be above 0"
    );
    // The engine's check refuses it before anything runs; disabled compaction has no threshold.
    let c = Check::new();
    let engine = simple_engine();
    let msg = last_message(&engine);
    let model = FakeModel::new("a", &c.log);
    let mut opts = check_options(1000.0);
    opts.settings.reserve_tokens = 1000;
    let before = engine.session().snapshot().entry_count();
    let err = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap_err();
    assert_eq!((err.code(), err.to_string().contains("reserveTokens")), ("E_INVALID_ARGUMENT", true));
    assert_eq!(engine.session().snapshot().entry_count(), before);
    opts.settings.enabled = false;
    let out = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, None);
}

#[test]
fn threshold_path_compacts_and_asks_to_continue() {
    let c = Check::new();
    let engine = simple_engine();
    let model = FakeModel::new("a", &c.log);
    let msg = last_message(&engine);
    // 900 context tokens > 1000 - reserve 200.
    let mut opts = check_options(1000.0);
    opts.settings.reserve_tokens = 200;
    let out = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, Some(CompactionReason::Threshold));
    assert_eq!(out.context_tokens, 900.0);
    assert!(!out.will_retry && out.context.is_none());
    assert_eq!(out.continue_prompt.as_deref(), Some("Continue if you have next steps."));
    assert_eq!(CONTINUE_PROMPT, "Continue if you have next steps.");
    assert!(!out.aborted && out.error_message.is_none());
    let done = out.compaction.unwrap();
    assert_eq!(done.entry["timestamp"], json!(format_iso_timestamp(T_COMPACT)), "clock time");
    assert_eq!(model.purposes(), vec![Purpose::History, Purpose::Short]);
    assert_eq!(model.request(Purpose::History).max_tokens, 160, "floor(0.8 · 200)");
    assert_eq!(c.events.types(), vec!["auto_compaction_start", "auto_compaction_end"]);
    assert_eq!(c.events.all()[0], json!({"type": "auto_compaction_start", "reason": "threshold"}));
    let end = &c.events.all()[1];
    assert_eq!(end["aborted"], false);
    assert_eq!(end["willRetry"], false);
    assert_eq!(end["result"]["summary"], "HISTORY-SUMMARY");
    assert_eq!(end["result"]["firstKeptEntryId"], "e3");
    assert_eq!(end["result"]["shortSummary"], "SHORT-SUMMARY");
    assert!(end.get("errorMessage").is_none());
    assert_eq!(c.hooks.names(), vec!["session_before_compact", "session.compacting", "session_compact"]);
    assert!(c.clock.sleeps().is_empty());
    assert_eq!(compaction_count(&engine), 1);
    assert!(!engine.is_busy());
}

#[test]
fn threshold_path_without_auto_continue() {
    let c = Check::new();
    let engine = simple_engine();
    let model = FakeModel::new("a", &c.log);
    let mut opts = check_options(1000.0);
    opts.settings.reserve_tokens = 200;
    opts.settings.auto_continue = Some(false);
    let out = c.run(&engine, &last_message(&engine), &opts, std::slice::from_ref(&model)).unwrap();
    assert!(out.compaction.is_some());
    assert_eq!(out.continue_prompt, None);
    // autoContinue: true behaves like absent.
    let engine = simple_engine();
    opts.settings.auto_continue = Some(true);
    let out = c.run(&engine, &last_message(&engine), &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.continue_prompt.as_deref(), Some(CONTINUE_PROMPT));
}

#[test]
fn below_threshold_or_disabled_does_nothing() {
    let c = Check::new();
    let engine = simple_engine();
    let model = FakeModel::new("a", &c.log);
    let msg = last_message(&engine);
    // 900 <= 2000 - 1000
    let out = c.run(&engine, &msg, &check_options(2000.0), std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, None);
    assert_eq!(out.context_tokens, 900.0);
    assert!(out.compaction.is_none() && out.continue_prompt.is_none());
    let mut opts = check_options(1000.0);
    opts.settings.reserve_tokens = 200;
    opts.settings.enabled = false;
    let out = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, None);
    assert!(model.requests.borrow().is_empty());
    assert!(c.events.all().is_empty());
    assert!(c.hooks.names().is_empty());
    assert_eq!(compaction_count(&engine), 0);
    // An aborted turn never triggers the threshold path.
    let mut aborted = msg.clone();
    aborted["stopReason"] = json!("aborted");
    opts.settings.enabled = true;
    let out = c.run(&engine, &aborted, &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, None);
}

/// e1 user, e2 assistant calling bash twice, e3/e4 bash results of 1000 tokens each, e5
/// assistant (usage `total`).
fn prunable_entries(total: u64) -> Vec<Value> {
    let calls = json!([
        {"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": "ls"}},
        {"type": "toolCall", "id": "b2", "name": "bash", "arguments": {"command": "ls -R"}},
    ]);
    let out = |id: &str, parent: &str, call: &str| {
        entry(
            id,
            Some(parent),
            T0 + 2000.0,
            json!({"role": "toolResult", "toolCallId": call, "toolName": "bash",
            "content": [{"type": "text", "text": "o".repeat(4000)}], "isError": false, "timestamp": T0 + 2000.0}),
        )
    };
    vec![
        user("e1", None, T0),
        entry("e2", Some("e1"), T0 + 1000.0, assistant_msg(calls, T0 + 1000.0, 200)),
        out("e3", "e2", "b1"),
        out("e4", "e3", "b2"),
        assistant("e5", Some("e4"), T0 + 3000.0, total),
    ]
}

fn prune_config() -> PruneConfig {
    PruneConfig { protect_tokens: 500, minimum_savings: 500, protected_tools: vec![], staleness: true }
}

#[test]
fn prune_runs_first_and_its_savings_count() {
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &prunable_entries(1500)));
    let mut opts = check_options(2000.0);
    opts.prune = prune_config();
    opts.settings.reserve_tokens = 1000;
    let msg = last_message(&engine);
    let out = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap();
    // e4 is within protectTokens; e3 is pruned: 1000 tokens − 8 for the notice.
    assert_eq!(out.pruned_count, 1);
    assert_eq!(out.tokens_saved, 992);
    assert_eq!(out.context_tokens, 1500.0 - 992.0);
    assert_eq!(out.reason, None, "508 <= 2000 - 1000: no compaction after pruning");
    let s = engine.session().snapshot();
    let e3 = s.get_entry("e3").unwrap();
    assert_eq!(e3["message"]["content"], json!([{"type": "text", "text": "[Output truncated - 1000 tokens]"}]));
    assert_eq!(e3["message"]["prunedAt"], json!(T_COMPACT as u64));
    assert_eq!(s.get_entry("e4").unwrap()["message"]["content"][0]["text"], json!("o".repeat(4000)));
    drop(s);
    assert!(model.requests.borrow().is_empty());

    // Pruning that does not save enough is not applied, and the full estimate decides.
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &prunable_entries(1500)));
    opts.prune.minimum_savings = 5000;
    let out = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!((out.pruned_count, out.tokens_saved), (0, 0));
    assert_eq!(out.reason, Some(CompactionReason::Threshold));
    assert_eq!(out.context_tokens, 1500.0);
    assert!(out.compaction.is_some());
}

#[test]
fn prune_savings_are_not_counted_twice_without_usage() {
    // No usage anywhere: the estimate is made from the messages themselves. Pruning e3 saves
    // 992 tokens once, not twice.
    let mut entries = prunable_entries(0);
    for e in &mut entries {
        if let Some(m) = e.get_mut("message").and_then(Value::as_object_mut) {
            m.remove("usage");
        }
    }
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &entries));
    let full: f64 = {
        let s = engine.session().snapshot();
        session_compaction::plan::overflow::estimate_context_tokens(&s.branch_source())
    };
    let mut opts = check_options(100_000.0);
    opts.prune = prune_config();
    let out = c.run(&engine, &last_message(&engine), &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.tokens_saved, 992);
    assert_eq!(out.context_tokens, full - 992.0);
    let after: f64 = {
        let s = engine.session().snapshot();
        session_compaction::plan::overflow::estimate_context_tokens(&s.branch_source())
    };
    assert_eq!(after, out.context_tokens, "the decision uses the context as it now is");
}

fn overflow_message(ts: f64, model: &str) -> Value {
    json!({"role": "assistant", "content": [], "provider": "anthropic", "model": model, "stopReason": "error",
           "errorMessage": "prompt is too long: 213462 tokens > 200000 maximum",
           "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "timestamp": ts})
}

fn overflow_engine(ts: f64, model: &str) -> (SessionEngine, Value) {
    let mut entries = simple_entries();
    let msg = overflow_message(ts, model);
    entries.push(entry("e5", Some("e4"), ts, msg.clone()));
    (SessionEngine::new(SessionTree::from_values(Some(header()), &entries)), msg)
}

#[test]
fn overflow_path_compacts_and_returns_the_retry_context() {
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    let (engine, msg) = overflow_engine(T0 + 4000.0, "claude-test");
    let out = c.run(&engine, &msg, &check_options(200_000.0), std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, Some(CompactionReason::Overflow));
    assert!(out.will_retry);
    assert_eq!(out.continue_prompt, None, "the turn is retried instead");
    let done = out.compaction.clone().unwrap();
    assert_eq!(done.entry["parentId"], "e5");
    assert_eq!(done.entry["firstKeptEntryId"], "e3");
    let ctx = out.context.unwrap();
    let roles: Vec<&str> = ctx.messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant"]);
    assert!(!ctx.messages.contains(&msg), "the overflow error is left out of the retry context");
    // ... but stays in the session as history.
    let s = engine.session().snapshot();
    assert_eq!(s.get_entry("e5").unwrap()["message"], msg);
    assert_eq!(s.build_session_context().messages.len(), 4);
    drop(s);
    assert_eq!(
        c.events.all(),
        vec![
            json!({"type": "auto_compaction_start", "reason": "overflow"}),
            json!({"type": "auto_compaction_end", "result": serde_json::to_value(&done.result).unwrap(), "aborted": false, "willRetry": true}),
        ]
    );
}

/// Issue 11: a model id given without its `provider/` prefix is matched against the id after the
/// provider, never silently treated as another model.
#[test]
fn overflow_model_named_without_its_provider_is_the_same_model() {
    for (want, recovers) in [("claude-test", true), ("anthropic/claude-test", true), ("claude-other", false)] {
        let c = Check::new();
        let model = FakeModel::new("a", &c.log);
        let (engine, msg) = overflow_engine(T0 + 4000.0, "claude-test");
        let options = CheckOptions { model: Some(want.into()), ..check_options(200_000.0) };
        let out = c.run(&engine, &msg, &options, std::slice::from_ref(&model)).unwrap();
        assert_eq!(out.reason.map(CompactionReason::as_str), recovers.then_some("overflow"), "model {want}");
        assert_eq!(out.will_retry, recovers, "model {want}");
    }
}

/// SPEC §11, issue 11: an overflow this check does not recover is reported (`skipped`, an
/// `auto_compaction_skipped` event), never a silent no-op.
#[test]
fn overflow_from_another_model_or_before_the_last_compaction_is_not_recovered_and_says_why() {
    // Another model.
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    let (engine, msg) = overflow_engine(T0 + 4000.0, "claude-other");
    let out = c.run(&engine, &msg, &check_options(200_000.0), std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, None);
    assert!(!out.will_retry && out.compaction.is_none());
    assert_eq!(out.skipped, Some(SkipCause::OtherModel));
    assert_eq!(
        c.events.all(),
        vec![json!({"type": "auto_compaction_skipped", "reason": "overflow", "cause": "otherModel"})]
    );
    assert!(model.requests.borrow().is_empty());
    assert_eq!(compaction_count(&engine), 0);

    // Older than the last compaction on the branch.
    let (engine, msg) = overflow_engine(T0 + 4000.0, "claude-test");
    engine.session().write(|s| {
        s.append_entry(
            json!({"type": "compaction", "id": "c1", "parentId": "e5", "timestamp": format_iso_timestamp(T0 + 10_000.0),
            "summary": "S", "firstKeptEntryId": "e3", "tokensBefore": 900}),
        )
        .unwrap();
    });
    let c = Check::new();
    let out = c.run(&engine, &msg, &check_options(200_000.0), std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, None);
    assert_eq!(out.skipped, Some(SkipCause::StaleOverflow));
    assert_eq!(
        c.events.all(),
        vec![json!({"type": "auto_compaction_skipped", "reason": "overflow", "cause": "staleOverflow"})]
    );
    assert_eq!(compaction_count(&engine), 1);
    assert!(model.requests.borrow().is_empty());
}

#[test]
fn overflow_newer_than_the_last_compaction_is_recovered() {
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    let mut entries = simple_entries();
    entries.push(
        json!({"type": "compaction", "id": "c1", "parentId": "e4", "timestamp": format_iso_timestamp(T0 + 3500.0),
        "summary": "OLD", "firstKeptEntryId": "e3", "tokensBefore": 900}),
    );
    entries.push(user("e5", Some("c1"), T0 + 4000.0));
    entries.push(assistant("e6", Some("e5"), T0 + 5000.0, 800));
    entries.push(user("e7", Some("e6"), T0 + 6000.0));
    let msg = overflow_message(T0 + 7000.0, "claude-test");
    entries.push(entry("e8", Some("e7"), T0 + 7000.0, msg.clone()));
    let engine = SessionEngine::new(SessionTree::from_values(Some(header()), &entries));
    let out = c.run(&engine, &msg, &check_options(200_000.0), std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.reason, Some(CompactionReason::Overflow));
    assert!(out.will_retry);
    // keep 150 cuts at e6 (split turn e5..): the previous kept region e3, e4 is updated.
    assert_eq!(model.purposes(), vec![Purpose::Update, Purpose::TurnPrefix, Purpose::Short]);
    let p = model.request(Purpose::Update).prompt;
    assert!(p.contains("<previous-summary>\nOLD\n</previous-summary>"));
    assert!(p.contains("[User]: e3 ") && p.contains("[Assistant]: e4 ") && !p.contains("[User]: e5 "), "{p}");
    assert!(!out.context.unwrap().messages.contains(&msg));
}

#[test]
fn failure_messages() {
    // Threshold path.
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    model.fail_with(Error::Model { message: "invalid api key".into(), status: Some(401), retry_after_ms: None });
    let engine = simple_engine();
    let mut opts = check_options(1000.0);
    opts.settings.reserve_tokens = 200;
    opts.settings.fallback = Some(Fallback::None); // no extractive fallback: the failure shows
    let out = c.run(&engine, &last_message(&engine), &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.error_message.as_deref(), Some("Auto-compaction failed: invalid api key"));
    assert!(!out.aborted && out.compaction.is_none() && out.continue_prompt.is_none());
    assert_eq!(
        c.events.all()[1],
        json!({"type": "auto_compaction_end", "aborted": false, "willRetry": false, "errorMessage": "Auto-compaction failed: invalid api key"})
    );
    assert_eq!(compaction_count(&engine), 0);
    assert!(c.clock.sleeps().is_empty(), "not transient: no retry");
    assert!(!engine.is_busy());

    // Overflow path.
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    model.fail_with(Error::Summarization { message: "empty answer".into() });
    let (engine, msg) = overflow_engine(T0 + 4000.0, "claude-test");
    let mut overflow_opts = check_options(200_000.0);
    overflow_opts.settings.fallback = Some(Fallback::None);
    let out = c.run(&engine, &msg, &overflow_opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(
        out.error_message.as_deref(),
        Some("Context overflow recovery failed: Summarization failed: empty answer")
    );
    assert!(!out.will_retry && out.context.is_none());
    assert_eq!(c.events.all()[1]["willRetry"], false);
    assert_eq!(
        c.events.all()[1]["errorMessage"],
        "Context overflow recovery failed: Summarization failed: empty answer"
    );
    assert_eq!(compaction_count(&engine), 0);

    // A hook cancel on the automatic path is reported the same way.
    let c = Check::new();
    let hooks_cancel = FakeHooks::new(&c.log).on("session_before_compact", Reply::Value(json!({"cancel": true})));
    let c = Check { hooks: hooks_cancel, ..c };
    let engine = simple_engine();
    let out = c.run(&engine, &last_message(&engine), &opts, std::slice::from_ref(&model)).unwrap();
    assert_eq!(out.error_message.as_deref(), Some("Auto-compaction failed: Compaction cancelled"));
}

fn transient(status: u16, retry_after_ms: Option<f64>) -> Error {
    Error::Model { message: format!("{status} service unavailable"), status: Some(status), retry_after_ms }
}

fn threshold_check() -> (SessionEngine, Value, CheckOptions) {
    let engine = simple_engine();
    let msg = last_message(&engine);
    let mut opts = check_options(1000.0);
    opts.settings.reserve_tokens = 200;
    (engine, msg, opts)
}

#[test]
fn transient_failures_are_retried_with_exponential_backoff() {
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    model.fail_with(transient(503, None)).fail_with(transient(429, None)).fail_with(transient(500, None));
    let (engine, msg, opts) = threshold_check();
    let out = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap();
    assert!(out.compaction.is_some(), "{:?}", out.error_message);
    assert_eq!(c.clock.sleeps(), vec![2000.0, 4000.0, 8000.0], "baseDelayMs · 2^attempt");
    assert_eq!(
        *c.log.borrow(),
        vec![
            "hook:session_before_compact",
            "hook:session.compacting",
            "model:a:history",
            "sleep:2000",
            "model:a:history",
            "sleep:4000",
            "model:a:history",
            "sleep:8000",
            "model:a:history",
            "model:a:short",
            "hook:session_compact",
        ]
    );
    // The compaction is timestamped when it is appended.
    assert_eq!(out.compaction.unwrap().entry["timestamp"], json!(format_iso_timestamp(T_COMPACT)));
}

#[test]
fn a_custom_base_delay() {
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    model.fail_with(Error::Model { message: "Overloaded".into(), status: None, retry_after_ms: None });
    model.fail_with(Error::Model { message: "fetch failed".into(), status: None, retry_after_ms: None });
    let (engine, msg, mut opts) = threshold_check();
    opts.retry.base_delay_ms = 100.0;
    let out = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap();
    assert!(out.compaction.is_some());
    assert_eq!(c.clock.sleeps(), vec![100.0, 200.0]);
}

#[test]
fn server_retry_after_is_honoured() {
    let c = Check::new();
    let model = FakeModel::new("a", &c.log);
    model.fail_with(transient(429, Some(1500.0))).fail_with(transient(429, Some(0.0)));
    let (engine, msg, opts) = threshold_check();
    let out = c.run(&engine, &msg, &opts, std::slice::from_ref(&model)).unwrap();
    assert!(out.compaction.is_some());
    assert_eq!(c.clock.sleeps(), vec![1500.0, 0.0]);
}

#[test]
fn exhausted_retries_move_to_the_next_candidate() {
    let c = Check::new();
    let a = FakeModel::new("a", &c.log);
    for _ in 0..4 {
        a.fail_with(transient(503, None));
    }
    let b = FakeModel::new("b", &c.log);
    let (engine, msg, mut opts) = threshold_check();
    opts.settings.fallback = Some(Fallback::None);
    let out = c.run(&engine, &msg, &opts, &[a, b]).unwrap();
    assert!(out.compaction.is_some());
    // max_retries 3: four attempts, three waits, then b.
    assert_eq!(c.clock.sleeps(), vec![2000.0, 4000.0, 8000.0]);
    let models: Vec<String> = c.log.borrow().iter().filter(|l| l.starts_with("model:")).cloned().collect();
    assert_eq!(
        models,
        [
            "model:a:history",
            "model:a:history",
            "model:a:history",
            "model:a:history",
            "model:b:history",
            "model:a:short"
        ]
    );
}

#[test]
fn a_wait_over_30_seconds_moves_to_the_next_candidate() {
    // Server-requested wait over the cap.
    let c = Check::new();
    let a = FakeModel::new("a", &c.log);
    a.fail_with(transient(429, Some(45_000.0)));
    let b = FakeModel::new("b", &c.log);
    let (engine, msg, mut opts) = threshold_check();
    opts.settings.fallback = Some(Fallback::None);
    let out = c.run(&engine, &msg, &opts, &[a, b]).unwrap();
    assert!(out.compaction.is_some());
    assert!(c.clock.sleeps().is_empty(), "no 45 s wait");
    let models: Vec<String> = c.log.borrow().iter().filter(|l| l.starts_with("model:")).cloned().collect();
    assert_eq!(models, ["model:a:history", "model:b:history", "model:a:short"]);

    // Exactly 30 s is still waited.
    let c = Check::new();
    let a = FakeModel::new("a", &c.log);
    a.fail_with(transient(429, Some(30_000.0)));
    let (engine, msg, opts) = threshold_check();
    assert!(c.run(&engine, &msg, &opts, &[a]).unwrap().compaction.is_some());
    assert_eq!(c.clock.sleeps(), vec![30_000.0]);

    // The backoff itself growing past the cap.
    let c = Check::new();
    let a = FakeModel::new("a", &c.log);
    for _ in 0..5 {
        a.fail_with(transient(502, None));
    }
    let b = FakeModel::new("b", &c.log);
    let (engine, msg, mut opts) = threshold_check();
    opts.retry.max_retries = 10;
    let out = c.run(&engine, &msg, &opts, &[a, b]).unwrap();
    assert!(out.compaction.is_some());
    assert_eq!(c.clock.sleeps(), vec![2000.0, 4000.0, 8000.0, 16000.0], "32 s would exceed 30 s");
    let a_calls = c.log.borrow().iter().filter(|l| *l == "model:a:history").count();
    assert_eq!(a_calls, 5);
}

#[test]
fn overflow_and_permanent_errors_are_never_retried() {
    let c = Check::new();
    let a = FakeModel::new("a", &c.log);
    // An overflow text with a transient-looking status is still not transient.
    a.fail_with(Error::Model {
        message: "prompt is too long: 300000 tokens > 200000 maximum".into(),
        status: Some(429),
        retry_after_ms: Some(10.0),
    });
    let b = FakeModel::new("b", &c.log);
    b.fail_with(Error::Model { message: "context_length_exceeded".into(), status: Some(500), retry_after_ms: None });
    let cand_c = FakeModel::new("c", &c.log);
    cand_c.fail_with(Error::Model { message: "invalid api key".into(), status: Some(401), retry_after_ms: None });
    let (engine, msg, mut opts) = threshold_check();
    opts.settings.fallback = Some(Fallback::None);
    let out = c.run(&engine, &msg, &opts, &[a, b, cand_c]).unwrap();
    assert!(c.clock.sleeps().is_empty());
    let models: Vec<String> = c.log.borrow().iter().filter(|l| l.starts_with("model:")).cloned().collect();
    assert_eq!(models, ["model:a:history", "model:b:history", "model:c:history"], "candidate order, one attempt each");
    assert_eq!(out.error_message.as_deref(), Some("Auto-compaction failed: invalid api key"), "the last failure");
    assert_eq!(compaction_count(&engine), 0);
}

#[test]
fn all_candidates_failing_transiently_reports_the_last_error() {
    let c = Check::new();
    let a = FakeModel::new("a", &c.log);
    let b = FakeModel::new("b", &c.log);
    for _ in 0..4 {
        a.fail_with(transient(503, None));
    }
    for _ in 0..3 {
        b.fail_with(transient(503, None));
    }
    b.fail_with(Error::Model { message: "overloaded_error".into(), status: None, retry_after_ms: None });
    let (engine, msg, mut opts) = threshold_check();
    opts.settings.fallback = Some(Fallback::None);
    let out = c.run(&engine, &msg, &opts, &[a, b]).unwrap();
    assert_eq!(out.error_message.as_deref(), Some("Auto-compaction failed: overloaded_error"));
    assert_eq!(c.clock.sleeps(), vec![2000.0, 4000.0, 8000.0, 2000.0, 4000.0, 8000.0]);
    assert_eq!(c.events.all().last().unwrap()["errorMessage"], "Auto-compaction failed: overloaded_error");
    assert_eq!(compaction_count(&engine), 0);

    // No candidates at all: without the fallback a failure, with it (the default) extractive.
    let c = Check::new();
    let (engine, msg, mut opts) = threshold_check();
    opts.settings.fallback = Some(Fallback::None);
    let out = c.run(&engine, &msg, &opts, &[]).unwrap();
    assert!(out.error_message.unwrap().starts_with("Auto-compaction failed: "));
    assert_eq!(compaction_count(&engine), 0);
    let (engine, msg, opts) = threshold_check();
    let out = c.run(&engine, &msg, &opts, &[]).unwrap();
    assert_eq!(out.compaction.unwrap().result.summarizer, Some(session_compaction::summarize::Summarizer::Extractive));
}

#[test]
fn abort_during_a_retry_wait() {
    let log = Log::default();
    let clock = Arc::new(FakeClock::new(T_COMPACT, &log));
    let gate = Gate::new();
    *clock.gate.borrow_mut() = Some(gate.clone());
    let model = Arc::new(FakeModel::new("a", &log));
    model.fail_with(transient(503, None));
    let events = Arc::new(Events::default());
    let hooks = Arc::new(FakeHooks::new(&log));
    let (engine, msg, opts) = threshold_check();
    let engine = Arc::new(engine);
    let mut pool = LocalPool::new();
    let (e, m, k, ev, h) = (engine.clone(), model.clone(), clock.clone(), events.clone(), hooks.clone());
    let slot = spawn(&pool, async move {
        let candidates = [Shared(m)];
        e.check_compaction(&msg, &opts, &candidates, &*h, &*k, &*ev, None).await
    });
    pool.run_until_stalled();
    assert_eq!(clock.sleeps(), vec![2000.0]);
    assert!(engine.is_busy());
    engine.abort();
    pool.run_until_stalled();
    let out = take(&slot).unwrap();
    assert!(out.aborted);
    assert_eq!(out.error_message, None);
    assert!(out.compaction.is_none() && out.continue_prompt.is_none());
    assert_eq!(model.requests.borrow().len(), 1, "no retry after the abort");
    assert_eq!(
        events.all(),
        vec![
            json!({"type": "auto_compaction_start", "reason": "threshold"}),
            json!({"type": "auto_compaction_end", "aborted": true, "willRetry": false}),
        ]
    );
    assert_eq!(compaction_count(&engine), 0);
    assert!(!engine.is_busy());
    assert!(!hooks.names().contains(&"session_compact".to_string()));
}

#[test]
fn abort_during_the_automatic_model_call_with_an_external_signal() {
    let log = Log::default();
    let clock = Arc::new(FakeClock::new(T_COMPACT, &log));
    let model = Arc::new(FakeModel::new("a", &log));
    let gate = model.block(None);
    let events = Arc::new(Events::default());
    let (engine, msg) = overflow_engine(T0 + 4000.0, "claude-test");
    let engine = Arc::new(engine);
    let signal = AbortSignal::new();
    let mut pool = LocalPool::new();
    let (e, m, k, ev, sig) = (engine.clone(), model.clone(), clock.clone(), events.clone(), signal.clone());
    let slot = spawn(&pool, async move {
        let candidates = [Shared(m)];
        e.check_compaction(&msg, &check_options(200_000.0), &candidates, &NoHooks, &*k, &*ev, Some(&sig)).await
    });
    pool.run_until_stalled();
    assert_eq!(model.purposes(), vec![Purpose::History]);
    signal.abort();
    pool.run_until_stalled();
    let out = take(&slot).unwrap();
    assert!(out.aborted && !out.will_retry && out.context.is_none());
    assert_eq!(events.all()[1], json!({"type": "auto_compaction_end", "aborted": true, "willRetry": false}));
    assert_eq!(compaction_count(&engine), 0);
    gate.open();
    pool.run_until_stalled();
    assert_eq!(compaction_count(&engine), 0);
    assert!(!engine.is_busy());
}

#[test]
fn check_while_a_compaction_runs_is_busy() {
    let log = Log::default();
    let model = Arc::new(FakeModel::new("m", &log));
    let gate = model.block(None);
    let (engine, msg, opts) = threshold_check();
    let engine = Arc::new(engine);
    let mut pool = LocalPool::new();
    let (e, m) = (engine.clone(), model.clone());
    let slot = spawn(&pool, async move { e.compact(&*m, &NoHooks, &run(150), None, T_COMPACT).await });
    pool.run_until_stalled();
    assert!(engine.is_busy());

    let c = Check::new();
    let other = FakeModel::new("other", &c.log);
    let err = c.run(&engine, &msg, &opts, std::slice::from_ref(&other)).unwrap_err();
    assert_eq!(err.code(), "E_BUSY");
    assert!(other.requests.borrow().is_empty());
    assert!(c.hooks.names().is_empty());
    assert!(engine.is_busy());

    gate.open();
    pool.run_until_stalled();
    assert!(take(&slot).is_ok());
    assert!(!engine.is_busy());
}

#[test]
fn a_failing_session_tree_hook_undoes_the_navigation() {
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let hooks = FakeHooks::new(&log).on("session_tree", Reply::Fail("nope".into()));
    let engine = tree_engine();
    let (count, old_leaf) = (engine.session().snapshot().entry_count(), leaf(&engine));
    let r = NavigateRun { summarize: true, ..Default::default() };
    let err = block_on(engine.navigate_tree("e3", Some(&model), &hooks, &r, None, T_COMPACT)).unwrap_err();
    assert_eq!(err.code(), "E_HOOK");
    assert_eq!(engine.session().snapshot().entry_count(), count, "the branch summary was removed again");
    assert_eq!(leaf(&engine), old_leaf, "the leaf is back where it was");
    assert!(!engine.is_busy());
}

#[test]
fn nothing_to_compact_still_asks_the_before_compact_hook() {
    // keepRecentTokens 100 000 keeps everything: nothing to compact (§12.2). The hook runs on the
    // reference rules' preparation, marked; without a supplied compaction the run fails as before.
    let log = Log::default();
    let model = FakeModel::new("m", &log);
    let engine = simple_engine();
    let hooks = FakeHooks::new(&log);
    let err = block_on(engine.compact(&model, &hooks, &run(100_000), None, T_COMPACT)).unwrap_err();
    assert_eq!(err, Error::NothingToCompact);
    assert_eq!(hooks.names(), ["session_before_compact"], "no session.compacting, no session_compact");
    let prep = hooks.event("session_before_compact")["preparation"].clone();
    assert_eq!(prep["nothingToCompact"], true);
    assert_eq!(prep["messagesToSummarize"], json!([]));
    assert_eq!(prep["turnPrefixMessages"], json!([]));
    assert_eq!(prep["firstKeptEntryId"], "e1");
    assert_eq!(prep["isSplitTurn"], false);
    assert_eq!(prep["recentMessages"].as_array().map(Vec::len), Some(4));
    assert_eq!(prep["tokensBefore"], json!(900.0));
    assert!(model.requests.borrow().is_empty(), "no model call");
    assert_eq!(compaction_count(&engine), 0);
    assert!(!engine.is_busy());

    // A compaction the extension supplies is used.
    let hooks = FakeHooks::new(&log).on(
        "session_before_compact",
        Reply::Value(json!({"compaction": {"summary": "EXT ON A SHORT BRANCH", "firstKeptEntryId": "e3"}})),
    );
    let out = block_on(engine.compact(&model, &hooks, &run(100_000), None, T_COMPACT)).unwrap();
    assert!(out.from_extension);
    assert_eq!(out.entry["summary"], "EXT ON A SHORT BRANCH");
    assert_eq!(out.entry["firstKeptEntryId"], "e3");
    assert_eq!(out.entry["fromExtension"], true);
    assert_eq!(hooks.names(), ["session_before_compact", "session_compact"]);
    assert_eq!(compaction_count(&engine), 1);
    assert!(model.requests.borrow().is_empty());

    // A cancel is reported as a cancel.
    let engine = simple_engine();
    let hooks = FakeHooks::new(&log).on("session_before_compact", Reply::Value(json!({"cancel": true})));
    let err = block_on(engine.compact(&model, &hooks, &run(100_000), None, T_COMPACT)).unwrap_err();
    assert_eq!(err, Error::Cancelled);
    assert_eq!(compaction_count(&engine), 0);

    // An ordinary preparation carries no mark.
    let hooks = FakeHooks::new(&log);
    block_on(engine.compact(&model, &hooks, &run(150), None, T_COMPACT)).unwrap();
    assert!(hooks.event("session_before_compact")["preparation"].get("nothingToCompact").is_none());
}
