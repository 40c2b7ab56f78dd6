//! Per-entry metadata: the small facts the algorithms need about each entry (type, id,
//! parent, role, token estimate, usage, tool calls, …), extracted once without keeping the
//! entry's large texts.
//!
//! [`EntryMeta`] deserializes leniently from either raw JSON bytes (the fast path of the
//! session handle: no tool output is ever materialized as a `String`) or from a parsed
//! [`serde_json::Value`] (the pure-function path). Fields of an unexpected JSON type are read the
//! way the JavaScript reference reads them: they simply do not count. SPEC §1–§3.

use crate::js::{json_stringify_len, utf16_len};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;

/// Characters an image block counts for in the token estimate (1200 tokens). SPEC §3, §12.4.
pub const IMAGE_CHARS: u64 = 4800;

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

/// Token usage reported by the provider on an assistant message. Missing numbers are NaN,
/// as `undefined` arithmetic is in the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsageMeta {
    /// `usage.input`
    pub input: f64,
    /// `usage.output`
    pub output: f64,
    /// `usage.cacheRead`
    pub cache_read: f64,
    /// `usage.cacheWrite`
    pub cache_write: f64,
    /// `usage.totalTokens` (NaN when absent)
    pub total_tokens: f64,
}

fn or_js(a: f64, b: f64) -> f64 {
    if a == 0.0 || a.is_nan() {
        b
    } else {
        a
    }
}

impl UsageMeta {
    /// Context tokens of this usage: `totalTokens || input + output + cacheRead + cacheWrite`.
    /// SPEC §5.
    pub fn context_tokens(&self) -> f64 {
        or_js(self.total_tokens, self.input + self.output + self.cache_read + self.cache_write)
    }
    /// Prompt tokens: `input + cacheRead + cacheWrite`, or the context tokens when that is 0.
    /// SPEC §5 (adaptive keep).
    pub fn prompt_tokens(&self) -> f64 {
        or_js(self.input + self.cache_read + self.cache_write, self.context_tokens())
    }
}

/// A `toolCall` content block of an assistant message, reduced to what file tracking and
/// validation need.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCallMeta {
    /// The call id (`id`), if a string.
    pub id: Option<String>,
    /// The tool name (`name`), if a string.
    pub name: Option<String>,
    /// `arguments.path` when it is a non-empty string.
    pub path: Option<String>,
}

/// What the algorithms know about a message (SPEC §1, §3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageMeta {
    /// The role.
    pub role: Role,
    /// `estimateTokens(message)` (SPEC §3, with the §12.4 and §12.5 deviations).
    pub tokens: u64,
    /// `bashExecution.excludeFromContext === true`.
    pub exclude_from_context: bool,
    /// `usage` of an assistant message, when it is an object.
    pub usage: Option<UsageMeta>,
    /// `stopReason`, when a string.
    pub stop_reason: Option<String>,
    /// Tool calls of an assistant message, in order.
    pub tool_calls: Vec<ToolCallMeta>,
    /// `toolCallId` of a tool result.
    pub tool_call_id: Option<String>,
    /// `toolName` of a tool result.
    pub tool_name: Option<String>,
    /// The tool result was already pruned (`prunedAt` present, even `null`). SPEC §7.
    pub pruned: bool,
    /// `errorMessage` of an assistant message, when a string.
    pub error_message: Option<String>,
    /// `` `${provider}/${model}` `` of an assistant message, JavaScript-stringified
    /// (missing fields print `undefined`). SPEC §6 (`models.default`).
    pub provider_model: Option<String>,
}

/// What the algorithms know about one entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntryMeta {
    /// The entry kind (from `type`).
    pub kind: EntryKind,
    /// `id`, when a string.
    pub id: Option<String>,
    /// `parentId`, when a string (`null`, absent or another type: a root).
    pub parent_id: Option<String>,
    /// The message of a `message` entry.
    pub message: Option<MessageMeta>,
    /// `firstKeptEntryId` of a compaction.
    pub first_kept_entry_id: Option<String>,
    /// `fromExtension === true` (compaction, branch summary).
    pub from_extension: bool,
    /// UTF-16 length of `summary` (compaction, branch summary); 0 when not a string.
    pub summary_len: u64,
    /// The whole entry, kept only for the small settings entries (`model_change`,
    /// `thinking_level_change`, `mode_change`, `ttsr_injection`) that context building reads.
    pub settings: Option<Box<Value>>,
    /// `targetId` of a label entry.
    pub target_id: Option<String>,
    /// `label` of a label entry (absent or not a string: the label is removed).
    pub label: Option<String>,
}

impl EntryMeta {
    /// Extracts the metadata of an entry from its JSON text (one JSONL line).
    /// Errors only when the text is not valid JSON.
    pub fn from_json(bytes: &[u8]) -> serde_json::Result<Self> {
        match serde_json::from_slice::<RawEntry>(bytes) {
            Ok(raw) => {
                let mut meta = raw.into_meta();
                if meta.is_settings() {
                    meta.settings = Some(Box::new(serde_json::from_slice(bytes)?));
                }
                Ok(meta)
            }
            // Duplicate keys are legal for JSON.parse (last wins): retry through a Value.
            Err(e) if e.is_data() => {
                let v: Value = serde_json::from_slice(bytes)?;
                Ok(Self::from_value(&v))
            }
            Err(e) => Err(e),
        }
    }

    /// Extracts the metadata of an already parsed entry. Never fails: a non-object is an
    /// entry of kind [`EntryKind::Other`] without id.
    pub fn from_value(v: &Value) -> Self {
        let mut meta = RawEntry::deserialize(v).map(RawEntry::into_meta).unwrap_or_default();
        if meta.is_settings() {
            meta.settings = Some(Box::new(v.clone()));
        }
        meta
    }

    /// True for the kinds whose whole entry is kept in [`EntryMeta::settings`].
    pub fn is_settings(&self) -> bool {
        matches!(
            self.kind,
            EntryKind::ModelChange | EntryKind::ThinkingLevelChange | EntryKind::ModeChange | EntryKind::TtsrInjection
        )
    }

    /// Tokens of `messageOf(entry)` (SPEC §2): the message estimate for `message` entries, the
    /// summary estimate for `branch_summary` entries (a `branchSummary` message), 0 for a
    /// `custom_message` (a `custom` message counts 0) and for everything else.
    pub fn message_of_tokens(&self) -> u64 {
        match self.kind {
            EntryKind::Message => self.message_tokens(),
            EntryKind::BranchSummary => self.summary_len.div_ceil(4),
            _ => 0,
        }
    }

    /// The message role, if this is a `message` entry.
    pub fn role(&self) -> Option<Role> {
        self.message.as_ref().map(|m| m.role)
    }

    /// The token estimate of the message of a `message` entry, else 0 (SPEC §4 step 3).
    pub fn message_tokens(&self) -> u64 {
        self.message.as_ref().map_or(0, |m| m.tokens)
    }
}

impl MessageMeta {
    /// Extracts the metadata of a message object (any role).
    pub fn from_value(v: &Value) -> Self {
        RawMessage::deserialize(v).map(RawMessage::into_meta).unwrap_or_default()
    }
}

/// `estimateTokens(message)`: `ceil(chars / 4)` with chars in UTF-16 code units, by role.
/// SPEC §3 (with §12.4 user images and §12.5 excluded shell output).
pub fn estimate_tokens(message: &Value) -> u64 {
    MessageMeta::from_value(message).tokens
}

// ---------------------------------------------------------------------------------------
// Lenient wire shapes. Every field accepts any JSON value; only the expected type counts.

/// Implements the visitor methods of every JSON type the wrapper ignores: they consume the
/// value and yield the wrapper's default.
macro_rules! ignore_other_types {
    ($t:ty) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_unit<E: de::Error>(self) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_none<E: de::Error>(self) -> Result<$t, E> {
            Ok(<$t>::default())
        }
    };
}

/// Consumes a sequence without keeping it.
fn skip_seq<'de, A: SeqAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Consumes a map without keeping it.
fn skip_map<'de, A: MapAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A string, or nothing when the JSON value is of another type.
#[derive(Default)]
struct LStr(Option<String>);

impl<'de> Deserialize<'de> for LStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LStr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<LStr, E> {
                Ok(LStr(Some(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<LStr, E> {
                Ok(LStr(Some(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<LStr, A::Error> {
                skip_seq(a).map(|_| LStr(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<LStr, A::Error> {
                skip_map(a).map(|_| LStr(None))
            }
            ignore_other_types!(LStr);
        }
        d.deserialize_any(V)
    }
}

/// The UTF-16 length of a string (None for other JSON types), without keeping it.
#[derive(Default)]
struct TextLen(Option<u64>);

impl<'de> Deserialize<'de> for TextLen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextLen;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TextLen, E> {
                Ok(TextLen(Some(utf16_len(s))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<TextLen, A::Error> {
                skip_seq(a).map(|_| TextLen(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<TextLen, A::Error> {
                skip_map(a).map(|_| TextLen(None))
            }
            ignore_other_types!(TextLen);
        }
        d.deserialize_any(V)
    }
}

/// An object deserialized as `T`; any other JSON value becomes `T::default()`.
struct OnlyMap<T>(T);

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for OnlyMap<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for V<T> {
            type Value = OnlyMap<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<OnlyMap<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(a)).map(OnlyMap)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<OnlyMap<T>, A::Error> {
                skip_seq(a).map(|_| OnlyMap(T::default()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<OnlyMap<T>, E> {
                Ok(OnlyMap(T::default()))
            }
            ignore_other_types!(OnlyMap<T>);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<T: Default> Default for OnlyMap<T> {
    fn default() -> Self {
        OnlyMap(T::default())
    }
}

/// A number (NaN for other types, like `undefined` arithmetic).
struct LNum(f64);

impl Default for LNum {
    fn default() -> Self {
        LNum(f64::NAN)
    }
}

impl<'de> Deserialize<'de> for LNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(LNum(match v {
            Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
            Value::Null => 0.0, // null coerces to 0 in arithmetic
            Value::Bool(b) => b as u8 as f64,
            _ => f64::NAN,
        }))
    }
}

/// Presence of a key, whatever its value (`x !== undefined`).
#[derive(Default)]
struct Present(bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d)?;
        Ok(Present(true))
    }
}

/// `=== true`.
#[derive(Default)]
struct IsTrue(bool);

impl<'de> Deserialize<'de> for IsTrue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d);
        Ok(IsTrue(matches!(v, Ok(Value::Bool(true)))))
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RawUsage {
    input: LNum,
    output: LNum,
    #[serde(rename = "cacheRead")]
    cache_read: LNum,
    #[serde(rename = "cacheWrite")]
    cache_write: LNum,
    #[serde(rename = "totalTokens")]
    total_tokens: LNum,
}

/// `usage`: only an object counts.
#[derive(Default)]
struct LUsage(Option<UsageMeta>);

impl<'de> Deserialize<'de> for LUsage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if !v.is_object() {
            return Ok(LUsage(None));
        }
        let u = RawUsage::deserialize(&v).unwrap_or_default();
        Ok(LUsage(Some(UsageMeta {
            input: u.input.0,
            output: u.output.0,
            cache_read: u.cache_read.0,
            cache_write: u.cache_write.0,
            total_tokens: u.total_tokens.0,
        })))
    }
}

/// One content block, reduced.
#[derive(Default, Deserialize)]
#[serde(default)]
struct RawBlock {
    #[serde(rename = "type")]
    ty: LStr,
    text: TextLen,
    thinking: TextLen,
    id: LStr,
    name: LStr,
    arguments: Option<Value>,
}

/// `content`: a string, an array of blocks, or anything else (counts nothing).
#[derive(Default)]
enum RawContent {
    Text(u64),
    Blocks(Vec<RawBlock>),
    #[default]
    None,
}

impl<'de> Deserialize<'de> for RawContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawContent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("message content")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawContent, E> {
                Ok(RawContent::Text(utf16_len(s)))
            }
            ignore_other_types!(RawContent);
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<RawContent, A::Error> {
                let mut blocks = Vec::new();
                while let Some(b) = a.next_element::<OnlyMap<RawBlock>>()? {
                    blocks.push(b.0);
                }
                Ok(RawContent::Blocks(blocks))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<RawContent, A::Error> {
                skip_map(a).map(|_| RawContent::None)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RawMessage {
    role: LStr,
    content: RawContent,
    command: TextLen,
    output: TextLen,
    summary: TextLen,
    #[serde(rename = "excludeFromContext")]
    exclude_from_context: IsTrue,
    usage: LUsage,
    #[serde(rename = "stopReason")]
    stop_reason: LStr,
    #[serde(rename = "errorMessage")]
    error_message: LStr,
    #[serde(rename = "toolCallId")]
    tool_call_id: LStr,
    #[serde(rename = "toolName")]
    tool_name: LStr,
    #[serde(rename = "prunedAt")]
    pruned_at: Present,
    provider: Option<Value>,
    model: Option<Value>,
}

/// `String(x)` of an optional value (`undefined` when absent).
fn js_display(v: Option<&Value>) -> String {
    v.map_or_else(|| "undefined".to_string(), crate::js::js_string)
}

fn ceil_div4(chars: u64) -> u64 {
    chars.div_ceil(4)
}

impl RawMessage {
    fn into_meta(self) -> MessageMeta {
        let role = self.role.0.as_deref().map_or(Role::Other, Role::from_name);
        let mut chars: u64 = 0;
        let mut tool_calls = Vec::new();
        match role {
            Role::User | Role::ToolResult | Role::HookMessage => match &self.content {
                RawContent::Text(n) => chars = *n,
                RawContent::Blocks(blocks) => {
                    for b in blocks {
                        match b.ty.0.as_deref() {
                            Some("text") => chars += b.text.0.unwrap_or(0),
                            Some("image") => chars += IMAGE_CHARS,
                            _ => {}
                        }
                    }
                }
                RawContent::None => {}
            },
            Role::Assistant => {
                if let RawContent::Blocks(blocks) = &self.content {
                    for b in blocks {
                        match b.ty.0.as_deref() {
                            Some("text") => chars += b.text.0.unwrap_or(0),
                            Some("thinking") => chars += b.thinking.0.unwrap_or(0),
                            Some("toolCall") => {
                                chars += b.name.0.as_deref().map_or(0, utf16_len);
                                chars += b.arguments.as_ref().map_or(0, json_stringify_len);
                            }
                            _ => {}
                        }
                    }
                }
            }
            Role::BashExecution if !self.exclude_from_context.0 => {
                chars = self.command.0.unwrap_or(0) + self.output.0.unwrap_or(0);
            }
            Role::BranchSummary | Role::CompactionSummary => chars = self.summary.0.unwrap_or(0),
            _ => {}
        }
        if role == Role::Assistant {
            if let RawContent::Blocks(blocks) = self.content {
                for b in blocks {
                    if b.ty.0.as_deref() == Some("toolCall") {
                        let path = b
                            .arguments
                            .as_ref()
                            .and_then(|a| a.get("path"))
                            .and_then(Value::as_str)
                            .filter(|p| !p.is_empty())
                            .map(str::to_owned);
                        tool_calls.push(ToolCallMeta { id: b.id.0, name: b.name.0, path });
                    }
                }
            }
        }
        MessageMeta {
            role,
            tokens: ceil_div4(chars),
            exclude_from_context: role == Role::BashExecution && self.exclude_from_context.0,
            usage: if role == Role::Assistant { self.usage.0 } else { None },
            stop_reason: self.stop_reason.0,
            tool_calls,
            tool_call_id: self.tool_call_id.0,
            tool_name: self.tool_name.0,
            pruned: self.pruned_at.0,
            error_message: self.error_message.0,
            provider_model: (role == Role::Assistant).then(|| {
                format!("{}/{}", js_display(self.provider.as_ref()), js_display(self.model.as_ref()))
            }),
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RawEntry {
    #[serde(rename = "type")]
    ty: LStr,
    id: LStr,
    #[serde(rename = "parentId")]
    parent_id: LStr,
    message: Option<OnlyMap<RawMessage>>,
    #[serde(rename = "firstKeptEntryId")]
    first_kept_entry_id: LStr,
    #[serde(rename = "fromExtension")]
    from_extension: IsTrue,
    summary: TextLen,
    #[serde(rename = "targetId")]
    target_id: LStr,
    label: LStr,
}

impl RawEntry {
    fn into_meta(self) -> EntryMeta {
        let kind = self.ty.0.as_deref().map_or(EntryKind::Other, EntryKind::from_type);
        let message = if kind == EntryKind::Message {
            Some(self.message.map(|m| m.0).unwrap_or_default().into_meta())
        } else {
            None
        };
        EntryMeta {
            kind,
            id: self.id.0,
            parent_id: self.parent_id.0,
            message,
            first_kept_entry_id: self.first_kept_entry_id.0,
            from_extension: self.from_extension.0,
            summary_len: self.summary.0.unwrap_or(0),
            settings: None,
            target_id: self.target_id.0,
            label: self.label.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_and_value_paths_agree() {
        let line = r#"{"type":"message","id":"a","parentId":"p","timestamp":"x","message":{"role":"assistant","content":[{"type":"text","text":"Hi"},{"type":"thinking","thinking":"hmm..."},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.rs"}}],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3},"stopReason":"toolUse"}}"#;
        let a = EntryMeta::from_json(line.as_bytes()).unwrap();
        let b = EntryMeta::from_value(&serde_json::from_str(line).unwrap());
        assert_eq!(a, b);
        assert_eq!(a.kind, EntryKind::Message);
        assert_eq!(a.parent_id.as_deref(), Some("p"));
        let m = a.message.unwrap();
        // 2 + 6 + 4 + len({"path":"a.rs"}) = 12 + 15 = 27 → 7
        assert_eq!(m.tokens, 7);
        assert_eq!(m.tool_calls[0].path.as_deref(), Some("a.rs"));
        assert_eq!(m.usage.unwrap().context_tokens(), 3.0);
    }

    #[test]
    fn odd_shapes_do_not_fail() {
        for v in [json!(5), json!({"type": 3}), json!({"type":"message","message":"x"}),
                  json!({"type":"message","message":{"role":"user","content":[1,null,{"type":"text","text":5}]}})] {
            let _ = EntryMeta::from_value(&v);
        }
        assert!(EntryMeta::from_json(b"{\"id\":\"a\",\"id\":\"b\"}").unwrap().id.as_deref() == Some("b"));
    }

    #[test]
    fn images_and_excluded_bash() {
        assert_eq!(estimate_tokens(&json!({"role":"user","content":[{"type":"image","data":"AAAA"}]})), 1200);
        assert_eq!(estimate_tokens(&json!({"role":"bashExecution","command":"ls","output":"abcdef","excludeFromContext":true})), 0);
        assert_eq!(estimate_tokens(&json!({"role":"bashExecution","command":"ls","output":"abcdef"})), 2);
        assert_eq!(estimate_tokens(&json!({"role":"custom","content":"abcdef"})), 0);
    }
}
