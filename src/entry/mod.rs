//! Per-entry metadata: the small facts the algorithms need about each entry (type, id,
//! parent, role, token estimate, usage, tool calls, …), extracted once without keeping the
//! entry's large texts.
//!
//! [`EntryMeta`] is read leniently from raw JSON bytes (the fast path of the session handle: no
//! tool output is ever materialized as a `String`) or, through one rule ([`read_entry`]) over a
//! small reader abstraction ([`JsonRead`]), from a parsed [`serde_json::Value`] or from values
//! held elsewhere (the wasm binding reads the host's JavaScript objects in place). Fields of an unexpected JSON type are read the
//! way the JavaScript reference reads them: they simply do not count. SPEC §1–§3.

pub mod batch;
pub(crate) mod bytes16;
mod kind;
pub mod message_of;
mod meta;
mod read;
mod scan;
pub mod source;

pub use kind::{EntryKind, NotObject, Role};
pub use meta::{
    estimate_tokens, missing_required_field, ArgsText, EntryMeta, MessageMeta, TextSpan, ToolCallMeta, UsageMeta,
    IMAGE_CHARS,
};
pub use read::{read_entry, read_entry_head, read_message, Field, JsonRead, Shape};
pub(crate) use scan::{scan_entry, EntryScanner};
pub use source::{EntryList, EntrySource, Heads, Selection};
