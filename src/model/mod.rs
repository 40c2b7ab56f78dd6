//! The typed data model of a session file (SPEC §1): serde types for the header, every entry
//! type, every agent-message role and every content block, camelCase on the wire.
//!
//! The engine's algorithms work on [`serde_json::Value`] entries plus [`crate::entry`]; these types
//! are for hosts that build and read entries in Rust, and (compiled to wasm) they generate the
//! TypeScript declarations of the npm package through tsify.
//!
//! # Lossless by construction
//!
//! Loading then saving must reproduce every entry (SPEC §1, "lossless rule"). Therefore:
//! - every struct keeps the fields it does not know in `extra` (`#[serde(flatten)]`), so an
//!   entry written by a newer agent keeps its additions;
//! - the three sum types [`SessionEntry`], [`AgentMessage`] and [`ContentBlock`] have an
//!   `Unknown` variant holding the whole JSON object. Their (de)serialization is written by hand:
//!   the object is read as a map, dispatched on `type` / `role`, and parsed into the typed form;
//!   when the `type` / `role` is not known **or the object does not fit the known shape** (a
//!   missing required field, a field of another JSON type, `null` where the type has no null),
//!   the result is `Unknown(object)`. A typed parse never fails on a JSON object; only a value that
//!   is not an object at all is rejected. The fallback is per level: a `message` entry whose
//!   message has an odd shape stays a [`MessageEntry`] holding [`AgentMessage::Unknown`], an
//!   assistant message with an odd block keeps [`ContentBlock::Unknown`] for that block.
//! - absent and `null` are kept apart: optional fields are `Option<T>` that are skipped when
//!   `None` and never turn `null` into absent (a `null` where the type has none sends the object to
//!   `Unknown`); fields that may legitimately be `null` (`parentId`, `exitCode`, `prunedAt`) are
//!   `Option<Option<T>>` (outer = present, inner = not `null`) or `Option<T>` for the required
//!   `parentId`.
//! - JavaScript numbers (timestamps in ms, costs) are `f64` and are written back the way
//!   `JSON.stringify` writes them: integral values without a fraction (`1.0` → `1`), `NaN` as
//!   `null` (and `null` reads back as `NaN` in those fields). Token counts are integers (`u64`);
//!   a non-integer token count makes the object `Unknown`.
//!
//! Object keys of the typed fields come back in a canonical order (`type`/`role` first, then the
//! fields in the order of the struct, then the unknown ones in their original order); key order
//! inside free-form values (`arguments`, `details`, `data`, `extra`) is preserved.
//!
//! # Versions
//!
//! The model is the v3 format: every entry has `id` (string) and `parentId` (string or `null`).
//! Lines of older files that have no ids (v1) parse as [`SessionEntry::Unknown`] and round-trip
//! unchanged; after migration (`loadSession`, SPEC §1 "Older files") they parse typed. v2's
//! message role `hookMessage` is typed ([`HookMessage`]). The header of every version is a
//! [`SessionHeader`] (`version` is absent in v1).
//!
//! # Units
//!
//! - `timestamp` of an **entry** and of the header: an ISO-8601 string, kept verbatim.
//! - `timestamp` of a **message**, `prunedAt`: milliseconds since the Unix epoch (JS number).
//! - token counts (`usage.*`, `tokensBefore`): provider-reported integer tokens.
//! - `usage.cost.*`: the provider's cost figures (JS numbers, typically USD).
//!
//! # TypeScript
//!
//! On `wasm32` every struct derives `tsify::Tsify` (interfaces with JSDoc from these doc
//! comments, open for unknown fields: each `extends JsonObject`), and the hand-written
//! sum types declare their unions (`SessionEntry`, `AgentMessage`, `ContentBlock`,
//! `MessageContent`, `StopReason`). The unions list the known variants only, so that narrowing on
//! `type` / `role` works; objects of other types pass through unchanged at run time. Free-form
//! fields (`details`, `data`, `outputSchema`) are `unknown`, object-valued ones
//! (`arguments`, `preserveData`, `meta`) `Record<string, unknown>`. The types are declared with
//! `missing_as_null` and `hashmap_as_object`, so `Ts<T>` conversions produce plain objects and
//! `null` (not `Map`s and `undefined`). Reading live JavaScript objects through
//! serde-wasm-bindgen turns a key holding `undefined` into `null` (which `JSON.stringify` would
//! drop); go through JSON text, or drop such keys, to keep absent fields absent.

mod content;
mod entry;
mod header;
mod message;
mod serde_util;
pub mod tag;

pub use content::{ContentBlock, ImageContent, MessageContent, TextContent, ThinkingContent, ToolCall};
pub use entry::{
    BranchSummaryEntry, CompactionEntry, CustomEntry, CustomMessageEntry, LabelEntry, MessageEntry, ModeChangeEntry,
    ModelChangeEntry, SessionEntry, SessionInitEntry, ThinkingLevelChangeEntry, TtsrInjectionEntry,
};
pub use header::SessionHeader;
pub use message::{
    AgentMessage, AssistantMessage, BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, Cost,
    CustomMessage, FileMentionFile, FileMentionMessage, HookMessage, PythonExecutionMessage, StopReason,
    ToolResultMessage, Usage, UserMessage,
};

/// A JSON object (`serde_json::Map<String, Value>`, key order preserved): the `extra` fields of
/// every typed struct (`#[serde(flatten)]`), i.e. the fields the model does not know, kept for
/// the round trip. In TypeScript, `Record<string, unknown>`, which every typed interface extends.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
