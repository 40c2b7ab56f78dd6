//! `serializeConversation` (SPEC §8): the plain-text transcript of LLM messages that the
//! summarization prompts embed inside `<conversation>…</conversation>`.
//!
//! The rules follow the reference exactly (pinned by the `serializeConversation` and
//! `convertToLlm` conformance vectors):
//!
//! - `user`: `[User]: text`, where text is the string content, or the `text` blocks joined
//!   with `""` (images and other blocks dropped). Skipped when the text is empty.
//! - `assistant`: up to three parts, in this order, each present when the message has at least
//!   one block of that kind (even if their text is empty):
//!   `[Assistant thinking]: …` (thinking blocks joined with `"\n"`),
//!   `[Assistant]: …` (text blocks joined with `"\n"`),
//!   `[Assistant tool calls]: name(k=JSON(v), …); …` (argument keys in JavaScript
//!   `Object.entries` order, values written with `JSON.stringify`).
//! - `toolResult`: `[Tool result]: text` (text blocks joined with `""`), skipped when empty.
//! - every other role: nothing.
//!
//! Parts are joined with a blank line (`"\n\n"`).

use crate::js::{format_number, js_string, json_stringify, object_entries, push_json_string};
use serde_json::Value;

/// `serializeConversation(messages)` (SPEC §8): the transcript of LLM messages (`user`,
/// `assistant`, `toolResult`; other roles are ignored), parts joined by a blank line.
///
/// Never fails. Where the reference would throw on malformed input, this function is lenient
/// (a generalization the vectors do not cover):
/// - content that is neither a string nor an array yields no text; a string `toolResult`
///   content is read like a string `user` content;
/// - non-object blocks are skipped;
/// - toolCall `arguments` that are `null`/absent serialize as `name()`; a string argument is
///   enumerated per UTF-16 unit, like `Object.entries("…")`; numbers and booleans have no
///   entries.
pub fn serialize_conversation(messages: &[Value]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for msg in messages {
        match msg.get("role").and_then(Value::as_str) {
            Some("user") => {
                let text = content_text(msg.get("content"));
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Some("assistant") => serialize_assistant(msg, &mut parts),
            Some("toolResult") => {
                let text = content_text(msg.get("content"));
                if !text.is_empty() {
                    parts.push(format!("[Tool result]: {text}"));
                }
            }
            _ => {}
        }
    }
    parts.join("\n\n")
}

fn serialize_assistant(msg: &Value, parts: &mut Vec<String>) {
    let Some(blocks) = msg.get("content").and_then(Value::as_array) else {
        return;
    };
    let mut texts: Vec<String> = Vec::new();
    let mut thinking: Vec<String> = Vec::new();
    let mut calls: Vec<String> = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(join_element(block.get("text"))),
            Some("thinking") => thinking.push(join_element(block.get("thinking"))),
            Some("toolCall") => {
                let args = argument_entries(block.get("arguments"))
                    .into_iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                calls.push(format!("{}({args})", template_value(block.get("name"))));
            }
            _ => {}
        }
    }
    if !thinking.is_empty() {
        parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
    }
    if !texts.is_empty() {
        parts.push(format!("[Assistant]: {}", texts.join("\n")));
    }
    if !calls.is_empty() {
        parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
    }
}

/// The text of a message's `content` field: the string itself, or the `text` fields of its
/// `text` blocks joined with `""` (JavaScript `Array.prototype.join` conversion of each item);
/// `""` for anything else. Images, thinking and tool calls contribute nothing. SPEC §8.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => text_blocks_joined(blocks),
        _ => String::new(),
    }
}

/// The `text` fields of the `text` blocks of `blocks`, joined with `""`.
pub(crate) fn text_blocks_joined(blocks: &[Value]) -> String {
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .map(|b| join_element(b.get("text")))
        .collect()
}

/// How `Array.prototype.join` writes one item: `undefined` / `null` as `""`, anything else
/// as `String(item)`.
pub(crate) fn join_element(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(v) => js_string(v),
    }
}

/// How a template literal writes `${value}`: `undefined` for an absent value, else
/// `String(value)`.
pub(crate) fn template_value(v: Option<&Value>) -> String {
    match v {
        None => "undefined".to_string(),
        Some(v) => js_string(v),
    }
}

/// `Object.entries(args).map(([k, v]) => [k, JSON.stringify(v)])` for a JSON value.
fn argument_entries(args: Option<&Value>) -> Vec<(String, String)> {
    match args {
        Some(Value::Object(map)) => {
            object_entries(map).into_iter().map(|(k, v)| (k.clone(), json_stringify(v))).collect()
        }
        Some(Value::Array(items)) => {
            items.iter().enumerate().map(|(i, v)| (format_number(i as f64), json_stringify(v))).collect()
        }
        Some(Value::String(s)) => {
            // A string's own enumerable properties are its UTF-16 code units.
            let units: Vec<u16> = s.encode_utf16().collect();
            units
                .iter()
                .enumerate()
                .map(|(i, &u)| {
                    let value = match char::from_u32(u32::from(u)) {
                        Some(c) => {
                            let mut out = String::new();
                            push_json_string(&mut out, c.encode_utf8(&mut [0u8; 4]));
                            out
                        }
                        // A lone surrogate: well-formed JSON.stringify escapes it.
                        None => format!("\"\\u{u:04x}\""),
                    };
                    (i.to_string(), value)
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn assistant(content: Value) -> Value {
        json!({"role": "assistant", "content": content, "timestamp": 1})
    }

    #[test]
    fn user_string_and_blocks() {
        let msgs = vec![
            json!({"role": "user", "content": "hello"}),
            json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "x"}, {"type": "text", "text": "b"}]}),
            json!({"role": "user", "content": ""}),
        ];
        assert_eq!(serialize_conversation(&msgs), "[User]: hello\n\n[User]: ab");
    }

    #[test]
    fn assistant_parts_in_order() {
        let msg = assistant(json!([
            {"type": "thinking", "thinking": "t1"},
            {"type": "text", "text": "x"},
            {"type": "thinking", "thinking": "t2"},
            {"type": "text", "text": "y"},
            {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a.md", "limit": 10}},
            {"type": "toolCall", "id": "2", "name": "bash", "arguments": {"command": "ls -la"}}
        ]));
        assert_eq!(
            serialize_conversation(&[msg]),
            "[Assistant thinking]: t1\nt2\n\n[Assistant]: x\ny\n\n[Assistant tool calls]: read(path=\"a.md\", limit=10); bash(command=\"ls -la\")"
        );
    }

    #[test]
    fn empty_assistant_text_block_still_emits_part() {
        let msg = assistant(json!([{"type": "text", "text": ""}]));
        assert_eq!(serialize_conversation(&[msg]), "[Assistant]: ");
    }

    #[test]
    fn tool_call_arguments_use_js_order_and_stringify() {
        let args: Value =
            serde_json::from_str(r#"{"4294967295":1,"4294967294":2,"007":3,"7":4,"n":1.0,"s":"a\"b"}"#).unwrap();
        let msg = assistant(
            json!([{"type": "toolCall", "name": "x", "arguments": {}}, {"type": "toolCall", "name": "y", "arguments": args}]),
        );
        assert_eq!(
            serialize_conversation(&[msg]),
            "[Assistant tool calls]: x(); y(7=4, 4294967294=2, 4294967295=1, 007=3, n=1, s=\"a\\\"b\")"
        );
    }

    #[test]
    fn odd_arguments_do_not_panic() {
        let msg = assistant(json!([
            {"type": "toolCall", "arguments": null},
            {"type": "toolCall", "name": "s", "arguments": "a😀"},
            {"type": "toolCall", "name": "l", "arguments": [true]}
        ]));
        assert_eq!(
            serialize_conversation(&[msg]),
            "[Assistant tool calls]: undefined(); s(0=\"a\", 1=\"\\ud83d\", 2=\"\\ude00\"); l(0=true)"
        );
    }

    #[test]
    fn tool_results_join_text_and_skip_empty() {
        let msgs = vec![
            json!({"role": "toolResult", "content": [{"type": "text", "text": "line1\n"}, {"type": "image"}, {"type": "text", "text": "line2"}]}),
            json!({"role": "toolResult", "content": [{"type": "image"}]}),
            json!({"role": "bashExecution", "command": "ls"}),
            json!(null),
        ];
        assert_eq!(serialize_conversation(&msgs), "[Tool result]: line1\nline2");
        assert_eq!(serialize_conversation(&[]), "");
    }
}
