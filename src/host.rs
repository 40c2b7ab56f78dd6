//! Thread-safety bounds of what the host supplies (its model, hooks, clock, event sink).
//!
//! Natively the engine is `Send + Sync` and its futures are `Send`, so a Rust host can run a
//! compaction with `tokio::spawn` (or any multi-threaded executor): there [`MaybeSend`] means
//! `Send` and [`MaybeSync`] means `Sync`. On `wasm32` everything runs on the JavaScript event
//! loop and JavaScript values and futures are neither, so both bounds are empty there (every
//! type has them): the same traits serve both targets.

/// `Send` natively; no bound on `wasm32` (JavaScript futures are not `Send`).
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSend: Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + ?Sized> MaybeSend for T {}

/// `Send` natively; no bound on `wasm32` (JavaScript futures are not `Send`).
#[cfg(target_arch = "wasm32")]
pub trait MaybeSend {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSend for T {}

/// `Sync` natively; no bound on `wasm32` (JavaScript values are not `Sync`).
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSync: Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Sync + ?Sized> MaybeSync for T {}

/// `Sync` natively; no bound on `wasm32` (JavaScript values are not `Sync`).
#[cfg(target_arch = "wasm32")]
pub trait MaybeSync {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSync for T {}

/// A boxed future of `T` borrowing for `'a`: `Send` natively, any future on `wasm32`. The
/// engine's one pointer to a host future (model calls), so that code over several hosts' models
/// is compiled once.
#[cfg(not(target_arch = "wasm32"))]
pub type MaybeBoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
/// A boxed future of `T` borrowing for `'a`: `Send` natively, any future on `wasm32`. The
/// engine's one pointer to a host future (model calls), so that code over several hosts' models
/// is compiled once.
#[cfg(target_arch = "wasm32")]
pub type MaybeBoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + 'a>>;

/// A callback run once, e.g. when an [`crate::session::engine::AbortSignal`] fires: `Send`
/// natively, any closure on `wasm32`.
#[cfg(not(target_arch = "wasm32"))]
pub type OnceCallback = Box<dyn FnOnce() + Send>;
/// A callback run once, e.g. when an [`crate::session::engine::AbortSignal`] fires: `Send`
/// natively, any closure on `wasm32`.
#[cfg(target_arch = "wasm32")]
pub type OnceCallback = Box<dyn FnOnce()>;
