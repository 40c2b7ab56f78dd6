//! Builders of the engine's operations for Rust hosts: name what differs from the defaults
//! instead of passing five to seven positional arguments. Each ends in `.run()`, the
//! [`SessionEngine`] method it stands for (same rules, same errors, same SPEC sections).
//!
//! ```
//! # use session_compaction::session::{engine::SessionEngine, SessionTree};
//! # use session_compaction::summarize::extractive::ExtractiveSummarizer;
//! # let engine = SessionEngine::new(SessionTree::new(None));
//! let model = ExtractiveSummarizer::default();
//! let run = engine.compaction(&model).custom_instructions("open tasks first").keep_recent_tokens(8_000).now_ms(0.0);
//! let result = futures_executor::block_on(run.run());
//! assert_eq!(result.unwrap_err().code(), "E_NOTHING_TO_COMPACT"); // an empty session
//! ```

use crate::error::{Error, Result};
use crate::plan::prepare::CompactionSettings;
use crate::plan::tokens::{CountTokens, HostCounter};
use crate::session::engine::{
    AbortSignal, CompactOutcome, CompactRun, Hooks, NavigateOutcome, NavigateRun, NoHooks, SessionEngine,
};
use crate::summarize::{Complete, SummaryRequest};
#[cfg(not(target_arch = "wasm32"))]
use {
    crate::plan::prune::PruneConfig,
    crate::session::engine::{CheckOptions, CheckOutcome, Clock, EventSink, RetryPolicy, SystemClock},
    serde_json::Value,
};

/// Now in ms since the epoch: the system clock natively; on `wasm32` (no system clock in
/// `std`) 0, so pass `now_ms` there.
fn default_now() -> f64 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        SystemClock.now_ms()
    }
    #[cfg(target_arch = "wasm32")]
    {
        0.0
    }
}

/// A compaction to run ([`SessionEngine::compaction`]): the model, then optional hooks,
/// settings, instructions, signal and timestamp.
#[must_use = "a compaction does nothing until `.run().await`"]
pub struct CompactionCall<'a, C, H = NoHooks> {
    engine: &'a SessionEngine,
    model: &'a C,
    hooks: &'a H,
    run: CompactRun,
    signal: Option<&'a AbortSignal>,
    now_ms: Option<f64>,
}

impl<'a, C: Complete> CompactionCall<'a, C, NoHooks> {
    pub(crate) fn new(engine: &'a SessionEngine, model: &'a C) -> Self {
        Self { engine, model, hooks: &NoHooks, run: CompactRun::default(), signal: None, now_ms: None }
    }
}

impl<'a, C: Complete, H: Hooks> CompactionCall<'a, C, H> {
    /// The host's hooks (default: none).
    pub fn hooks<H2: Hooks>(self, hooks: &'a H2) -> CompactionCall<'a, C, H2> {
        CompactionCall {
            engine: self.engine,
            model: self.model,
            hooks,
            run: self.run,
            signal: self.signal,
            now_ms: self.now_ms,
        }
    }
    /// All the data options at once (replaces settings, instructions and window set before).
    pub fn options(mut self, run: CompactRun) -> Self {
        self.run = run;
        self
    }
    /// The compaction settings (default [`CompactionSettings::default`]).
    pub fn settings(mut self, settings: CompactionSettings) -> Self {
        self.run.settings = settings;
        self
    }
    /// `reserveTokens` of the settings.
    pub fn reserve_tokens(mut self, tokens: u64) -> Self {
        self.run.settings.reserve_tokens = tokens;
        self
    }
    /// `keepRecentTokens` of the settings.
    pub fn keep_recent_tokens(mut self, tokens: u64) -> Self {
        self.run.settings.keep_recent_tokens = tokens;
        self
    }
    /// `Additional focus: …` for the summary.
    pub fn custom_instructions(mut self, text: impl Into<String>) -> Self {
        self.run.custom_instructions = Some(text.into());
        self
    }
    /// The model's context window (tokens), for the progress check (SPEC §13.5).
    pub fn context_window(mut self, tokens: f64) -> Self {
        self.run.context_window = Some(tokens);
        self
    }
    /// The host's tokenizer for the cut point, `tokensBefore` and the progress check (SPEC §3;
    /// default chars/4): any [`crate::plan::tokens::TokenCounter`] (e.g. a closure
    /// `|text: &str| -> u64`) or an async [`CountTokens`].
    pub fn count_tokens(mut self, counter: impl CountTokens + 'static) -> Self {
        self.run.count_tokens = HostCounter::new(counter);
        self
    }
    /// An abort signal the host keeps (default: the engine's own, see [`SessionEngine::abort`]).
    pub fn signal(mut self, signal: &'a AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }
    /// The timestamp of the compaction entry, ms since the epoch (default: now).
    pub fn now_ms(mut self, ms: f64) -> Self {
        self.now_ms = Some(ms);
        self
    }
    /// Runs it: [`SessionEngine::compact`].
    pub async fn run(self) -> Result<CompactOutcome> {
        let now = self.now_ms.unwrap_or_else(default_now);
        self.engine.compact(self.model, self.hooks, &self.run, self.signal, now).await
    }
}

/// The model of a navigation that does not summarize: asking it is an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoModel;

impl Complete for NoModel {
    async fn complete(&self, _request: SummaryRequest) -> Result<String> {
        Err(Error::InvalidArgument("this navigation has no model: pass one with `.model(…)`".into()))
    }
}

/// A tree navigation to run ([`SessionEngine::navigation`]).
#[must_use = "a navigation does nothing until `.run().await`"]
pub struct NavigationCall<'a, C = NoModel, H = NoHooks> {
    engine: &'a SessionEngine,
    target_id: String,
    model: Option<&'a C>,
    hooks: &'a H,
    run: NavigateRun,
    signal: Option<&'a AbortSignal>,
    now_ms: Option<f64>,
}

impl<'a> NavigationCall<'a, NoModel, NoHooks> {
    pub(crate) fn new(engine: &'a SessionEngine, target_id: String) -> Self {
        Self {
            engine,
            target_id,
            model: None,
            hooks: &NoHooks,
            run: NavigateRun::default(),
            signal: None,
            now_ms: None,
        }
    }
}

impl<'a, C: Complete, H: Hooks> NavigationCall<'a, C, H> {
    /// The model that writes the branch summary.
    pub fn model<C2: Complete>(self, model: &'a C2) -> NavigationCall<'a, C2, H> {
        NavigationCall {
            engine: self.engine,
            target_id: self.target_id,
            model: Some(model),
            hooks: self.hooks,
            run: self.run,
            signal: self.signal,
            now_ms: self.now_ms,
        }
    }
    /// The host's hooks (default: none).
    pub fn hooks<H2: Hooks>(self, hooks: &'a H2) -> NavigationCall<'a, C, H2> {
        NavigationCall {
            engine: self.engine,
            target_id: self.target_id,
            model: self.model,
            hooks,
            run: self.run,
            signal: self.signal,
            now_ms: self.now_ms,
        }
    }
    /// Summarize the branch being left (needs a model or a hook that supplies the summary).
    pub fn summarize(mut self, yes: bool) -> Self {
        self.run.summarize = yes;
        self
    }
    /// Instructions that replace the branch-summary template (SPEC §10).
    pub fn custom_instructions(mut self, text: impl Into<String>) -> Self {
        self.run.custom_instructions = Some(text.into());
        self
    }
    /// The model's context window for the summary budget (default 128000 tokens).
    pub fn context_window(mut self, tokens: u64) -> Self {
        self.run.context_window = Some(tokens);
        self
    }
    /// Tokens kept free (default 16384).
    pub fn reserve_tokens(mut self, tokens: u64) -> Self {
        self.run.reserve_tokens = Some(tokens);
        self
    }
    /// The host's tokenizer for the summary budget (SPEC §3, §10; default chars/4).
    pub fn count_tokens(mut self, counter: impl CountTokens + 'static) -> Self {
        self.run.count_tokens = HostCounter::new(counter);
        self
    }
    /// An abort signal the host keeps.
    pub fn signal(mut self, signal: &'a AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }
    /// The timestamp of the summary entry, ms since the epoch (default: now).
    pub fn now_ms(mut self, ms: f64) -> Self {
        self.now_ms = Some(ms);
        self
    }
    /// Runs it: [`SessionEngine::navigate_tree`].
    pub async fn run(self) -> Result<NavigateOutcome> {
        let now = self.now_ms.unwrap_or_else(default_now);
        self.engine.navigate_tree(&self.target_id, self.model, self.hooks, &self.run, self.signal, now).await
    }
}

/// Automatic compaction after a turn to run ([`SessionEngine::auto_compaction`]). Natively
/// only (its default clock is [`crate::session::engine::SystemClock`]).
#[cfg(not(target_arch = "wasm32"))]
#[must_use = "a check does nothing until `.run().await`"]
pub struct CheckCall<'a, C, H = NoHooks, K = crate::session::engine::SystemClock, E = ()> {
    engine: &'a SessionEngine,
    assistant_message: &'a Value,
    options: CheckOptions,
    candidates: &'a [C],
    hooks: &'a H,
    clock: &'a K,
    events: &'a E,
    signal: Option<&'a AbortSignal>,
}

#[cfg(not(target_arch = "wasm32"))]
impl<'a, C: Complete> CheckCall<'a, C> {
    pub(crate) fn new(
        engine: &'a SessionEngine,
        assistant_message: &'a Value,
        context_window: f64,
        candidates: &'a [C],
    ) -> Self {
        Self {
            engine,
            assistant_message,
            options: CheckOptions {
                context_window,
                model: None,
                settings: CompactionSettings::default(),
                prune: PruneConfig::default(),
                retry: RetryPolicy::default(),
                count_tokens: HostCounter::default(),
            },
            candidates,
            hooks: &NoHooks,
            clock: &crate::session::engine::SystemClock,
            events: &(),
            signal: None,
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl<'a, C: Complete, H: Hooks, K: Clock, E: EventSink> CheckCall<'a, C, H, K, E> {
    /// The current model as `provider/id` (overflow recovery only for the same model).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.options.model = Some(model.into());
        self
    }
    /// The compaction settings (threshold, keep, autoContinue, fallback).
    pub fn settings(mut self, settings: CompactionSettings) -> Self {
        self.options.settings = settings;
        self
    }
    /// The pruning settings.
    pub fn prune(mut self, prune: PruneConfig) -> Self {
        self.options.prune = prune;
        self
    }
    /// The retry policy of the candidates.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.options.retry = retry;
        self
    }
    /// The host's tokenizer for the threshold, the pruned tokens and the compaction (SPEC §3;
    /// default chars/4).
    pub fn count_tokens(mut self, counter: impl CountTokens + 'static) -> Self {
        self.options.count_tokens = HostCounter::new(counter);
        self
    }
    /// The host's hooks (default: none).
    pub fn hooks<H2: Hooks>(self, hooks: &'a H2) -> CheckCall<'a, C, H2, K, E> {
        CheckCall {
            engine: self.engine,
            assistant_message: self.assistant_message,
            options: self.options,
            candidates: self.candidates,
            hooks,
            clock: self.clock,
            events: self.events,
            signal: self.signal,
        }
    }
    /// The clock of the retries' backoff (default [`crate::session::engine::SystemClock`]).
    pub fn clock<K2: Clock>(self, clock: &'a K2) -> CheckCall<'a, C, H, K2, E> {
        CheckCall {
            engine: self.engine,
            assistant_message: self.assistant_message,
            options: self.options,
            candidates: self.candidates,
            hooks: self.hooks,
            clock,
            events: self.events,
            signal: self.signal,
        }
    }
    /// Where the events go (default: nowhere).
    pub fn events<E2: EventSink>(self, events: &'a E2) -> CheckCall<'a, C, H, K, E2> {
        CheckCall {
            engine: self.engine,
            assistant_message: self.assistant_message,
            options: self.options,
            candidates: self.candidates,
            hooks: self.hooks,
            clock: self.clock,
            events,
            signal: self.signal,
        }
    }
    /// An abort signal the host keeps.
    pub fn signal(mut self, signal: &'a AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }
    /// Runs it: [`SessionEngine::check_compaction`].
    pub async fn run(self) -> Result<CheckOutcome> {
        self.engine
            .check_compaction(
                self.assistant_message,
                &self.options,
                self.candidates,
                self.hooks,
                self.clock,
                self.events,
                self.signal,
            )
            .await
    }
}

impl SessionEngine {
    /// A compaction of the current branch with `model`, to configure and `.run()`
    /// ([`CompactionCall`]; [`SessionEngine::compact`] with named options).
    pub fn compaction<'a, C: Complete>(&'a self, model: &'a C) -> CompactionCall<'a, C> {
        CompactionCall::new(self, model)
    }

    /// A navigation to `target_id`, to configure and `.run()` ([`NavigationCall`];
    /// [`SessionEngine::navigate_tree`] with named options).
    pub fn navigation(&self, target_id: impl Into<String>) -> NavigationCall<'_> {
        NavigationCall::new(self, target_id.into())
    }

    /// Automatic compaction after the turn that produced `assistant_message`, for a model with
    /// `context_window` tokens and these candidate models, to configure and `.run()`
    /// ([`CheckCall`]; [`SessionEngine::check_compaction`] with named options). Natively only.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn auto_compaction<'a, C: Complete>(
        &'a self,
        assistant_message: &'a Value,
        context_window: f64,
        candidates: &'a [C],
    ) -> CheckCall<'a, C> {
        CheckCall::new(self, assistant_message, context_window, candidates)
    }
}
