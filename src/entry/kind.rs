//! Entry kinds (the `type` of an entry) and message roles. SPEC §1.

/// The entry types of SPEC §1. Anything else is [`EntryKind::Other`] and round-trips unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EntryKind {
    /// `message`: an agent message.
    Message,
    /// `compaction`: a summary of older history.
    Compaction,
    /// `branch_summary`: a summary of a branch the user left.
    BranchSummary,
    /// `custom_message`: host-provided context shown to the model as user text.
    CustomMessage,
    /// `custom`: host data, never in the context.
    Custom,
    /// `label`: sets or clears the label of another entry.
    Label,
    /// `model_change`.
    ModelChange,
    /// `thinking_level_change`.
    ThinkingLevelChange,
    /// `mode_change`.
    ModeChange,
    /// `ttsr_injection`.
    TtsrInjection,
    /// `session_init`.
    SessionInit,
    /// `session`: a header line (only ever seen in raw JSONL).
    SessionHeader,
    /// Any other `type` (or none): preserved, ignored by every algorithm.
    #[default]
    Other,
}

impl EntryKind {
    /// The wire `type` of a known kind (`None` for [`EntryKind::Other`]).
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::Message => "message",
            Self::Compaction => "compaction",
            Self::BranchSummary => "branch_summary",
            Self::CustomMessage => "custom_message",
            Self::Custom => "custom",
            Self::Label => "label",
            Self::ModelChange => "model_change",
            Self::ThinkingLevelChange => "thinking_level_change",
            Self::ModeChange => "mode_change",
            Self::TtsrInjection => "ttsr_injection",
            Self::SessionInit => "session_init",
            Self::SessionHeader => "session",
            Self::Other => return None,
        })
    }

    /// Maps a wire `type` to the kind.
    pub fn from_type(t: &str) -> Self {
        match t {
            "message" => Self::Message,
            "compaction" => Self::Compaction,
            "branch_summary" => Self::BranchSummary,
            "custom_message" => Self::CustomMessage,
            "custom" => Self::Custom,
            "label" => Self::Label,
            "model_change" => Self::ModelChange,
            "thinking_level_change" => Self::ThinkingLevelChange,
            "mode_change" => Self::ModeChange,
            "ttsr_injection" => Self::TtsrInjection,
            "session_init" => Self::SessionInit,
            "session" => Self::SessionHeader,
            _ => Self::Other,
        }
    }
}

/// The JSON type of an entry that is not an object (`null`, a boolean, a number, a string, an
/// array): such an entry is kept and read as an entry of no known type, and validation reports
/// it (SPEC §13.9). One rule for the values `validateSession` reads and the lines of a file
/// ([`crate::entry::read_entry`], which the byte scanner falls back to for a non-object).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotObject {
    /// `null` (also what `JSON.stringify` makes of `undefined` or a function in an array).
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
}

impl NotObject {
    /// The name used in reports: `null`, `boolean`, `number`, `string` or `array`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Boolean => "boolean",
            Self::Number => "number",
            Self::String => "string",
            Self::Array => "array",
        }
    }
}

/// Agent message roles (SPEC §1). Unknown roles are [`Role::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// `user`
    User,
    /// `assistant`
    Assistant,
    /// `toolResult`
    ToolResult,
    /// `bashExecution`
    BashExecution,
    /// `custom`
    Custom,
    /// `hookMessage` (v2 name of `custom`; still counted like a tool result by the estimate)
    HookMessage,
    /// `branchSummary`
    BranchSummary,
    /// `compactionSummary`
    CompactionSummary,
    /// `pythonExecution`
    PythonExecution,
    /// `fileMention`
    FileMention,
    /// any other role, or none
    #[default]
    Other,
}

impl Role {
    /// The wire name of a known role (`None` for [`Role::Other`]).
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::ToolResult => "toolResult",
            Self::BashExecution => "bashExecution",
            Self::Custom => "custom",
            Self::HookMessage => "hookMessage",
            Self::BranchSummary => "branchSummary",
            Self::CompactionSummary => "compactionSummary",
            Self::PythonExecution => "pythonExecution",
            Self::FileMention => "fileMention",
            Self::Other => return None,
        })
    }

    /// Maps a wire `role` to the role.
    pub fn from_name(r: &str) -> Self {
        match r {
            "user" => Self::User,
            "assistant" => Self::Assistant,
            "toolResult" => Self::ToolResult,
            "bashExecution" => Self::BashExecution,
            "custom" => Self::Custom,
            "hookMessage" => Self::HookMessage,
            "branchSummary" => Self::BranchSummary,
            "compactionSummary" => Self::CompactionSummary,
            "pythonExecution" => Self::PythonExecution,
            "fileMention" => Self::FileMention,
            _ => Self::Other,
        }
    }
}
