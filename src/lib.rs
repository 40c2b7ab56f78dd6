#![doc = include_str!("../README.md")]
//!
//! ---
//!
//! # Module map
//!
//! Everything deterministic lives in this crate (parsing, tree walks, token estimates, cut points,
//! compaction preparation, pruning, context building, serialization, prompt rendering); model
//! calls are delegated to the host. `docs/SPEC.md` is the behaviour contract; each public item
//! names its section. `docs/ARCHITECTURE.md` follows one `compact()` call through these modules.
//!
//! The modules, in pipeline order (each one uses only those above it):
//!
//! | module | stage |
//! |---|---|
//! | [`error`], [`js`] | the error type with stable codes; the JavaScript semantics the reference depends on |
//! | [`host`] | thread-safety bounds of the host's callbacks (`Send` natively, none on wasm32) |
//! | [`model`] | typed serde shapes of headers, entries, messages and content blocks |
//! | [`entry`] | per-entry metadata (type, ids, role, token estimate, usage, tool calls) read once; `messageOf` |
//! | [`io`] | JSONL load and save, line-numbered errors, v1/v2 → v3 migration |
//! | [`tree`] | id index, branches, children, common ancestors, labels, validation |
//! | [`plan`] | cut points, `prepareCompaction`, pruning, overflow, file operations, branch entries |
//! | [`context`] | `buildSessionContext` and `convertToLlm` |
//! | [`prompt`] | templates, the template renderer, `serializeConversation` |
//! | [`summarize`] | compaction and branch summaries through the host's model; the extractive summarizer |
//! | [`session`] | the session handle and the engine (hooks, abort, triggers, retries, events) |
//! | [`api`] | the options and results of the host API (the npm package) as typed structs |

#![deny(missing_docs)]

pub mod api;
pub mod context;
pub mod entry;
pub mod error;
pub mod host;
pub mod io;
pub mod js;
pub mod model;
pub mod plan;
pub mod prompt;
pub mod session;
pub mod summarize;
mod text_key;
pub mod tree;

pub use error::{Error, Result};

/// The cases of a property test (the integration tests' rule, `tests/common/cases.rs`, for the
/// unit tests too).
#[cfg(test)]
#[path = "../tests/common/cases.rs"]
mod cases;
#[cfg(test)]
pub(crate) use cases::cases as test_cases;
