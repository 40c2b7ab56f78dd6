//! The lenient serde reader of an entry (the pure-function path over a parsed
//! [`serde_json::Value`], and the fallback of the byte scanner): wire shapes whose every field
//! accepts any JSON value, where only the expected type counts.

use super::kind::{EntryKind, Role};
use super::meta::{
    BlockKind, BlockLens, ContentBlock, ContentShape, Counted, EntryMeta, MessageMeta, MessageShape, ToolCallMeta,
    UsageMeta,
};
use crate::js::{json_stringify_len, utf16_len};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::convert::Infallible;
use std::fmt;

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
pub(super) struct RawMessage {
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

impl ContentBlock for RawBlock {
    type Error = Infallible;

    fn lens(&self) -> BlockLens {
        let kind = self.ty.0.as_deref().map_or(BlockKind::Other, BlockKind::from_type);
        let tool_call = kind == BlockKind::ToolCall;
        BlockLens {
            kind,
            text: self.text.0.unwrap_or(0),
            thinking: self.thinking.0.unwrap_or(0),
            name: if tool_call { self.name.0.as_deref().map_or(0, utf16_len) } else { 0 },
            args: if tool_call { self.arguments.as_ref().map_or(0, json_stringify_len) } else { 0 },
        }
    }

    fn tool_call(self) -> Result<ToolCallMeta, Infallible> {
        let path = self
            .arguments
            .as_ref()
            .and_then(|a| a.get("path"))
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .map(str::to_owned);
        Ok(ToolCallMeta { id: self.id.0, name: self.name.0, path })
    }
}

impl RawMessage {
    pub(super) fn into_meta(self) -> MessageMeta {
        let role = self.role.0.as_deref().map_or(Role::Other, Role::from_name);
        let shape = MessageShape {
            role,
            content: match self.content {
                RawContent::Text(n) => ContentShape::Text(n),
                RawContent::Blocks(blocks) => ContentShape::Blocks(blocks),
                RawContent::None => ContentShape::None,
            },
            command: self.command.0.unwrap_or(0),
            output: self.output.0.unwrap_or(0),
            summary: self.summary.0.unwrap_or(0),
            exclude_from_context: self.exclude_from_context.0,
        };
        let Ok(Counted { tokens, tool_calls }) = shape.count();
        MessageMeta {
            role,
            tokens,
            exclude_from_context: role == Role::BashExecution && self.exclude_from_context.0,
            usage: if role == Role::Assistant { self.usage.0 } else { None },
            stop_reason: self.stop_reason.0,
            tool_calls,
            tool_call_id: self.tool_call_id.0,
            tool_name: self.tool_name.0,
            pruned: self.pruned_at.0,
            error_message: self.error_message.0,
            provider_model: (role == Role::Assistant)
                .then(|| format!("{}/{}", js_display(self.provider.as_ref()), js_display(self.model.as_ref()))),
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(super) struct RawEntry {
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
    pub(super) fn into_meta(self) -> EntryMeta {
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
