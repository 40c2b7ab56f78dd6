//! Session entries: every line of a session file after the header (SPEC §1).
//!
//! Every typed entry has `type`, `id` (string), `parentId` (string, or `null` at the root) and
//! `timestamp` (an ISO-8601 string, kept verbatim), then its own fields, then the fields this
//! model does not know (`extra`).

use super::content::MessageContent;
use super::message::AgentMessage;
use super::serde_util::{into_object, json_type_name, nullable, present, to_json};
use super::tag;
use super::JsonObject;
use crate::error::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A `message` entry: one agent message in the tree. In the LLM context (SPEC §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct MessageEntry {
    /// Always `"message"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"message\""))]
    pub kind: tag::Message,
    /// The entry id (8 hex characters when made by the agent).
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The message.
    pub message: AgentMessage,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl MessageEntry {
    /// A message entry.
    pub fn new(
        id: impl Into<String>,
        parent_id: Option<String>,
        timestamp: impl Into<String>,
        message: impl Into<AgentMessage>,
    ) -> Self {
        Self {
            kind: tag::Message,
            id: id.into(),
            parent_id,
            timestamp: timestamp.into(),
            message: message.into(),
            extra: Map::new(),
        }
    }
}

/// A `compaction` entry: a summary replacing the history before `firstKeptEntryId`
/// (SPEC §5, §6, §9).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    /// Always `"compaction"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"compaction\""))]
    pub kind: tag::Compaction,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The summary of everything before `firstKeptEntryId`.
    pub summary: String,
    /// A short (PR-style) summary.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub short_summary: Option<String>,
    /// The first entry kept verbatim after the summary.
    pub first_kept_entry_id: String,
    /// Context tokens before the compaction.
    pub tokens_before: u64,
    /// Extra data: `{readFiles, modifiedFiles}` when made by the engine; free-form when made by
    /// an extension.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub details: Option<Value>,
    /// Data a hook asked to keep across the compaction.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "Record<string, unknown>"))]
    pub preserve_data: Option<Map<String, Value>>,
    /// Made by an extension (its `details` are not the engine's file lists).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub from_extension: Option<bool>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `branch_summary` entry: the summary of a branch the user navigated away from (SPEC §10).
/// In the LLM context as user-role text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    /// Always `"branch_summary"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"branch_summary\""))]
    pub kind: tag::BranchSummary,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The id of the entry the summarized branch was left from.
    pub from_id: String,
    /// The summary text (an empty summary is left out of the context, SPEC §6).
    pub summary: String,
    /// Extra data: `{readFiles, modifiedFiles}` when made by the engine; free-form when made by
    /// an extension.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub details: Option<Value>,
    /// Made by an extension.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub from_extension: Option<bool>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `custom_message` entry: extension content shown to the model as user-role context
/// (becomes a `custom` message, SPEC §2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    /// Always `"custom_message"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"custom_message\""))]
    pub kind: tag::CustomMessage,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
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
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `custom` entry: extension data, never in the LLM context.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    /// Always `"custom"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"custom\""))]
    pub kind: tag::Custom,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The extension's identifier for this kind of data.
    pub custom_type: String,
    /// The extension's data (free-form).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub data: Option<Value>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `label` entry: sets the label of entry `targetId`, or removes it when `label` is absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    /// Always `"label"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"label\""))]
    pub kind: tag::Label,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The labelled entry.
    pub target_id: String,
    /// The label; absent (`None`) removes it.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub label: Option<String>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `model_change` entry: the model of a role changed (a setting, not in the LLM context).
/// The current form has `model` (`"provider/id"`) and `role?` (default `"default"`); older pi
/// files write `provider` and `modelId` instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct ModelChangeEntry {
    /// Always `"model_change"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"model_change\""))]
    pub kind: tag::ModelChange,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The new model as `"provider/id"`.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub model: Option<String>,
    /// The model role that changed (absent means `"default"`).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub role: Option<String>,
    /// Older form: the provider.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub provider: Option<String>,
    /// Older form: the model id.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub model_id: Option<String>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `thinking_level_change` entry (a setting; the context's `thinkingLevel` is the last one,
/// default `"off"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChangeEntry {
    /// Always `"thinking_level_change"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"thinking_level_change\""))]
    pub kind: tag::ThinkingLevelChange,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The new level (`"off"`, `"minimal"`, `"low"`, `"medium"`, `"high"`, …).
    pub thinking_level: String,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `mode_change` entry (a setting; the context's `mode` is the last one, default `"none"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct ModeChangeEntry {
    /// Always `"mode_change"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"mode_change\""))]
    pub kind: tag::ModeChange,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The new mode.
    pub mode: String,
    /// The mode's data (free-form; the context's `modeData`).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub data: Option<Value>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `ttsr_injection` entry: rules injected into the conversation (collected, distinct and in
/// first-seen order, into the context's `injectedTtsrRules`, SPEC §6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct TtsrInjectionEntry {
    /// Always `"ttsr_injection"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"ttsr_injection\""))]
    pub kind: tag::TtsrInjection,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The names of the injected rules.
    pub injected_rules: Vec<String>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A `session_init` entry: how a sub-agent session was started (not in the LLM context).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct SessionInitEntry {
    /// Always `"session_init"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"session_init\""))]
    pub kind: tag::SessionInit,
    /// The entry id.
    pub id: String,
    /// The parent entry's id; `null` at the root (`None` in Rust).
    #[serde(deserialize_with = "nullable")]
    pub parent_id: Option<String>,
    /// When the entry was appended: an ISO-8601 string.
    pub timestamp: String,
    /// The sub-agent's system prompt.
    pub system_prompt: String,
    /// The task it was given.
    pub task: String,
    /// The names of the tools it may use.
    pub tools: Vec<String>,
    /// The JSON schema its output must follow (free-form).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub output_schema: Option<Value>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One session entry (a line after the header, SPEC §1), dispatched on `type`.
///
/// Deserialization never fails on a JSON object: an entry of another `type` (a newer agent's,
/// an extension's), one that does not fit its type's shape, and every line of a v1 file (no
/// `id` / `parentId`) is [`SessionEntry::Unknown`] and is written back unchanged. A value that
/// is not an object is an error.
// Most entries of a session are messages, so boxing the largest variant would add one
// allocation per entry without saving memory.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(
        missing_as_null,
        hashmap_as_object,
        type = "MessageEntry | CompactionEntry | BranchSummaryEntry | CustomMessageEntry | CustomEntry | LabelEntry | ModelChangeEntry | ThinkingLevelChangeEntry | ModeChangeEntry | TtsrInjectionEntry | SessionInitEntry"
    )
)]
pub enum SessionEntry {
    /// `message`
    Message(MessageEntry),
    /// `compaction`
    Compaction(CompactionEntry),
    /// `branch_summary`
    BranchSummary(BranchSummaryEntry),
    /// `custom_message`
    CustomMessage(CustomMessageEntry),
    /// `custom`
    Custom(CustomEntry),
    /// `label`
    Label(LabelEntry),
    /// `model_change`
    ModelChange(ModelChangeEntry),
    /// `thinking_level_change`
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    /// `mode_change`
    ModeChange(ModeChangeEntry),
    /// `ttsr_injection`
    TtsrInjection(TtsrInjectionEntry),
    /// `session_init`
    SessionInit(SessionInitEntry),
    /// Any other type, a known type with an unexpected shape, or an entry without ids (v1):
    /// the whole object.
    Unknown(Map<String, Value>),
}

impl SessionEntry {
    /// The typed form of `value` if its `type` is known and it fits that type's shape.
    fn typed(value: &Value) -> Option<Self> {
        let parsed = match value.get("type").and_then(Value::as_str)? {
            "message" => MessageEntry::deserialize(value).map(Self::Message),
            "compaction" => CompactionEntry::deserialize(value).map(Self::Compaction),
            "branch_summary" => BranchSummaryEntry::deserialize(value).map(Self::BranchSummary),
            "custom_message" => CustomMessageEntry::deserialize(value).map(Self::CustomMessage),
            "custom" => CustomEntry::deserialize(value).map(Self::Custom),
            "label" => LabelEntry::deserialize(value).map(Self::Label),
            "model_change" => ModelChangeEntry::deserialize(value).map(Self::ModelChange),
            "thinking_level_change" => ThinkingLevelChangeEntry::deserialize(value).map(Self::ThinkingLevelChange),
            "mode_change" => ModeChangeEntry::deserialize(value).map(Self::ModeChange),
            "ttsr_injection" => TtsrInjectionEntry::deserialize(value).map(Self::TtsrInjection),
            "session_init" => SessionInitEntry::deserialize(value).map(Self::SessionInit),
            _ => return None,
        };
        parsed.ok()
    }

    /// Parses a JSON object (never fails; see the type's docs).
    pub fn from_map(map: Map<String, Value>) -> Self {
        let value = Value::Object(map);
        match Self::typed(&value) {
            Some(entry) => entry,
            None => Self::Unknown(into_object(value)),
        }
    }

    /// Parses an entry. Errors ([`Error::InvalidArgument`]) only when `value` is not a JSON
    /// object.
    pub fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Self::typed(value).unwrap_or_else(|| Self::Unknown(map.clone()))),
            other => Err(Error::InvalidArgument(format!(
                "a session entry must be a JSON object, got {}",
                json_type_name(other)
            ))),
        }
    }

    /// Parses one JSONL line. Errors with [`Error::Parse`] (`line: 1`) when the text is not
    /// JSON, with [`Error::InvalidArgument`] when it is not an object.
    pub fn from_json(line: &str) -> Result<Self> {
        let value: Value =
            serde_json::from_slice(line.as_bytes()).map_err(|e| Error::Parse { line: 1, reason: e.to_string() })?;
        match value {
            Value::Object(map) => Ok(Self::from_map(map)),
            other => Self::from_value(&other),
        }
    }

    /// The entry as JSON (equal to the parsed JSON for any entry that was parsed, SPEC §1
    /// lossless rule; numbers as JavaScript writes them).
    pub fn to_value(&self) -> Value {
        to_json(self)
    }

    /// The entry as JSON, consuming it (no copy for [`SessionEntry::Unknown`]).
    pub fn into_value(self) -> Value {
        match self {
            Self::Unknown(map) => Value::Object(map),
            other => to_json(&other),
        }
    }

    /// The entry's `type` (`""` for an unknown entry without a string `type`).
    pub fn entry_type(&self) -> &str {
        match self {
            Self::Message(_) => tag::Message::VALUE,
            Self::Compaction(_) => tag::Compaction::VALUE,
            Self::BranchSummary(_) => tag::BranchSummary::VALUE,
            Self::CustomMessage(_) => tag::CustomMessage::VALUE,
            Self::Custom(_) => tag::Custom::VALUE,
            Self::Label(_) => tag::Label::VALUE,
            Self::ModelChange(_) => tag::ModelChange::VALUE,
            Self::ThinkingLevelChange(_) => tag::ThinkingLevelChange::VALUE,
            Self::ModeChange(_) => tag::ModeChange::VALUE,
            Self::TtsrInjection(_) => tag::TtsrInjection::VALUE,
            Self::SessionInit(_) => tag::SessionInit::VALUE,
            Self::Unknown(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// `(id, parentId, timestamp)` of a typed entry.
    fn common(&self) -> Option<(&str, Option<&str>, &str)> {
        macro_rules! c {
            ($e:expr) => {
                Some(($e.id.as_str(), $e.parent_id.as_deref(), $e.timestamp.as_str()))
            };
        }
        match self {
            Self::Message(e) => c!(e),
            Self::Compaction(e) => c!(e),
            Self::BranchSummary(e) => c!(e),
            Self::CustomMessage(e) => c!(e),
            Self::Custom(e) => c!(e),
            Self::Label(e) => c!(e),
            Self::ModelChange(e) => c!(e),
            Self::ThinkingLevelChange(e) => c!(e),
            Self::ModeChange(e) => c!(e),
            Self::TtsrInjection(e) => c!(e),
            Self::SessionInit(e) => c!(e),
            Self::Unknown(_) => None,
        }
    }

    /// The entry's `id` (for an unknown entry: its `id` if it is a string).
    pub fn id(&self) -> Option<&str> {
        match self {
            Self::Unknown(map) => map.get("id").and_then(Value::as_str),
            typed => typed.common().map(|(id, _, _)| id),
        }
    }

    /// The parent's id; `None` at the root (`parentId: null`) and when absent or not a string.
    pub fn parent_id(&self) -> Option<&str> {
        match self {
            Self::Unknown(map) => map.get("parentId").and_then(Value::as_str),
            typed => typed.common().and_then(|(_, parent, _)| parent),
        }
    }

    /// The entry's `timestamp`, an ISO-8601 string (for an unknown entry: if it is a string).
    pub fn timestamp(&self) -> Option<&str> {
        match self {
            Self::Unknown(map) => map.get("timestamp").and_then(Value::as_str),
            typed => typed.common().map(|(_, _, ts)| ts),
        }
    }

    /// The message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match self {
            Self::Message(e) => Some(&e.message),
            _ => None,
        }
    }

    /// True for [`SessionEntry::Unknown`].
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown(_))
    }
}

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Message(e) => e.serialize(s),
            Self::Compaction(e) => e.serialize(s),
            Self::BranchSummary(e) => e.serialize(s),
            Self::CustomMessage(e) => e.serialize(s),
            Self::Custom(e) => e.serialize(s),
            Self::Label(e) => e.serialize(s),
            Self::ModelChange(e) => e.serialize(s),
            Self::ThinkingLevelChange(e) => e.serialize(s),
            Self::ModeChange(e) => e.serialize(s),
            Self::TtsrInjection(e) => e.serialize(s),
            Self::SessionInit(e) => e.serialize(s),
            Self::Unknown(map) => map.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SessionEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Map::<String, Value>::deserialize(d).map(Self::from_map)
    }
}

macro_rules! entry_from {
    ($($ty:ident => $variant:ident),*) => {$(
        impl From<$ty> for SessionEntry {
            fn from(e: $ty) -> Self {
                Self::$variant(e)
            }
        }
    )*};
}

entry_from!(
    MessageEntry => Message,
    CompactionEntry => Compaction,
    BranchSummaryEntry => BranchSummary,
    CustomMessageEntry => CustomMessage,
    CustomEntry => Custom,
    LabelEntry => Label,
    ModelChangeEntry => ModelChange,
    ThinkingLevelChangeEntry => ThinkingLevelChange,
    ModeChangeEntry => ModeChange,
    TtsrInjectionEntry => TtsrInjection,
    SessionInitEntry => SessionInit
);
