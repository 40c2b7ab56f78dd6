//! The one error type of the engine, with stable codes.
//!
//! Every fallible public function returns [`Result<T>`]. Each variant maps to a stable string
//! code ([`Error::code`]) that the wasm layer copies onto the JavaScript `Error.code`, so hosts
//! can branch on it. Messages always name the line number (1-based) or the entry id involved.

use thiserror::Error as ThisError;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the engine. Bad input never panics; it ends up here.
#[derive(Debug, Clone, PartialEq, ThisError)]
pub enum Error {
    /// A JSONL line (1-based `line`) is not valid JSON, holds two records, or is truncated.
    #[error("line {line}: {reason}")]
    Parse {
        /// 1-based line number in the JSONL text.
        line: usize,
        /// Human-readable reason (the JSON parser's message or what was wrong).
        reason: String,
    },
    /// The session header's `version` is newer than the format this engine reads (SPEC §1,
    /// §13.11): reported by the loaders (the file is read as the current version; every field is
    /// kept, so saving loses nothing).
    #[error("line {line}: {}", crate::io::VersionProblem::Newer(version))]
    UnsupportedVersion {
        /// The header's line (1-based).
        line: usize,
        /// The header's `version`, as JavaScript writes the number.
        version: String,
    },
    /// The session header's `version` is no version (SPEC §1, §13.11): not a whole number from
    /// 1 to 3 and not a newer one ([`crate::io::HeaderVersion::Invalid`]): reported by the loaders
    /// with the code of a field of the wrong type or value, `E_MISSING_FIELD` (the file is read
    /// as the current version, nothing migrated, and saves unchanged).
    #[error("line {line}: {}", crate::io::VersionProblem::Invalid(given))]
    InvalidVersion {
        /// The header's line (1-based).
        line: usize,
        /// What the header gives: a number as JavaScript writes it, `the string "3"`, `true`, …
        given: String,
    },
    /// A required field is missing or has the wrong JSON type.
    #[error("{location}: missing or invalid field `{field}`")]
    MissingField {
        /// Where: `line N` or `entry <id>`.
        location: String,
        /// The field's wire name (camelCase).
        field: String,
    },
    /// An entry type the operation needs to understand is not known (only raised where an
    /// operation must interpret the entry; unknown types are otherwise preserved).
    #[error("{location}: unknown entry type `{entry_type}`")]
    UnknownEntry {
        /// Where: `line N` or `entry <id>`.
        location: String,
        /// The `type` value found.
        entry_type: String,
    },
    /// The session header (line 1) is missing or malformed.
    #[error("line 1: invalid session header: {reason}")]
    Header {
        /// What is wrong with it.
        reason: String,
    },
    /// Following `parentId` links from an entry returns to an entry already visited.
    #[error("entry {id}: parent chain contains a cycle")]
    Cycle {
        /// The entry where the cycle was detected.
        id: String,
    },
    /// Two entries share one id (an append of an id that already exists).
    #[error("entry {id}: duplicate id")]
    DuplicateId {
        /// The duplicated id.
        id: String,
    },
    /// An id given by the caller (leaf, target, parent) does not exist in the session.
    #[error("entry {id}: not found")]
    NotFound {
        /// The id that was looked up.
        id: String,
    },
    /// A prompt template failed to parse or render.
    #[error("template {name}: {reason}")]
    Template {
        /// The template id (file name, e.g. `file-operations.md`).
        name: String,
        /// What went wrong.
        reason: String,
    },
    /// An argument is out of range or of the wrong shape.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A named argument of a host call has the wrong type or shape (same code as
    /// [`Error::InvalidArgument`]).
    #[error("invalid argument `{name}`: {reason}")]
    Argument {
        /// The argument's name (`entries`, `options.settings`, …).
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Compaction is not possible: the branch already ends in a compaction.
    #[error("Already compacted")]
    AlreadyCompacted,
    /// Compaction is not possible: nothing would be summarized (SPEC §12.2).
    #[error("Nothing to compact")]
    NothingToCompact,
    /// Validation: an entry's `parentId` names no entry of the session.
    #[error("entry {id}: parent {parent_id} not found")]
    MissingParent {
        /// The entry whose parent is missing.
        id: String,
        /// The `parentId` that names no entry.
        parent_id: String,
    },
    /// Validation: a compaction's `firstKeptEntryId` is absent or not an entry on the
    /// compaction's own path before it (SPEC §5, §6).
    #[error("entry {id}: firstKeptEntryId {first_kept_entry_id} is not on the compaction's path")]
    KeptEntryNotOnPath {
        /// The compaction entry.
        id: String,
        /// Its `firstKeptEntryId` (`(none)` when absent).
        first_kept_entry_id: String,
    },
    /// Validation: a `toolResult` whose `toolCallId` matches no toolCall on its path.
    #[error("entry {id}: tool result {tool_call_id} has no tool call on its path")]
    OrphanToolResult {
        /// The tool-result entry.
        id: String,
        /// Its `toolCallId` (`(none)` when absent).
        tool_call_id: String,
    },
    /// Validation: a toolCall that no later entry on any path answers with a `toolResult`.
    #[error("entry {id}: tool call {tool_call_id} is never answered")]
    UnansweredToolCall {
        /// The assistant entry holding the call.
        id: String,
        /// The call's id.
        tool_call_id: String,
    },
    /// The model (or the remote summarizer) reported a failure.
    #[error("Summarization failed: {message}")]
    Summarization {
        /// The provider's or host's message.
        message: String,
    },
    /// A `session_before_compact` / `session_before_tree` hook cancelled the operation.
    #[error("Compaction cancelled")]
    Cancelled,
    /// The operation was aborted (an `AbortSignal` or `abortCompaction()`); nothing was appended.
    #[error("{what} aborted")]
    Aborted {
        /// What was aborted (`Compaction`, `Branch summary`).
        what: String,
    },
    /// A host hook threw or rejected; nothing was appended.
    #[error("hook {hook} failed: {message}")]
    Hook {
        /// The hook's event name.
        hook: String,
        /// The hook's error message.
        message: String,
    },
    /// Another compaction is already running on this session.
    #[error("a compaction is already running on this session")]
    Busy,
    /// The remote summarizer answered with a non-2xx status, an unusable body, or was unreachable.
    #[error("remote summarizer: {message}")]
    Remote {
        /// HTTP status (0 when no response arrived).
        status: u16,
        /// What went wrong (never echoes request headers).
        message: String,
    },
    /// A model call failed; `status` and `retry_after_ms` (from the response headers) let the
    /// engine decide whether to retry (SPEC §11).
    #[error("{message}")]
    Model {
        /// The provider's or host's message.
        message: String,
        /// HTTP status, when the host reported one.
        status: Option<u16>,
        /// Server-requested wait before retrying, in ms (from `retry-after-ms`, `retry-after`,
        /// `x-ratelimit-reset-ms`, `x-ratelimit-reset`).
        retry_after_ms: Option<f64>,
    },
    /// A bug of the engine or its host binding (a result that cannot be converted, say); never
    /// caused by the input alone.
    #[error("internal error: {message}")]
    Internal {
        /// What went wrong.
        message: String,
    },
}

impl Error {
    /// The stable code of this error (`E_PARSE`, `E_MISSING_FIELD`, …), as exported to JS.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Parse { .. } => "E_PARSE",
            Error::MissingField { .. } | Error::InvalidVersion { .. } => "E_MISSING_FIELD",
            Error::UnknownEntry { .. } => "E_UNKNOWN_ENTRY",
            Error::Header { .. } => "E_HEADER",
            Error::UnsupportedVersion { .. } => "E_UNSUPPORTED_VERSION",
            Error::Cycle { .. } => "E_CYCLE",
            Error::DuplicateId { .. } => "E_DUPLICATE_ID",
            Error::NotFound { .. } => "E_NOT_FOUND",
            Error::Template { .. } => "E_TEMPLATE",
            Error::InvalidArgument(_) | Error::Argument { .. } => "E_INVALID_ARGUMENT",
            Error::AlreadyCompacted => "E_ALREADY_COMPACTED",
            Error::NothingToCompact => "E_NOTHING_TO_COMPACT",
            Error::MissingParent { .. } => "E_MISSING_PARENT",
            Error::KeptEntryNotOnPath { .. } => "E_KEPT_NOT_ON_PATH",
            Error::OrphanToolResult { .. } => "E_ORPHAN_TOOL_RESULT",
            Error::UnansweredToolCall { .. } => "E_UNANSWERED_TOOL_CALL",
            Error::Summarization { .. } => "E_SUMMARIZATION",
            Error::Cancelled => "E_CANCELLED",
            Error::Aborted { .. } => "E_ABORTED",
            Error::Hook { .. } => "E_HOOK",
            Error::Busy => "E_BUSY",
            Error::Remote { .. } => "E_REMOTE",
            Error::Model { .. } => "E_MODEL",
            Error::Internal { .. } => "E_INTERNAL",
        }
    }

    /// Every code [`Error::code`] can return, for the TypeScript union and the docs.
    pub const CODES: &'static [&'static str] = &[
        "E_PARSE",
        "E_MISSING_FIELD",
        "E_UNKNOWN_ENTRY",
        "E_HEADER",
        "E_UNSUPPORTED_VERSION",
        "E_CYCLE",
        "E_DUPLICATE_ID",
        "E_NOT_FOUND",
        "E_TEMPLATE",
        "E_INVALID_ARGUMENT",
        "E_ALREADY_COMPACTED",
        "E_NOTHING_TO_COMPACT",
        "E_MISSING_PARENT",
        "E_KEPT_NOT_ON_PATH",
        "E_ORPHAN_TOOL_RESULT",
        "E_UNANSWERED_TOOL_CALL",
        "E_SUMMARIZATION",
        "E_CANCELLED",
        "E_ABORTED",
        "E_HOOK",
        "E_BUSY",
        "E_REMOTE",
        "E_MODEL",
        "E_INTERNAL",
    ];

    /// The HTTP status of a failed model call or remote summarizer request, when one is known
    /// (0, "no response", is not a status).
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Error::Remote { status, .. } if *status != 0 => Some(*status),
            Error::Model { status, .. } => *status,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn every_code_is_listed_once() {
        let samples = [
            Error::Parse { line: 1, reason: String::new() },
            Error::MissingField { location: String::new(), field: String::new() },
            Error::UnknownEntry { location: String::new(), entry_type: String::new() },
            Error::Header { reason: String::new() },
            Error::UnsupportedVersion { line: 1, version: String::new() },
            Error::InvalidVersion { line: 1, given: String::new() },
            Error::Cycle { id: String::new() },
            Error::DuplicateId { id: String::new() },
            Error::NotFound { id: String::new() },
            Error::Template { name: String::new(), reason: String::new() },
            Error::InvalidArgument(String::new()),
            Error::Argument { name: "x".into(), reason: "y".into() },
            Error::AlreadyCompacted,
            Error::NothingToCompact,
            Error::MissingParent { id: String::new(), parent_id: String::new() },
            Error::KeptEntryNotOnPath { id: String::new(), first_kept_entry_id: String::new() },
            Error::OrphanToolResult { id: String::new(), tool_call_id: String::new() },
            Error::UnansweredToolCall { id: String::new(), tool_call_id: String::new() },
            Error::Summarization { message: String::new() },
            Error::Cancelled,
            Error::Aborted { what: String::new() },
            Error::Hook { hook: String::new(), message: String::new() },
            Error::Busy,
            Error::Remote { status: 0, message: String::new() },
            Error::Model { message: String::new(), status: None, retry_after_ms: None },
            Error::Internal { message: String::new() },
        ];
        let mut seen: Vec<&str> = samples.iter().map(Error::code).collect();
        seen.sort_unstable();
        seen.dedup();
        let mut listed = Error::CODES.to_vec();
        listed.sort_unstable();
        assert_eq!(seen, listed);
        assert_eq!(Error::Argument { name: "x".into(), reason: "y".into() }.to_string(), "invalid argument `x`: y");
        assert_eq!(Error::Remote { status: 0, message: String::new() }.http_status(), None);
        assert_eq!(
            Error::Model { message: String::new(), status: Some(429), retry_after_ms: None }.http_status(),
            Some(429)
        );
    }
}
