//! The one extraction rule of an entry's metadata over any reader of JSON-shaped values
//! ([`JsonRead`]): a parsed [`serde_json::Value`] here, JavaScript objects read in place in the
//! wasm binding, and the byte scanner's fallback (bytes parsed into a `Value`). Every field
//! accepts any JSON value; only the expected type counts, the way the JavaScript reference
//! reads them. SPEC §1–§3, §5.

use super::kind::{EntryKind, NotObject, Role};
use super::meta::{
    BlockKind, BlockLens, ContentBlock, ContentShape, Counted, EntryMeta, MessageMeta, MessageShape, ToolCallMeta,
    UsageMeta,
};
use crate::js::{json_stringify_len, utf16_len};
use serde_json::Value;
use std::convert::Infallible;

/// The keys the metadata reads, for readers that prepare their key values once (the wasm
/// binding keeps one JavaScript string per key). [`Field::name`] is the wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Field {
    /// `type` (entry, content block)
    Type,
    /// `id` (entry, toolCall block)
    Id,
    /// `parentId`
    ParentId,
    /// `message`
    Message,
    /// `firstKeptEntryId`
    FirstKeptEntryId,
    /// `fromExtension`
    FromExtension,
    /// `summary`
    Summary,
    /// `targetId`
    TargetId,
    /// `label`
    Label,
    /// `role`
    Role,
    /// `content`
    Content,
    /// `command`
    Command,
    /// `output` (bashExecution output, and `usage.output`)
    Output,
    /// `excludeFromContext`
    ExcludeFromContext,
    /// `usage`
    Usage,
    /// `stopReason`
    StopReason,
    /// `errorMessage`
    ErrorMessage,
    /// `toolCallId`
    ToolCallId,
    /// `toolName`
    ToolName,
    /// `prunedAt`
    PrunedAt,
    /// `provider`
    Provider,
    /// `model`
    Model,
    /// `text`
    Text,
    /// `thinking`
    Thinking,
    /// `name`
    Name,
    /// `arguments`
    Arguments,
    /// `path` (of toolCall arguments)
    Path,
    /// `usage.input`
    Input,
    /// `usage.cacheRead`
    CacheRead,
    /// `usage.cacheWrite`
    CacheWrite,
    /// `usage.totalTokens`
    TotalTokens,
}

impl Field {
    /// Every field, in declaration order (`Field::ALL[f as usize] == f`).
    pub const ALL: [Field; 31] = [
        Field::Type,
        Field::Id,
        Field::ParentId,
        Field::Message,
        Field::FirstKeptEntryId,
        Field::FromExtension,
        Field::Summary,
        Field::TargetId,
        Field::Label,
        Field::Role,
        Field::Content,
        Field::Command,
        Field::Output,
        Field::ExcludeFromContext,
        Field::Usage,
        Field::StopReason,
        Field::ErrorMessage,
        Field::ToolCallId,
        Field::ToolName,
        Field::PrunedAt,
        Field::Provider,
        Field::Model,
        Field::Text,
        Field::Thinking,
        Field::Name,
        Field::Arguments,
        Field::Path,
        Field::Input,
        Field::CacheRead,
        Field::CacheWrite,
        Field::TotalTokens,
    ];

    /// The wire name of the key.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Type => "type",
            Field::Id => "id",
            Field::ParentId => "parentId",
            Field::Message => "message",
            Field::FirstKeptEntryId => "firstKeptEntryId",
            Field::FromExtension => "fromExtension",
            Field::Summary => "summary",
            Field::TargetId => "targetId",
            Field::Label => "label",
            Field::Role => "role",
            Field::Content => "content",
            Field::Command => "command",
            Field::Output => "output",
            Field::ExcludeFromContext => "excludeFromContext",
            Field::Usage => "usage",
            Field::StopReason => "stopReason",
            Field::ErrorMessage => "errorMessage",
            Field::ToolCallId => "toolCallId",
            Field::ToolName => "toolName",
            Field::PrunedAt => "prunedAt",
            Field::Provider => "provider",
            Field::Model => "model",
            Field::Text => "text",
            Field::Thinking => "thinking",
            Field::Name => "name",
            Field::Arguments => "arguments",
            Field::Path => "path",
            Field::Input => "input",
            Field::CacheRead => "cacheRead",
            Field::CacheWrite => "cacheWrite",
            Field::TotalTokens => "totalTokens",
        }
    }
}

/// The JSON type of a value as `JSON.stringify` would write it (a reader of JavaScript values
/// reports a non-finite number as `Null`, a function or symbol in an array as `Null`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A finite number.
    Number(f64),
    /// A string.
    String,
    /// An array.
    Array,
    /// Any other object.
    Object,
}

impl Shape {
    /// The type of a value that is not an object ([`EntryMeta::not_object`]); `None` for an
    /// object.
    pub fn not_object(self) -> Option<NotObject> {
        match self {
            Shape::Null => Some(NotObject::Null),
            Shape::Bool(_) => Some(NotObject::Boolean),
            Shape::Number(_) => Some(NotObject::Number),
            Shape::String => Some(NotObject::String),
            Shape::Array => Some(NotObject::Array),
            Shape::Object => None,
        }
    }
}

/// Read access to one JSON-shaped value: what the metadata rule ([`read_entry`],
/// [`read_message`]) needs and nothing more, so that a reader over values held elsewhere (the
/// JavaScript objects of a host) can answer each question without converting the value.
/// `Error` is why a read failed (a JavaScript getter threw); the rule stops at the first one.
pub trait JsonRead: Sized {
    /// Why a read failed ([`Infallible`] for values in memory).
    type Error;
    /// The value of key `f` of an object; `None` when the key is absent (or its value is one
    /// `JSON.stringify` leaves out) or the value is not an object.
    fn field(&self, f: Field) -> Result<Option<Self>, Self::Error>;
    /// The JSON type of the value.
    fn shape(&self) -> Result<Shape, Self::Error>;
    /// The text, when the value is a string.
    fn string(&self) -> Result<Option<String>, Self::Error>;
    /// The UTF-16 length of the text, when the value is a string.
    fn text_len(&self) -> Result<Option<u64>, Self::Error>;
    /// The elements of an array (empty for any other value).
    fn items(&self) -> Result<Vec<Self>, Self::Error>;
    /// `JSON.stringify(value).length` (UTF-16 units).
    fn json_len(&self) -> Result<u64, Self::Error>;
    /// The value as JSON (only read for small values: settings entries, `String(x)` of a
    /// non-string `provider`/`model`).
    fn to_value(&self) -> Result<Value, Self::Error>;
}

impl JsonRead for &Value {
    type Error = Infallible;
    fn field(&self, f: Field) -> Result<Option<Self>, Infallible> {
        Ok(self.get(f.name()))
    }
    fn shape(&self) -> Result<Shape, Infallible> {
        Ok(match self {
            Value::Null => Shape::Null,
            Value::Bool(b) => Shape::Bool(*b),
            Value::Number(n) => Shape::Number(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(_) => Shape::String,
            Value::Array(_) => Shape::Array,
            Value::Object(_) => Shape::Object,
        })
    }
    fn string(&self) -> Result<Option<String>, Infallible> {
        Ok(self.as_str().map(str::to_owned))
    }
    fn text_len(&self) -> Result<Option<u64>, Infallible> {
        Ok(self.as_str().map(utf16_len))
    }
    fn items(&self) -> Result<Vec<Self>, Infallible> {
        Ok(self.as_array().map(|a| a.iter().collect()).unwrap_or_default())
    }
    fn json_len(&self) -> Result<u64, Infallible> {
        Ok(json_stringify_len(self))
    }
    fn to_value(&self) -> Result<Value, Infallible> {
        Ok((*self).clone())
    }
}

/// A string field (`None` when absent or of another type).
fn str_of<R: JsonRead>(v: &R, f: Field) -> Result<Option<String>, R::Error> {
    match v.field(f)? {
        Some(x) => x.string(),
        None => Ok(None),
    }
}

/// The UTF-16 length of a string field (0 when absent or of another type).
fn len_of<R: JsonRead>(v: &R, f: Field) -> Result<u64, R::Error> {
    match v.field(f)? {
        Some(x) => Ok(x.text_len()?.unwrap_or(0)),
        None => Ok(0),
    }
}

/// `v[f] === true`.
fn is_true<R: JsonRead>(v: &R, f: Field) -> Result<bool, R::Error> {
    match v.field(f)? {
        Some(x) => Ok(x.shape()? == Shape::Bool(true)),
        None => Ok(false),
    }
}

/// A number as `undefined` arithmetic sees it: NaN when absent or not a number, `null` → 0,
/// booleans → 0 / 1.
fn num_of<R: JsonRead>(v: &R, f: Field) -> Result<f64, R::Error> {
    let Some(x) = v.field(f)? else { return Ok(f64::NAN) };
    Ok(match x.shape()? {
        Shape::Number(n) => n,
        Shape::Null => 0.0,
        Shape::Bool(b) => b as u8 as f64,
        _ => f64::NAN,
    })
}

/// `String(x)` of `provider` / `model` (`undefined` when absent or `null`).
fn shown<R: JsonRead>(v: &R, f: Field) -> Result<String, R::Error> {
    let Some(x) = v.field(f)? else { return Ok("undefined".into()) };
    match x.shape()? {
        Shape::Null => Ok("undefined".into()),
        Shape::String => Ok(x.string()?.unwrap_or_default()),
        _ => Ok(crate::js::js_string(&x.to_value()?)),
    }
}

/// One content block of a message being read: its lengths, read up front, and the block for
/// the tool-call fields (read only for the toolCall blocks of an assistant message).
struct ReadBlock<R> {
    lens: BlockLens,
    block: R,
}

impl<R: JsonRead> ReadBlock<R> {
    fn new(block: R) -> Result<Self, R::Error> {
        let kind = str_of(&block, Field::Type)?.as_deref().map_or(BlockKind::Other, BlockKind::from_type);
        let mut lens = BlockLens { kind, text: 0, thinking: 0, name: 0, args: 0 };
        match kind {
            BlockKind::Text => lens.text = len_of(&block, Field::Text)?,
            BlockKind::Thinking => lens.thinking = len_of(&block, Field::Thinking)?,
            BlockKind::ToolCall => {
                lens.name = len_of(&block, Field::Name)?;
                lens.args = match block.field(Field::Arguments)? {
                    Some(a) if a.shape()? != Shape::Null => a.json_len()?,
                    _ => 0,
                };
            }
            BlockKind::Image | BlockKind::Other => {}
        }
        Ok(Self { lens, block })
    }
}

impl<R: JsonRead> ContentBlock for ReadBlock<R> {
    type Error = R::Error;

    fn lens(&self) -> BlockLens {
        self.lens
    }

    fn tool_call(self) -> Result<ToolCallMeta, R::Error> {
        let path = match self.block.field(Field::Arguments)? {
            Some(a) => str_of(&a, Field::Path)?.filter(|p| !p.is_empty()),
            None => None,
        };
        Ok(ToolCallMeta {
            id: str_of(&self.block, Field::Id)?,
            name: str_of(&self.block, Field::Name)?,
            path,
            args_text: None,
        })
    }
}

/// The role of a message object and, for an assistant message, `` `${provider}/${model}` ``
/// ([`MessageMeta::provider_model`]): the part of a message that [`read_entry_head`] reads.
fn message_head<R: JsonRead>(m: &R) -> Result<(Role, Option<String>), R::Error> {
    let role = str_of(m, Field::Role)?.as_deref().map_or(Role::Other, Role::from_name);
    let provider_model = if role == Role::Assistant {
        Some(format!("{}/{}", shown(m, Field::Provider)?, shown(m, Field::Model)?))
    } else {
        None
    };
    Ok((role, provider_model))
}

/// The metadata of a message (any role; a value that is not an object has none of the fields
/// and counts 0 tokens). The estimate is `MessageShape::count` (SPEC §3), the rule every reader
/// shares, the byte scanner included.
pub fn read_message<R: JsonRead>(m: &R) -> Result<MessageMeta, R::Error> {
    if m.shape()? != Shape::Object {
        return Ok(MessageMeta::default());
    }
    let (role, provider_model) = message_head(m)?;
    let content = match m.field(Field::Content)? {
        None => ContentShape::None,
        Some(c) => match c.shape()? {
            Shape::String => ContentShape::Text(c.text_len()?.unwrap_or(0)),
            Shape::Array => {
                let mut blocks = Vec::new();
                for b in c.items()? {
                    if b.shape()? == Shape::Object {
                        blocks.push(ReadBlock::new(b)?);
                    }
                }
                ContentShape::Blocks(blocks)
            }
            _ => ContentShape::None,
        },
    };
    let bash = role == Role::BashExecution;
    let summary = matches!(role, Role::BranchSummary | Role::CompactionSummary);
    let exclude_from_context = bash && is_true(m, Field::ExcludeFromContext)?;
    let shape = MessageShape {
        role,
        content,
        command: if bash { len_of(m, Field::Command)? } else { 0 },
        output: if bash { len_of(m, Field::Output)? } else { 0 },
        summary: if summary { len_of(m, Field::Summary)? } else { 0 },
        exclude_from_context,
    };
    let Counted { tokens, tool_calls } = shape.count()?;
    let assistant = role == Role::Assistant;
    let usage = match m.field(Field::Usage)? {
        Some(u) if assistant && u.shape()? == Shape::Object => Some(UsageMeta {
            input: num_of(&u, Field::Input)?,
            output: num_of(&u, Field::Output)?,
            cache_read: num_of(&u, Field::CacheRead)?,
            cache_write: num_of(&u, Field::CacheWrite)?,
            total_tokens: num_of(&u, Field::TotalTokens)?,
        }),
        _ => None,
    };
    Ok(MessageMeta {
        role,
        tokens,
        exclude_from_context,
        usage,
        stop_reason: str_of(m, Field::StopReason)?,
        tool_calls,
        tool_call_id: str_of(m, Field::ToolCallId)?,
        tool_name: str_of(m, Field::ToolName)?,
        pruned: m.field(Field::PrunedAt)?.is_some(),
        error_message: str_of(m, Field::ErrorMessage)?,
        provider_model,
        content_span: None,
    })
}

/// The metadata of an entry (a value that is not an object is an entry of kind
/// [`EntryKind::Other`] without id, its type in [`EntryMeta::not_object`]). Settings entries keep their whole value
/// ([`EntryMeta::settings`]).
pub fn read_entry<R: JsonRead>(e: &R) -> Result<EntryMeta, R::Error> {
    read_entry_with(e, true)
}

/// The head of an entry's metadata: every field of [`read_entry`] except what lies in the
/// content of a message, so that a reader that must look at every entry of a long session (its
/// tree of ids, its kinds, the settings along a branch) need not read every message. The fields
/// of the entry itself (kind, ids, compaction and label fields, the settings value) are those
/// of [`read_entry`]; for a `message` entry [`EntryMeta::message`] holds only the role and
/// [`MessageMeta::provider_model`] (the other message fields are their defaults: 0 tokens, no
/// usage, no tool calls); [`read_entry`] reads all. SPEC §1, §6.
pub fn read_entry_head<R: JsonRead>(e: &R) -> Result<EntryMeta, R::Error> {
    read_entry_with(e, false)
}

/// [`read_entry`] (`body`) or [`read_entry_head`] (inlined: each keeps only its own branch).
#[inline(always)]
fn read_entry_with<R: JsonRead>(e: &R, body: bool) -> Result<EntryMeta, R::Error> {
    if let Some(t) = e.shape()?.not_object() {
        return Ok(EntryMeta::of_non_object(t));
    }
    let ty = str_of(e, Field::Type)?;
    let kind = ty.as_deref().map_or(EntryKind::Other, EntryKind::from_type);
    let message = match kind {
        EntryKind::Message => Some(match e.field(Field::Message)? {
            Some(m) if body => read_message(&m)?,
            Some(m) if m.shape()? == Shape::Object => {
                let (role, provider_model) = message_head(&m)?;
                MessageMeta { role, provider_model, ..MessageMeta::default() }
            }
            _ => MessageMeta::default(),
        }),
        _ => None,
    };
    let mut meta = EntryMeta {
        kind,
        id: str_of(e, Field::Id)?,
        parent_id: str_of(e, Field::ParentId)?,
        message,
        first_kept_entry_id: str_of(e, Field::FirstKeptEntryId)?,
        from_extension: is_true(e, Field::FromExtension)?,
        summary_len: len_of(e, Field::Summary)?,
        settings: None,
        target_id: str_of(e, Field::TargetId)?,
        label: str_of(e, Field::Label)?,
        message_span: None,
        not_object: None,
        no_type: ty.is_none(),
    };
    if meta.is_settings() {
        meta.settings = Some(Box::new(e.to_value()?));
    }
    Ok(meta)
}
