//! The handle's prune by splicing (SPEC §7, §13.3, §13.6): after
//! `SessionTree::prune_tool_outputs` every line not pruned keeps its bytes, every pruned line is
//! the value path's `pruned_entry` (same keys in the same order, `prunedAt` last), the metadata
//! kept in the handle is what reading the new line gives, and every later call agrees with a
//! freshly loaded copy of the saved file; on inputs written in every way JSON allows.

#[path = "common/cases.rs"]
mod cases;

use proptest::prelude::*;
use serde_json::{json, Value};
use session_compaction::entry::{EntryList, EntryMeta, EntrySource};
use session_compaction::io::{parse_line_value, ParseOptions};
use session_compaction::js::json_stringify;
use session_compaction::plan::prepare::CompactionSettings;
use session_compaction::plan::prune::{plan_prune, pruned_entry, PruneConfig, PrunePlan};
use session_compaction::session::SessionTree;

const NOW: f64 = 1.7e12;
const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#;

/// Everything prunable: no protect window, no minimum.
fn all() -> PruneConfig {
    PruneConfig { protect_tokens: 0, minimum_savings: 0, protected_tools: vec![], staleness: true }
}

fn load(bytes: &[u8]) -> SessionTree {
    SessionTree::from_bytes(bytes.to_vec(), &ParseOptions::lenient()).expect("lenient load").0
}

/// The JSON text of a value with its keys in their order (`Value`'s `==` ignores key order).
fn ordered(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

fn without_lines(mut v: Value) -> Value {
    if let Some(issues) = v.get_mut("issues").and_then(Value::as_array_mut) {
        for i in issues {
            if let Some(o) = i.as_object_mut() {
                o.shift_remove("line");
                if let Some(Value::String(m)) = o.get_mut("message") {
                    *m = m.split(" (line").next().unwrap_or_default().to_string();
                }
            }
        }
    }
    v
}

/// What a freshly loaded copy and the handle must agree on, as text.
fn observable(tree: &SessionTree, config: &PruneConfig) -> Vec<String> {
    let settings = CompactionSettings { keep_recent_tokens: 10, ..CompactionSettings::default() };
    let settings_big = CompactionSettings::default();
    let metas: Vec<String> =
        (0..tree.entry_count()).map(|i| format!("{:?}", tree.meta(i).without_text_spans())).collect();
    vec![
        tree.to_jsonl(),
        tree.build_session_context_json(),
        tree.stored_context_json(),
        tree.build_session_context_text(),
        format!("{:?}", (0..tree.entry_count()).map(|i| tree.message_text(i)).collect::<Vec<_>>()),
        format!("{:?}", (0..tree.entry_count()).map(|i| tree.message_bytes(i)).collect::<Vec<_>>()),
        ordered(&serde_json::to_value(tree.build_session_context()).unwrap()),
        ordered(&serde_json::to_value(tree.build_provider_context()).unwrap()),
        format!("{:?}", tree.context_plan()),
        ordered(&serde_json::to_value(tree.prepare_compaction(&settings)).unwrap()),
        ordered(&serde_json::to_value(tree.prepare_compaction(&settings_big)).unwrap()),
        ordered(&serde_json::to_value(tree.plan_prune(config)).unwrap()),
        ordered(&serde_json::to_value(tree.plan_prune(&PruneConfig::default())).unwrap()),
        // (Line numbers are the file's: an appended entry has none, glued records get lines.)
        ordered(&without_lines(serde_json::to_value(tree.validate()).unwrap())),
        format!("{:?}", tree.branch_indices()),
        format!("{metas:?}"),
    ]
}

/// Prunes `input` with `config` and checks SPEC §7 / §13.3 on the result; returns the handle
/// reloaded from its saved text and the plan.
fn check_prune(input: &[u8], config: &PruneConfig) -> (SessionTree, PrunePlan) {
    let mut tree = load(input);
    check_prune_tree(&mut tree, config)
}

fn check_prune_tree(tree: &mut SessionTree, config: &PruneConfig) -> (SessionTree, PrunePlan) {
    let n = tree.entry_count();
    let raws: Vec<String> = (0..n).map(|i| tree.raw(i).to_owned()).collect();
    let values: Vec<Value> = (0..n).map(|i| tree.entry(i).into_owned()).collect();
    let expected_plan = tree.plan_prune(config);
    let (plan, lines) = tree.prune_tool_outputs(config, NOW);
    assert_eq!(plan, expected_plan, "the prune does what its plan says");
    assert_eq!(lines.len(), plan.candidates.len());
    let mut pruned = vec![None; n];
    for (k, c) in plan.candidates.iter().enumerate() {
        assert_eq!(lines.get(k), Some(tree.raw(c.index)), "line {k} is what the handle stores");
        pruned[c.index] = Some(c.notice.clone());
    }
    let jsonl: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(lines.jsonl(), jsonl);
    for i in 0..n {
        match &pruned[i] {
            None => assert_eq!(tree.raw(i), raws[i], "entry {i} not pruned keeps its bytes"),
            Some(notice) => {
                let got: Value = parse_line_value(tree.raw(i).as_bytes())
                    .unwrap_or_else(|e| panic!("pruned entry {i} is JSON ({e}): {}", tree.raw(i)));
                let want = pruned_entry(&values[i], notice, NOW);
                assert_eq!(ordered(&got), ordered(&want), "entry {i}: the value path's pruned entry\nwas  {}", raws[i]);
                assert!(!tree.raw(i).contains('\n'), "entry {i} is one line");
                // What pruning is for: no copy of an output is left in the line (the outputs
                // of these tests are runs of `out `).
                assert!(!tree.raw(i).contains("out out out out"), "entry {i} still holds an output: {}", tree.raw(i));
            }
        }
        // The metadata kept is what reading the stored text gives (for a pruned entry, the
        // places of its message and content included: the handle changed them in place).
        let read = EntryMeta::from_json(tree.raw(i).as_bytes()).expect("stored text is JSON");
        if pruned[i].is_some() {
            assert_eq!(format!("{:?}", tree.meta(i)), format!("{read:?}"), "entry {i}: {}", tree.raw(i));
        } else {
            assert_eq!(
                format!("{:?}", tree.meta(i).without_text_spans()),
                format!("{:?}", read.without_text_spans()),
                "entry {i}: {}",
                tree.raw(i)
            );
        }
    }
    // Saved and loaded again: the same entries, the same answers.
    let saved = tree.to_jsonl();
    let again = load(saved.as_bytes());
    assert_eq!(again.entry_count(), n);
    for i in 0..n {
        assert_eq!(again.raw(i), tree.raw(i), "entry {i} saved as stored");
    }
    let (a, b) = (observable(tree, config), observable(&again, config));
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "observable {k} differs between the handle and a reload");
    }
    (again, plan)
}

fn result_line(id: &str, parent: &str, call: &str, tool: &str, text: &str) -> String {
    let m = json!({"role":"toolResult","toolCallId":call,"toolName":tool,
                   "content":[{"type":"text","text":text}],"isError":false,"timestamp":3});
    ordered(&json!({"type":"message","id":id,"parentId":parent,"timestamp":"2025-01-01T00:00:00.000Z","message":m}))
}

fn call_line(id: &str, parent: &str, call: &str, tool: &str, args: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"{call}","name":"{tool}","arguments":{args}}}],"provider":"p","model":"m","stopReason":"toolUse","usage":{{"input":10,"output":1,"cacheRead":0,"cacheWrite":0}},"timestamp":2}}}}"#
    )
}

fn user_line(id: &str, parent: Option<&str>) -> String {
    ordered(&json!({"type":"message","id":id,"parentId":parent,"timestamp":"2025-01-01T00:00:00.000Z",
                    "message":{"role":"user","content":"go","timestamp":1}}))
}

/// A session: header, a user message, then `(call, result)` lines given as texts; `result`
/// may use `{id}`, `{parent}`, `{call}` placeholders.
fn session(results: &[&str]) -> String {
    let mut out = vec![HEADER.to_string(), user_line("u0", None)];
    let mut parent = "u0".to_string();
    for (k, r) in results.iter().enumerate() {
        let (a, t, c) = (format!("a{k}"), format!("t{k}"), format!("c{k}"));
        out.push(call_line(&a, &parent, &c, "bash", &format!(r#"{{"command":"x{k}"}}"#)));
        out.push(r.replace("{id}", &t).replace("{parent}", &a).replace("{call}", &c));
        parent = t;
    }
    out.push(user_line("u1", Some(&parent)));
    out.join("\n") + "\n"
}

fn big(n: usize) -> String {
    "out ".repeat(n / 4)
}

#[test]
fn whitespace_inside_and_around_records_is_kept() {
    let out = big(4000);
    let r = [
        // Blanks everywhere JSON allows them, and after the record.
        format!(
            " \t {{ \"type\" : \"message\" , \"id\" : \"{{id}}\" , \"parentId\" : \"{{parent}}\" , \"message\" : {{ \"role\" : \"toolResult\" , \"toolCallId\" : \"{{call}}\" , \"toolName\" : \"bash\" , \"content\" : [ {{ \"type\" : \"text\" , \"text\" : \"{out}\" }} ] , \"isError\" : false }} , \"after\" : [ 1 , 2 ] }}  \t"
        ),
        // The message's content last, with blanks before its closing brace.
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","toolCallId":"{{call}}","toolName":"bash","content":[{{"type":"text","text":"{out}"}}]   }}}}"#
        ),
        // Only content; message first in the entry.
        format!(
            r#"{{"message":{{"content":[{{"type":"text","text":"{out}"}}],"role":"toolResult"}},"type":"message","id":"{{id}}","parentId":"{{parent}}"}}"#
        ),
        // Nested `content` keys elsewhere in the message and the entry.
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","details":{{"content":"d"}},"message":{{"role":"toolResult","details":{{"content":[1],"message":{{"content":2}}}},"content":[{{"type":"text","text":"{out}"}},{{"type":"image","data":"x","mimeType":"image/png"}}],"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
    ];
    let lines: Vec<&str> = r.iter().map(String::as_str).collect();
    let (_, plan) = check_prune(session(&lines).as_bytes(), &all());
    assert_eq!(plan.candidates.len(), 4);
}

#[test]
fn crlf_files_and_carriage_returns() {
    let out = big(4000);
    let one = result_line("{id}", "{parent}", "{call}", "bash", &out);
    let text = session(&[&one, &one]).replace('\n', "\r\n");
    let (_, plan) = check_prune(text.as_bytes(), &all());
    assert_eq!(plan.candidates.len(), 2);
    // Blanks and a carriage return inside the line's trailing blanks.
    let text = session(&[&format!("{one}\r \t"), &format!("  {one} \r")]);
    let (_, plan) = check_prune(text.as_bytes(), &all());
    assert_eq!(plan.candidates.len(), 2);
}

#[test]
fn glued_records_duplicates_and_escaped_keys() {
    let out = big(4000);
    let r = [
        // Two records on one line.
        format!(
            "{}{}",
            result_line("{id}", "{parent}", "{call}", "bash", &out),
            result_line("g1", "{id}", "cg", "bash", &out)
        ),
        // `content` twice: the last counts.
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","content":[{{"type":"text","text":"{out}{out}"}}],"toolCallId":"{{call}}"}}}}"#
        ),
        // `message` twice: the last counts (the first is a user message, the last a result).
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"user","content":"hi"}},"message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
        // `message` twice, both results: the last counts, the first must not stay behind.
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}},"message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
        // `message` twice: the first is the result, the last a string (no message: not pruned).
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}},"message":"gone"}}"#
        ),
        // Keys written with escapes (content, message, role, prunedAt).
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","cont\u0065nt":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","m\u0065ssage":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}","content":"short","cont\u0065nt":[{{"type":"text","text":"{out}"}}]}}}}"#
        ),
        // `prunedAt` present as null (already pruned: skipped), escaped too.
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}","prunedAt":null}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}","pruned\u0041t":null}}}}"#
        ),
        // Role twice, toolName twice.
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"user","content":[{{"type":"text","text":"{out}"}}],"toolName":"x","toolName":"bash","role":"toolResult","toolCallId":"{{call}}"}}}}"#
        ),
        // `type` twice, id twice.
        format!(
            r#"{{"type":"custom","id":"zz","parentId":"{{parent}}","message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}},"type":"message","id":"{{id}}"}}"#
        ),
    ];
    let lines: Vec<&str> = r.iter().map(String::as_str).collect();
    check_prune(session(&lines).as_bytes(), &all());
}

#[test]
fn content_of_every_shape() {
    let out = big(4000);
    let r = [
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":"{out}","toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","toolName":"bash","toolCallId":"{{call}}","details":"{out}"}}}}"#
        ),
        r#"{"type":"message","id":"{id}","parentId":"{parent}","message":{"role":"toolResult","content":null,"toolName":"bash","toolCallId":"{call}"}}"#.to_string(),
        r#"{"type":"message","id":"{id}","parentId":"{parent}","message":{"role":"toolResult","content":12.5e3,"toolName":"bash","toolCallId":"{call}"}}"#.to_string(),
        r#"{"type":"message","id":"{id}","parentId":"{parent}","message":{"role":"toolResult","content":[],"toolName":"bash","toolCallId":"{call}"}}"#.to_string(),
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":{{"type":"text","text":"{out}"}},"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
        r#"{"type":"message","id":"{id}","parentId":"{parent}","message":{"role":"toolResult","content":[{"type":"image","data":"x"},{"type":"image","data":"y"}],"toolName":"bash","toolCallId":"{call}"}}"#.to_string(),
        format!(r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":"{out}"}}"#),
        format!(r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":["{out}"]}}"#),
        r#"{"type":"message","id":"{id}","parentId":"{parent}","message":null}"#.to_string(),
        r#"{"type":"message","id":"{id}","parentId":"{parent}","message":{}}"#.to_string(),
        "[1,2]".to_string(),
        "\"a string record\"".to_string(),
    ];
    let lines: Vec<&str> = r.iter().map(String::as_str).collect();
    check_prune(session(&lines).as_bytes(), &all());
}

#[test]
fn unicode_surrogates_and_escapes_in_outputs_ids_and_paths() {
    let out = format!("é😀\\ud800 \\u0041 \\\"q\\\" \\n {}", big(4000));
    let mut lines = vec![HEADER.to_string(), user_line("u0", None)];
    let ids = ["\\ud83d\\ude00id", "id\\udc00", "ü-ß", "plain", "\\u0070lain2"];
    let paths = ["src/\\u00e9.rs", "src\\\\b \\\"q\\\".rs", "src/\\ud800.rs", "src\\\\b \\\"q\\\".rs", "src/é.rs"];
    let mut parent = "u0".to_string();
    for (k, (id, path)) in ids.iter().zip(paths).enumerate() {
        let a = format!("a{k}");
        lines.push(call_line(&a, &parent, &format!("c{k}"), "read", &format!(r#"{{"path":"{path}"}}"#)));
        lines.push(format!(
            r#"{{"type":"message","id":"{id}","parentId":"{a}","message":{{"role":"toolResult","toolCallId":"c{k}","toolName":"read","content":[{{"type":"text","text":"{out}"}}]}}}}"#
        ));
        parent = (*id).to_string();
    }
    let text = lines.join("\n") + "\n";
    let (_, plan) = check_prune(text.as_bytes(), &all());
    assert!(
        plan.candidates.iter().any(|c| c.notice.contains("superseded by a later full read of src\\b \"q\".rs")),
        "{plan:?}"
    );
}

#[test]
fn a_very_large_output() {
    let out = big(3_000_000);
    let one = result_line("{id}", "{parent}", "{call}", "bash", &out);
    let (_, plan) = check_prune(session(&[&one, &one, &one]).as_bytes(), &all());
    assert_eq!(plan.candidates.len(), 3);
}

#[test]
fn old_formats_appends_twice_and_after_reload() {
    let out = big(4000);
    // v1: no ids, no version; v2: hookMessage.
    let v1 = [
        r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#.to_string(),
        r#"{"type":"message","message":{"role":"user","content":"go"}}"#.to_string(),
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}]}}"#.to_string(),
        format!(r#"  {{"type":"message","message":{{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{{"type":"text","text":"{out}"}}]}}}}  "#),
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"ls"}}]}}"#.to_string(),
        format!(r#"{{"type":"message","message":{{"role":"toolResult","toolCallId":"c2","toolName":"bash","content":[{{"type":"text","text":"{out}"}}]}}, "x" : 1 }}"#),
        r#"{"type":"message","message":{"role":"hookMessage","customType":"h","content":"x"}}"#.to_string(),
    ];
    let (mut again, plan) = check_prune((v1.join("\n") + "\n").as_bytes(), &all());
    assert_eq!(plan.candidates.len(), 2);
    let v2 = v1.join("\n").replace(r#""cwd":"/w"}"#, r#""cwd":"/w","version":2}"#);
    let v2 = v2.replace(r#"{"type":"message","message""#, r#"{"type":"message","id":"IDX","parentId":null,"message""#);
    let v2: Vec<String> = v2.lines().enumerate().map(|(k, l)| l.replace("IDX", &format!("e{}", k + 1))).collect();
    check_prune((v2.join("\n") + "\n").as_bytes(), &all());

    // Appended entries (no places known), then a second prune, then after a reload.
    let leaf = again.leaf_id().unwrap().to_string();
    again
        .append_entry(json!({"type":"message","id":"n1","parentId":leaf,"message":
            {"role":"assistant","content":[{"type":"toolCall","id":"c9","name":"bash","arguments":{"command":"ls"}}]}}))
        .unwrap();
    again
        .append_entry(json!({"type":"message","id":"n2","parentId":"n1","message":
            {"role":"toolResult","toolCallId":"c9","toolName":"bash","content":[{"type":"text","text":out}]}}))
        .unwrap();
    again.append_message(json!({"role":"toolResult","toolCallId":"c9","toolName":"bash","content":out}), NOW).unwrap();
    let (mut third, plan) = check_prune_tree(&mut again, &all());
    assert_eq!(plan.candidates.len(), 2);
    let (_, plan) = check_prune_tree(&mut third, &all());
    assert_eq!(plan.candidates.len(), 0);
}

#[test]
fn pruning_twice_in_one_handle_with_appends_between() {
    let out = big(4000);
    let one = result_line("{id}", "{parent}", "{call}", "bash", &out);
    let mut tree = load(session(&[&one, &one, &one, &one]).as_bytes());
    // First prune: keep the newest two outputs (2 000 tokens).
    let config = PruneConfig { protect_tokens: 2_000, ..all() };
    let (mut reloaded, plan) = check_prune_tree(&mut tree, &PruneConfig { staleness: false, ..config });
    assert_eq!(plan.candidates.len(), 2);
    for t in [&mut tree, &mut reloaded] {
        let leaf = t.leaf_id().unwrap().to_string();
        t.append_entry(json!({"type":"message","id":"n1","parentId":leaf,"message":
            {"role":"assistant","content":[{"type":"toolCall","id":"c9","name":"bash","arguments":{"command":"x1"}}]}}))
            .unwrap();
        t.append_message(
            json!({"role":"toolResult","toolCallId":"c9","toolName":"bash","content":[{"type":"text","text":out}]}),
            NOW,
        )
        .unwrap();
    }
    let (_, p1) = check_prune_tree(&mut tree, &all());
    let (_, p2) = check_prune_tree(&mut reloaded, &all());
    assert_eq!(p1.candidates.len(), p2.candidates.len());
    assert_eq!(p1.tokens_saved, p2.tokens_saved);
}

/// `prunedAt` is written as `JSON.stringify` writes the time, whatever it is, and the metadata
/// kept is still what reading the line gives (a number the byte scanner reads another way, such
/// as `1e+300`, makes the handle read the line again).
#[test]
fn prune_times_as_json_stringify_writes_them() {
    let out = big(4000);
    let one = result_line("{id}", "{parent}", "{call}", "bash", &out);
    let text = session(&[&one, &one]);
    for now in [0.0, -0.0, 1.5, -3.0, 1e21, 9007199254740993.0, f64::NAN, f64::INFINITY, 1e299, 1e300, -1e300] {
        let mut tree = load(text.as_bytes());
        let values: Vec<Value> = (0..tree.entry_count()).map(|i| tree.entry(i).into_owned()).collect();
        let (plan, _) = tree.prune_tool_outputs(&all(), now);
        for c in &plan.candidates {
            let got: Value = parse_line_value(tree.raw(c.index).as_bytes()).unwrap();
            assert_eq!(ordered(&got), ordered(&pruned_entry(&values[c.index], &c.notice, now)), "{now}");
            let read = EntryMeta::from_json(tree.raw(c.index).as_bytes()).unwrap();
            assert_eq!(format!("{:?}", tree.meta(c.index)), format!("{read:?}"), "now = {now}: {}", tree.raw(c.index));
        }
    }
}

#[test]
fn a_message_of_many_keys_or_deep_values() {
    let out = big(4000);
    let keys: String = (0..80).map(|k| format!(r#""k{k}":{{"a":[[[[1]]]]}},"#)).collect();
    let deep = format!("{}1{}", "[".repeat(95), "]".repeat(95));
    let r = [
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{{keys}"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","deep":{deep},"content":[{{"type":"text","text":"{out}"}}],"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"{{id}}","parentId":"{{parent}}","message":{{"role":"toolResult","content":[{{"type":"text","text":"{out}"}}],"n":1e300,"toolName":"bash","toolCallId":"{{call}}"}}}}"#
        ),
    ];
    let lines: Vec<&str> = r.iter().map(String::as_str).collect();
    check_prune(session(&lines).as_bytes(), &all());
}

#[test]
fn invalid_utf8_bom_and_no_header() {
    let out = big(4000);
    let one = result_line("{id}", "{parent}", "{call}", "bash", &out);
    let text = session(&[&one, &one, &one]);
    // A byte that is no UTF-8 inside an output and on a line of its own; a BOM; no header.
    let mut bytes = text.clone().into_bytes();
    let at = text.find("out out").unwrap();
    bytes[at + 1] = 0xFF;
    bytes.extend_from_slice(b"\xC3(\n");
    check_prune(&bytes, &all());
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(text.as_bytes());
    check_prune(&bom, &all());
    let headless = text.split_once('\n').unwrap().1;
    check_prune(headless.as_bytes(), &all());
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(format!("  {headless}").as_bytes());
    check_prune(&bom, &all());
}

// ---------------------------------------------------------------------------------------------
// The staleness rule (SPEC §13.6) on unusual inputs: the handle's plan is the pure plan of the
// branch's values, and both are the rule stated directly.

/// SPEC §13.6 stated directly over values: `(result, the newest later result that supersedes
/// it)` for every result superseded (a later full read of its path first, else a later
/// identical call of its tool).
fn stated(entries: &[Value], config: &PruneConfig) -> Vec<(usize, usize)> {
    let msg = |i: usize| entries[i].get("message").filter(|m| m.is_object());
    let open: Vec<usize> = (0..entries.len())
        .rev()
        .filter(|&i| entries[i]["type"] == "message")
        .filter(|&i| msg(i).is_some_and(|m| m["role"] == "toolResult" && m.get("prunedAt").is_none()))
        .filter(|&i| {
            !msg(i).unwrap()["toolName"].as_str().is_some_and(|t| config.protected_tools.iter().any(|p| p == t))
        })
        .collect();
    let tool = |i: usize| msg(i).unwrap()["toolName"].as_str().map(str::to_owned);
    let repeated = |t: &str| open.iter().filter(|&&x| tool(x).as_deref() == Some(t)).count() > 1;
    // The call of a result: the first toolCall block with its id among the assistant messages,
    // for the oldest repeated result with that id only.
    let call_of = |i: usize| -> Option<Value> {
        let id = msg(i).unwrap()["toolCallId"].as_str()?;
        let oldest = open
            .iter()
            .rev()
            .find(|&&j| msg(j).unwrap()["toolCallId"].as_str() == Some(id) && tool(j).is_some_and(|t| repeated(&t)))?;
        if *oldest != i {
            return None;
        }
        entries
            .iter()
            .filter(|e| e["type"] == "message")
            .filter_map(|e| e.get("message"))
            .filter(|m| m["role"] == "assistant")
            .find_map(|m| {
                m["content"]
                    .as_array()?
                    .iter()
                    .find(|b| b["type"] == "toolCall" && b["id"].as_str() == Some(id))
                    .cloned()
            })
    };
    let ranged = |a: &Value| ["offset", "limit"].iter().any(|k| a.get(*k).is_some_and(|v| !v.is_null()));
    let mut out = Vec::new();
    for (p, &i) in open.iter().enumerate() {
        let Some(t) = tool(i) else { continue };
        if !repeated(&t) {
            continue;
        }
        let Some(call) = call_of(i) else { continue };
        let args = call.get("arguments").cloned().unwrap_or(Value::Null);
        let path = if t == "read" { args.get("path").and_then(Value::as_str).filter(|p| !p.is_empty()) } else { None };
        // Newer results, newest first.
        let (mut by_read, mut by_call) = (None, None);
        for &j in &open[..p] {
            if tool(j).as_deref() != Some(&t) {
                continue;
            }
            let Some(later) = call_of(j) else { continue };
            let largs = later.get("arguments").cloned().unwrap_or(Value::Null);
            let lpath =
                if t == "read" { largs.get("path").and_then(Value::as_str).filter(|p| !p.is_empty()) } else { None };
            if by_read.is_none() && path.is_some() && lpath == path && !ranged(&largs) {
                by_read = Some(j);
            }
            if by_call.is_none() && json_stringify(&largs) == json_stringify(&args) {
                by_call = Some(j);
            }
        }
        if let Some(j) = by_read.or(by_call) {
            out.push((i, j));
        }
    }
    out.sort();
    out
}

fn superseded_pairs(plan: &PrunePlan) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> =
        plan.candidates.iter().filter_map(|c| c.superseded_by.as_ref().map(|b| (c.index, b.index))).collect();
    v.sort();
    v
}

#[derive(Debug, Clone)]
struct Turn {
    tool: usize,
    args: usize,
    /// Which call id the result names: its own, an earlier one, or none.
    call: u8,
    /// Whether the call block has an id.
    call_has_id: bool,
    /// Whether the call block's id repeats an earlier call's (`c{k/3}`).
    call_id_repeats: bool,
    /// Whether the arguments are written with blanks (no place recorded for them).
    spaced: bool,
}

const TOOLS: [&str; 5] = ["read", "bash", "rëad", "reaad", "😀"];
const ARGS: [&str; 8] = [
    r#"{"path":"a"}"#,
    r#"{"path":"a","offset":1}"#,
    r#"{"path":"a","offset":null}"#,
    r#"{"path":"b"}"#,
    r#"{"command":"1.0"}"#,
    r#"{"n":1.0}"#,
    r#"{"n":1}"#,
    r#"{"path":""}"#,
];

fn turn() -> impl Strategy<Value = Turn> {
    (0..TOOLS.len(), 0..ARGS.len(), 0u8..4, prop::bool::weighted(0.85), prop::bool::weighted(0.3), any::<bool>())
        .prop_map(|(tool, args, call, call_has_id, call_id_repeats, spaced)| Turn {
            tool,
            args,
            call,
            call_has_id,
            call_id_repeats,
            spaced,
        })
}

fn staleness_session(turns: &[Turn]) -> String {
    let mut lines = vec![HEADER.to_string(), user_line("u0", None)];
    let mut parent = "u0".to_string();
    for (k, t) in turns.iter().enumerate() {
        let args =
            if t.spaced { ARGS[t.args].replace(':', " : ").replace(',', " , ") } else { ARGS[t.args].to_string() };
        let id = match (t.call_has_id, t.call_id_repeats) {
            (false, _) => String::new(),
            (true, false) => format!(r#""id":"c{k}","#),
            (true, true) => format!(r#""id":"c{}","#, k / 3),
        };
        let a = format!("a{k}");
        lines.push(format!(
            r#"{{"type":"message","id":"{a}","parentId":"{parent}","message":{{"role":"assistant","content":[{{"type":"toolCall",{id}"name":"{}","arguments":{args}}}]}}}}"#,
            TOOLS[t.tool]
        ));
        let call = match t.call {
            0 | 1 => format!(r#""toolCallId":"c{k}","#),
            2 => format!(r#""toolCallId":"c{}","#, k / 2),
            _ => String::new(),
        };
        lines.push(format!(
            r#"{{"type":"message","id":"t{k}","parentId":"{a}","message":{{"role":"toolResult",{call}"toolName":"{}","content":[{{"type":"text","text":"{}"}}]}}}}"#,
            TOOLS[t.tool],
            big(400)
        ));
        parent = format!("t{k}");
    }
    lines.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::cases(256), ..ProptestConfig::default() })]

    /// The handle's and the pure plans agree with the rule stated directly, on repeated call
    /// ids, results naming no call, tools of other lengths and scripts, spaced and
    /// non-canonical arguments, calls without an id; and pruning them keeps SPEC §13.3.
    #[test]
    fn staleness_on_unusual_inputs(turns in prop::collection::vec(turn(), 1..14), protect in 0u64..600) {
        let text = staleness_session(&turns);
        let tree = load(text.as_bytes());
        let values: Vec<Value> = tree.branch_indices().iter().map(|&i| tree.entry(i).into_owned()).collect();
        let config = PruneConfig { protect_tokens: protect, ..all() };
        let handle = tree.plan_prune(&config);
        let pure = plan_prune(&EntryList::new(&values), &config);
        let branch = tree.branch_indices().to_vec();
        let want: Vec<(usize, usize)> = stated(&values, &config).into_iter().map(|(a, b)| (branch[a], branch[b])).collect();
        let pure_pairs: Vec<(usize, usize)> = superseded_pairs(&pure).into_iter().map(|(a, b)| (branch[a], branch[b])).collect();
        prop_assert_eq!(&pure_pairs, &want, "pure plan vs the rule\n{}", text);
        prop_assert_eq!(&superseded_pairs(&handle), &want, "handle plan vs the rule\n{}", text);
        let notices = |p: &PrunePlan| p.candidates.iter().map(|c| c.notice.clone()).collect::<Vec<_>>();
        prop_assert_eq!(notices(&handle), notices(&pure));
        check_prune(text.as_bytes(), &config);
    }
}

// ---------------------------------------------------------------------------------------------
// Random formatting: every record written with blanks, key orders, duplicate keys and escapes
// chosen at random; the prune must keep SPEC §7 / §13.3 and the handle must agree with a reload.

#[derive(Debug, Clone)]
struct Style {
    ws: [u8; 6],
    content: u8,
    dup: u8,
    escape_value: bool,
    crlf: bool,
    lead: u8,
    trail: u8,
    order: u8,
}

fn style() -> impl Strategy<Value = Style> {
    (any::<[u8; 6]>(), 0u8..7, 0u8..8, any::<bool>(), prop::bool::weighted(0.2), 0u8..3, 0u8..3, 0u8..3).prop_map(
        |(ws, content, dup, escape_value, crlf, lead, trail, order)| Style {
            ws,
            content,
            dup,
            escape_value,
            crlf,
            lead,
            trail,
            order,
        },
    )
}

fn blank(b: u8) -> &'static str {
    ["", "", " ", "\t", "  ", " \t "][usize::from(b) % 6]
}

fn styled_result(k: usize, parent: &str, s: &Style, size: usize) -> String {
    let w = |n: usize| blank(s.ws[n % 6]);
    let text = if s.escape_value { format!("\\u00e9\\n{}\\\"", big(size)) } else { format!("é{}", big(size)) };
    let content = match s.content {
        0 => format!(r#"[{}{{"type":"text","text":"{text}"}}{}]"#, w(0), w(1)),
        1 => format!(r#""{text}""#),
        2 => format!(r#"[{{"type":"text","text":"{text}"}},{}{{"type":"image","data":"x"}}]"#, w(2)),
        3 => "null".to_string(),
        4 => format!(r#"[{{"text":"{text}","type":"text"}}]"#),
        5 => "[ ]".to_string(),
        _ => format!(r#"{{"type":"text","text":"{text}"}}"#),
    };
    let mut members = vec![
        format!(r#""role"{}:{}"toolResult""#, w(0), w(1)),
        format!(r#""toolCallId":"c{k}""#),
        format!(r#""toolName"{}:"bash""#, w(2)),
        format!(r#""content"{}:{}{content}"#, w(3), w(4)),
        r#""isError":false"#.to_string(),
    ];
    match s.dup {
        1 => members.push(r#""content":[{"type":"text","text":"dup"}]"#.to_string()),
        2 => members.push(r#""prunedAt":null"#.to_string()),
        3 => members.insert(0, r#""cont\u0065nt":"escaped""#.to_string()),
        4 => members.push(r#""toolName":"bash""#.to_string()),
        _ => {}
    }
    if s.order == 1 {
        members.rotate_left(3);
    } else if s.order == 2 {
        members.reverse();
    }
    let sep = format!("{},{}", w(5), w(0));
    let message = format!("{{{}{}{}}}", w(1), members.join(&sep), w(2));
    let mut top = vec![
        r#""type":"message""#.to_string(),
        format!(r#""id"{}:{}"t{k}""#, w(3), w(4)),
        format!(r#""parentId":"{parent}""#),
        format!(r#""message"{}:{}{message}"#, w(5), w(0)),
        r#""timestamp":"2025-01-01T00:00:00.000Z""#.to_string(),
    ];
    match s.dup {
        5 => top.push(r#""message":{"role":"toolResult","content":"x","toolName":"bash"}"#.to_string()),
        6 => top.insert(0, r#""message":"first""#.to_string()),
        7 => top.push(r#""m\u0065ssage":{"role":"user","content":"x"}"#.to_string()),
        _ => {}
    }
    if s.order == 2 {
        top.reverse();
    }
    format!("{}{{{}{}{}}}{}", blank(s.lead), w(1), top.join(&sep), w(2), blank(s.trail + 2))
}

fn styled_session(styles: &[Style], size: usize) -> String {
    let mut lines = vec![HEADER.to_string(), user_line("u0", None)];
    let mut parent = "u0".to_string();
    for (k, s) in styles.iter().enumerate() {
        let a = format!("a{k}");
        lines.push(call_line(&a, &parent, &format!("c{k}"), "bash", &format!(r#"{{"command":"x{}"}}"#, k % 3)));
        lines.push(styled_result(k, &a, s, size));
        parent = format!("t{k}");
    }
    let crlf = styles.first().is_some_and(|s| s.crlf);
    lines.join(if crlf { "\r\n" } else { "\n" }) + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn any_formatting_prunes_losslessly(styles in prop::collection::vec(style(), 1..8), protect in 0u64..3000, size in 0usize..2000) {
        let text = styled_session(&styles, size);
        let config = PruneConfig { protect_tokens: protect, ..all() };
        let (mut again, _) = check_prune(text.as_bytes(), &config);
        // Pruning the reloaded copy again (it may prune more: a pruned output of 0 tokens
        // counts its notice) keeps the same rules.
        check_prune_tree(&mut again, &config);
    }
}
