//! `convertToLlm` (SPEC §6): agent messages → LLM messages (`user`, `assistant`,
//! `toolResult`), the form sent to a model and fed to [`crate::prompt::serialize`].
//!
//! Per role (every produced message keeps the input `timestamp`, absent stays absent):
//! - `user`, `assistant`: unchanged.
//! - `toolResult`: unchanged unless it has a `prunedAt` key (even `null`); then `content`
//!   becomes one text block holding its text blocks joined with `""`, or
//!   `"[Output truncated]"` when that is empty. All other fields are kept.
//! - `bashExecution` / `pythonExecution`: dropped when `excludeFromContext` is truthy, else a
//!   `user` message with one text block (see [`bash_execution_to_text`],
//!   [`python_execution_to_text`]).
//! - `custom` / `hookMessage`: a `user` message with its content (a string becomes one text
//!   block; blocks, including images, are kept as they are).
//! - `fileMention`: a `user` message with a `<system-reminder>` text block listing
//!   `<file path="…">` blocks, followed by the files' images.
//! - `branchSummary` / `compactionSummary`: a `user` text block rendered from the templates
//!   `branch-summary-context.md` / `compaction-summary-context.md` with `{summary}` (its frame
//!   tags escaped, SPEC §13.4: [`crate::prompt::frames::Frames::neutralize_summary`]).
//! - every other role (and non-object messages): dropped.

use crate::js::{format_number, js_string};
use crate::prompt::serialize::{template_value, text_blocks_joined};
use crate::prompt::templates::PromptTemplates;
use serde_json::{json, Map, Value};

/// Template id of the branch-summary context wrapper (SPEC §6).
pub const BRANCH_SUMMARY_CONTEXT_TEMPLATE: &str = "branch-summary-context.md";
/// Template id of the compaction-summary context wrapper (SPEC §6).
pub const COMPACTION_SUMMARY_CONTEXT_TEMPLATE: &str = "compaction-summary-context.md";

/// `convertToLlm(messages)` (SPEC §6): converts agent messages to LLM messages, in order,
/// dropping excluded executions and unknown roles.
///
/// Fails only when a summary context template fails to render ([`crate::Error::Template`]).
/// Malformed known messages never fail: where the reference would throw (e.g. a
/// `fileMention` without a `files` array, a pruned `toolResult` whose `content` is not an
/// array) the missing part is read as empty — a generalization no vector covers.
pub fn convert_to_llm(messages: &[Value], templates: &PromptTemplates) -> crate::Result<Vec<Value>> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        if let Some(converted) = convert_message(m, templates)? {
            out.push(converted);
        }
    }
    Ok(out)
}

/// Options of `convertToLlm(messages, options?)`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConvertOptions {
    /// Make the messages provider-valid first and return `{messages, repairs}` (SPEC §13.1).
    #[serde(default)]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub repair: bool,
}

/// `convertToLlm(messages, {repair: true})` (SPEC §6, §13.1): the messages made provider-valid
/// ([`super::repair::repair_messages`]: results right after their calls, synthetic error
/// results for calls without one, orphans left out) and then converted. Returns the LLM
/// messages and the repairs (`entryId` absent: the messages come without entries;
/// `messageIndex` is the position in `messages`). Converting after the repair keeps the order
/// valid: conversion only turns non-result messages into user messages or drops them.
/// Errors as [`convert_to_llm`].
pub fn convert_to_llm_provider_valid(
    messages: &[Value],
    templates: &PromptTemplates,
) -> crate::Result<(Vec<Value>, Vec<super::repair::ContextRepair>)> {
    let (repaired, repairs) = super::repair::repair_messages(messages);
    Ok((convert_to_llm(&repaired, templates)?, repairs))
}

/// Whether conversion (SPEC §6) hands a message of `role` back as it is: `user` and
/// `assistant` messages, and `toolResult` messages that were not pruned (`pruned`: a `prunedAt`
/// key is present, even `null`). Callers that hold the message object already (the handle's
/// `buildLlmMessages`, `convertToLlm` on the caller's objects) return that object instead of a
/// converted copy, as the reference does.
pub fn unchanged_by_conversion(role: &str, pruned: bool) -> bool {
    matches!(role, "user" | "assistant") || (role == "toolResult" && !pruned)
}

/// Converts one agent message (SPEC §6); `None` when the message is dropped.
pub fn convert_message(m: &Value, templates: &PromptTemplates) -> crate::Result<Option<Value>> {
    let Some(obj) = m.as_object() else {
        return Ok(None);
    };
    let role = obj.get("role").and_then(Value::as_str).unwrap_or("");
    if unchanged_by_conversion(role, obj.contains_key("prunedAt")) {
        return Ok(Some(m.clone()));
    }
    let converted = match role {
        "toolResult" => convert_tool_result(obj),
        "bashExecution" | "pythonExecution" => {
            if crate::js::truthy(obj.get("excludeFromContext")) {
                return Ok(None);
            }
            let text = if role == "bashExecution" { bash_execution_to_text(m) } else { python_execution_to_text(m) };
            user_message(Some(json!([{"type": "text", "text": text}])), obj)
        }
        "custom" | "hookMessage" => {
            let content = match obj.get("content") {
                Some(Value::String(s)) => Some(json!([{"type": "text", "text": s}])),
                other => other.cloned(),
            };
            user_message(content, obj)
        }
        "branchSummary" | "compactionSummary" => {
            let name = if role == "branchSummary" {
                BRANCH_SUMMARY_CONTEXT_TEMPLATE
            } else {
                COMPACTION_SUMMARY_CONTEXT_TEMPLATE
            };
            let mut vars = Map::new();
            if let Some(summary) = obj.get("summary") {
                // A summary fed back can never close or open a frame (SPEC §13.4).
                let summary = match summary {
                    Value::String(s) => Value::String(templates.frames().neutralize_summary(s).into_owned()),
                    other => other.clone(),
                };
                vars.insert("summary".into(), summary);
            }
            let text = templates.render(name, &Value::Object(vars))?;
            user_message(Some(json!([{"type": "text", "text": text}])), obj)
        }
        "fileMention" => user_message(Some(file_mention_content(obj)), obj),
        _ => return Ok(None),
    };
    Ok(Some(converted))
}

/// `{role: "user", content, timestamp}`; keys whose value is absent are left out, as
/// `JSON.stringify` drops `undefined`.
fn user_message(content: Option<Value>, source: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), Value::from("user"));
    if let Some(c) = content {
        out.insert("content".into(), c);
    }
    if let Some(ts) = source.get("timestamp") {
        out.insert("timestamp".into(), ts.clone());
    }
    Value::Object(out)
}

/// A pruned tool result: its text blocks joined into one (`[Output truncated]` when empty).
fn convert_tool_result(obj: &Map<String, Value>) -> Value {
    let mut out = obj.clone();
    let blocks = obj.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut text = text_blocks_joined(blocks);
    if text.is_empty() {
        text = "[Output truncated]".to_string();
    }
    out.insert("content".into(), json!([{"type": "text", "text": text}]));
    Value::Object(out)
}

fn file_mention_content(obj: &Map<String, Value>) -> Value {
    let files = obj.get("files").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let listed: Vec<String> = files
        .iter()
        .map(|file| {
            let content = file.get("content");
            let inner =
                if crate::js::truthy(content) { format!("\n{}\n", template_value(content)) } else { "\n".to_string() };
            format!("<file path=\"{}\">{inner}</file>", template_value(file.get("path")))
        })
        .collect();
    let mut blocks = vec![
        json!({"type": "text", "text": format!("<system-reminder>\n{}\n</system-reminder>", listed.join("\n\n"))}),
    ];
    for file in files {
        if let Some(image) = file.get("image").filter(|i| crate::js::truthy(Some(i))) {
            blocks.push(image.clone());
        }
    }
    Value::Array(blocks)
}

/// The user text of a `bashExecution` message (SPEC §6, reference `bashExecutionToText`):
/// ``"Ran `cmd`\n"`` then the output in a fence (``"```\n{output}\n```"``) or
/// `"(no output)"` when the output is empty, then `"\n\n(command cancelled)"` when cancelled,
/// else `"\n\nCommand exited with code N"` for a non-zero, non-null exit code, then the
/// output notice of `meta` ([`format_output_notice`]).
pub fn bash_execution_to_text(m: &Value) -> String {
    let mut text = format!("Ran `{}`\n", template_value(m.get("command")));
    push_output(&mut text, m, "```\n");
    push_status(&mut text, m, "(command cancelled)", "Command exited with code");
    text.push_str(&format_output_notice(m.get("meta")));
    text
}

/// The user text of a `pythonExecution` message (SPEC §6, reference `pythonExecutionToText`):
/// ``"Ran Python:\n```python\n{code}\n```\n"`` then ``"Output:\n```\n{output}\n```"`` or
/// `"(no output)"`, then `"\n\n(execution cancelled)"` or `"\n\nExecution failed with code N"`,
/// then the output notice of `meta` ([`format_output_notice`]).
pub fn python_execution_to_text(m: &Value) -> String {
    let mut text = format!("Ran Python:\n```python\n{}\n```\n", template_value(m.get("code")));
    push_output(&mut text, m, "Output:\n```\n");
    push_status(&mut text, m, "(execution cancelled)", "Execution failed with code");
    text.push_str(&format_output_notice(m.get("meta")));
    text
}

fn push_output(text: &mut String, m: &Value, fence_open: &str) {
    let output = m.get("output");
    if crate::js::truthy(output) {
        text.push_str(fence_open);
        text.push_str(&template_value(output));
        text.push_str("\n```");
    } else {
        text.push_str("(no output)");
    }
}

fn push_status(text: &mut String, m: &Value, cancelled: &str, exit_prefix: &str) {
    if crate::js::truthy(m.get("cancelled")) {
        text.push_str("\n\n");
        text.push_str(cancelled);
        return;
    }
    // `exitCode !== null && exitCode !== undefined && exitCode !== 0`
    let nonzero = match m.get("exitCode") {
        None | Some(Value::Null) => false,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(_) => true,
    };
    if nonzero {
        text.push_str(&format!("\n\n{exit_prefix} {}", template_value(m.get("exitCode"))));
    }
}

/// The notice appended to execution output from its `meta` (reference `formatOutputNotice`):
/// `"\n\n[" + parts.join(". ") + "]"` when there are parts, then the LSP diagnostics block
/// `"\n\nLSP Diagnostics (summary):\n  msg1\n  msg2"` when `diagnostics.messages` is a
/// non-empty array. Parts, in order: the truncation notice ([`format_truncation_notice`]),
/// `"N matches limit reached. Use limit=S for more"` (`limits.matchLimit`),
/// `"N results limit reached. Use limit=S for more"` (`limits.resultLimit`, then
/// `limits.headLimit`), `"Some lines truncated to N chars"` (`limits.columnTruncated`).
/// Empty when `meta` is absent or yields nothing.
///
/// The vectors pin each part alone and truncation with result+head limits; other
/// combinations follow the same order (the natural generalization).
pub fn format_output_notice(meta: Option<&Value>) -> String {
    let Some(meta) = meta.filter(|m| crate::js::truthy(Some(m))) else {
        return String::new();
    };
    let mut parts: Vec<String> = Vec::new();
    if let Some(t) = meta.get("truncation").filter(|t| crate::js::truthy(Some(t))) {
        parts.push(format_truncation_notice(t));
    }
    let limits = meta.get("limits");
    let limit = |key: &str| limits.and_then(|l| l.get(key)).filter(|v| crate::js::truthy(Some(v)));
    if let Some(l) = limit("matchLimit") {
        parts.push(format!(
            "{} matches limit reached. Use limit={} for more",
            template_value(l.get("reached")),
            template_value(l.get("suggestion"))
        ));
    }
    for key in ["resultLimit", "headLimit"] {
        if let Some(l) = limit(key) {
            parts.push(format!(
                "{} results limit reached. Use limit={} for more",
                template_value(l.get("reached")),
                template_value(l.get("suggestion"))
            ));
        }
    }
    if let Some(l) = limit("columnTruncated") {
        parts.push(format!("Some lines truncated to {} chars", template_value(l.get("maxColumn"))));
    }
    let mut notice = if parts.is_empty() { String::new() } else { format!("\n\n[{}]", parts.join(". ")) };
    if let Some(d) = meta.get("diagnostics").filter(|d| crate::js::truthy(Some(d))) {
        if let Some(msgs) = d.get("messages").and_then(Value::as_array).filter(|a| !a.is_empty()) {
            let lines: Vec<String> = msgs.iter().map(|m| format!("  {}", js_string(m))).collect();
            notice.push_str(&format!(
                "\n\nLSP Diagnostics ({}):\n{}",
                template_value(d.get("summary")),
                lines.join("\n")
            ));
        }
    }
    notice
}

/// The truncation part of an output notice (reference `formatTruncationMetaNotice`):
/// `"Showing lines A-B of T"` when `shownRange` is present with `end >= start`, else
/// `"Showing O of T lines"`; then `" (SIZE limit)"` when `truncatedBy` is `"bytes"` (SIZE =
/// [`format_bytes`] of `maxBytes ?? outputBytes`); then `". Use offset=N to continue"` when
/// `nextOffset` is not null; then `". Full: artifact://ID"` when `artifactId` is not null.
pub fn format_truncation_notice(t: &Value) -> String {
    let range = t.get("shownRange").filter(|r| crate::js::truthy(Some(r)));
    let mut notice = match range {
        Some(r) if to_number(r.get("end")) >= to_number(r.get("start")) => format!(
            "Showing lines {}-{} of {}",
            template_value(r.get("start")),
            template_value(r.get("end")),
            template_value(t.get("totalLines"))
        ),
        _ => {
            format!("Showing {} of {} lines", template_value(t.get("outputLines")), template_value(t.get("totalLines")))
        }
    };
    if t.get("truncatedBy").and_then(Value::as_str) == Some("bytes") {
        let max = t.get("maxBytes").filter(|v| !v.is_null()).or_else(|| t.get("outputBytes"));
        notice.push_str(&format!(" ({} limit)", format_bytes(max)));
    }
    if let Some(next) = t.get("nextOffset").filter(|v| !v.is_null()) {
        notice.push_str(&format!(". Use offset={} to continue", js_string(next)));
    }
    if let Some(id) = t.get("artifactId").filter(|v| !v.is_null()) {
        notice.push_str(&format!(". Full: artifact://{}", js_string(id)));
    }
    notice
}

/// A byte count as the reference's `formatBytes` writes it: `512B`, `50.0KB`, `1.0MB`,
/// `1.5GB` (one decimal, JavaScript `toFixed(1)`). The vectors pin B, KB and MB; the GB step
/// follows the reference utility of the same name.
pub fn format_bytes(bytes: Option<&Value>) -> String {
    let n = to_number(bytes);
    const KB: f64 = 1024.0;
    if n < KB {
        format!("{}B", template_value(bytes))
    } else if n < KB * KB {
        format!("{}KB", to_fixed_1(n / KB))
    } else if n < KB * KB * KB {
        format!("{}MB", to_fixed_1(n / (KB * KB)))
    } else {
        format!("{}GB", to_fixed_1(n / (KB * KB * KB)))
    }
}

/// JavaScript `Number.prototype.toFixed(1)`: exact decimal value rounded to one digit, ties
/// away from zero; NaN / ±Infinity / |x| ≥ 1e21 as `String(x)`.
fn to_fixed_1(x: f64) -> String {
    if !x.is_finite() || x.abs() >= 1e21 {
        return format_number(x);
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    let q = a * 4.0; // exact: scaling by a power of two
    let body = if q.fract() == 0.0 && q % 2.0 == 1.0 && q < 9.0e15 {
        // |x| = q/4 with q odd lies exactly halfway between two tenths (…25 or …75):
        // toFixed picks the larger candidate, n = ceil(5q / 2) tenths.
        let n = (5 * (q as u64)).div_ceil(2);
        format!("{}.{}", n / 10, n % 10)
    } else {
        format!("{a:.1}")
    };
    // (-0.04).toFixed(1) is "-0.0" in JavaScript, which keeps the sign.
    format!("{sign}{body}")
}

/// JavaScript `Number(value)` for the values relational operators compare (`undefined` →
/// NaN, `null` → 0, booleans → 0/1, numeric strings parsed, other values NaN).
fn to_number(v: Option<&Value>) -> f64 {
    match v {
        None => f64::NAN,
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) => {
            let t = crate::js::js_trim(s);
            if t.is_empty() {
                0.0
            } else {
                match t {
                    "Infinity" | "+Infinity" => f64::INFINITY,
                    "-Infinity" => f64::NEG_INFINITY,
                    _ => crate::js::parse_f64(t).filter(|_| !t.contains(['i', 'n', 'N', 'I'])).unwrap_or(f64::NAN),
                }
            }
        }
        Some(_) => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_text_forms() {
        let ok = json!({"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 0, "cancelled": false});
        assert_eq!(bash_execution_to_text(&ok), "Ran `ls`\n```\na\nb\n```");
        let failed = json!({"command": "false", "output": "", "exitCode": 1, "cancelled": false});
        assert_eq!(bash_execution_to_text(&failed), "Ran `false`\n(no output)\n\nCommand exited with code 1");
        let cancelled = json!({"command": "sleep 100", "output": "partial", "exitCode": 130, "cancelled": true});
        assert_eq!(bash_execution_to_text(&cancelled), "Ran `sleep 100`\n```\npartial\n```\n\n(command cancelled)");
        let null_exit = json!({"command": "x", "output": "y", "exitCode": null});
        assert_eq!(bash_execution_to_text(&null_exit), "Ran `x`\n```\ny\n```");
    }

    #[test]
    fn python_text_with_truncation_and_diagnostics() {
        let m = json!({
            "role": "pythonExecution", "code": "x", "output": "o", "exitCode": 0, "cancelled": false,
            "meta": {
                "truncation": {"direction": "tail", "truncatedBy": "bytes", "totalLines": 500, "totalBytes": 20000,
                               "outputLines": 100, "outputBytes": 1048576, "shownRange": {"start": 5, "end": 4}},
                "diagnostics": {"summary": "1 error", "messages": ["a.py:1 E1", "a.py:2 W2"]}
            }
        });
        assert_eq!(
            python_execution_to_text(&m),
            "Ran Python:\n```python\nx\n```\nOutput:\n```\no\n```\n\n[Showing 100 of 500 lines (1.0MB limit)]\n\nLSP Diagnostics (1 error):\n  a.py:1 E1\n  a.py:2 W2"
        );
        let failed = json!({"code": "1/0", "output": "", "exitCode": 1, "cancelled": false});
        assert_eq!(
            python_execution_to_text(&failed),
            "Ran Python:\n```python\n1/0\n```\n(no output)\n\nExecution failed with code 1"
        );
    }

    #[test]
    fn notices() {
        let t = json!({"direction": "tail", "truncatedBy": "lines", "totalLines": 500, "outputLines": 100,
                       "shownRange": {"start": 401, "end": 500}, "artifactId": "art-1"});
        assert_eq!(format_truncation_notice(&t), "Showing lines 401-500 of 500. Full: artifact://art-1");
        let t = json!({"direction": "head", "truncatedBy": "bytes", "totalLines": 500, "outputLines": 100,
                       "outputBytes": 4000, "maxBytes": 51200, "nextOffset": 101});
        assert_eq!(format_truncation_notice(&t), "Showing 100 of 500 lines (50.0KB limit). Use offset=101 to continue");
        let meta = json!({"limits": {"matchLimit": {"reached": 100, "suggestion": 200}, "columnTruncated": {"maxColumn": 500}}});
        assert_eq!(
            format_output_notice(Some(&meta)),
            "\n\n[100 matches limit reached. Use limit=200 for more. Some lines truncated to 500 chars]"
        );
        assert_eq!(format_output_notice(None), "");
        assert_eq!(format_output_notice(Some(&json!({"diagnostics": {"summary": "ok", "messages": []}}))), "");
    }

    #[test]
    fn bytes_and_to_fixed() {
        assert_eq!(format_bytes(Some(&json!(500))), "500B");
        assert_eq!(format_bytes(Some(&json!(51200))), "50.0KB");
        assert_eq!(format_bytes(Some(&json!(1048576))), "1.0MB");
        assert_eq!(format_bytes(Some(&json!(1536))), "1.5KB");
        assert_eq!(format_bytes(Some(&json!(3221225472u64))), "3.0GB");
        assert_eq!(format_bytes(None), "NaNGB");
        // 1.25 and 1.75 are exact ties: JavaScript rounds them up, unlike Rust's `{:.1}`.
        assert_eq!(to_fixed_1(1.25), "1.3");
        assert_eq!(to_fixed_1(1.75), "1.8");
        assert_eq!(to_fixed_1(-1.25), "-1.3");
        assert_eq!(to_fixed_1(0.05), "0.1");
        assert_eq!(to_fixed_1(1.15), "1.1");
        assert_eq!(to_fixed_1(2.0), "2.0");
    }

    #[test]
    fn tool_results_and_passthrough() {
        let t = PromptTemplates::default();
        let msgs = vec![
            json!({"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "a"}, {"type": "image"}], "timestamp": 1}),
            json!({"role": "toolResult", "toolCallId": "c2", "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}], "prunedAt": 5, "timestamp": 2}),
            json!({"role": "toolResult", "toolCallId": "c3", "content": [{"type": "image"}], "prunedAt": null, "timestamp": 3}),
            json!({"role": "user", "content": "hi", "timestamp": 4}),
            json!({"role": "somethingElse", "timestamp": 5}),
            json!({"role": "bashExecution", "command": "s", "output": "x", "excludeFromContext": true, "timestamp": 6}),
            json!("not a message"),
        ];
        let out = convert_to_llm(&msgs, &t).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(out[0], msgs[0]);
        assert_eq!(out[1]["content"], json!([{"type": "text", "text": "ab"}]));
        assert_eq!(out[1]["prunedAt"], json!(5));
        assert_eq!(out[2]["content"], json!([{"type": "text", "text": "[Output truncated]"}]));
        assert_eq!(out[2]["prunedAt"], Value::Null);
        assert_eq!(out[3], msgs[3]);
    }

    #[test]
    fn custom_and_file_mention() {
        let t = PromptTemplates::default();
        let msgs = vec![
            json!({"role": "custom", "customType": "x", "content": "plain", "display": false, "timestamp": 1}),
            json!({"role": "hookMessage", "customType": "y", "content": [{"type": "image", "data": "d"}], "display": true, "timestamp": 2}),
            json!({"role": "fileMention", "files": [
                {"path": "a.md", "content": "A"},
                {"path": "pic.png", "content": "", "image": {"type": "image", "data": "d", "mimeType": "image/png"}}
            ], "timestamp": 3}),
        ];
        let out = convert_to_llm(&msgs, &t).unwrap();
        assert_eq!(out[0], json!({"role": "user", "content": [{"type": "text", "text": "plain"}], "timestamp": 1}));
        assert_eq!(out[1], json!({"role": "user", "content": [{"type": "image", "data": "d"}], "timestamp": 2}));
        assert_eq!(
            out[2],
            json!({"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>\n<file path=\"a.md\">\nA\n</file>\n\n<file path=\"pic.png\">\n</file>\n</system-reminder>"},
                {"type": "image", "data": "d", "mimeType": "image/png"}
            ], "timestamp": 3})
        );
    }

    #[test]
    fn summaries_use_templates() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conformance/templates");
        let t = PromptTemplates::from_dir(dir).unwrap();
        let msgs = vec![
            json!({"role": "branchSummary", "summary": "We explored option B.", "fromId": "abc", "timestamp": 3}),
            json!({"role": "compactionSummary", "summary": "## Goal\nShip it.", "tokensBefore": 1, "timestamp": 4}),
        ];
        let out = convert_to_llm(&msgs, &t).unwrap();
        assert_eq!(
            out,
            vec![
                json!({"role": "user", "content": [{"type": "text", "text": "[branch-context]\n<summary>\nWe explored option B.\n</summary>"}], "timestamp": 3}),
                json!({"role": "user", "content": [{"type": "text", "text": "[compaction-context]\n\tEarlier work, summarized:\n\n<summary>\n## Goal\nShip it.\n</summary>"}], "timestamp": 4}),
            ]
        );
    }
}
