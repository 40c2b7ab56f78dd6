//! The serialized transcript (SPEC §8): `[User]: …` / `[Assistant]: …` / `[Tool result]: …`
//! parts, and the `name(k=JSON, …)` tool calls of `[Assistant tool calls]:` lines.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    User,
    Thinking,
    Assistant,
    Calls,
    ToolResult,
    Other,
}

const LABELS: [(&str, Role); 5] = [
    ("[User]: ", Role::User),
    ("[Assistant thinking]: ", Role::Thinking),
    ("[Assistant]: ", Role::Assistant),
    ("[Assistant tool calls]: ", Role::Calls),
    ("[Tool result]: ", Role::ToolResult),
];

fn label_at(s: &str) -> Option<(Role, usize)> {
    LABELS.iter().find(|(l, _)| s.starts_with(l)).map(|(l, r)| (*r, l.len()))
}

/// The parts of a serialized conversation: a part starts at the beginning or after a blank
/// line with one of the five labels. Text before the first label is an `Other` part.
pub(super) fn split_parts(conv: &str) -> Vec<(Role, &str)> {
    let mut starts: Vec<(usize, Role, usize)> = Vec::new();
    if let Some((r, n)) = label_at(conv) {
        starts.push((0, r, n));
    }
    for (i, _) in conv.match_indices("\n\n[") {
        let at = i + 2;
        if let Some((r, n)) = conv.get(at..).and_then(label_at) {
            starts.push((at, r, n));
        }
    }
    let mut parts = Vec::new();
    let first = starts.first().map_or(conv.len(), |s| s.0);
    let lead = conv.get(..first).unwrap_or("").trim();
    if !lead.is_empty() {
        parts.push((Role::Other, lead));
    }
    for (k, &(at, role, n)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(conv.len(), |s| s.0.saturating_sub(2));
        parts.push((role, conv.get(at + n..end).unwrap_or("")));
    }
    parts
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Call {
    pub(super) name: String,
    pub(super) args: Vec<(String, Value)>,
}

impl Call {
    pub(super) fn arg_str(&self, key: &str) -> Option<&str> {
        self.args.iter().find(|(k, _)| k == key).and_then(|(_, v)| v.as_str())
    }
}

/// Parses `name(k=JSON, …); name2(…)`. Stops at the first call it cannot read (keeping the
/// calls read so far and the name of the broken one).
pub(super) fn parse_calls(s: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let Some(open) = rest.find('(') else {
            calls.push(Call { name: rest.to_string(), args: Vec::new() });
            break;
        };
        let name = rest[..open].trim().to_string();
        let mut r = &rest[open + 1..];
        let mut args = Vec::new();
        let mut ok = true;
        loop {
            if let Some(after) = r.strip_prefix(')') {
                r = after;
                break;
            }
            let Some(eq) = r.find('=') else {
                ok = false;
                break;
            };
            let key = r[..eq].to_string();
            let text = &r[eq + 1..];
            let Some((value, used)) = parse_value(text) else {
                ok = false;
                break;
            };
            args.push((key, value));
            r = text.get(used..).unwrap_or("");
            if let Some(after) = r.strip_prefix(", ") {
                r = after;
            } else if !r.starts_with(')') {
                ok = false;
                break;
            }
        }
        calls.push(Call { name, args });
        if !ok {
            break;
        }
        match r.strip_prefix("; ") {
            Some(after) => rest = after,
            None => break,
        }
    }
    calls
}

/// One `JSON.stringify` value at the start of `s` and its length in bytes.
fn parse_value(s: &str) -> Option<(Value, usize)> {
    match s.as_bytes().first()? {
        b'"' | b'[' | b'{' => {
            let mut it = serde_json::Deserializer::from_slice(s.as_bytes()).into_iter::<Value>();
            match it.next() {
                Some(Ok(v)) => Some((v, it.byte_offset())),
                _ if s.starts_with('"') => {
                    // Not valid for serde_json (a lone surrogate escape): keep the raw text.
                    let end = json_string_end(s)?;
                    Some((Value::String(s[1..end - 1].to_string()), end))
                }
                _ => None,
            }
        }
        _ => {
            let end = s.find([',', ')']).unwrap_or(s.len());
            let raw = &s[..end];
            Some((serde_json::from_slice(raw.as_bytes()).unwrap_or_else(|_| Value::String(raw.to_string())), end))
        }
    }
}

/// End (exclusive, in bytes) of the JSON string literal at the start of `s`.
fn json_string_end(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_parts() {
        assert_eq!(
            parse_calls("read(path=\"a, b).rs\", limit=10); bash(command=\"ls; echo)\"); x()"),
            vec![
                Call {
                    name: "read".into(),
                    args: vec![("path".into(), Value::from("a, b).rs")), ("limit".into(), Value::from(10))]
                },
                Call { name: "bash".into(), args: vec![("command".into(), Value::from("ls; echo)"))] },
                Call { name: "x".into(), args: vec![] },
            ]
        );
        let parts = split_parts("[User]: a\n\n[Tool result]: b\n\n[User] not a label\n\n[Assistant]: c");
        assert_eq!(
            parts,
            vec![(Role::User, "a"), (Role::ToolResult, "b\n\n[User] not a label"), (Role::Assistant, "c")]
        );
    }
}
