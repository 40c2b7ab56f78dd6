//! Conformance ops of SPEC §6 (`convertToLlm`) and §8 (`serializeConversation`).

use serde_json::{json, Value};
use session_compaction::context::convert::convert_to_llm;
use session_compaction::prompt::serialize::serialize_conversation;

fn messages(input: &Value) -> Result<&[Value], String> {
    input["messages"].as_array().map(Vec::as_slice).ok_or_else(|| "input.messages is not an array".to_string())
}

// ---- convert / serialize ops (owned by the convert module; keep edits inside this fn) ----
/// Runs `convertToLlm` (`{messages}` → `{messages, serialized}`) and `serializeConversation`
/// (`{messages}` → `{text}`).
pub fn run(ctx: &super::Ctx, op: &str, input: &Value) -> Result<Value, String> {
    match op {
        "convertToLlm" => {
            let converted = convert_to_llm(messages(input)?, &ctx.templates).map_err(|e| e.to_string())?;
            let serialized = serialize_conversation(&converted);
            Ok(json!({"messages": converted, "serialized": serialized}))
        }
        "serializeConversation" => Ok(json!({"text": serialize_conversation(messages(input)?)})),
        _ => Err(format!("op {op} is not a convert op")),
    }
}
