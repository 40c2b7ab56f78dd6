//! # session-compaction
//!
//! A compaction engine for long LLM-agent sessions stored as pi / oh-my-pi JSON Lines session
//! trees. Everything deterministic lives here in Rust (parsing, tree walks, token estimates,
//! cut points, compaction preparation, pruning, context building, serialization, prompt
//! rendering); model calls are delegated to the host. See `SPEC.md` (shipped with the
//! conformance vectors) for the behaviour contract; each public item names its section.

#![deny(missing_docs)]

pub mod branch;
pub mod context;
pub mod convert;
pub mod cut_point;
pub mod engine;
pub mod entries;
pub mod error;
pub mod extractive;
pub mod file_ops;
pub mod js;
pub mod jsonl;
pub mod messages;
pub mod overflow;
pub mod meta;
pub mod model;
pub mod prepare;
pub mod prune;
pub mod session;
pub mod summarize;
pub mod serialize;
pub mod prompts;
pub mod template;
pub mod tree;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::{Error, Result};
