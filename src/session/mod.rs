//! The stateful side: a session kept in memory ([`handle`]) and the orchestration that runs a
//! compaction or a tree navigation over it with the host's model, hooks, clock and events
//! ([`engine`]). SPEC §10, §11.

pub mod calls;
pub mod engine;
pub mod events;
pub mod handle;

pub use handle::{PrunedLines, SessionTree};
