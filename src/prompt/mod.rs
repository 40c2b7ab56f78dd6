//! Prompt text: the templates (embedded from `prompts/`, overridable), the Handlebars-subset
//! renderer with its layout pass, and the conversation transcript the summarizer reads.
//! SPEC §8, §9.
//!
//! - [`templates`] — the ten named templates and the file-operations block;
//! - [`frames`] — frame safety: content never closes or opens a prompt frame (SPEC §13.4);
//! - [`render`] — the template renderer (lexer, parser, standalone-line rules, evaluation, layout);
//! - [`serialize`] — `serializeConversation`.

pub mod frames;
pub mod render;
pub mod serialize;
pub mod templates;
