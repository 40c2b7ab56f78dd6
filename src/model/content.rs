//! Content blocks of messages (SPEC §1): `text`, `thinking`, `image`, `toolCall`, and any other
//! block kept as it is.

use super::serde_util::{into_object, json_type_name, present, to_json};
use super::tag;
use super::JsonObject;
use crate::error::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A `text` block: `{type: "text", text}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// Always `"text"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"text\""))]
    pub kind: tag::Text,
    /// The text.
    pub text: String,
    /// Fields this model does not know (for example a provider's `textSignature`), kept for the
    /// round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TextContent {
    /// A text block.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }
}

/// A `thinking` block of an assistant message: `{type: "thinking", thinking, thinkingSignature?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// Always `"thinking"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"thinking\""))]
    pub kind: tag::Thinking,
    /// The model's reasoning text.
    pub thinking: String,
    /// The provider's opaque signature of the reasoning, when it gave one.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub thinking_signature: Option<String>,
    /// Fields this model does not know (for example `redacted`), kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// An `image` block: `{type: "image", data, mimeType}` (base64 data). Counts 4800 characters in
/// the token estimate where images count (SPEC §3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Always `"image"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"image\""))]
    pub kind: tag::Image,
    /// The image bytes, base64-encoded.
    pub data: String,
    /// The MIME type, for example `"image/png"`.
    pub mime_type: String,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ImageContent {
    /// An image block from base64 `data` and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), ..Self::default() }
    }
}

/// A `toolCall` block of an assistant message: `{type: "toolCall", id, name, arguments}`.
/// The key order of `arguments` is preserved (it matters for `JSON.stringify`, SPEC §3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Always `"toolCall"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"toolCall\""))]
    pub kind: tag::ToolCall,
    /// The call id, echoed by the matching tool result's `toolCallId`.
    pub id: String,
    /// The tool name (`read`, `write`, `edit`, `bash`, …).
    pub name: String,
    /// The arguments object (for file tools, `path` is the file, SPEC §8).
    #[cfg_attr(feature = "tsify", tsify(type = "Record<string, unknown>"))]
    pub arguments: Map<String, Value>,
    /// Fields this model does not know (for example a streaming `partialJson`), kept for the
    /// round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolCall {
    /// A tool call block.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        Self { id: id.into(), name: name.into(), arguments, ..Self::default() }
    }
}

/// One block of a message's `content` array, dispatched on `type`.
///
/// Deserialization never fails on a JSON object: a block of another `type`, or one that does
/// not fit its type's shape, is [`ContentBlock::Unknown`] and is written back unchanged. A value
/// that is not an object is an error.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(missing_as_null, hashmap_as_object, type = "TextContent | ThinkingContent | ImageContent | ToolCall")
)]
pub enum ContentBlock {
    /// `text`
    Text(TextContent),
    /// `thinking`
    Thinking(ThinkingContent),
    /// `image`
    Image(ImageContent),
    /// `toolCall`
    ToolCall(ToolCall),
    /// Any other block, or a known `type` with an unexpected shape: the whole object.
    Unknown(Map<String, Value>),
}

impl ContentBlock {
    /// The typed form of `value` if its `type` is known and it fits that type's shape.
    fn typed(value: &Value) -> Option<Self> {
        let parsed = match value.get("type").and_then(Value::as_str)? {
            "text" => TextContent::deserialize(value).map(Self::Text),
            "thinking" => ThinkingContent::deserialize(value).map(Self::Thinking),
            "image" => ImageContent::deserialize(value).map(Self::Image),
            "toolCall" => ToolCall::deserialize(value).map(Self::ToolCall),
            _ => return None,
        };
        parsed.ok()
    }

    /// Parses a JSON object (never fails; see the type's docs).
    pub fn from_map(map: Map<String, Value>) -> Self {
        let value = Value::Object(map);
        match Self::typed(&value) {
            Some(block) => block,
            None => Self::Unknown(into_object(value)),
        }
    }

    /// Parses a block. Errors only when `value` is not a JSON object.
    pub fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Self::typed(value).unwrap_or_else(|| Self::Unknown(map.clone()))),
            other => Err(Error::InvalidArgument(format!(
                "a content block must be a JSON object, got {}",
                json_type_name(other)
            ))),
        }
    }

    /// The block as JSON.
    pub fn to_value(&self) -> Value {
        to_json(self)
    }

    /// The block's `type` (`""` for an unknown block without a string `type`).
    pub fn block_type(&self) -> &str {
        match self {
            Self::Text(_) => tag::Text::VALUE,
            Self::Thinking(_) => tag::Thinking::VALUE,
            Self::Image(_) => tag::Image::VALUE,
            Self::ToolCall(_) => tag::ToolCall::VALUE,
            Self::Unknown(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// True for [`ContentBlock::Unknown`].
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown(_))
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Text(b) => b.serialize(s),
            Self::Thinking(b) => b.serialize(s),
            Self::Image(b) => b.serialize(s),
            Self::ToolCall(b) => b.serialize(s),
            Self::Unknown(map) => map.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Map::<String, Value>::deserialize(d).map(Self::from_map)
    }
}

impl From<TextContent> for ContentBlock {
    fn from(b: TextContent) -> Self {
        Self::Text(b)
    }
}
impl From<ThinkingContent> for ContentBlock {
    fn from(b: ThinkingContent) -> Self {
        Self::Thinking(b)
    }
}
impl From<ImageContent> for ContentBlock {
    fn from(b: ImageContent) -> Self {
        Self::Image(b)
    }
}
impl From<ToolCall> for ContentBlock {
    fn from(b: ToolCall) -> Self {
        Self::ToolCall(b)
    }
}

/// The `content` of user, tool-result and custom messages and of `custom_message` entries: a
/// plain string or an array of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(untagged)]
pub enum MessageContent {
    /// A plain string.
    Text(String),
    /// An array of blocks.
    Blocks(Vec<ContentBlock>),
}

impl Default for MessageContent {
    /// The empty string.
    fn default() -> Self {
        Self::Text(String::new())
    }
}

impl MessageContent {
    /// The blocks, or `None` for string content.
    pub fn blocks(&self) -> Option<&[ContentBlock]> {
        match self {
            Self::Blocks(blocks) => Some(blocks),
            Self::Text(_) => None,
        }
    }

    /// The string, or `None` for block content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(text) => Some(text),
            Self::Blocks(_) => None,
        }
    }
}

impl From<String> for MessageContent {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}
impl From<&str> for MessageContent {
    fn from(text: &str) -> Self {
        Self::Text(text.to_string())
    }
}
impl From<Vec<ContentBlock>> for MessageContent {
    fn from(blocks: Vec<ContentBlock>) -> Self {
        Self::Blocks(blocks)
    }
}
