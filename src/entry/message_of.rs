//! Messages derived from entries (`messageOf`, SPEC §2) and the derived message shapes of
//! conformance README "Derived messages".

use crate::js::{ms_value, parse_iso_timestamp};
use serde_json::{Map, Value};

fn field<'a>(entry: &'a Value, key: &str) -> Option<&'a Value> {
    entry.get(key)
}

/// `new Date(entry.timestamp).getTime()` as a JSON value (`null` for NaN). SPEC §2.
pub fn entry_timestamp_ms(entry: &Value) -> Value {
    ms_value(field(entry, "timestamp").and_then(Value::as_str).and_then(parse_iso_timestamp))
}

fn copy(out: &mut Map<String, Value>, entry: &Value, key: &str) {
    if let Some(v) = field(entry, key) {
        out.insert(key.to_string(), v.clone());
    }
}

/// The `custom` message of a `custom_message` entry:
/// `{role:"custom", customType, content, display, details?, timestamp}`.
pub fn custom_message_of(entry: &Value) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), Value::from("custom"));
    for k in ["customType", "content", "display", "details"] {
        copy(&mut m, entry, k);
    }
    m.insert("timestamp".into(), entry_timestamp_ms(entry));
    Value::Object(m)
}

/// The `branchSummary` message of a `branch_summary` entry: `{role, summary, fromId, timestamp}`.
pub fn branch_summary_message_of(entry: &Value) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), Value::from("branchSummary"));
    copy(&mut m, entry, "summary");
    copy(&mut m, entry, "fromId");
    m.insert("timestamp".into(), entry_timestamp_ms(entry));
    Value::Object(m)
}

/// The `compactionSummary` message of a `compaction` entry:
/// `{role, summary, shortSummary?, tokensBefore, timestamp}`.
pub fn compaction_summary_message_of(entry: &Value) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), Value::from("compactionSummary"));
    copy(&mut m, entry, "summary");
    copy(&mut m, entry, "shortSummary");
    copy(&mut m, entry, "tokensBefore");
    m.insert("timestamp".into(), entry_timestamp_ms(entry));
    Value::Object(m)
}

/// The `message` of a `message` entry: `None` when the field is absent or `null` (such an entry
/// has no message on any path: context, compaction, branch summaries; SPEC §2).
pub fn entry_message(entry: &Value) -> Option<&Value> {
    field(entry, "message").filter(|m| !m.is_null())
}

/// `messageOf(entry)` used by compaction (SPEC §2): `message` → its message, `custom_message`
/// → a `custom` message, `branch_summary` → a `branchSummary` message, else nothing.
pub fn message_of(entry: &Value) -> Option<Value> {
    match field(entry, "type").and_then(Value::as_str)? {
        "message" => entry_message(entry).cloned(),
        "custom_message" => Some(custom_message_of(entry)),
        "branch_summary" => Some(branch_summary_message_of(entry)),
        _ => None,
    }
}

/// The branch-summarization variant of `messageOf` (SPEC §2): like [`message_of`] but
/// `toolResult` messages are skipped and a `compaction` becomes a `compactionSummary` message.
pub fn branch_message_of(entry: &Value) -> Option<Value> {
    match field(entry, "type").and_then(Value::as_str)? {
        "message" => {
            let msg = entry_message(entry)?;
            if msg.get("role").and_then(Value::as_str) == Some("toolResult") {
                None
            } else {
                Some(msg.clone())
            }
        }
        "custom_message" => Some(custom_message_of(entry)),
        "branch_summary" => Some(branch_summary_message_of(entry)),
        "compaction" => Some(compaction_summary_message_of(entry)),
        _ => None,
    }
}
