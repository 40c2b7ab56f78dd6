//! Progress (SPEC §13.5) and the fallback: a compaction that does not shrink the context is
//! reported; automatic compaction pauses after repeated attempts without progress until the
//! context changes; overflow recovery runs once per turn; answers are bounded by `maxTokens`;
//! the extractive summarizer writes the summary when every model failed; a failed short summary
//! keeps the history summary; the threshold is checked after a failed turn too (SPEC §11); a
//! stalled summarizer times out. Fakes only: no real clock, no network.

#[path = "common/sync.rs"]
mod sync;
use futures_executor::block_on;
use serde_json::{json, Value};
use session_compaction::js::format_iso_timestamp;
use session_compaction::plan::prepare::{CompactionSettings, Fallback};
use session_compaction::plan::prune::PruneConfig;
use session_compaction::session::engine::{
    with_timeout, CheckOptions, CheckOutcome, Clock, CompactRun, EventSink, NoHooks, RetryPolicy, SessionEngine,
};
use session_compaction::session::events::{AutoCompactionEvent, CompactionReason, SkipCause};
use session_compaction::session::SessionTree;
use session_compaction::summarize::extractive::EXTRACTIVE_MARKER;
use session_compaction::summarize::{
    bound_to_max_tokens, compact, CompactOptions, Complete, Purpose, Summarizer, SummaryRequest,
};
use session_compaction::{Error, Result};
use sync::{Lock, SyncCell};

const T0: f64 = 1_700_000_000_000.0;

/// A model that answers `text` (or fails with `fail`) for every purpose except those in
/// `fail_only` (which fail) and `blank_only` (answered with blanks only), and records the
/// purposes asked.
struct Model {
    answer: String,
    fail: Option<String>,
    fail_only: Vec<Purpose>,
    blank_only: Vec<Purpose>,
    asked: Lock<Vec<Purpose>>,
}

impl Model {
    fn answering(text: &str) -> Self {
        Self { answer: text.into(), fail: None, fail_only: Vec::new(), blank_only: Vec::new(), asked: Lock::default() }
    }
    fn failing(message: &str) -> Self {
        Self { fail: Some(message.into()), ..Self::answering("") }
    }
    fn asked(&self) -> Vec<Purpose> {
        self.asked.borrow().clone()
    }
}

impl Complete for Model {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        self.asked.borrow_mut().push(request.purpose);
        if let Some(m) = &self.fail {
            return Err(Error::Model { message: m.clone(), status: Some(400), retry_after_ms: None });
        }
        if self.fail_only.contains(&request.purpose) {
            return Err(Error::Model { message: "short failed".into(), status: None, retry_after_ms: None });
        }
        if self.blank_only.contains(&request.purpose) {
            return Ok(" \n\t\n ".into());
        }
        Ok(self.answer.clone())
    }
}

/// A clock whose sleeps end at once (and count).
#[derive(Default)]
struct InstantClock(SyncCell<usize>);

impl Clock for InstantClock {
    fn now_ms(&self) -> f64 {
        T0 + 1e6
    }
    async fn sleep(&self, _ms: f64) {
        self.0.set(self.0.get() + 1);
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
    fn types(&self) -> Vec<String> {
        self.0.borrow().iter().map(|e| e["type"].as_str().unwrap_or_default().to_string()).collect()
    }
    fn take(&self) -> Vec<String> {
        let t = self.types();
        self.0.borrow_mut().clear();
        t
    }
}

fn words(tag: &str, n: usize) -> String {
    format!("{tag} {}", "word ".repeat(n))
}

fn entry(id: &str, parent: Option<&str>, ts: f64, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": format_iso_timestamp(ts), "message": message})
}

fn user_msg(text: &str, ts: f64) -> Value {
    json!({"role": "user", "content": text, "timestamp": ts})
}

fn assistant_msg(text: &str, ts: f64, total: u64) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "anthropic", "model": "claude-test",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}, "stopReason": "stop", "timestamp": ts})
}

fn error_msg(text: &str, ts: f64) -> Value {
    json!({"role": "assistant", "content": [], "provider": "anthropic", "model": "claude-test", "stopReason": "error",
        "errorMessage": text, "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "timestamp": ts})
}

/// Four turns of ~250 estimated tokens per message; the last usage says `total` context tokens.
fn engine(total: u64) -> SessionEngine {
    let mut entries = Vec::new();
    let mut parent: Option<String> = None;
    for i in 0..4 {
        let ts = T0 + 1000.0 * i as f64;
        let u = format!("u{i}");
        entries.push(entry(&u, parent.as_deref(), ts, user_msg(&words(&u, 200), ts)));
        let a = format!("a{i}");
        entries.push(entry(&a, Some(&u), ts + 500.0, assistant_msg(&words(&a, 200), ts + 500.0, total)));
        parent = Some(a);
    }
    let header =
        json!({"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"});
    SessionEngine::new(SessionTree::from_values(Some(header), &entries))
}

/// Appends a user message and an assistant reply (usage `total`) and returns the reply.
fn turn(engine: &SessionEngine, n: usize, total: u64) -> Value {
    let ts = T0 + 100_000.0 + 1000.0 * n as f64;
    engine.session().write(|s| {
        let leaf = s.leaf_id().map(str::to_owned);
        let u = format!("t{n}u");
        s.append_entry(entry(&u, leaf.as_deref(), ts, user_msg(&words(&u, 200), ts))).unwrap();
        let msg = assistant_msg(&words(&format!("t{n}a"), 200), ts + 500.0, total);
        s.append_entry(entry(&format!("t{n}a"), Some(&u), ts + 500.0, msg.clone())).unwrap();
        msg
    })
}

fn append(engine: &SessionEngine, id: &str, message: &Value) {
    engine.session().write(|s| {
        let leaf = s.leaf_id().map(str::to_owned);
        let ts = message["timestamp"].as_f64().unwrap_or(T0);
        s.append_entry(entry(id, leaf.as_deref(), ts, message.clone())).unwrap();
    });
}

fn options(window: f64, reserve: u64) -> CheckOptions {
    CheckOptions {
        context_window: window,
        model: Some("anthropic/claude-test".into()),
        settings: CompactionSettings { reserve_tokens: reserve, keep_recent_tokens: 300, ..Default::default() },
        prune: PruneConfig::default(),
        retry: RetryPolicy { max_retries: 0, base_delay_ms: 1.0, max_wait_ms: 10.0 },
        count_tokens: Default::default(),
    }
}

fn check(engine: &SessionEngine, msg: &Value, opts: &CheckOptions, models: &[Model], events: &Events) -> CheckOutcome {
    block_on(engine.check_compaction(msg, opts, models, &NoHooks, &InstantClock::default(), events, None)).unwrap()
}

fn compactions(engine: &SessionEngine) -> usize {
    let s = engine.session().snapshot();
    (0..s.entry_count()).filter(|&i| s.raw(i).contains("\"type\":\"compaction\"")).count()
}

#[test]
fn answers_are_cut_at_a_paragraph_within_their_budget() {
    let text = format!("{}\n\n{}\n\n{}", "a".repeat(300), "b".repeat(300), "c".repeat(300));
    let (cut, flagged) = bound_to_max_tokens(text.clone(), 200);
    assert!(flagged);
    assert_eq!(cut, format!("{}\n\n{}", "a".repeat(300), "b".repeat(300)));
    assert_eq!(bound_to_max_tokens(text.clone(), 300), (text.clone(), false));
    assert_eq!(bound_to_max_tokens(text.clone(), 0), (text, false), "0: no bound");
    // No break at all: a hard cut at a character boundary (4 UTF-16 units per token).
    let (cut, flagged) = bound_to_max_tokens("é".repeat(100), 10);
    assert!(flagged);
    assert_eq!(cut, "é".repeat(40));
    let (cut, _) = bound_to_max_tokens("😀".repeat(100), 10);
    assert_eq!(cut, "😀".repeat(20), "astral characters count two units");
}

#[test]
fn a_ten_megabyte_answer_becomes_a_bounded_summary() {
    let engine = engine(5000);
    let prep = engine.session().snapshot().prepare_compaction(&options(100_000.0, 16384).settings).unwrap();
    let huge = "A long paragraph of summary text. ".repeat(300_000); // ~10 MB
    let model = Model::answering(&huge);
    let r = block_on(compact(&prep, &model, &CompactOptions::default(), &Default::default())).unwrap();
    // history maxTokens = floor(0.8 · 16384) = 13107 → at most 52428 UTF-16 units.
    let history_part = r.summary.split("\n\n<").next().unwrap();
    assert!(history_part.len() <= 13_107 * 4, "{}", history_part.len());
    assert!(history_part.len() > 13_107 * 2);
    assert!(r.short_summary.len() <= 512 * 4);
    assert_eq!(r.truncated, vec![Purpose::History, Purpose::Short]);
}

#[test]
fn the_breaker_pauses_a_summarizer_that_never_shrinks() {
    let engine = engine(5000);
    // Threshold = 1500 - 1000 = 500 tokens; the summary alone is 800 (history maxTokens): every
    // compaction leaves the context above the threshold.
    let opts = options(1500.0, 1000);
    let model = Model::answering(&"grow ".repeat(10_000));
    let models = std::slice::from_ref(&model);
    let events = Events::default();
    let mut msg = turn(&engine, 0, 5000);
    for attempt in 1..=3 {
        let out = check(&engine, &msg, &opts, models, &events);
        assert_eq!(out.reason, Some(CompactionReason::Threshold), "attempt {attempt}");
        let done = out.compaction.expect("appended, and reported");
        assert!(done.result.no_progress, "attempt {attempt}");
        assert!(done.result.context_tokens_after.unwrap() > 500.0);
        let first = if attempt == 1 { Purpose::History } else { Purpose::Update };
        assert_eq!(done.result.truncated, vec![first, Purpose::Short]);
        let mut want = vec!["auto_compaction_start", "auto_compaction_end", "auto_compaction_no_progress"];
        if attempt == 3 {
            want.push("auto_compaction_paused");
        }
        assert_eq!(events.take(), want, "attempt {attempt}");
        msg = turn(&engine, attempt, 5000);
    }
    assert_eq!(compactions(&engine), 3);
    // Paused: two more turns over the threshold, no model call, nothing appended.
    let asked = model.asked().len();
    for n in 4..6 {
        let out = check(&engine, &msg, &opts, models, &events);
        assert_eq!(out.skipped, Some(SkipCause::Paused));
        assert_eq!(out.reason, None);
        assert!(out.compaction.is_none() && out.error_message.is_none());
        assert_eq!(events.take(), vec!["auto_compaction_skipped"]);
        msg = turn(&engine, n, 5000);
    }
    assert_eq!(model.asked().len(), asked);
    assert_eq!(compactions(&engine), 3);
    // The context changes (another model with a larger window): automatic compaction resumes.
    let mut bigger = opts.clone();
    bigger.context_window = 1_000_000.0;
    bigger.settings.reserve_tokens = 999_000;
    let out = check(&engine, &msg, &bigger, models, &events);
    assert_eq!(out.reason, Some(CompactionReason::Threshold));
    assert!(out.skipped.is_none());
}

#[test]
fn a_manual_compaction_closes_the_breaker() {
    let engine = engine(5000);
    let mut opts = options(1500.0, 1000);
    opts.settings.max_attempts_without_progress = Some(1);
    let grow = Model::answering(&"grow ".repeat(10_000));
    let events = Events::default();
    let msg = turn(&engine, 0, 5000);
    check(&engine, &msg, &opts, std::slice::from_ref(&grow), &events);
    assert_eq!(
        events.take(),
        vec!["auto_compaction_start", "auto_compaction_end", "auto_compaction_no_progress", "auto_compaction_paused"]
    );
    let msg = turn(&engine, 1, 5000);
    assert_eq!(check(&engine, &msg, &opts, std::slice::from_ref(&grow), &events).skipped, Some(SkipCause::Paused));
    // The user compacts by hand with a summarizer that works.
    let small = Model::answering("Short and sweet.");
    let run = CompactRun { settings: opts.settings.clone(), ..Default::default() };
    let done = block_on(engine.compact(&small, &NoHooks, &run, None, T0 + 1e7)).unwrap();
    assert!(!done.result.no_progress, "{:?}", done.result);
    let msg = turn(&engine, 2, 5000);
    events.take();
    let out = check(&engine, &msg, &opts, std::slice::from_ref(&small), &events);
    assert_eq!(out.reason, Some(CompactionReason::Threshold), "{out:?}");
}

#[test]
fn a_manual_compaction_that_grows_the_context_is_reported() {
    let engine = engine(500);
    let grow = Model::answering(&"grow ".repeat(20_000));
    let run = CompactRun {
        settings: CompactionSettings { reserve_tokens: 16384, keep_recent_tokens: 300, ..Default::default() },
        ..Default::default()
    };
    let done = block_on(engine.compact(&grow, &NoHooks, &run, None, T0 + 1e7)).unwrap();
    let r = &done.result;
    assert!(r.no_progress);
    assert!(r.context_tokens_after.unwrap() > r.context_tokens_before.unwrap(), "{r:?}");
    assert_eq!(r.summarizer, Some(Summarizer::Model));
}

#[test]
fn overflow_is_recovered_at_most_once_per_turn() {
    let engine = engine(5000);
    let opts = options(200_000.0, 1000);
    let model = Model::answering("Recovered summary.");
    let models = std::slice::from_ref(&model);
    let events = Events::default();
    let overflow = |ts: f64| error_msg("prompt is too long: 213462 tokens > 200000 maximum", ts);
    // Newer than the compactions (the fake clock stamps them at T0 + 1e6).
    let first = overflow(T0 + 2e6);
    append(&engine, "o1", &first);
    let out = check(&engine, &first, &opts, models, &events);
    assert_eq!(out.reason, Some(CompactionReason::Overflow));
    assert!(out.will_retry);
    assert_eq!(compactions(&engine), 1);
    events.take();
    // The retried turn overflows again: no second recovery.
    let again = overflow(T0 + 3e6);
    append(&engine, "o2", &again);
    let asked = model.asked().len();
    let out = check(&engine, &again, &opts, models, &events);
    assert_eq!(out.skipped, Some(SkipCause::OverflowRecoveredThisTurn));
    assert!(!out.will_retry && out.compaction.is_none());
    assert_eq!(
        out.error_message.as_deref(),
        Some("Context overflow recovery failed: the context still overflows after this turn's recovery")
    );
    assert_eq!(events.take(), vec!["auto_compaction_skipped"]);
    assert_eq!(model.asked().len(), asked);
    assert_eq!(compactions(&engine), 1);
    // A new turn (a user message) may be recovered again.
    append(&engine, "u-next", &user_msg(&words("next", 200), T0 + 4e6));
    let third = overflow(T0 + 5e6);
    append(&engine, "o3", &third);
    let out = check(&engine, &third, &opts, models, &events);
    assert_eq!(out.reason, Some(CompactionReason::Overflow));
    assert!(out.will_retry);
    assert_eq!(compactions(&engine), 2);
}

#[test]
fn the_extractive_summarizer_writes_it_when_every_candidate_fails() {
    let engine = engine(5000);
    let opts = options(1500.0, 1000);
    let down = [Model::failing("invalid api key"), Model::failing("model not found")];
    let events = Events::default();
    let msg = turn(&engine, 0, 5000);
    let out = check(&engine, &msg, &opts, &down, &events);
    assert_eq!(out.error_message, None);
    let done = out.compaction.expect("compacted by the fallback");
    assert_eq!(done.result.summarizer, Some(Summarizer::Extractive));
    assert!(done.result.fallback_reason.as_deref().unwrap().contains("model not found"), "{:?}", done.result);
    assert!(done.entry["summary"].as_str().unwrap().starts_with(EXTRACTIVE_MARKER));
    assert!(!done.entry["shortSummary"].as_str().unwrap().is_empty());
    assert_eq!(down[0].asked()[0], Purpose::History);
    assert!(!down[1].asked().is_empty(), "every candidate was tried first");
    // fallback: "none" — the failure is reported and nothing is appended.
    let engine = self::engine(5000);
    let mut none = opts.clone();
    none.settings.fallback = Some(Fallback::None);
    let msg = turn(&engine, 0, 5000);
    let out = check(&engine, &msg, &none, &down, &events);
    assert!(out.error_message.as_deref().unwrap().starts_with("Auto-compaction failed: "), "{out:?}");
    assert_eq!(compactions(&engine), 0);
}

#[test]
fn a_manual_compaction_falls_back_only_when_asked() {
    let down = Model::failing("invalid api key");
    let settings = CompactionSettings { reserve_tokens: 1000, keep_recent_tokens: 300, ..Default::default() };
    let engine = engine(5000);
    let run = CompactRun { settings: settings.clone(), ..Default::default() };
    let err = block_on(engine.compact(&down, &NoHooks, &run, None, T0 + 1e7)).unwrap_err();
    assert!(matches!(err, Error::Model { .. }), "{err:?}");
    assert_eq!(compactions(&engine), 0);
    let run = CompactRun {
        settings: CompactionSettings { fallback: Some(Fallback::Extractive), ..settings },
        ..Default::default()
    };
    let done = block_on(engine.compact(&down, &NoHooks, &run, None, T0 + 1e7)).unwrap();
    assert_eq!(done.result.summarizer, Some(Summarizer::Extractive));
}

#[test]
fn a_failed_short_summary_keeps_the_history_summary() {
    let engine = engine(5000);
    let model = Model { fail_only: vec![Purpose::Short], ..Model::answering("The history.") };
    let run = CompactRun {
        settings: CompactionSettings { reserve_tokens: 1000, keep_recent_tokens: 300, ..Default::default() },
        ..Default::default()
    };
    let done = block_on(engine.compact(&model, &NoHooks, &run, None, T0 + 1e7)).unwrap();
    assert_eq!(done.result.summary, "The history.");
    assert_eq!(done.result.short_summary, "");
    assert_eq!(done.result.short_summary_error.as_deref(), Some("short failed"));
    assert_eq!(done.entry["summary"], "The history.");
    assert!(done.entry.get("shortSummary").is_none(), "the failed short summary is left out");
    assert_eq!(model.asked(), vec![Purpose::History, Purpose::Short]);
}

#[test]
fn an_empty_answer_is_never_stored_as_a_summary() {
    let settings = CompactionSettings { reserve_tokens: 1000, keep_recent_tokens: 300, ..Default::default() };
    for blank in ["", " \n\t ", "\u{200b}\u{feff} \u{a0}", "\u{ad}\u{200e}\u{fe0f}\u{e0001}"] {
        // manual: E_MODEL naming the request, nothing appended
        let engine = engine(5000);
        let model = Model::answering(blank);
        let run = CompactRun { settings: settings.clone(), ..Default::default() };
        let err = block_on(engine.compact(&model, &NoHooks, &run, None, T0 + 1e7)).unwrap_err();
        assert_eq!(err.code(), "E_MODEL");
        assert!(err.to_string().contains("answer to the history request is empty"), "{err}");
        assert_eq!(compactions(&engine), 0);
        // manual with fallback "extractive": the extractive summarizer writes it
        let run = CompactRun {
            settings: CompactionSettings { fallback: Some(Fallback::Extractive), ..settings.clone() },
            ..Default::default()
        };
        let done = block_on(engine.compact(&model, &NoHooks, &run, None, T0 + 1e7)).unwrap();
        assert_eq!(done.result.summarizer, Some(Summarizer::Extractive));
        assert!(done.result.fallback_reason.as_deref().unwrap().contains("is empty"), "{:?}", done.result);
        assert!(done.entry["summary"].as_str().unwrap().starts_with(EXTRACTIVE_MARKER));
        // automatic: falls back as for any failure
        let engine = self::engine(5000);
        let msg = turn(&engine, 0, 5000);
        let out = check(&engine, &msg, &options(1500.0, 1000), &[Model::answering(blank)], &Events::default());
        let done = out.compaction.expect("compacted by the fallback");
        assert_eq!(done.result.summarizer, Some(Summarizer::Extractive));
        assert!(!done.entry["summary"].as_str().unwrap().trim().is_empty());
    }
    // an empty short summary is a failed one: the history summary stays, shortSummary is left out
    let engine = engine(5000);
    let model = Model { blank_only: vec![Purpose::Short], ..Model::answering("The history.") };
    let run = CompactRun { settings, ..Default::default() };
    let done = block_on(engine.compact(&model, &NoHooks, &run, None, T0 + 1e7)).unwrap();
    assert_eq!(done.result.summary, "The history.");
    assert_eq!(
        done.result.short_summary_error.as_deref(),
        Some("the model's answer to the short summary request is empty")
    );
    assert!(done.entry.get("shortSummary").is_none());
}

#[test]
fn the_threshold_is_checked_after_a_failed_turn() {
    let engine = engine(5000);
    let opts = options(1500.0, 1000);
    let model = Model::answering("ok");
    let events = Events::default();
    let failed = error_msg("500 internal server error", T0 + 200_000.0);
    append(&engine, "err", &failed);
    let out = check(&engine, &failed, &opts, std::slice::from_ref(&model), &events);
    assert_eq!(out.reason, Some(CompactionReason::Threshold));
    assert_eq!(out.context_tokens, 5000.0, "the last successful usage (the error has none)");
    assert!(out.compaction.is_some());
    // An aborted turn is not a failure: nothing happens.
    let engine = self::engine(5000);
    let aborted = json!({"role": "assistant", "content": [], "stopReason": "aborted", "timestamp": T0 + 200_000.0});
    append(&engine, "ab", &aborted);
    let out = check(&engine, &aborted, &opts, std::slice::from_ref(&model), &events);
    assert_eq!(out.reason, None);
}

#[test]
fn a_stalled_summarizer_times_out() {
    let clock = InstantClock::default();
    let stalled = std::future::pending::<Result<String>>();
    let err = block_on(with_timeout(&clock, 250.0, stalled)).unwrap_err();
    assert!(matches!(&err, Error::Remote { status: 0, message } if message.contains("0.25 s")), "{err:?}");
    assert_eq!(clock.0.get(), 1);
    let quick = async { Ok::<_, Error>("fine".to_string()) };
    assert_eq!(block_on(with_timeout(&clock, 250.0, quick)).unwrap(), "fine");
}

#[test]
fn an_overflow_recovery_that_cannot_fit_does_not_ask_for_a_retry() {
    // A window smaller than the kept messages alone (threshold 400 - 100): the recovery's
    // compaction is appended but leaves a context at the window or above, so a retry would
    // overflow again.
    let engine = engine(5000);
    let opts = options(400.0, 100);
    let model = Model::answering("Recovered summary.");
    let events = Events::default();
    let overflow = error_msg("prompt is too long: 213462 tokens > 200000 maximum", T0 + 2e6);
    append(&engine, "o1", &overflow);
    let out = check(&engine, &overflow, &opts, std::slice::from_ref(&model), &events);
    assert_eq!(out.reason, Some(CompactionReason::Overflow));
    let done = out.compaction.as_ref().expect("the compaction is appended");
    let r = &done.result;
    assert!(r.no_progress, "{r:?}");
    let (before, after) = (r.context_tokens_before.unwrap(), r.context_tokens_after.unwrap());
    assert!(after >= 400.0 && after < before, "smaller, but not below the window: {after} of {before}");
    assert_eq!(compactions(&engine), 1);
    assert!(!out.will_retry, "no retry after a recovery that cannot fit");
    assert!(out.context.is_none() && out.continue_prompt.is_none(), "{out:?}");
    let message = format!(
        "Context overflow recovery failed: the compaction made no progress (context estimated at {after:.0} tokens \
         after it, {before:.0} before; context window 400), so a retry would overflow again"
    );
    assert_eq!(out.error_message.as_deref(), Some(message.as_str()));
    let all = events.0.borrow().clone();
    let types: Vec<&str> = all.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["auto_compaction_start", "auto_compaction_end", "auto_compaction_no_progress"]);
    assert_eq!(all[1]["willRetry"], false);
    assert_eq!(all[1]["errorMessage"], message.as_str());
    assert_eq!(all[1]["result"]["noProgress"], true);
    assert_eq!(all[2]["reason"], "overflow");
    drop(all);
    events.take();
    // A host that retries anyway and overflows again gets no second recovery in this turn.
    let again = error_msg("prompt is too long: 213462 tokens > 200000 maximum", T0 + 3e6);
    append(&engine, "o2", &again);
    let out = check(&engine, &again, &opts, std::slice::from_ref(&model), &events);
    assert_eq!(out.skipped, Some(SkipCause::OverflowRecoveredThisTurn));
    assert!(!out.will_retry && out.compaction.is_none());
    assert_eq!(compactions(&engine), 1);
}

#[test]
fn an_overflow_recovery_above_the_threshold_but_below_the_window_is_retried() {
    // Threshold 1500 - 1000 = 500: the compaction shrinks the context to ~507 tokens, above the
    // threshold (no progress by §13.5) but far below the 1500-token window: the retry may fit.
    let engine = engine(5000);
    let opts = options(1500.0, 1000);
    let model = Model::answering("Recovered summary.");
    let events = Events::default();
    let overflow = error_msg("prompt is too long: 213462 tokens > 200000 maximum", T0 + 2e6);
    append(&engine, "o1", &overflow);
    let out = check(&engine, &overflow, &opts, std::slice::from_ref(&model), &events);
    let r = &out.compaction.as_ref().expect("the compaction is appended").result;
    let (before, after) = (r.context_tokens_before.unwrap(), r.context_tokens_after.unwrap());
    assert!(r.no_progress && after > 500.0 && after < 1500.0 && after < before, "{r:?}");
    assert!(out.will_retry, "{out:?}");
    assert!(out.context.is_some() && out.error_message.is_none(), "{out:?}");
    let all = events.0.borrow().clone();
    assert_eq!(all[1]["willRetry"], true);
    assert_eq!(all[1].get("errorMessage"), None);
}
