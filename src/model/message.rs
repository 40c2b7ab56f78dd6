//! Agent messages (`message.role`, SPEC §1) and the provider usage of assistant messages.

use super::content::{ContentBlock, ImageContent, MessageContent};
use super::serde_util::{into_object, js_number, json_type_name, opt_nullable_js_number, present, to_json};
use super::tag;
use super::JsonObject;
use crate::error::{Error, Result};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// A `user` message: `{role: "user", content, timestamp}`. `content` is a string or blocks
/// (`text`, `image`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Always `"user"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"user\""))]
    pub role: tag::User,
    /// The user's text, or blocks.
    pub content: MessageContent,
    /// When the message was created: milliseconds since the Unix epoch.
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Why an assistant turn ended (`stopReason`). Values other than the five known ones are kept
/// in [`StopReason::Other`] and written back unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(type = "\"stop\" | \"length\" | \"toolUse\" | \"error\" | \"aborted\"")
)]
pub enum StopReason {
    /// `"stop"`: the model finished its answer.
    #[default]
    Stop,
    /// `"length"`: the output token limit was reached.
    Length,
    /// `"toolUse"`: the model called tools and waits for their results.
    ToolUse,
    /// `"error"`: the request failed (see `errorMessage`); its usage is not a context size.
    Error,
    /// `"aborted"`: the user aborted the turn; its usage is not a context size.
    Aborted,
    /// Any other string.
    Other(String),
}

impl StopReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
            Self::Other(s) => s,
        }
    }

    /// The reason for a wire string.
    pub fn from_name(s: &str) -> Self {
        match s {
            "stop" => Self::Stop,
            "length" => Self::Length,
            "toolUse" => Self::ToolUse,
            "error" => Self::Error,
            "aborted" => Self::Aborted,
            other => Self::Other(other.to_string()),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = StopReason;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a stop reason string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<StopReason, E> {
                Ok(StopReason::from_name(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// The provider's cost figures of one assistant turn (`usage.cost`), JavaScript numbers
/// (typically USD).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Cost of the uncached input tokens.
    #[serde(with = "js_number")]
    pub input: f64,
    /// Cost of the output tokens.
    #[serde(with = "js_number")]
    pub output: f64,
    /// Cost of the tokens read from the prompt cache.
    #[serde(with = "js_number")]
    pub cache_read: f64,
    /// Cost of the tokens written to the prompt cache.
    #[serde(with = "js_number")]
    pub cache_write: f64,
    /// Total cost of the turn.
    #[serde(with = "js_number")]
    pub total: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Token usage reported by the provider on an assistant message (`usage`), in provider tokens.
/// Context tokens = `totalTokens` if non-zero, else `input + output + cacheRead + cacheWrite`
/// (SPEC §5).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Uncached input (prompt) tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_write: u64,
    /// Total tokens of the turn, when the provider reports it.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub total_tokens: Option<u64>,
    /// Cost figures, when known.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub cost: Option<Cost>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Usage {
    /// Context tokens of this usage: `totalTokens` if non-zero, else
    /// `input + output + cacheRead + cacheWrite` (SPEC §5), saturating.
    pub fn context_tokens(&self) -> u64 {
        match self.total_tokens {
            Some(total) if total != 0 => total,
            _ => {
                self.input.saturating_add(self.output).saturating_add(self.cache_read).saturating_add(self.cache_write)
            }
        }
    }
}

/// An `assistant` message: `{role: "assistant", content, api?, provider, model, usage?,
/// stopReason, errorMessage?, timestamp}`. `content` holds `text`, `thinking` and `toolCall`
/// blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Always `"assistant"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"assistant\""))]
    pub role: tag::Assistant,
    /// The answer's blocks.
    pub content: Vec<ContentBlock>,
    /// The provider API used (for example `"anthropic-messages"`), when recorded.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub api: Option<String>,
    /// The provider (for example `"anthropic"`); `provider/model` is the context's default model.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Token usage reported by the provider.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub usage: Option<Usage>,
    /// Why the turn ended.
    pub stop_reason: StopReason,
    /// The error text of a failed turn.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub error_message: Option<String>,
    /// When the message was created: milliseconds since the Unix epoch.
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `toolResult` message: the output of one tool call, `{role: "toolResult", toolCallId,
/// toolName, content, isError, details?, prunedAt?, timestamp}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// Always `"toolResult"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"toolResult\""))]
    pub role: tag::ToolResult,
    /// The `id` of the tool call this answers.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The output: blocks (`text`, `image`), or a string.
    pub content: MessageContent,
    /// The tool failed.
    pub is_error: bool,
    /// Tool-specific structured data (free-form).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub details: Option<Value>,
    /// Set when the output was pruned (SPEC §7): milliseconds since the Unix epoch. A `null`
    /// (`Some(None)` in Rust) also counts as pruned.
    #[serde(default, with = "opt_nullable_js_number", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "number | null"))]
    pub pruned_at: Option<Option<f64>>,
    /// When the message was created: milliseconds since the Unix epoch.
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `bashExecution` message: a shell command the user ran (`!cmd`), `{role: "bashExecution",
/// command, output, exitCode?, cancelled, truncated, fullOutputPath?, excludeFromContext?,
/// meta?, timestamp}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// Always `"bashExecution"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"bashExecution\""))]
    pub role: tag::BashExecution,
    /// The command line.
    pub command: String,
    /// Its output.
    pub output: String,
    /// The exit code; `null` (`Some(None)` in Rust) when there was none (e.g. killed by a signal).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "number | null"))]
    pub exit_code: Option<Option<i64>>,
    /// The user cancelled the command.
    pub cancelled: bool,
    /// The output was truncated.
    pub truncated: bool,
    /// Where the full output was saved, when it was truncated.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub full_output_path: Option<String>,
    /// Excluded from the model's context (`!!cmd`, SPEC §12.5).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub exclude_from_context: Option<bool>,
    /// Output metadata (truncation details, …).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "Record<string, unknown>"))]
    pub meta: Option<Map<String, Value>>,
    /// When the message was created: milliseconds since the Unix epoch.
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `pythonExecution` message (oh-my-pi's `$code`): `{role: "pythonExecution", code, output,
/// exitCode?, cancelled, truncated, fullOutputPath?, excludeFromContext?, meta?, timestamp}`.
/// Counts 0 tokens and is never a cut point (SPEC §3, §4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct PythonExecutionMessage {
    /// Always `"pythonExecution"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"pythonExecution\""))]
    pub role: tag::PythonExecution,
    /// The Python code.
    pub code: String,
    /// Its output.
    pub output: String,
    /// The exit code; `null` (`Some(None)` in Rust) when there was none.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "number | null"))]
    pub exit_code: Option<Option<i64>>,
    /// The user cancelled the execution.
    pub cancelled: bool,
    /// The output was truncated.
    pub truncated: bool,
    /// Where the full output was saved, when it was truncated.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub full_output_path: Option<String>,
    /// Excluded from the model's context (`$$code`).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub exclude_from_context: Option<bool>,
    /// Output metadata (truncation details, …).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "Record<string, unknown>"))]
    pub meta: Option<Map<String, Value>>,
    /// When the message was created: milliseconds since the Unix epoch.
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `custom` message: context injected by an extension, `{role: "custom", customType,
/// content, display, details?, timestamp}`. Also what a `custom_message` entry becomes
/// (SPEC §2). Counts 0 tokens (SPEC §3) and becomes user text for the model (SPEC §6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// Always `"custom"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"custom\""))]
    pub role: tag::Custom,
    /// The extension's identifier for this kind of message.
    pub custom_type: String,
    /// The text, or blocks (`text`, `image`).
    pub content: MessageContent,
    /// Shown in the host's UI.
    pub display: bool,
    /// Extension-specific data (free-form).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub details: Option<Value>,
    /// When the message was created: milliseconds since the Unix epoch.
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `hookMessage` message: the v2 name of a `custom` message (same fields); loading a v2 file
/// renames it to `custom` (SPEC §1). Counted like a tool result by the estimate (SPEC §3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct HookMessage {
    /// Always `"hookMessage"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"hookMessage\""))]
    pub role: tag::HookMessage,
    /// The hook's identifier for this kind of message.
    pub custom_type: String,
    /// The text, or blocks (`text`, `image`).
    pub content: MessageContent,
    /// Shown in the host's UI.
    pub display: bool,
    /// Hook-specific data (free-form).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub details: Option<Value>,
    /// When the message was created: milliseconds since the Unix epoch.
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `branchSummary` message: what a `branch_summary` entry becomes (SPEC §2),
/// `{role: "branchSummary", summary, fromId, timestamp}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// Always `"branchSummary"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"branchSummary\""))]
    pub role: tag::BranchSummaryRole,
    /// The summary text.
    pub summary: String,
    /// The id of the entry the summarized branch was left from.
    pub from_id: String,
    /// Milliseconds since the Unix epoch (of a derived message: the entry's timestamp parsed;
    /// NaN, written `null`, when it does not parse).
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `compactionSummary` message: what a `compaction` entry becomes in the context (SPEC §6),
/// `{role: "compactionSummary", summary, shortSummary?, tokensBefore, timestamp}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// Always `"compactionSummary"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"compactionSummary\""))]
    pub role: tag::CompactionSummary,
    /// The summary text.
    pub summary: String,
    /// The short (PR-style) summary, when there is one.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub short_summary: Option<String>,
    /// Context tokens before the compaction.
    pub tokens_before: u64,
    /// Milliseconds since the Unix epoch (of a derived message: the entry's timestamp parsed;
    /// NaN, written `null`, when it does not parse).
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One file of a [`FileMentionMessage`]: `{path, content, lineCount?, byteSize?,
/// skippedReason?, image?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct FileMentionFile {
    /// The mentioned path.
    pub path: String,
    /// The file's text as read (empty when skipped).
    pub content: String,
    /// Number of lines of the file.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub line_count: Option<u64>,
    /// Size of the file in bytes.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub byte_size: Option<u64>,
    /// Why the body was not read (`"tooLarge"`, `"binary"`).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub skipped_reason: Option<String>,
    /// The image, for an image file.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub image: Option<ImageContent>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `fileMention` message (oh-my-pi's auto-read `@path` mentions): `{role: "fileMention",
/// files, timestamp}`. Counts 0 tokens and is never a cut point (SPEC §3, §4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct FileMentionMessage {
    /// Always `"fileMention"`.
    #[cfg_attr(feature = "tsify", tsify(type = "\"fileMention\""))]
    pub role: tag::FileMention,
    /// The mentioned files.
    pub files: Vec<FileMentionFile>,
    /// When the message was created: milliseconds since the Unix epoch.
    #[serde(with = "js_number")]
    pub timestamp: f64,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// An agent message (the `message` of a `message` entry, SPEC §1), dispatched on `role`.
///
/// Deserialization never fails on a JSON object: a message with another `role`, or one that
/// does not fit its role's shape, is [`AgentMessage::Unknown`] (0 tokens, never a cut point,
/// written back unchanged). A value that is not an object is an error.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(
        missing_as_null,
        hashmap_as_object,
        type = "UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | HookMessage | BranchSummaryMessage | CompactionSummaryMessage | PythonExecutionMessage | FileMentionMessage"
    )
)]
pub enum AgentMessage {
    /// `user`
    User(UserMessage),
    /// `assistant`
    Assistant(AssistantMessage),
    /// `toolResult`
    ToolResult(ToolResultMessage),
    /// `bashExecution`
    BashExecution(BashExecutionMessage),
    /// `custom`
    Custom(CustomMessage),
    /// `hookMessage` (v2)
    HookMessage(HookMessage),
    /// `branchSummary`
    BranchSummary(BranchSummaryMessage),
    /// `compactionSummary`
    CompactionSummary(CompactionSummaryMessage),
    /// `pythonExecution`
    PythonExecution(PythonExecutionMessage),
    /// `fileMention`
    FileMention(FileMentionMessage),
    /// Any other role, or a known role with an unexpected shape: the whole object.
    Unknown(Map<String, Value>),
}

impl AgentMessage {
    /// The typed form of `value` if its `role` is known and it fits that role's shape.
    fn typed(value: &Value) -> Option<Self> {
        let parsed = match value.get("role").and_then(Value::as_str)? {
            "user" => UserMessage::deserialize(value).map(Self::User),
            "assistant" => AssistantMessage::deserialize(value).map(Self::Assistant),
            "toolResult" => ToolResultMessage::deserialize(value).map(Self::ToolResult),
            "bashExecution" => BashExecutionMessage::deserialize(value).map(Self::BashExecution),
            "custom" => CustomMessage::deserialize(value).map(Self::Custom),
            "hookMessage" => HookMessage::deserialize(value).map(Self::HookMessage),
            "branchSummary" => BranchSummaryMessage::deserialize(value).map(Self::BranchSummary),
            "compactionSummary" => CompactionSummaryMessage::deserialize(value).map(Self::CompactionSummary),
            "pythonExecution" => PythonExecutionMessage::deserialize(value).map(Self::PythonExecution),
            "fileMention" => FileMentionMessage::deserialize(value).map(Self::FileMention),
            _ => return None,
        };
        parsed.ok()
    }

    /// Parses a JSON object (never fails; see the type's docs).
    pub fn from_map(map: Map<String, Value>) -> Self {
        let value = Value::Object(map);
        match Self::typed(&value) {
            Some(message) => message,
            None => Self::Unknown(into_object(value)),
        }
    }

    /// Parses a message. Errors only when `value` is not a JSON object.
    pub fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Self::typed(value).unwrap_or_else(|| Self::Unknown(map.clone()))),
            other => Err(Error::InvalidArgument(format!(
                "an agent message must be a JSON object, got {}",
                json_type_name(other)
            ))),
        }
    }

    /// The message as JSON.
    pub fn to_value(&self) -> Value {
        to_json(self)
    }

    /// The message's `role` (`""` for an unknown message without a string `role`).
    pub fn role(&self) -> &str {
        match self {
            Self::User(_) => tag::User::VALUE,
            Self::Assistant(_) => tag::Assistant::VALUE,
            Self::ToolResult(_) => tag::ToolResult::VALUE,
            Self::BashExecution(_) => tag::BashExecution::VALUE,
            Self::Custom(_) => tag::Custom::VALUE,
            Self::HookMessage(_) => tag::HookMessage::VALUE,
            Self::BranchSummary(_) => tag::BranchSummaryRole::VALUE,
            Self::CompactionSummary(_) => tag::CompactionSummary::VALUE,
            Self::PythonExecution(_) => tag::PythonExecution::VALUE,
            Self::FileMention(_) => tag::FileMention::VALUE,
            Self::Unknown(map) => map.get("role").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The message's `timestamp` in milliseconds since the Unix epoch (NaN for a `null`
    /// timestamp; `None` for an unknown message without a numeric one).
    pub fn timestamp(&self) -> Option<f64> {
        Some(match self {
            Self::User(m) => m.timestamp,
            Self::Assistant(m) => m.timestamp,
            Self::ToolResult(m) => m.timestamp,
            Self::BashExecution(m) => m.timestamp,
            Self::Custom(m) => m.timestamp,
            Self::HookMessage(m) => m.timestamp,
            Self::BranchSummary(m) => m.timestamp,
            Self::CompactionSummary(m) => m.timestamp,
            Self::PythonExecution(m) => m.timestamp,
            Self::FileMention(m) => m.timestamp,
            Self::Unknown(map) => return map.get("timestamp").and_then(Value::as_f64),
        })
    }

    /// True for [`AgentMessage::Unknown`].
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown(_))
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Self::User(m) => m.serialize(s),
            Self::Assistant(m) => m.serialize(s),
            Self::ToolResult(m) => m.serialize(s),
            Self::BashExecution(m) => m.serialize(s),
            Self::Custom(m) => m.serialize(s),
            Self::HookMessage(m) => m.serialize(s),
            Self::BranchSummary(m) => m.serialize(s),
            Self::CompactionSummary(m) => m.serialize(s),
            Self::PythonExecution(m) => m.serialize(s),
            Self::FileMention(m) => m.serialize(s),
            Self::Unknown(map) => map.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Map::<String, Value>::deserialize(d).map(Self::from_map)
    }
}

macro_rules! message_from {
    ($($ty:ident => $variant:ident),*) => {$(
        impl From<$ty> for AgentMessage {
            fn from(m: $ty) -> Self {
                Self::$variant(m)
            }
        }
    )*};
}

message_from!(
    UserMessage => User,
    AssistantMessage => Assistant,
    ToolResultMessage => ToolResult,
    BashExecutionMessage => BashExecution,
    CustomMessage => Custom,
    HookMessage => HookMessage,
    BranchSummaryMessage => BranchSummary,
    CompactionSummaryMessage => CompactionSummary,
    PythonExecutionMessage => PythonExecution,
    FileMentionMessage => FileMention
);
