//! Orchestration around a session handle: compaction with hooks, tree navigation with branch
//! summaries, automatic compaction (prune first, overflow recovery or threshold) with candidate
//! models and retries, abort and one-compaction-at-a-time. Host-agnostic: the model, the hooks,
//! the clock and the event sink are traits, implemented by the wasm layer with JavaScript
//! callbacks and by tests with fakes. SPEC §10, §11.
//!
//! The session's lock is never held across an `.await`: hooks and models may call back into
//! the session, and natively the engine's futures are `Send` (a compaction can be
//! `tokio::spawn`ed).

use crate::entry::EntrySource;
use crate::entry::{EntryKind, Role};
use crate::error::{Error, Result};
use crate::host::{MaybeSend, MaybeSync, OnceCallback};
use crate::js::{format_iso_timestamp, js_number, parse_iso_timestamp};
use crate::plan::overflow::estimate_built_context_tokens;
use crate::plan::prepare::{should_compact, CompactionPreparation, CompactionSettings};
use crate::plan::prune::PruneConfig;
use crate::plan::tokens::{entry_counted_text, entry_texts, HostCounter, Recounted};
use crate::prompt::templates::PromptTemplates;
use crate::session::events::{
    AutoCompactionEvent, BeforeCompactEvent, BeforeCompactReply, BeforeTreeEvent, BeforeTreeReply, CompactEvent,
    CompactingEvent, CompactingReply, CompactionReason, SkipCause, SuppliedCompaction, TreeEvent, TreePreparation,
};
use crate::session::SessionTree;
use crate::summarize::extractive::ExtractiveSummarizer;
use crate::summarize::{
    compact, generate_branch_summary, BranchSummaryOptions, CompactOptions, CompactionResult, Complete, DynModel,
    Summarizer, SummaryRequest,
};
use futures_util::future::{select, Either};
use serde_json::{json, Value};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};

/// Locks `m`, recovering the data if a thread panicked while holding it: every critical
/// section of the engine leaves its data consistent (no await, no partial update), so a poisoned
/// lock holds valid data.
fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ------------------------------------------------------------------------------------------
// Abort

#[derive(Default)]
struct AbortState {
    aborted: bool,
    wakers: Vec<Waker>,
    callbacks: Vec<OnceCallback>,
}

/// A cancellation flag shared between the host and a running operation. Aborting wakes every
/// operation waiting on it; each await point of the engine races against it. Cloning shares the
/// flag. `Send + Sync` natively: abort from any thread.
#[derive(Clone, Default)]
pub struct AbortSignal(Arc<Mutex<AbortState>>);

impl AbortSignal {
    /// A fresh, not aborted signal.
    pub fn new() -> Self {
        Self::default()
    }

    /// Aborts: every pending [`AbortSignal::race`] resolves with [`Error::Aborted`].
    pub fn abort(&self) {
        let (wakers, callbacks) = {
            let mut s = lock(&self.0);
            if s.aborted {
                return;
            }
            s.aborted = true;
            (std::mem::take(&mut s.wakers), std::mem::take(&mut s.callbacks))
        };
        for f in callbacks {
            f();
        }
        for w in wakers {
            w.wake();
        }
    }

    /// Runs `f` once when the signal is aborted (at once if it already is); used to forward the
    /// abort to a host-side signal. `f` is `Send` natively ([`OnceCallback`]).
    pub fn on_abort(&self, f: OnceCallback) {
        let mut s = lock(&self.0);
        if s.aborted {
            drop(s);
            f();
        } else {
            s.callbacks.push(f);
        }
    }

    /// True once aborted.
    pub fn is_aborted(&self) -> bool {
        lock(&self.0).aborted
    }

    /// Fails with [`Error::Aborted`] when aborted.
    pub fn check(&self, what: &str) -> Result<()> {
        if self.is_aborted() {
            Err(Error::Aborted { what: what.into() })
        } else {
            Ok(())
        }
    }

    /// Resolves when aborted.
    pub fn aborted(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| {
            let mut s = lock(&self.0);
            if s.aborted {
                Poll::Ready(())
            } else {
                if !s.wakers.iter().any(|w| w.will_wake(cx.waker())) {
                    s.wakers.push(cx.waker().clone());
                }
                Poll::Pending
            }
        })
    }

    /// Runs `fut` unless the signal fires first (then [`Error::Aborted`]).
    pub async fn race<T>(&self, what: &str, fut: impl Future<Output = Result<T>>) -> Result<T> {
        self.check(what)?;
        match select(pin!(fut), pin!(self.aborted())).await {
            Either::Left((r, _)) => {
                self.check(what)?;
                r
            }
            Either::Right(_) => Err(Error::Aborted { what: what.into() }),
        }
    }
}

// ------------------------------------------------------------------------------------------
// Host traits

/// The hooks of a session operation, by the JS API's event names (SPEC §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookName {
    /// `session_before_compact`: may cancel a compaction or supply one.
    BeforeCompact,
    /// `session.compacting`: may shape the summary request.
    Compacting,
    /// `session_compact`: a compaction entry was appended.
    AfterCompact,
    /// `session_before_tree`: may cancel a navigation or supply its branch summary.
    BeforeTree,
    /// `session_tree`: a navigation happened.
    AfterTree,
}

impl HookName {
    /// Every hook, in the order of the operations.
    pub const ALL: [HookName; 5] = [
        HookName::BeforeCompact,
        HookName::Compacting,
        HookName::AfterCompact,
        HookName::BeforeTree,
        HookName::AfterTree,
    ];

    /// The event name (`"session_before_compact"`, `"session.compacting"`, `"session_compact"`,
    /// `"session_before_tree"`, `"session_tree"`), which is also the event's `type`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HookName::BeforeCompact => "session_before_compact",
            HookName::Compacting => "session.compacting",
            HookName::AfterCompact => "session_compact",
            HookName::BeforeTree => "session_before_tree",
            HookName::AfterTree => "session_tree",
        }
    }
}

/// The host's hooks (SPEC §11), one method per hook, each with its typed event and answer
/// ([`crate::session::events`]). Every method has a default that does nothing (answers
/// "no change"), so a host implements only the hooks it needs. A failing hook returns
/// [`Error::Hook`] (or any error: it fails the operation). `Send + Sync` with `Send` futures
/// natively ([`crate::host::MaybeSend`]).
///
/// Hooks keyed by the JS API's event names (a JSON event in, a JSON answer out) implement
/// [`HooksByName`] instead; every such type is a `Hooks`.
pub trait Hooks: MaybeSend + MaybeSync {
    /// Whether `hook` has a listener. When it has none the engine neither builds that event
    /// (a `session_before_compact` event holds every entry of the branch as JSON, which costs
    /// a parse of each on a large session) nor calls it, and goes on as on the default answer
    /// (no cancel, no supplied summary, no shaping). Default `true`: every hook is called.
    fn listens(&self, hook: HookName) -> bool {
        let _ = hook;
        true
    }
    /// `session_before_compact`: may cancel the compaction or supply one.
    fn before_compact(
        &self,
        event: BeforeCompactEvent,
    ) -> impl Future<Output = Result<BeforeCompactReply>> + MaybeSend {
        drop(event);
        std::future::ready(Ok(BeforeCompactReply::default()))
    }
    /// `session.compacting`: may replace the instructions, add context lines, attach
    /// `preserveData`.
    fn compacting(&self, event: CompactingEvent) -> impl Future<Output = Result<CompactingReply>> + MaybeSend {
        drop(event);
        std::future::ready(Ok(CompactingReply::default()))
    }
    /// `session_compact`: the entry was appended; an error removes it again.
    fn after_compact(&self, event: CompactEvent) -> impl Future<Output = Result<()>> + MaybeSend {
        drop(event);
        std::future::ready(Ok(()))
    }
    /// `session_before_tree`: may cancel the navigation or supply the branch summary.
    fn before_tree(&self, event: BeforeTreeEvent) -> impl Future<Output = Result<BeforeTreeReply>> + MaybeSend {
        drop(event);
        std::future::ready(Ok(BeforeTreeReply::default()))
    }
    /// `session_tree`: the navigation happened; an error undoes it.
    fn after_tree(&self, event: TreeEvent) -> impl Future<Output = Result<()>> + MaybeSend {
        drop(event);
        std::future::ready(Ok(()))
    }
}

/// Hooks called by the JS API's event names (`session_before_compact`, `session.compacting`,
/// `session_compact`, `session_before_tree`, `session_tree`) with the event as JSON (its `type`
/// included); an absent hook answers `Value::Null`. The wasm binding's hooks object is one.
/// Every `HooksByName` is a [`Hooks`]: the events are serialized to their JSON shape and the
/// answers read with [`BeforeCompactReply::from_value`], [`CompactingReply::from_value`] and
/// [`BeforeTreeReply::from_value`].
pub trait HooksByName: MaybeSend + MaybeSync {
    /// Whether a hook is registered under `name` ([`Hooks::listens`]); default `true`.
    fn has(&self, name: &str) -> bool {
        let _ = name;
        true
    }
    /// Calls the hook `name` with `event`; resolves to its answer (or `Null`).
    fn call(&self, name: &str, event: Value) -> impl Future<Output = Result<Value>> + MaybeSend;
}

/// An event as JSON for a hook called by name.
fn event_json<T: serde::Serialize>(hook: &str, event: &T) -> Result<Value> {
    serde_json::to_value(event).map_err(|e| Error::Hook { hook: hook.into(), message: e.to_string() })
}

impl<T: HooksByName> Hooks for T {
    fn listens(&self, hook: HookName) -> bool {
        self.has(hook.as_str())
    }
    async fn before_compact(&self, event: BeforeCompactEvent) -> Result<BeforeCompactReply> {
        const NAME: &str = HookName::BeforeCompact.as_str();
        BeforeCompactReply::from_value(&self.call(NAME, event_json(NAME, &event)?).await?)
    }
    async fn compacting(&self, event: CompactingEvent) -> Result<CompactingReply> {
        const NAME: &str = HookName::Compacting.as_str();
        Ok(CompactingReply::from_value(&self.call(NAME, event_json(NAME, &event)?).await?))
    }
    async fn after_compact(&self, event: CompactEvent) -> Result<()> {
        const NAME: &str = HookName::AfterCompact.as_str();
        self.call(NAME, event_json(NAME, &event)?).await.map(drop)
    }
    async fn before_tree(&self, event: BeforeTreeEvent) -> Result<BeforeTreeReply> {
        const NAME: &str = HookName::BeforeTree.as_str();
        Ok(BeforeTreeReply::from_value(&self.call(NAME, event_json(NAME, &event)?).await?))
    }
    async fn after_tree(&self, event: TreeEvent) -> Result<()> {
        const NAME: &str = HookName::AfterTree.as_str();
        self.call(NAME, event_json(NAME, &event)?).await.map(drop)
    }
}

/// No hooks at all.
pub struct NoHooks;

impl Hooks for NoHooks {
    fn listens(&self, _hook: HookName) -> bool {
        false
    }
}

/// Time source: the real clock in hosts ([`SystemClock`] natively), a fake one in tests (no
/// real sleeping). `Send + Sync` with a `Send` future natively.
pub trait Clock: MaybeSend + MaybeSync {
    /// Now, ms since the epoch.
    fn now_ms(&self) -> f64;
    /// Waits `ms` milliseconds.
    fn sleep(&self, ms: f64) -> impl Future<Output = ()> + MaybeSend;
}

/// Receives the events of automatic compaction ([`AutoCompactionEvent`]: start, end, no
/// progress, paused, skipped). `Send + Sync` natively.
pub trait EventSink: MaybeSend + MaybeSync {
    /// One event.
    fn emit(&self, event: AutoCompactionEvent);
}

impl EventSink for () {
    fn emit(&self, _event: AutoCompactionEvent) {}
}

/// The system clock for native hosts: [`Clock::now_ms`] reads [`std::time::SystemTime`], and
/// [`Clock::sleep`] waits on a helper thread, so it works under any executor (tokio,
/// async-std, `futures::executor`) without blocking it. Dropping the sleep gives the wait up
/// (the helper thread ends on its own when its time is up). Not on `wasm32` (the binding uses
/// `Date.now()` and `setTimeout` there).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

#[cfg(not(target_arch = "wasm32"))]
impl Clock for SystemClock {
    fn now_ms(&self) -> f64 {
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_secs_f64() * 1000.0,
            Err(_) => 0.0,
        }
    }

    fn sleep(&self, ms: f64) -> impl Future<Output = ()> + MaybeSend {
        let wait = if ms.is_finite() && ms > 0.0 {
            std::time::Duration::from_secs_f64(ms / 1000.0)
        } else {
            Default::default()
        };
        ThreadSleep { wait, state: None }
    }
}

/// The future of [`SystemClock::sleep`]: the first poll starts a helper thread that sleeps and
/// then wakes the latest waker.
#[cfg(not(target_arch = "wasm32"))]
struct ThreadSleep {
    wait: std::time::Duration,
    state: Option<Arc<Mutex<SleepState>>>,
}

/// What [`ThreadSleep`] shares with its helper thread: done, and the waker to wake then.
#[cfg(not(target_arch = "wasm32"))]
type SleepState = (bool, Option<Waker>);

#[cfg(not(target_arch = "wasm32"))]
impl Future for ThreadSleep {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if self.wait.is_zero() {
            return Poll::Ready(());
        }
        if let Some(state) = &self.state {
            let mut st = lock(state);
            if st.0 {
                return Poll::Ready(());
            }
            st.1 = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let state = Arc::new(Mutex::new((false, Some(cx.waker().clone()))));
        let shared = state.clone();
        let wait = self.wait;
        let spawned = std::thread::Builder::new().name("session-compaction-sleep".into()).spawn(move || {
            std::thread::sleep(wait);
            let waker = {
                let mut st = lock(&shared);
                st.0 = true;
                st.1.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        });
        if spawned.is_err() {
            // No thread to wait on: do not wait at all rather than hang.
            return Poll::Ready(());
        }
        self.state = Some(state);
        Poll::Pending
    }
}

// ------------------------------------------------------------------------------------------
// The engine

/// A session shared between the host and the engine: the [`SessionTree`] behind an `Arc` and a
/// lock. Access is through closures ([`SharedSession::read`], [`SharedSession::write`]), so
/// the lock cannot be held across an `.await`: a host may read and append while a compaction
/// runs (each access waits only for the other's short critical section). Cloning shares the
/// session. `Send + Sync` natively.
///
/// Do not call back into the same session from inside a closure (that would wait on itself).
#[derive(Clone)]
pub struct SharedSession(Arc<Mutex<SessionTree>>);

impl SharedSession {
    /// Shares `session`.
    pub fn new(session: SessionTree) -> Self {
        Self(Arc::new(Mutex::new(session)))
    }

    /// Runs `f` with the session and returns what it returns.
    pub fn read<R>(&self, f: impl FnOnce(&SessionTree) -> R) -> R {
        f(&lock(&self.0))
    }

    /// Runs `f` with the session, mutably (append, set the leaf, prune), and returns what it
    /// returns.
    pub fn write<R>(&self, f: impl FnOnce(&mut SessionTree) -> R) -> R {
        f(&mut lock(&self.0))
    }

    /// The lock itself, for the engine's own short critical sections: natively the compiler
    /// refuses a guard held across an `.await` (the engine's futures are `Send`, a guard is not).
    pub(crate) fn guard(&self) -> MutexGuard<'_, SessionTree> {
        lock(&self.0)
    }

    /// A copy of the session as it is now (for saving or long reads without holding the lock).
    /// Costs O(session): the raw text is copied.
    pub fn snapshot(&self) -> SessionTree {
        lock(&self.0).clone()
    }
}

/// A session plus what runs on it: the busy flag, the abort signal of the running operation,
/// the prompt templates and the progress guard of automatic compaction. `Send + Sync`
/// natively: share it with `Arc<SessionEngine>` and run a compaction with `tokio::spawn` while
/// other tasks read the session ([`SessionEngine::session`]).
pub struct SessionEngine {
    session: SharedSession,
    busy: AtomicBool,
    current: Mutex<Option<AbortSignal>>,
    /// Prompt templates used by this engine's summaries.
    templates: Mutex<PromptTemplates>,
    /// The progress guard of automatic compaction (SPEC §13.5).
    guard: Mutex<ProgressGuard>,
}

/// What automatic compaction remembers between turns (SPEC §13.5): consecutive attempts
/// without progress, the breaker, and the last overflow recovery.
#[derive(Debug, Default)]
struct ProgressGuard {
    /// Consecutive automatic attempts that failed or made no progress.
    attempts: u32,
    /// Set when the breaker opened: the context it opened on.
    open: Option<ContextKey>,
    /// Id of the compaction entry the last overflow recovery appended.
    overflow_recovery: Option<String>,
}

/// What "the context changed" compares (SPEC §13.5): the leaf the breaker opened at must still
/// be on the branch, and the latest compaction, the model, the window and the settings the same.
#[derive(Debug, Clone, PartialEq)]
struct ContextKey {
    leaf: Option<String>,
    last_compaction: Option<String>,
    model: Option<String>,
    context_window: f64,
    reserve_tokens: u64,
    keep_recent_tokens: u64,
}

/// Releases the busy flag when an operation ends, however it ends.
struct BusyGuard<'a>(&'a SessionEngine);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        lock(&self.0.current).take();
        self.0.busy.store(false, Ordering::Release);
    }
}

/// Options of [`SessionEngine::compact`] (the data part of `SessionTree.compact()`'s options;
/// the binding adds the model, hooks and signal).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(rename = "SessionCompactOptions"))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct CompactRun {
    /// Settings for the preparation (reserve / keep tokens); missing ones are the defaults.
    #[cfg_attr(feature = "tsify", tsify(optional, type = "Partial<CompactionSettings> & TokenCountOptions"))]
    pub settings: CompactionSettings,
    /// `Additional focus: …` for the summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub custom_instructions: Option<String>,
    /// The model's context window (tokens), when known: a compaction that leaves the context
    /// above `contextWindow - reserveTokens` made no progress (SPEC §13.5). A whole number of
    /// tokens ([`crate::api::token_budget`]; otherwise the compaction is `E_INVALID_ARGUMENT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub context_window: Option<f64>,
    /// The host's tokenizer for the estimates of this compaction (cut point, `tokensBefore`,
    /// the progress check; SPEC §3); default chars/4. Not read from JSON: the binding takes it
    /// from `settings.countTokens`.
    #[serde(skip)]
    pub count_tokens: HostCounter,
}

/// What a finished compaction produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactOutcome {
    /// The appended `compaction` entry.
    pub entry: Value,
    /// The summary result (also for hook-supplied compactions).
    pub result: CompactionResult,
    /// The compaction came from a `session_before_compact` hook.
    pub from_extension: bool,
}

/// Options of [`SessionEngine::navigate_tree`] (the data part of `SessionTree.navigateTree()`'s
/// options; the binding adds the model, hooks and signal).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(rename = "NavigateTreeOptions"))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct NavigateRun {
    /// Summarize the branch being left.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub summarize: bool,
    /// Instructions that replace the branch-summary template (SPEC §10).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub custom_instructions: Option<String>,
    /// The model's context window for the branch-summary budget (default 128000 tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub context_window: Option<u64>,
    /// Tokens kept free (default 16384); the budget is `contextWindow - reserveTokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub reserve_tokens: Option<u64>,
    /// The host's tokenizer for the branch-summary budget (SPEC §3, §10); default chars/4. Not
    /// read from JSON: the binding takes it from `countTokens`.
    #[serde(skip)]
    pub count_tokens: HostCounter,
}

impl NavigateRun {
    /// The branch-summary options of this navigation.
    pub fn branch_options(&self) -> BranchSummaryOptions {
        BranchSummaryOptions {
            context_window: self.context_window,
            reserve_tokens: self.reserve_tokens,
            custom_instructions: self.custom_instructions.clone(),
        }
    }
}

/// The result of [`SessionEngine::navigate_tree`] (SPEC §10).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NavigateOutcome {
    /// Text for the host's editor (the target user message / custom message text).
    pub editor_text: Option<String>,
    /// A hook cancelled, or the summary was aborted: nothing changed.
    pub cancelled: bool,
    /// The summary was aborted.
    pub aborted: bool,
    /// The appended `branch_summary` entry.
    pub summary_entry: Option<Value>,
    /// The new leaf id (`None`: before the first entry).
    pub new_leaf_id: Option<String>,
}

impl SessionEngine {
    /// Wraps a session.
    pub fn new(session: SessionTree) -> Self {
        Self::with_shared(SharedSession::new(session))
    }

    /// Wraps a session the host already shares (e.g. with its own tasks).
    pub fn with_shared(session: SharedSession) -> Self {
        Self {
            session,
            busy: AtomicBool::new(false),
            current: Mutex::new(None),
            templates: Mutex::new(PromptTemplates::default()),
            guard: Mutex::new(ProgressGuard::default()),
        }
    }

    /// The session: read or change it with [`SharedSession::read`] / [`SharedSession::write`]
    /// (also while an operation runs; clone it to keep a handle).
    pub fn session(&self) -> &SharedSession {
        &self.session
    }

    /// The prompt templates this engine's summaries use (a copy).
    pub fn templates(&self) -> PromptTemplates {
        lock(&self.templates).clone()
    }

    /// Replaces the prompt templates (used from the next operation on).
    pub fn set_templates(&self, templates: PromptTemplates) {
        *lock(&self.templates) = templates;
    }

    /// True while a compaction or navigation runs.
    pub fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Aborts the running operation, if any (`abortCompaction()`).
    pub fn abort(&self) {
        let current = lock(&self.current).clone();
        if let Some(s) = current {
            s.abort();
        }
    }

    fn begin(&self, external: Option<&AbortSignal>) -> Result<(BusyGuard<'_>, AbortSignal)> {
        if self.busy.swap(true, Ordering::AcqRel) {
            return Err(Error::Busy);
        }
        let signal = external.cloned().unwrap_or_default();
        *lock(&self.current) = Some(signal.clone());
        Ok((BusyGuard(self), signal))
    }

    fn new_id(&self) -> String {
        self.session.read(SessionTree::new_entry_id)
    }

    /// [`Self::count_branch`] for the entries at `path` (indices, root first) rather than the
    /// current branch.
    async fn count_path(&self, counter: &HostCounter, path: &[usize]) -> Result<Option<CountedBranch>> {
        let Some(c) = counter.get() else { return Ok(None) };
        let texts = self.session.read(|s| entry_texts(&crate::entry::Selection::new(s, path)));
        let tokens = c.count_texts(&texts).await?;
        Ok(Some(CountedBranch { path: path.to_vec(), tokens }))
    }

    /// The current branch counted by `counter` (`None` without one): the texts are read under
    /// the lock and counted without it (a host's counter may await), so the computation that
    /// follows uses the branch as it was counted.
    async fn count_branch(&self, counter: &HostCounter) -> Result<Option<CountedBranch>> {
        if counter.get().is_none() {
            return Ok(None);
        }
        let path = self.session.read(|s| s.branch_indices().to_vec());
        self.count_path(counter, &path).await
    }

    /// Runs a compaction on the current branch (SPEC §9, §11): prepare (error "Already
    /// compacted"), `session_before_compact` (cancel → [`Error::Cancelled`]; a supplied
    /// `compaction` is used as is with `fromExtension: true`; when there is nothing to compact
    /// the hook sees the reference rules' preparation marked `nothingToCompact: true`, and
    /// without a supplied compaction the run fails with "Nothing to compact"), `session.compacting`
    /// (prompt, context lines, preserveData), the summary, the appended `compaction` entry, and
    /// `session_compact`. An abort at any await point appends nothing. `now_ms`: timestamp.
    pub async fn compact<C: Complete, H: Hooks>(
        &self,
        model: &C,
        hooks: &H,
        run: &CompactRun,
        abort: Option<&AbortSignal>,
        now_ms: f64,
    ) -> Result<CompactOutcome> {
        if let Some(w) = run.context_window {
            crate::api::token_budget(w, "contextWindow")?;
        }
        let (_guard, signal) = self.begin(abort)?;
        let fallback = run.settings.falls_back(false);
        let done = self.compact_inner(&DynModel(model), hooks, run, &signal, now_ms, fallback).await?;
        if !done.result.no_progress {
            // Progress made by hand closes the breaker (SPEC §13.5).
            let mut g = lock(&self.guard);
            g.attempts = 0;
            g.open = None;
        }
        Ok(done)
    }

    /// `fallback`: use the extractive summarizer when the model fails.
    async fn compact_inner<H: Hooks>(
        &self,
        model: &DynModel<'_>,
        hooks: &H,
        run: &CompactRun,
        signal: &AbortSignal,
        now_ms: f64,
        fallback: bool,
    ) -> Result<CompactOutcome> {
        const WHAT: &str = "Compaction";
        let counted = signal.race(WHAT, self.count_branch(&run.count_tokens)).await?;
        let (prep, branch_entries, session_id, context_before, prepared) = self.session.read(|s| {
            let path = counted.as_ref().map_or(s.branch_indices(), |c| &c.path);
            with_branch(s, counted.as_ref(), |branch| {
                // Progress is measured on estimates of the built context on both sides (SPEC
                // §13.5): the provider's usage before has no counterpart after.
                let context_before = estimate_built_context_tokens(branch);
                // With nothing to compact the hook still runs (on the reference rules'
                // preparation, marked `nothingToCompact`): an extension may supply its own.
                let prep = match crate::plan::prepare::prepare_compaction_for_hooks(branch, &run.settings) {
                    Some(p) => p,
                    None => {
                        let ends_in_compaction = path.last().is_some_and(|&i| s.meta(i).kind == EntryKind::Compaction);
                        return Err(if ends_in_compaction { Error::AlreadyCompacted } else { Error::NothingToCompact });
                    }
                };
                // The branch as JSON only for a `session_before_compact` listener.
                let entries: Vec<Value> = if hooks.listens(HookName::BeforeCompact) {
                    path.iter().map(|&i| s.entry(i).into_owned()).collect()
                } else {
                    Vec::new()
                };
                let sid = s.header().and_then(|h| h.get("id")).cloned().unwrap_or(Value::Null);
                // The branch this compaction belongs to (SPEC §13.2): its entry goes under this
                // leaf, or under what the host appends to it meanwhile, wherever the host moves
                // the leaf.
                let leaf = path.last().and_then(|&i| s.meta(i).id.clone());
                let prepared = PreparedBranch { leaf, path: path.to_vec() };
                Ok((prep, entries, sid, context_before, prepared))
            })
        })?;
        let before = if hooks.listens(HookName::BeforeCompact) {
            let event = BeforeCompactEvent {
                preparation: prep.clone(),
                branch_entries,
                custom_instructions: run.custom_instructions.clone(),
            };
            signal.race(WHAT, hooks.before_compact(event)).await?
        } else {
            BeforeCompactReply::default()
        };
        if before.cancel {
            return Err(Error::Cancelled);
        }
        let supplied_details = before.compaction.as_ref().map(|c| c.details.clone());
        let (mut result, from_extension, preserve) = match &before.compaction {
            Some(c) => {
                let mut r = hook_compaction(c, &prep);
                self.session.read(|s| check_hook_first_kept(s, &prepared, &prep, &r.first_kept_entry_id))?;
                r.summarizer = Some(Summarizer::Extension);
                (r, true, None)
            }
            None if prep.nothing_to_compact => return Err(Error::NothingToCompact),
            None => {
                let shaping = if hooks.listens(HookName::Compacting) {
                    let messages: Vec<Value> =
                        prep.messages_to_summarize.iter().chain(&prep.turn_prefix_messages).cloned().collect();
                    let event = CompactingEvent { session_id, messages };
                    signal.race(WHAT, hooks.compacting(event)).await?
                } else {
                    CompactingReply::default()
                };
                let options = CompactOptions {
                    custom_instructions: run.custom_instructions.clone(),
                    prompt_override: shaping.prompt,
                    extra_context: shaping.context,
                };
                let templates = self.templates();
                let result = match signal.race(WHAT, compact(&prep, model, &options, &templates)).await {
                    Ok(mut r) => {
                        r.summarizer = Some(model.summarizer());
                        r
                    }
                    Err(e @ Error::Aborted { .. }) => return Err(e),
                    Err(e) if fallback => {
                        // Every model failed: the extractive summarizer writes it (SPEC §13.5).
                        let extractive = ExtractiveSummarizer::default();
                        let mut r = signal.race(WHAT, compact(&prep, &extractive, &options, &templates)).await?;
                        r.summarizer = Some(Summarizer::Extractive);
                        r.fallback_reason = Some(e.to_string());
                        r
                    }
                    Err(e) => return Err(e),
                };
                (result, false, shaping.preserve_data)
            }
        };
        signal.check(WHAT)?;
        let mut entry = json!({
            "type": "compaction",
            "id": self.new_id(),
            "parentId": prepared.leaf,
            "timestamp": format_iso_timestamp(now_ms),
            "summary": result.summary,
            "shortSummary": result.short_summary,
            "firstKeptEntryId": result.first_kept_entry_id,
            "tokensBefore": js_number(result.tokens_before),
            "details": result.details,
        });
        if result.short_summary_error.is_some() {
            // The failed short summary is left out; the history summary is kept.
            if let Some(o) = entry.as_object_mut() {
                o.shift_remove("shortSummary");
            }
        }
        if let Some(p) = preserve {
            entry["preserveData"] = p;
        }
        if from_extension {
            // A supplied compaction is used as is (SPEC §11): its own `details`, whatever their
            // shape, or none — not file lists coerced from them.
            match supplied_details.flatten() {
                Some(d) => entry["details"] = d,
                None => {
                    if let Some(o) = entry.as_object_mut() {
                        o.shift_remove("details");
                    }
                }
            }
            entry["fromExtension"] = Value::Bool(true);
        }
        let appended = self.session.write(|s| -> Result<usize> {
            // The end of the branch it was prepared for (SPEC §13.2). When the host only
            // appended to that branch during the run (its next turn), that is the host's leaf:
            // the compaction goes under it, so that the next context uses it. When the host moved
            // elsewhere (setLeaf), it goes under the prepared leaf, and the host's leaf stays
            // where the host put it.
            let host_leaf = s.leaf_id().map(str::to_owned);
            let host = host_leaf.as_deref().and_then(|h| s.index_of(h));
            let extended = host_leaf != prepared.leaf && s.tree_index().on_path(s, host, prepared.leaf.as_deref());
            if extended {
                entry["parentId"] = host_leaf.clone().map_or(Value::Null, Value::from);
            }
            let i = s.append_entry(entry.clone())?;
            if host_leaf != prepared.leaf && !extended {
                s.set_leaf(host_leaf.as_deref())?;
            }
            Ok(i)
        })?;
        let after = if hooks.listens(HookName::AfterCompact) {
            hooks.after_compact(CompactEvent { compaction_entry: entry.clone(), from_extension }).await
        } else {
            Ok(())
        };
        if let Err(e) = after {
            // A failing hook fails the operation and the compaction entry does not stay (SPEC
            // §11); entries the host appended meanwhile do (SPEC §13.2).
            let parent = entry["parentId"].as_str();
            self.session.write(|s| s.remove_entry(appended, parent))?;
            return Err(e);
        }
        // Progress (SPEC §13.5): the estimate after against the estimate before and the threshold,
        // on the compaction's own branch (the host's leaf may have moved elsewhere, §13.2).
        let path = self.session.read(|s| s.tree_index().branch_to(s, appended));
        let counted = signal.race(WHAT, self.count_path(&run.count_tokens, &path)).await?;
        let context_after =
            self.session.read(|s| with_path(s, &path, counted.as_ref(), |b| estimate_built_context_tokens(b)));
        result.context_tokens_before = Some(context_before);
        result.context_tokens_after = Some(context_after);
        result.no_progress = context_after >= context_before
            || run.context_window.is_some_and(|w| should_compact(context_after, w, &run.settings));
        Ok(CompactOutcome { entry, result, from_extension })
    }

    /// Moves to `target_id` (SPEC §10): a `user` message or `custom_message` target makes its
    /// parent the leaf (its text goes back to the editor); otherwise the target itself. With
    /// `summarize`, the branch being left is summarized (or the `session_before_tree` hook's
    /// summary is used) and attached as a new `branch_summary` child of the new leaf, with
    /// `fromId` = the old leaf (`"root"` when none, SPEC §12.6). Cancel/abort change nothing.
    pub async fn navigate_tree<C: Complete, H: Hooks>(
        &self,
        target_id: &str,
        model: Option<&C>,
        hooks: &H,
        run: &NavigateRun,
        abort: Option<&AbortSignal>,
        now_ms: f64,
    ) -> Result<NavigateOutcome> {
        let (_guard, signal) = self.begin(abort)?;
        const WHAT: &str = "Branch summary";
        let (old_leaf, entries_to_summarize, common, new_leaf, editor_text) = self.session.read(|s| {
            let ti = s.index_of(target_id).ok_or_else(|| Error::NotFound { id: target_id.to_string() })?;
            let old_leaf = s.leaf_id().map(str::to_owned);
            let (idx, common) = s.tree_index().collect_for_branch_summary(s, old_leaf.as_deref(), target_id);
            let entries: Vec<Value> = idx.iter().map(|&i| s.entry(i).into_owned()).collect();
            let m = s.meta(ti);
            let back_to_editor =
                m.kind == EntryKind::CustomMessage || (m.kind == EntryKind::Message && m.role() == Some(Role::User));
            let (new_leaf, editor) = if back_to_editor {
                let e = s.entry(ti);
                let text = match m.kind {
                    EntryKind::CustomMessage => crate::prompt::serialize::content_text(e.get("content")),
                    _ => crate::prompt::serialize::content_text(e.get("message").and_then(|msg| msg.get("content"))),
                };
                (m.parent_id.clone().filter(|p| s.index_of(p).is_some()), Some(text))
            } else {
                (Some(target_id.to_string()), None)
            };
            Ok((old_leaf, entries, common, new_leaf, editor))
        })?;
        let before: Result<BeforeTreeReply> = if hooks.listens(HookName::BeforeTree) {
            let event = BeforeTreeEvent {
                preparation: TreePreparation {
                    target_id: target_id.to_string(),
                    old_leaf_id: old_leaf.clone(),
                    common_ancestor_id: common,
                    entries_to_summarize: entries_to_summarize.clone(),
                    user_wants_summary: run.summarize,
                },
            };
            signal.race(WHAT, hooks.before_tree(event)).await
        } else {
            Ok(BeforeTreeReply::default())
        };
        let before = match before {
            Ok(v) => v,
            Err(Error::Aborted { .. }) => {
                return Ok(NavigateOutcome { cancelled: true, aborted: true, ..Default::default() })
            }
            Err(e) => return Err(e),
        };
        if before.cancel {
            return Ok(NavigateOutcome { cancelled: true, ..Default::default() });
        }
        let mut summary: Option<(String, Value, bool)> = None;
        if run.summarize && !entries_to_summarize.is_empty() {
            if let Some(s) = before.summary {
                summary = Some((s.summary, s.details.unwrap_or(Value::Null), true));
            } else if let Some(model) = model {
                let list_values = entries_to_summarize.clone();
                let list = crate::entry::EntryList::new(&list_values);
                let options = run.branch_options();
                let templates = self.templates();
                // The budget counted by the host's `countTokens`, when given (SPEC §3, §10).
                let counts = match signal.race(WHAT, run.count_tokens.count_entries(&list)).await {
                    Ok(c) => c,
                    Err(Error::Aborted { .. }) => {
                        return Ok(NavigateOutcome { cancelled: true, aborted: true, ..Default::default() })
                    }
                    Err(e) => return Err(e),
                };
                let summary_of = async {
                    match &counts {
                        Some(t) => {
                            generate_branch_summary(&Recounted::new(&list, t), model, &options, &templates).await
                        }
                        None => generate_branch_summary(&list, model, &options, &templates).await,
                    }
                };
                match signal.race(WHAT, summary_of).await {
                    Ok(b) => {
                        let details = json!({"readFiles": b.read_files, "modifiedFiles": b.modified_files});
                        summary = Some((b.summary, details, false));
                    }
                    Err(Error::Aborted { .. }) => {
                        return Ok(NavigateOutcome { cancelled: true, aborted: true, ..Default::default() })
                    }
                    Err(e) => return Err(e),
                }
            } else {
                return Err(Error::InvalidArgument("navigateTree with summarize needs `complete` (or a session_before_tree hook that supplies the summary)".into()));
            }
        }
        if signal.is_aborted() {
            return Ok(NavigateOutcome { cancelled: true, aborted: true, ..Default::default() });
        }
        self.session.write(|s| s.set_leaf(new_leaf.as_deref()))?;
        let mut summary_entry = None;
        let mut appended = None;
        let mut from_extension = false;
        if let Some((text, details, ext)) = summary {
            let mut entry = json!({
                "type": "branch_summary",
                "id": self.new_id(),
                "parentId": new_leaf,
                "timestamp": format_iso_timestamp(now_ms),
                "fromId": old_leaf.clone().unwrap_or_else(|| "root".into()),
                "summary": text,
            });
            if !details.is_null() {
                entry["details"] = details;
            }
            if ext {
                entry["fromExtension"] = Value::Bool(true);
                from_extension = true;
            }
            appended = Some(self.session.write(|s| s.append_entry(entry.clone()))?);
            summary_entry = Some(entry);
        }
        let new_leaf_id = self.session.read(|s| s.leaf_id().map(str::to_owned));
        let event = TreeEvent {
            new_leaf_id: new_leaf_id.clone(),
            old_leaf_id: old_leaf.clone(),
            summary_entry: summary_entry.clone(),
            from_extension: summary_entry.as_ref().map(|_| from_extension),
        };
        let after = if hooks.listens(HookName::AfterTree) { hooks.after_tree(event).await } else { Ok(()) };
        if let Err(e) = after {
            // A failing hook fails the operation: undo the summary entry and the move (entries
            // the host appended meanwhile stay; a leaf the host moved stays where it is).
            let mut s = self.session.guard();
            match appended {
                Some(i) => s.remove_entry(i, old_leaf.as_deref())?,
                None if s.leaf_id().map(str::to_owned) == new_leaf_id => s.set_leaf(old_leaf.as_deref())?,
                None => {}
            }
            return Err(e);
        }
        Ok(NavigateOutcome { editor_text, cancelled: false, aborted: false, summary_entry, new_leaf_id })
    }

    /// Automatic compaction after a model turn (SPEC §11): prune first; then the overflow path
    /// (the reply's error says the context overflowed, same model, newer than the last
    /// compaction: compact and ask the host to retry with the error left out of the context,
    /// unless the compaction left a context that cannot fit: then no retry and an `error_message`) or
    /// the threshold path (`shouldCompact` on the estimate minus the pruned tokens: compact,
    /// then "Continue if you have next steps." unless `autoContinue === false`); the threshold
    /// is also checked after a failed (`error`) turn, with the last successful usage. Candidates
    /// are tried in order, transient failures retried with backoff (see [`RetryPolicy`]); when
    /// all fail, the extractive summarizer writes the summary unless `fallback` is `"none"`.
    ///
    /// The progress guard (SPEC §13.5): a compaction that leaves the context at or above its
    /// estimate before, or above the threshold, is `noProgress` (`auto_compaction_no_progress`
    /// event); after `maxAttemptsWithoutProgress` (default 3) consecutive attempts that failed
    /// or made no progress, automatic compaction pauses (`auto_compaction_paused`) until the
    /// context changes — the branch no longer holds the leaf it paused at, another compaction
    /// (a manual one) is the latest, or the model, window or settings differ; an overflow is
    /// recovered at most once per turn (no user message since the recovery's compaction). A due
    /// compaction that does not run emits `auto_compaction_skipped` and sets
    /// [`CheckOutcome::skipped`]. With compaction enabled, a `reserveTokens` not below
    /// `contextWindow` is `E_INVALID_ARGUMENT` before anything runs (SPEC §13.11).
    #[allow(clippy::too_many_arguments)] // each argument is a distinct host capability
    pub async fn check_compaction<C: Complete, H: Hooks, K: Clock, E: EventSink>(
        &self,
        assistant_message: &Value,
        check: &CheckOptions,
        candidates: &[C],
        hooks: &H,
        clock: &K,
        events: &E,
        abort: Option<&AbortSignal>,
    ) -> Result<CheckOutcome> {
        // A reserve that leaves no room is refused before anything runs (compaction enabled,
        // SPEC §13.11).
        crate::plan::prepare::checked_compaction_threshold(check.context_window, &check.settings)?;
        // One operation at a time: a busy session is neither pruned nor compacted.
        let (_guard, signal) = self.begin(abort)?;
        let mut outcome = CheckOutcome::default();
        // The estimate is taken before pruning: the check subtracts the pruned tokens (SPEC §7),
        // and an estimate made after pruning would already lack them (counted twice).
        // With the host's `countTokens` (SPEC §3) the estimate counts the branch's texts with it.
        let counted = signal.race("Compaction check", self.count_branch(&check.count_tokens)).await?;
        let estimate_before_prune = self.session.read(|s| {
            with_branch(s, counted.as_ref(), |b| {
                crate::plan::overflow::estimate_context_tokens_with(b, &check.settings)
            })
        });
        // 1. prune
        let pruned = self.session.write(|s| {
            // The counts decide only when the branch is still the one counted.
            let tokens = counted.as_ref().filter(|c| c.path == s.branch_indices()).map(|c| c.tokens.as_slice());
            let (plan, _) = s.prune_tool_outputs_counted(&check.prune, clock.now_ms(), tokens);
            outcome.pruned_count = plan.candidates.len();
            outcome.tokens_saved = plan.tokens_saved;
            // What the pruned entries count now, for the counter's own saving.
            let texts: Vec<_> = match &counted {
                Some(_) => plan
                    .candidates
                    .iter()
                    .map(|c| entry_counted_text(&s.entry(c.index), s.meta(c.index).kind))
                    .collect(),
                None => Vec::new(),
            };
            (plan.candidates.iter().map(|c| c.index).collect::<Vec<_>>(), texts)
        });
        if let (Some(c), Some(counter)) = (&counted, check.count_tokens.get()) {
            if !pruned.0.is_empty() {
                // What pruning saved, by the same counter as the estimate it is subtracted from.
                let after = signal.race("Compaction check", counter.count_texts(&pruned.1)).await?;
                let before = |index: usize| c.path.iter().position(|&i| i == index).map_or(0, |p| c.tokens[p]);
                outcome.tokens_saved =
                    pruned.0.iter().zip(&after).map(|(&i, &now)| before(i).saturating_sub(now)).sum();
            }
        }
        // 2. which path
        let mut not_recovered = None;
        let reason = {
            let s = self.session.guard();
            let branch = s.branch_source();
            let overflow = crate::plan::overflow::is_context_overflow(assistant_message, Some(check.context_window));
            let same_model =
                match (&check.model, crate::entry::MessageMeta::from_value(assistant_message).provider_model) {
                    (Some(want), Some(got)) => crate::plan::overflow::same_model(want, &got),
                    _ => true,
                };
            let last_compaction_ms = crate::plan::prepare::last_compaction_index(&branch)
                .and_then(|i| branch.entry(i).get("timestamp").and_then(Value::as_str).and_then(parse_iso_timestamp));
            let msg_ms = assistant_message.get("timestamp").and_then(Value::as_f64);
            let newer = match (last_compaction_ms, msg_ms) {
                (Some(c), Some(m)) => m > c,
                _ => true,
            };
            let stop = assistant_message.get("stopReason").and_then(Value::as_str);
            if check.settings.enabled && overflow && !(same_model && newer) {
                // An overflow this check does not recover is reported, never a silent no-op.
                not_recovered = Some(if same_model { SkipCause::StaleOverflow } else { SkipCause::OtherModel });
            }
            if !check.settings.enabled {
                None
            } else if overflow && same_model && newer {
                Some(CompactionReason::Overflow)
            } else if !overflow && stop != Some("aborted") {
                // After a failed turn too (SPEC §11): the estimate uses the last successful usage.
                let tokens = estimate_before_prune - outcome.tokens_saved as f64;
                outcome.context_tokens = tokens;
                should_compact(tokens, check.context_window, &check.settings).then_some(CompactionReason::Threshold)
            } else {
                None
            }
        };
        if let Some(cause) = not_recovered {
            events.emit(AutoCompactionEvent::AutoCompactionSkipped { reason: CompactionReason::Overflow, cause });
            outcome.skipped = Some(cause);
            return Ok(outcome);
        }
        let Some(reason) = reason else { return Ok(outcome) };
        // 3. the progress guard (SPEC §13.5)
        if let Some(cause) = self.skip_cause(reason, check) {
            events.emit(AutoCompactionEvent::AutoCompactionSkipped { reason, cause });
            outcome.skipped = Some(cause);
            if reason == CompactionReason::Overflow {
                outcome.error_message = Some(format!(
                    "Context overflow recovery failed: {}",
                    if cause == SkipCause::OverflowRecoveredThisTurn {
                        "the context still overflows after this turn's recovery"
                    } else {
                        "automatic compaction is paused after repeated attempts without progress"
                    }
                ));
            }
            return Ok(outcome);
        }
        outcome.reason = Some(reason);
        let will_retry = reason == CompactionReason::Overflow;
        events.emit(AutoCompactionEvent::AutoCompactionStart { reason });
        let model = Retrying { candidates, policy: &check.retry, clock, signal: &signal };
        let run = CompactRun {
            settings: check.settings.clone(),
            custom_instructions: None,
            context_window: Some(check.context_window),
            count_tokens: check.count_tokens.clone(),
        };
        let fallback = check.settings.falls_back(true);
        let result = self.compact_inner(&DynModel(&model), hooks, &run, &signal, clock.now_ms(), fallback).await;
        let progress = match &result {
            Ok(done) => Some(!done.result.no_progress),
            Err(Error::Aborted { .. }) => None,
            Err(_) => Some(false),
        };
        let outcome = match result {
            Ok(done) => {
                // A recovery whose compaction left a context that cannot fit does not ask for a
                // retry: the retried turn would overflow again (SPEC §13.5). Not shrunk, or still
                // at the window or above; a context between the threshold and the window is
                // `noProgress` but may fit, so it is retried. The compaction stays.
                let stuck = will_retry && done.result.no_progress && !fits_window(&done.result, check.context_window);
                let will_retry = will_retry && !stuck;
                let error_message = stuck.then(|| no_progress_message(&done.result, check));
                events.emit(AutoCompactionEvent::AutoCompactionEnd {
                    result: Some(Box::new(done.result.clone())),
                    aborted: false,
                    will_retry,
                    error_message: error_message.clone(),
                });
                if done.result.no_progress {
                    events.emit(AutoCompactionEvent::AutoCompactionNoProgress {
                        reason,
                        context_tokens_before: done.result.context_tokens_before,
                        context_tokens_after: done.result.context_tokens_after,
                    });
                }
                outcome.will_retry = will_retry;
                outcome.error_message = error_message;
                if reason == CompactionReason::Overflow {
                    // This turn's recovery, retried or not: an overflow before the next user
                    // message is not recovered again.
                    lock(&self.guard).overflow_recovery =
                        done.entry.get("id").and_then(Value::as_str).map(str::to_owned);
                }
                if will_retry {
                    // The retry's context is sent to the model: provider-valid (SPEC §13.1),
                    // without the overflow error.
                    let s = self.session.guard();
                    let mut plan = crate::context::plan_context(&*s, s.branch_indices());
                    plan.items.retain(|it| it.materialize(&*s).as_ref() != Some(assistant_message));
                    let (messages, repairs) = crate::context::provider_messages(&*s, &plan.items);
                    let mut ctx = plan.settings;
                    ctx.messages = messages;
                    ctx.repairs = repairs;
                    outcome.context = Some(ctx);
                } else if reason == CompactionReason::Threshold && check.settings.auto_continue != Some(false) {
                    outcome.continue_prompt = Some(CONTINUE_PROMPT.to_string());
                }
                outcome.compaction = Some(done);
                outcome
            }
            Err(e) => {
                let aborted = matches!(e, Error::Aborted { .. });
                let message = if aborted {
                    None
                } else if will_retry {
                    Some(format!("Context overflow recovery failed: {e}"))
                } else {
                    Some(format!("Auto-compaction failed: {e}"))
                };
                events.emit(AutoCompactionEvent::AutoCompactionEnd {
                    result: None,
                    aborted,
                    will_retry: false,
                    error_message: message.clone(),
                });
                outcome.aborted = aborted;
                outcome.error_message = message;
                outcome
            }
        };
        // 4. count the attempt; open the breaker after too many without progress
        if let Some(progress) = progress {
            let key = self.context_key(check);
            let mut g = lock(&self.guard);
            g.attempts = if progress { 0 } else { g.attempts + 1 };
            let limit = check.settings.attempts_limit();
            if g.attempts >= limit {
                g.open = Some(key);
                drop(g);
                events.emit(AutoCompactionEvent::AutoCompactionPaused { attempts: limit });
            }
        }
        Ok(outcome)
    }

    /// The context the breaker compares (see [`ContextKey`]).
    fn context_key(&self, check: &CheckOptions) -> ContextKey {
        let s = self.session.guard();
        let branch = s.branch_source();
        let last_compaction = crate::plan::prepare::last_compaction_index(&branch)
            .and_then(|i| branch.entry(i).get("id").and_then(Value::as_str).map(str::to_owned));
        ContextKey {
            leaf: s.leaf_id().map(str::to_owned),
            last_compaction,
            model: check.model.clone(),
            context_window: check.context_window,
            reserve_tokens: check.settings.reserve_tokens,
            keep_recent_tokens: check.settings.keep_recent_tokens,
        }
    }

    /// Why automatic compaction must not run now (SPEC §13.5), if it must not: the overflow
    /// was already recovered in this turn (no user message since that recovery's compaction),
    /// or the breaker is open and the context has not changed since. A changed context closes
    /// the breaker.
    fn skip_cause(&self, reason: CompactionReason, check: &CheckOptions) -> Option<SkipCause> {
        let now = self.context_key(check);
        let s = self.session.guard();
        let on_branch = |id: &str| s.index_of(id).is_some_and(|i| s.branch_indices().contains(&i));
        let mut g = lock(&self.guard);
        if reason == CompactionReason::Overflow {
            if let Some(at) = g.overflow_recovery.as_deref().and_then(|id| s.index_of(id)) {
                let branch = s.branch_indices();
                if let Some(pos) = branch.iter().position(|&i| i == at) {
                    let user_since = branch[pos + 1..].iter().any(|&i| {
                        let m = s.meta(i);
                        m.kind == EntryKind::Message && m.role() == Some(Role::User)
                    });
                    if !user_since {
                        return Some(SkipCause::OverflowRecoveredThisTurn);
                    }
                }
            }
        }
        let still_open = g.open.as_ref().is_some_and(|k| {
            k.leaf.as_deref().map_or(true, on_branch)
                && k.last_compaction == now.last_compaction
                && k.model == now.model
                && k.context_window == now.context_window
                && k.reserve_tokens == now.reserve_tokens
                && k.keep_recent_tokens == now.keep_recent_tokens
        });
        if still_open {
            return Some(SkipCause::Paused);
        }
        if g.open.take().is_some() {
            g.attempts = 0;
        }
        None
    }
}

/// The synthetic prompt after a threshold compaction.
pub const CONTINUE_PROMPT: &str = "Continue if you have next steps.";

/// A branch counted by the host's tokenizer: its entry indices (root first) and the token
/// numbers of each ([`Recounted::new`]).
struct CountedBranch {
    path: Vec<usize>,
    tokens: Vec<u64>,
}

/// Runs `f` on the current branch, or — when `counted` — on the branch that was counted, with
/// the counter's token numbers (SPEC §3).
fn with_branch<R>(s: &SessionTree, counted: Option<&CountedBranch>, f: impl FnOnce(&dyn EntrySource) -> R) -> R {
    match counted {
        None => f(&s.branch_source()),
        Some(c) => with_path(s, &c.path, counted, f),
    }
}

/// Runs `f` on the entries at `path` (indices, root first), with the token numbers of
/// `counted` (counted on that path) when given.
fn with_path<R>(
    s: &SessionTree,
    path: &[usize],
    counted: Option<&CountedBranch>,
    f: impl FnOnce(&dyn EntrySource) -> R,
) -> R {
    let selection = crate::entry::Selection::new(s, path);
    match counted {
        None => f(&selection),
        Some(c) => f(&Recounted::new(&selection, &c.tokens)),
    }
}

/// The branch a compaction was prepared on (SPEC §13.2).
struct PreparedBranch {
    /// Its leaf: the compaction's parent.
    leaf: Option<String>,
    /// Its entries, root first.
    path: Vec<usize>,
}

/// Refuses a hook-supplied `firstKeptEntryId` that names no entry, is not on the branch the
/// compaction was prepared on, or is not a place a cut may fall (a valid cut point, or an entry
/// the metadata pull-back reaches from one: SPEC §4.1, §4.4, §12.7) — a context starting there
/// would open with a tool result or drop the branch. The engine's own cut is always accepted.
/// Error: [`Error::Hook`] naming the id.
fn check_hook_first_kept(
    s: &SessionTree,
    prepared: &PreparedBranch,
    prep: &CompactionPreparation,
    first_kept: &str,
) -> Result<()> {
    if first_kept == prep.first_kept_entry_id {
        return Ok(());
    }
    let refuse = |why: &str| Error::Hook {
        hook: "session_before_compact".into(),
        message: format!("the returned compaction's firstKeptEntryId {first_kept} {why}"),
    };
    let Some(i) = s.index_of(first_kept) else { return Err(refuse("names no entry")) };
    let Some(pos) = prepared.path.iter().position(|&p| p == i) else {
        return Err(refuse("is not on the branch being compacted"));
    };
    let branch = crate::entry::Selection::new(s, &prepared.path);
    if !crate::plan::cut_point::is_valid_first_kept(&branch, pos) {
        return Err(refuse("is not a valid cut point (a tool result, or inside a tool call's exchange)"));
    }
    Ok(())
}

/// The summary result of a hook-supplied compaction: missing fields are the preparation's.
fn hook_compaction(c: &SuppliedCompaction, prep: &CompactionPreparation) -> CompactionResult {
    let details = c.details.clone().map(|d| serde_json::from_value(d).unwrap_or_default()).unwrap_or_default();
    CompactionResult {
        summary: c.summary.clone(),
        short_summary: c.short_summary.clone().unwrap_or_default(),
        first_kept_entry_id: c.first_kept_entry_id.clone().unwrap_or_else(|| prep.first_kept_entry_id.clone()),
        tokens_before: c.tokens_before.unwrap_or(prep.tokens_before),
        details,
        summarizer: None,
        fallback_reason: None,
        truncated: Vec::new(),
        short_summary_error: None,
        context_tokens_before: None,
        context_tokens_after: None,
        no_progress: false,
    }
}

/// Retry settings of automatic compaction (SPEC §11). Read from a host, missing fields are the
/// defaults and negative numbers count as 0.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RetryPolicy {
    /// Retries per candidate after the first attempt.
    #[serde(deserialize_with = "retry_count")]
    pub max_retries: u32,
    /// First backoff in ms; attempt `n` waits `baseDelayMs · 2^n`.
    #[serde(deserialize_with = "non_negative_ms")]
    pub base_delay_ms: f64,
    /// A wait longer than this (ms) moves on to the next candidate.
    #[serde(deserialize_with = "non_negative_ms")]
    pub max_wait_ms: f64,
}

/// A retry count from a JS number: negative → 0, fractions dropped, saturating.
fn retry_count<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<u32, D::Error> {
    let n = <f64 as serde::Deserialize>::deserialize(d)?;
    Ok(if n > 0.0 { n.min(u32::MAX as f64) as u32 } else { 0 })
}

/// A model id of [`CheckOptions::model`]: a non-empty string (`null` → none).
fn model_id<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    let id = <Option<String> as serde::Deserialize>::deserialize(d)?;
    if id.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err(serde::de::Error::custom("`model` must name a model (`provider/id` or `id`), not be empty"));
    }
    Ok(id)
}

/// A duration in ms from a JS number: negative → 0.
fn non_negative_ms<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    let n = <f64 as serde::Deserialize>::deserialize(d)?;
    Ok(if n > 0.0 { n } else { 0.0 })
}

impl Default for RetryPolicy {
    /// 3 retries, 2 s base, 30 s cap.
    fn default() -> Self {
        Self { max_retries: 3, base_delay_ms: 2000.0, max_wait_ms: 30_000.0 }
    }
}

/// Default timeout of one request to the remote summarizer endpoint, in ms (SPEC §13.5).
pub const REMOTE_TIMEOUT_MS: f64 = 120_000.0;

/// Runs `fut` for at most `timeout_ms` on `clock` (SPEC §13.5: a stalled summarizer must not
/// hang a compaction); when the time is up, `fut` is dropped (a host request in flight is
/// cancelled by its own drop guard) and the result is [`Error::Remote`] with status 0:
/// "the summarizer did not answer within N s".
pub async fn with_timeout<T, K: Clock>(clock: &K, timeout_ms: f64, fut: impl Future<Output = Result<T>>) -> Result<T> {
    match select(pin!(fut), pin!(clock.sleep(timeout_ms))).await {
        Either::Left((r, _)) => r,
        Either::Right(_) => Err(Error::Remote {
            status: 0,
            message: format!(
                "the summarizer did not answer within {} s",
                crate::js::format_number(timeout_ms / 1000.0)
            ),
        }),
    }
}

/// Options of [`SessionEngine::check_compaction`] (the data part of
/// `SessionTree.checkCompaction()`'s options; the binding adds the candidate models, hooks,
/// event callback and signal).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(rename = "CheckCompactionOptions"))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckOptions {
    /// The model's context window (tokens); required.
    pub context_window: f64,
    /// The current model as `provider/id`, or its id alone (matched against the id after the
    /// provider, [`crate::plan::overflow::same_model`]): overflow recovery only for the same
    /// model. An empty string is refused.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "model_id")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub model: Option<String>,
    /// Compaction settings (threshold, keep, autoContinue); missing ones are the defaults.
    #[serde(default)]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "Partial<CompactionSettings> & TokenCountOptions"))]
    pub settings: CompactionSettings,
    /// Pruning settings; missing ones are the defaults.
    #[serde(default)]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "Partial<PruneConfig>"))]
    pub prune: PruneConfig,
    /// Retry policy; missing fields are the defaults.
    #[serde(default)]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "Partial<RetryPolicy>"))]
    pub retry: RetryPolicy,
    /// The host's tokenizer for the threshold estimate, the pruned tokens subtracted from it
    /// and the compaction (SPEC §3, §11); default chars/4. Not read from JSON: the binding takes
    /// it from `settings.countTokens`.
    #[serde(skip)]
    pub count_tokens: HostCounter,
}

/// What [`SessionEngine::check_compaction`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckOutcome {
    /// Tool results pruned first.
    pub pruned_count: usize,
    /// Tokens saved by pruning.
    pub tokens_saved: u64,
    /// Estimated context tokens used for the threshold decision.
    pub context_tokens: f64,
    /// Overflow recovery or threshold, when a compaction was attempted.
    pub reason: Option<CompactionReason>,
    /// The finished compaction.
    pub compaction: Option<CompactOutcome>,
    /// Overflow path: the host should retry the turn with [`CheckOutcome::context`]. `false` when
    /// the recovery's compaction made no progress and left a context that cannot fit (not
    /// smaller than before, or still at the context window or above: the retried turn would
    /// overflow again): then [`CheckOutcome::error_message`] says why (SPEC §13.5).
    pub will_retry: bool,
    /// The context for the retry: provider-valid (SPEC §13.1), the overflow error message left out.
    pub context: Option<crate::context::SessionContext>,
    /// Threshold path: the synthetic user prompt to send next.
    pub continue_prompt: Option<String>,
    /// The compaction was aborted.
    pub aborted: bool,
    /// `Context overflow recovery failed: …` / `Auto-compaction failed: …`.
    pub error_message: Option<String>,
    /// Why a due compaction did not run (SPEC §13.5).
    pub skipped: Option<SkipCause>,
}

/// Whether the context a compaction left is smaller than the one before it and below the
/// context window `window` (estimates, SPEC §13.5): a retried turn may then fit.
fn fits_window(result: &crate::summarize::CompactionResult, window: f64) -> bool {
    match (result.context_tokens_before, result.context_tokens_after) {
        (Some(before), Some(after)) => after < before && after < window,
        _ => false,
    }
}

/// The error of an overflow recovery whose compaction left a context that cannot fit (SPEC
/// §13.5): `Context overflow recovery failed: the compaction made no progress (context estimated
/// at A tokens after it, B before; context window W), so a retry would overflow again`.
fn no_progress_message(result: &crate::summarize::CompactionResult, check: &CheckOptions) -> String {
    // Estimates and the window are whole numbers of tokens.
    let tokens = |t: Option<f64>| t.map_or_else(|| "?".to_string(), |t| (t as u64).to_string());
    format!(
        "Context overflow recovery failed: the compaction made no progress (context estimated at {} tokens \
         after it, {} before; context window {}), so a retry would overflow again",
        tokens(result.context_tokens_after),
        tokens(result.context_tokens_before),
        check.context_window as u64,
    )
}

/// Texts of transient failures (lower case), retried with backoff.
const TRANSIENT: &[&str] = &[
    "overloaded",
    "rate limit",
    "rate_limit",
    "usage limit",
    "too many requests",
    "429",
    "500",
    "502",
    "503",
    "504",
    "service unavailable",
    "server error",
    "internal error",
    "connection error",
    "fetch failed",
];

/// True when a model failure is worth retrying (SPEC §11): a transient status or text, never a
/// context overflow.
pub fn is_transient(error: &Error) -> bool {
    let (message, status) = match error {
        Error::Model { message, status, .. } => (message.as_str(), *status),
        Error::Summarization { message } => (message.as_str(), None),
        Error::Remote { message, status } => (message.as_str(), Some(*status).filter(|s| *s != 0)),
        _ => return false,
    };
    if crate::plan::overflow::is_overflow_error_text(message) {
        return false;
    }
    if matches!(status, Some(429 | 500 | 502 | 503 | 504)) {
        return true;
    }
    let lower = crate::js::lowercase(message);
    TRANSIENT.iter().any(|t| lower.contains(t))
}

/// The wait a server asked for, in ms, from response headers (names lower-case): `retry-after-ms`,
/// `retry-after` (seconds or an HTTP date), `x-ratelimit-reset-ms`, `x-ratelimit-reset`
/// (seconds, or an epoch timestamp in seconds when larger than now). `now_ms`: ms epoch.
pub fn retry_after_from_headers(headers: &[(String, String)], now_ms: f64) -> Option<f64> {
    let get = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim());
    if let Some(ms) = get("retry-after-ms").and_then(crate::js::parse_f64) {
        return Some(ms.max(0.0));
    }
    if let Some(v) = get("retry-after") {
        if let Some(secs) = crate::js::parse_f64(v) {
            return Some((secs * 1000.0).max(0.0));
        }
        if let Some(at) = parse_http_date(v) {
            return Some((at - now_ms).max(0.0));
        }
    }
    if let Some(ms) = get("x-ratelimit-reset-ms").and_then(crate::js::parse_f64) {
        return Some(ms.max(0.0));
    }
    if let Some(v) = get("x-ratelimit-reset").and_then(crate::js::parse_f64) {
        let as_epoch_ms = v * 1000.0;
        return Some(if as_epoch_ms > now_ms { as_epoch_ms - now_ms } else { v * 1000.0 }.max(0.0));
    }
    None
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) to ms since the epoch.
pub fn parse_http_date(text: &str) -> Option<f64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    if parts.len() != 6 || !parts[5].eq_ignore_ascii_case("GMT") {
        return None;
    }
    let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month = months.iter().position(|m| parts[2].eq_ignore_ascii_case(m))? + 1;
    let iso = format!("{}-{:02}-{:02}T{}Z", parts[3], month, parts[1].parse::<u32>().ok()?, parts[4]);
    parse_iso_timestamp(&iso)
}

/// A [`Complete`] over several candidates with retries (automatic compaction).
struct Retrying<'a, C, K> {
    candidates: &'a [C],
    policy: &'a RetryPolicy,
    clock: &'a K,
    signal: &'a AbortSignal,
}

impl<C: Complete, K: Clock> Complete for Retrying<'_, C, K> {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        let mut last = Error::Summarization { message: "no candidate model".into() };
        'candidates: for candidate in self.candidates {
            for attempt in 0..=self.policy.max_retries {
                match self.signal.race("Compaction", candidate.complete(request.clone())).await {
                    Ok(text) => return Ok(text),
                    Err(e @ Error::Aborted { .. }) => return Err(e),
                    Err(e) => {
                        if !is_transient(&e) || attempt == self.policy.max_retries {
                            last = e;
                            continue 'candidates;
                        }
                        let server = match &e {
                            Error::Model { retry_after_ms, .. } => *retry_after_ms,
                            _ => None,
                        };
                        let wait = server.unwrap_or(self.policy.base_delay_ms * 2f64.powi(attempt as i32));
                        last = e;
                        if wait > self.policy.max_wait_ms {
                            continue 'candidates;
                        }
                        self.signal
                            .race("Compaction", async {
                                self.clock.sleep(wait).await;
                                Ok(())
                            })
                            .await?;
                    }
                }
            }
        }
        Err(last)
    }

    /// The extractive summarizer when every candidate is one (an answer may come from any).
    fn summarizer(&self) -> Summarizer {
        if !self.candidates.is_empty() && self.candidates.iter().all(|c| c.summarizer() == Summarizer::Extractive) {
            Summarizer::Extractive
        } else {
            Summarizer::Model
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let h = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(retry_after_from_headers(&h("retry-after-ms", "1500"), 0.0), Some(1500.0));
        assert_eq!(retry_after_from_headers(&h("Retry-After", "3"), 0.0), Some(3000.0));
        let now = parse_iso_timestamp("2015-10-21T07:28:00Z").unwrap();
        assert_eq!(retry_after_from_headers(&h("retry-after", "Wed, 21 Oct 2015 07:28:10 GMT"), now), Some(10_000.0));
        assert_eq!(retry_after_from_headers(&h("x-ratelimit-reset-ms", "250"), 0.0), Some(250.0));
        assert_eq!(retry_after_from_headers(&h("x-ratelimit-reset", "2"), 1_000_000.0), Some(2000.0));
        assert_eq!(retry_after_from_headers(&[], 0.0), None);
    }

    #[test]
    fn transient_errors() {
        let m = |s: &str, st: Option<u16>| Error::Model { message: s.into(), status: st, retry_after_ms: None };
        assert!(is_transient(&m("Overloaded", None)));
        assert!(is_transient(&m("x", Some(503))));
        assert!(is_transient(&m("TypeError: fetch failed", None)));
        assert!(!is_transient(&m("prompt is too long: 300000 tokens > 200000 maximum", Some(400))));
        assert!(!is_transient(&m("invalid api key", Some(401))));
    }
}
