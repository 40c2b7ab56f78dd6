//! Loading, saving, migrating and validating sessions: the real sessions of `examples/sessions`,
//! the recorded v1 → v3 migration of the conformance vectors, every load error kind with its
//! line number, strict mode, and the tree walks and validation issues (SPEC §1, §10).

#[path = "common/cases.rs"]
mod cases;

use proptest::prelude::*;
use serde_json::{json, Value};
use session_compaction::entry::{EntryKind, EntryMeta};
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::io::{
    migrate_to_current_version, parse_jsonl, parse_jsonl_bytes, parse_session, parse_session_bytes,
    parse_session_with_ids, scan_jsonl, scan_session, scan_session_with_ids, serialize_session, split_lines, LineError,
    ParseOptions, ParsedSession,
};
use session_compaction::session::SessionTree;
use session_compaction::tree::{collect_entries_for_branch_summary, get_branch, validate, IssueKind, TreeIndex};
use session_compaction::Error;
use std::collections::HashSet;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The non-blank lines of a file, parsed independently of the crate.
fn file_values(text: &str) -> Vec<Value> {
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("line")).collect()
}

fn lenient() -> ParseOptions {
    ParseOptions::default()
}

fn codes(errors: &[LineError]) -> Vec<(usize, &'static str)> {
    errors.iter().map(|e| (e.line, e.error.code())).collect()
}

fn recorded_ids() -> Vec<String> {
    let v: Value =
        serde_json::from_str(&read("tests/conformance/cases/loadSession/real-loadSession-before-compaction-p1.json"))
            .unwrap();
    v["input"]["generatedIds"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// Real sessions

#[test]
fn real_v3_sessions_load_without_errors_and_round_trip() {
    for rel in ["examples/sessions/pi-session-with-compactions.jsonl", "examples/sessions/pi-session-large.jsonl"] {
        let text = read(rel);
        let s = parse_session(&text, &ParseOptions::strict()).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert!(s.errors.is_empty(), "{rel}: {:?}", s.errors);
        assert!(!s.migrated, "{rel} is v3");
        let original = file_values(&text);
        assert_eq!(s.entries.len() + 1, original.len());
        assert_eq!(s.lines.first(), Some(&2));
        // Saving writes one line per record, header first, each equal to the original line.
        let saved = s.to_jsonl();
        assert!(saved.ends_with('\n'));
        let saved_lines: Vec<&str> = saved.lines().collect();
        assert_eq!(saved_lines.len(), original.len());
        for (i, (line, want)) in saved_lines.iter().zip(&original).enumerate() {
            let got: Value = serde_json::from_str(line).unwrap();
            assert_eq!(&got, want, "{rel} line {}", i + 1);
            // Key order is kept too.
            assert_eq!(
                got.as_object().map(|o| o.keys().collect::<Vec<_>>()),
                want.as_object().map(|o| o.keys().collect::<Vec<_>>())
            );
        }
        // Loading the saved text again gives the same session.
        let again = parse_session(&saved, &lenient()).unwrap();
        assert_eq!(again.header, s.header);
        assert_eq!(again.entries, s.entries);
    }
}

#[test]
fn real_v1_session_migrates_with_compaction_index() {
    let text = read("examples/sessions/pi-session-v1-format.jsonl");
    assert!(text.contains("\"firstKeptEntryIndex\":293"));
    let s = parse_session(&text, &ParseOptions::strict()).unwrap();
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert!(s.migrated);
    assert_eq!(s.header.as_ref().unwrap()["version"], json!(3));
    let ids: HashSet<&str> = s.entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), s.entries.len(), "random ids are unique");
    assert!(ids.iter().all(|id| id.len() == 8 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))));
    let mut compactions = 0;
    for (i, e) in s.entries.iter().enumerate() {
        assert!(e.get("firstKeptEntryIndex").is_none());
        let parent = &e["parentId"];
        if i == 0 {
            assert_eq!(parent, &Value::Null);
        } else {
            assert_eq!(parent, &s.entries[i - 1]["id"]);
        }
        if e["type"] == "compaction" {
            compactions += 1;
            let kept = e["firstKeptEntryId"].as_str().expect("firstKeptEntryId");
            assert!(ids.contains(kept));
        }
    }
    assert_eq!(compactions, 2);
    // The file index 293 (header included) is entry 292.
    let first = s.entries.iter().find(|e| e["type"] == "compaction").unwrap();
    assert_eq!(first["firstKeptEntryId"], s.entries[292]["id"]);
}

#[test]
fn real_v1_session_with_recorded_ids_equals_the_v3_file() {
    let ids = recorded_ids();
    let mut used = 0;
    let mut next = || {
        used += 1;
        ids[used - 1].clone()
    };
    let text = read("tests/conformance/sessions/real-before-compaction.v1.jsonl");
    let s = parse_session_with_ids(text.as_bytes(), &ParseOptions::strict(), &mut next).unwrap();
    assert_eq!(used, 1002);
    let want = file_values(&read("tests/conformance/sessions/real-before-compaction.v3.jsonl"));
    let got = s.into_file_entries();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "line {}", i + 1);
    }
}

#[test]
fn raw_path_matches_value_path_on_real_sessions() {
    for rel in [
        "examples/sessions/pi-session-with-compactions.jsonl",
        "examples/sessions/pi-session-large.jsonl",
        "examples/sessions/pi-session-v1-format.jsonl",
    ] {
        let text = read(rel);
        let ids = recorded_ids();
        let (mut a, mut b) = (0usize, 0usize);
        let value = parse_session_with_ids(text.as_bytes(), &lenient(), &mut || {
            a += 1;
            ids[a - 1].clone()
        })
        .unwrap();
        let raw = scan_session_with_ids(text.as_bytes(), &lenient(), &mut || {
            b += 1;
            ids[b - 1].clone()
        })
        .unwrap();
        assert_eq!(raw.migrated, value.migrated, "{rel}");
        assert_eq!(raw.text.is_some(), value.migrated, "{rel}");
        assert_eq!(raw.header, value.header);
        assert_eq!(raw.entries.len(), value.entries.len());
        let buf = raw.buffer(text.as_bytes());
        for (m, (v, &line)) in raw.entries.iter().zip(value.entries.iter().zip(&value.lines)) {
            assert_eq!(m.raw.line, line);
            let parsed: Value = serde_json::from_slice(&buf[m.raw.range.clone()]).unwrap();
            assert_eq!(&parsed, v, "{rel} line {line}");
            // Debug text, because NaN usage numbers are not equal to themselves.
            assert_eq!(
                format!("{:?}", m.meta.without_text_spans()),
                format!("{:?}", EntryMeta::from_value(v)),
                "{rel} line {line}"
            );
        }
        assert!(raw.errors.is_empty());
    }
}

#[test]
fn real_sessions_validate_structurally() {
    for rel in [
        "examples/sessions/pi-session-with-compactions.jsonl",
        "examples/sessions/pi-session-large.jsonl",
        "examples/sessions/pi-session-v1-format.jsonl",
    ] {
        let s = parse_session(&read(rel), &lenient()).unwrap();
        let before = s.entries.clone();
        let report = validate(&s.entry_list(), Some(&s.lines));
        assert_eq!(s.entries, before, "validation never changes entries");
        for kind in [IssueKind::DuplicateId, IssueKind::MissingParent, IssueKind::Cycle, IssueKind::KeptEntryNotOnPath]
        {
            assert_eq!(report.of_kind(kind).count(), 0, "{rel}: {:?}", report.of_kind(kind).collect::<Vec<_>>());
        }
        for issue in &report.issues {
            assert!(issue.line.is_some_and(|l| l >= 2), "{rel}: {issue:?}");
        }
    }
}

#[test]
fn random_conformance_sessions_have_no_structural_issues() {
    for seed in 1000..1042 {
        let rel = format!("tests/conformance/sessions/random-{seed}.jsonl");
        let s = parse_session(&read(&rel), &ParseOptions::strict()).unwrap();
        let report = validate(&s.entry_list(), Some(&s.lines));
        for kind in [IssueKind::DuplicateId, IssueKind::MissingParent, IssueKind::Cycle] {
            assert_eq!(report.of_kind(kind).count(), 0, "{rel}");
        }
        // Serializing the report gives camelCase issues with codes.
        let json = serde_json::to_value(&report).unwrap();
        assert!(json["issues"].is_array());
    }
}

// ---------------------------------------------------------------------------------------------
// Load errors

const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

fn msg(id: &str, parent: Option<&str>) -> String {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}).to_string()
}

#[test]
fn every_error_kind_with_its_line() {
    let text = [
        HEADER.to_string(),                                        // 1
        msg("a", None),                                            // 2
        "{not json}".into(),                                       // 3
        String::new(),                                             // 4 blank
        format!("{}{}", msg("b", Some("a")), msg("c", Some("a"))), // 5: two records
        r#"{"type":"message","parentId":"a"}"#.into(),             // 6: no id
        r#"{"id":"x","parentId":"a"}"#.into(),                     // 7: no type
        "   \t ".into(),                                           // 8 blank
        "42".into(),                                               // 9: not an object
        msg("d", Some("a")),                                       // 10
        r#"{"type":"message","id":"e","message":{"role":"#.into(), // 11: truncated (no newline)
    ]
    .join("\n");
    let s = parse_session(&text, &lenient()).unwrap();
    assert_eq!(
        codes(&s.errors),
        vec![
            (3, "E_PARSE"),
            (5, "E_PARSE"),
            (6, "E_MISSING_FIELD"),
            (7, "E_MISSING_FIELD"),
            (9, "E_MISSING_FIELD"),
            (11, "E_PARSE")
        ]
    );
    let text_of = |i: usize| s.errors[i].error.to_string();
    assert!(text_of(0).starts_with("line 3: malformed JSON"), "{}", text_of(0));
    assert!(text_of(1).contains("two or more JSON records"), "{}", text_of(1));
    assert!(text_of(2).contains("`id`") && text_of(2).contains("line 6"), "{}", text_of(2));
    assert!(text_of(3).contains("`type`"), "{}", text_of(3));
    assert!(text_of(5).starts_with("line 11: truncated last line"), "{}", text_of(5));
    // Glued records are split into entries; entries missing fields are kept (like the
    // reference); malformed and blank lines are kept as opaque lines (SPEC §13.3).
    assert_eq!(s.lines, vec![2, 5, 5, 6, 7, 9, 10]);
    assert_eq!(s.entries[0]["id"], "a");
    assert_eq!((s.entries[1]["id"].as_str(), s.entries[2]["id"].as_str()), (Some("b"), Some("c")));
    assert_eq!(s.entries[5], json!(42));
    let opaque: Vec<(usize, usize, &str)> = s.opaque.iter().map(|o| (o.line, o.position, o.text.as_str())).collect();
    assert_eq!(
        opaque,
        vec![
            (3, 2, "{not json}"),
            (4, 2, ""),
            (8, 6, "   \t "),
            (11, 8, r#"{"type":"message","id":"e","message":{"role":"#)
        ]
    );
    // The raw path reports the same errors.
    let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
    assert_eq!(raw.errors, s.errors);
    assert_eq!(raw.spans().iter().map(|(l, _)| *l).collect::<Vec<_>>(), s.lines);
    // LineError serializes as {line, code, message}.
    let j = serde_json::to_value(&s.errors[0]).unwrap();
    assert_eq!(j["line"], 3);
    assert_eq!(j["code"], "E_PARSE");
    assert!(j["message"].as_str().unwrap().contains("malformed"));
}

#[test]
fn strict_mode_fails_on_the_first_bad_line() {
    let text = format!("{HEADER}\n{}\n{{\"type\":\"label\"}}\n{{bad\n", msg("a", None));
    let err = parse_session(&text, &ParseOptions::strict()).unwrap_err();
    assert_eq!(err.code(), "E_MISSING_FIELD");
    assert!(err.to_string().contains("line 3"), "{err}");
    assert_eq!(scan_session(text.as_bytes(), &ParseOptions::strict()).unwrap_err(), err);
    let err =
        parse_session(&format!("{HEADER}\n{{bad\n{{\"type\":\"label\"}}\n"), &ParseOptions::strict()).unwrap_err();
    assert_eq!(err, Error::Parse { line: 2, reason: err_reason(&err) });
    // Lenient mode returns the same errors without failing.
    let ok = parse_session(&text, &lenient()).unwrap();
    assert_eq!(codes(&ok.errors), vec![(3, "E_MISSING_FIELD"), (4, "E_PARSE")]);
    // A clean file passes strict mode.
    assert!(parse_session(&format!("{HEADER}\n{}\n", msg("a", None)), &ParseOptions::strict()).is_ok());
}

fn err_reason(e: &Error) -> String {
    match e {
        Error::Parse { reason, .. } => reason.clone(),
        _ => String::new(),
    }
}

#[test]
fn input_that_is_not_a_session_loads_no_entries_but_keeps_every_line() {
    let cases: &[(&str, usize)] = &[
        ("", 1),
        ("\n\n  \n", 1),
        ("{\"type\":\"message\",\"id\":\"1\"}\n", 1),
        ("{\"type\":\"session\",\"id\":42}\n{\"type\":\"message\",\"id\":\"a\"}", 1),
    ];
    for (text, line) in cases {
        let s = parse_session(text, &lenient()).unwrap();
        assert!(s.header.is_none() && s.entries.is_empty(), "{text:?}");
        let header = s.errors.iter().find(|e| e.error.code() == "E_HEADER").unwrap_or_else(|| panic!("{text:?}"));
        assert_eq!(header.line, *line, "{text:?}");
        assert_eq!(parse_session(text, &ParseOptions::strict()).unwrap_err().code(), "E_HEADER");
        let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
        assert_eq!(raw.errors, s.errors);
        assert!(raw.entries.is_empty() && raw.header.is_none());
        // Every line is kept as written: saving gives the input back (line ends normalized).
        let want: String = text.lines().map(|l| format!("{l}\n")).collect();
        assert_eq!(s.to_jsonl(), want, "{text:?}");
        let (tree, _) = SessionTree::from_jsonl(text.to_string(), &lenient()).unwrap();
        assert_eq!(tree.to_jsonl(), want, "{text:?}");
    }
}

#[test]
fn damaged_header_line_keeps_the_entries_after_it() {
    let truncated = &HEADER[..30];
    let text = format!("{truncated}\n\n{}\n{}\n", msg("a", None), msg("b", Some("a")));
    let s = parse_session(&text, &lenient()).unwrap();
    assert!(s.header.is_none());
    assert_eq!(s.entries.len(), 2);
    assert_eq!(s.lines, vec![3, 4]);
    assert_eq!(codes(&s.errors), vec![(1, "E_PARSE"), (1, "E_HEADER")]);
    assert_eq!(s.opaque.iter().map(|o| (o.line, o.position)).collect::<Vec<_>>(), vec![(1, 0), (2, 0)]);
    assert_eq!(s.to_jsonl(), text);
    assert_eq!(parse_session(&text, &ParseOptions::strict()).unwrap_err().code(), "E_PARSE");
    let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
    assert_eq!(raw.errors, s.errors);
    assert_eq!(raw.spans().iter().map(|(l, _)| *l).collect::<Vec<_>>(), s.lines);
    let (tree, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    assert_eq!(errors, s.errors);
    assert_eq!(tree.entry_count(), 2);
    assert_eq!(tree.leaf_id(), Some("b"));
    assert_eq!(tree.to_jsonl(), text);
    // Malformed lines before the header are skipped: the first parsed value is the header.
    let s = parse_session(&format!("{{oops\n{HEADER}\n{}", msg("a", None)), &lenient()).unwrap();
    assert_eq!(s.header_line, 2);
    assert_eq!(s.entries.len(), 1);
    assert_eq!(codes(&s.errors), vec![(1, "E_PARSE")]);
}

#[test]
fn crlf_bom_blank_lines_and_bytes() {
    let text = format!("\u{feff}{HEADER}\r\n\r\n   \r\n{}\r\n{}", msg("a", None), msg("b", Some("a")));
    let s = parse_session(&text, &ParseOptions::strict()).unwrap();
    assert_eq!(s.lines, vec![4, 5]);
    assert_eq!(split_lines(text.as_bytes()).len(), 3);
    // Invalid UTF-8 is replaced by U+FFFD on both paths, as TextDecoder does; nothing is lost.
    let mut bytes = format!("{HEADER}\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"x\",\"t\":\"\xff\"}\n");
    bytes.extend_from_slice(msg("a", None).as_bytes());
    let s = parse_session_bytes(&bytes, &lenient()).unwrap();
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert_eq!(s.lines, vec![2, 3]);
    assert_eq!(s.entries[0]["t"], "\u{fffd}");
    let raw = scan_session(&bytes, &lenient()).unwrap();
    assert_eq!(raw.errors, s.errors);
    assert_eq!(raw.spans().len(), 2);
    let (tree, _) = SessionTree::from_bytes(bytes.clone(), &lenient()).unwrap();
    assert_eq!(tree.to_jsonl(), String::from_utf8_lossy(&bytes).into_owned() + "\n");
}

#[test]
fn plain_jsonl_keeps_any_value() {
    let r = parse_jsonl("1\n\"s\"\nnull\n[1]\n{\"a\":1} {\"b\":2}\n{\"a\":");
    assert_eq!(r.values, vec![json!(1), json!("s"), Value::Null, json!([1]), json!({"a":1}), json!({"b":2})]);
    assert_eq!(r.lines, vec![1, 2, 3, 4, 5, 5]);
    assert_eq!(codes(&r.errors), vec![(5, "E_PARSE"), (6, "E_PARSE")]);
    let raw = scan_jsonl(b"1\n\"s\"\nnull\n[1]\n{\"a\":1} {\"b\":2}\n{\"a\":");
    assert_eq!(raw.errors, r.errors);
    assert_eq!(raw.lines.len(), 6);
}

// ---------------------------------------------------------------------------------------------
// Migration

fn migrate_text(text: &str, ids: &[&str]) -> (ParsedSession, usize) {
    let mut used = 0;
    let s = parse_session_with_ids(text.as_bytes(), &lenient(), &mut || {
        used += 1;
        ids.get(used - 1).map_or_else(|| "overflow".to_string(), |s| s.to_string())
    })
    .unwrap();
    (s, used)
}

#[test]
fn v1_first_kept_entry_index_variants() {
    let text = [
        r#"{"type":"session","id":"s","timestamp":"t","cwd":"/"}"#,
        r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"q1","timestamp":1}}"#,
        r#"{"type":"compaction","timestamp":"t","summary":"to header","firstKeptEntryIndex":0,"tokensBefore":1}"#,
        r#"{"type":"compaction","timestamp":"t","summary":"back","firstKeptEntryIndex":1.0,"tokensBefore":1}"#,
        r#"{"type":"compaction","timestamp":"t","summary":"forward","firstKeptEntryId":"stale","firstKeptEntryIndex":6,"tokensBefore":1}"#,
        r#"{"type":"compaction","timestamp":"t","summary":"string","firstKeptEntryIndex":"1","tokensBefore":1}"#,
        r#"{"type":"compaction","timestamp":"t","summary":"fraction","firstKeptEntryIndex":1.5,"tokensBefore":1}"#,
        r#"{"type":"message","timestamp":"t","message":{"role":"hookMessage","content":"h","timestamp":2}}"#,
    ]
    .join("\n");
    let (s, used) = migrate_text(&text, &["i1", "i2", "i3", "i4", "i5", "i6", "i7"]);
    assert_eq!(used, 7);
    assert!(s.migrated);
    let e = &s.entries;
    assert_eq!(
        e.iter().map(|x| x["id"].as_str().unwrap()).collect::<Vec<_>>(),
        ["i1", "i2", "i3", "i4", "i5", "i6", "i7"]
    );
    assert_eq!(e[1].get("firstKeptEntryId"), None);
    assert_eq!(e[1].get("firstKeptEntryIndex"), None);
    assert_eq!(e[2]["firstKeptEntryId"], "i1");
    // Forward reference: the target has no id yet, so the key is assigned `undefined` (dropped).
    assert_eq!(e[3].get("firstKeptEntryId"), None);
    assert_eq!(e[4]["firstKeptEntryIndex"], "1");
    assert_eq!(e[5].get("firstKeptEntryId"), None);
    assert_eq!(e[5].get("firstKeptEntryIndex"), None);
    assert_eq!(e[6]["message"]["role"], "custom");
    // id and parentId are appended after the existing keys, like JS property assignment.
    let keys: Vec<&String> = e[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "timestamp", "message", "id", "parentId"]);
    assert_eq!(s.header.as_ref().unwrap()["version"], 3);
}

#[test]
fn version_semantics() {
    let body = r#"{"type":"message","id":"k","parentId":null,"timestamp":"t","message":{"role":"hookMessage","content":"x","timestamp":1}}"#;
    let with = |v: &str| format!(r#"{{"type":"session","id":"s","version":{v}}}"#) + "\n" + body;
    // v2 (a whole number, 2.0 as JSON.parse reads it): only the role rename, no new ids.
    for v in ["2", "2.0"] {
        let (s, used) = migrate_text(&with(v), &[]);
        assert_eq!(used, 0, "{v}");
        assert!(s.migrated);
        assert_eq!(s.entries[0]["message"]["role"], "custom");
        assert_eq!(s.entries[0]["id"], "k");
        assert_eq!(s.header.as_ref().unwrap()["version"], 3);
        assert!(s.errors.is_empty(), "{v}");
    }
    // v3, a newer version and what is no version (SPEC §13.11): read as v3, untouched.
    for v in ["3", "4", "\"3\"", "\"2\"", "2.5", "-1", "0", "true", "[1]", "\"abc\""] {
        let (s, used) = migrate_text(&with(v), &[]);
        assert!(!s.migrated && used == 0, "{v}");
        assert_eq!(s.entries[0]["message"]["role"], "hookMessage");
        assert_eq!(s.to_jsonl(), with(v) + "\n", "{v}: saved as it was");
    }
    // null and absent mean 1.
    let (s, used) = migrate_text(&with("null"), &["n1"]);
    assert!(s.migrated && used == 1 && s.entries[0]["id"] == "n1");
    // Every header line gets version 3; extra headers get no id.
    let text = format!(
        "{}\n{}\n{}",
        r#"{"type":"session","id":"s"}"#, r#"{"type":"session","id":"t"}"#, r#"{"type":"label","targetId":"x"}"#
    );
    let (s, used) = migrate_text(&text, &["l1"]);
    assert_eq!(used, 1);
    assert_eq!(s.entries[0], json!({"type":"session","id":"t","version":3}));
    assert_eq!(s.entries[1]["parentId"], Value::Null);
}

#[test]
fn a_version_this_engine_does_not_read_is_reported_on_line_1_and_the_file_still_loads() {
    let body = r#"{"type":"message","id":"k","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
    let with = |v: &str| format!(r#"{{"type":"session","id":"s","version":{v}}}"#) + "\n" + body + "\n";
    let newer = |v: &str| {
        format!(
            "line 1: session format version {v} is newer than this engine reads (3); the file is read as \
             version 3 and what this engine does not know is kept unchanged"
        )
    };
    let invalid = |v: &str| {
        format!(
            "line 1: invalid field `version` of the session header: expected a whole number from 1 to 3 \
             (absent: 1), got {v}; the file is read as version 3 (nothing migrated) and saved unchanged"
        )
    };
    let cases = [
        ("99", "E_UNSUPPORTED_VERSION", newer("99")),
        ("4", "E_UNSUPPORTED_VERSION", newer("4")),
        ("4.0", "E_UNSUPPORTED_VERSION", newer("4")),
        ("1000", "E_UNSUPPORTED_VERSION", newer("1000")),
        ("3.5", "E_MISSING_FIELD", invalid("3.5")),
        ("-1", "E_MISSING_FIELD", invalid("-1")),
        ("0", "E_MISSING_FIELD", invalid("0")),
        ("\"3\"", "E_MISSING_FIELD", invalid("the string \"3\"")),
        ("\"7\"", "E_MISSING_FIELD", invalid("the string \"7\"")),
        ("true", "E_MISSING_FIELD", invalid("true")),
        ("[3]", "E_MISSING_FIELD", invalid("an array")),
        ("{}", "E_MISSING_FIELD", invalid("an object")),
    ];
    for (v, code, message) in cases {
        let text = with(v);
        let s = parse_session(&text, &lenient()).unwrap();
        let errs: Vec<(usize, &str, String)> =
            s.errors.iter().map(|e| (e.line, e.error.code(), e.to_string())).collect();
        assert_eq!(errs, [(1, code, message.clone())], "{v}");
        assert_eq!(s.entries.len(), 1);
        assert!(!s.migrated);
        assert_eq!(s.to_jsonl(), text, "{v}: saved unchanged");
        let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
        assert_eq!(raw.errors, s.errors, "{v}: both paths");
        assert!(!raw.migrated, "{v}");
        let (tree, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
        assert_eq!(errors, s.errors);
        assert_eq!((tree.entry_count(), tree.to_jsonl()), (1, text.clone()));
        let strict = parse_session(&text, &ParseOptions { strict: true }).unwrap_err();
        assert_eq!(strict.code(), code);
        // Validation reads the header by the same rule: the handle's (no index: the header is
        // no entry) and a list's whose first record is the header.
        let issues = tree.validate().issues;
        assert_eq!(issues.len(), 1, "{v}");
        let issue = &issues[0];
        let code_of = |i: &session_compaction::tree::ValidationIssue| serde_json::to_value(i.code).unwrap();
        assert_eq!((code_of(issue), issue.index, issue.line), (json!(code), None, Some(1)), "{v}");
        assert_eq!(issue.message, message.replacen("line 1", "the session header (line 1)", 1));
        assert_eq!(issue.to_error(), strict);
        assert_eq!(issue.field.as_deref(), (code == "E_MISSING_FIELD").then_some("version"));
        let records: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let report = validate(&EntryList::new(&records), Some(&[1, 2]));
        assert_eq!(report.issues.len(), 1, "{v}");
        assert_eq!((code_of(&report.issues[0]), report.issues[0].index), (json!(code), Some(0)));
        assert_eq!(report.issues[0].message, message.replacen("line 1", "entries[0], the session header (line 1)", 1));
    }
    // A v1-shaped file under a version that is no version: no ids assigned, the entries without
    // one reported (kept), the file saved as it was.
    let text = "{\"type\":\"session\",\"id\":\"s\",\"version\":-1}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n";
    let s = parse_session(text, &lenient()).unwrap();
    assert_eq!(codes(&s.errors), [(1, "E_MISSING_FIELD"), (2, "E_MISSING_FIELD")]);
    assert_eq!((s.migrated, s.entries[0].get("id")), (false, None));
    assert_eq!(s.to_jsonl(), text);
    let (tree, _) = SessionTree::from_jsonl(text.to_string(), &lenient()).unwrap();
    assert_eq!((tree.source_version(), tree.migrated(), tree.to_jsonl()), (Some(-1.0), false, text.to_string()));
    // The versions this engine reads (and the older ones it migrates) are not reported.
    for v in ["3", "3.0", "2", "1", "null"] {
        let text = with(v);
        assert!(parse_session(&text, &lenient()).unwrap().errors.is_empty(), "{v}");
        assert!(scan_session(text.as_bytes(), &lenient()).unwrap().errors.is_empty(), "{v}");
        let (tree, _) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
        assert!(tree.validate().issues.is_empty(), "{v}");
    }
}

#[test]
fn migrate_in_place_matches_reference_flag() {
    let mut file = vec![json!({"type":"session","id":"s","version":3}), json!({"type":"message","id":"a"})];
    assert!(!migrate_to_current_version(&mut file, &mut || unreachable!()));
    let mut empty: Vec<Value> = Vec::new();
    assert!(migrate_to_current_version(&mut empty, &mut || unreachable!()));
}

#[test]
fn default_ids_are_derived_from_the_file_and_unique() {
    let text =
        format!("{}\n{}\n{}", r#"{"type":"session","id":"s"}"#, r#"{"type":"message"}"#, r#"{"type":"message"}"#);
    let a = parse_session(&text, &lenient()).unwrap();
    let b = parse_session(&text, &lenient()).unwrap();
    assert_ne!(a.entries[0]["id"], a.entries[1]["id"]);
    assert_eq!(a.entries[0]["id"], b.entries[0]["id"], "the same file gets the same ids (SPEC §13.10)");
    assert_eq!(a.entries[1]["id"], b.entries[1]["id"]);
    assert_eq!(a.entries[1]["parentId"], a.entries[0]["id"]);
    // The rule: the n-th id is of the header's id and timestamp and n.
    let mut g = session_compaction::io::RandomIds::new().derived(&json!({"type":"session","id":"s"}));
    assert_eq!(a.entries[0]["id"], g.next_id());
    assert_eq!(a.entries[1]["id"], g.next_id());
    // Another header: other ids.
    let other = text.replace(r#""id":"s""#, r#""id":"t""#);
    assert_ne!(parse_session(&other, &lenient()).unwrap().entries[0]["id"], a.entries[0]["id"]);
}

#[test]
fn saving_is_lossless_for_unknown_types_and_fields() {
    let text = format!(
        "{HEADER}\n{}\n{}\n",
        r#"{"type":"future_thing","id":"f","parentId":null,"timestamp":"t","z":1,"a":{"10":1,"2":[1.5,-0.0,1e21]},"nested":{"deep":[{"x":null}]}}"#,
        r#"{"type":"message","id":"m","parentId":"f","timestamp":"t","message":{"role":"weird","x":"\u2028"}}"#
    );
    let s = parse_session(&text, &ParseOptions::strict()).unwrap();
    let out = serialize_session(s.header.as_ref(), &s.entries);
    let again = parse_session(&out, &ParseOptions::strict()).unwrap();
    assert_eq!(again.entries, s.entries);
    let keys: Vec<&String> = again.entries[0]["a"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["10", "2"], "stored key order is kept");
}

// ---------------------------------------------------------------------------------------------
// Tree

fn m(id: &str, parent: Option<&str>) -> Value {
    serde_json::from_str(&msg(id, parent)).unwrap()
}

fn ids_of(entries: &[Value], idx: &[usize]) -> Vec<String> {
    idx.iter().map(|&i| entries[i]["id"].as_str().unwrap_or("?").to_string()).collect()
}

#[test]
fn duplicates_last_wins_and_are_reported_with_both_lines() {
    let v = vec![m("a", None), m("b", Some("a")), m("a", None), m("c", Some("a"))];
    let list = EntryList::new(&v);
    let t = TreeIndex::new(&list);
    assert_eq!(t.get("a"), Some(2));
    assert_eq!(get_branch(&list, "c"), vec![2, 3]);
    // "b" hangs below the shadowed first "a": its parent now resolves to the later one.
    assert_eq!(get_branch(&list, "b"), vec![2, 1]);
    let report = validate(&list, Some(&[2, 3, 7, 8]));
    let dup: Vec<_> = report.of_kind(IssueKind::DuplicateId).collect();
    assert_eq!(dup.len(), 1);
    assert_eq!(
        (dup[0].index, dup[0].line, dup[0].related_index, dup[0].related_line),
        (Some(2), Some(7), Some(0), Some(2))
    );
    assert!(dup[0].message.contains("lines 2 and 7"), "{}", dup[0].message);
    let j = serde_json::to_value(dup[0]).unwrap();
    assert_eq!(j["code"], "E_DUPLICATE_ID");
    assert_eq!(j["relatedLine"], 2);
    assert_eq!(dup[0].to_error().code(), "E_DUPLICATE_ID");
}

#[test]
fn cycles_and_missing_parents() {
    let v = vec![
        m("a", Some("c")),
        m("b", Some("a")),
        m("c", Some("b")),
        m("d", Some("c")),
        m("e", Some("nope")),
        m("f", Some("")),
    ];
    let list = EntryList::new(&v);
    assert_eq!(ids_of(&v, &get_branch(&list, "d")), ["a", "b", "c", "d"]);
    assert_eq!(ids_of(&v, &get_branch(&list, "e")), ["e"]);
    assert_eq!(ids_of(&v, &get_branch(&list, "f")), ["f"]);
    let (got, common) = collect_entries_for_branch_summary(&list, Some("d"), "e");
    assert_eq!(ids_of(&v, &got), ["a", "b", "c", "d"]);
    assert_eq!(common, None);
    let r = validate(&list, None);
    let cycles: Vec<_> = r.of_kind(IssueKind::Cycle).collect();
    assert_eq!(cycles.len(), 1, "one issue per cycle");
    assert_eq!(cycles[0].id.as_deref(), Some("a"));
    assert!(cycles[0].message.contains("cycle"));
    let missing: Vec<_> = r.of_kind(IssueKind::MissingParent).collect();
    assert_eq!(missing.len(), 1, "an empty parentId is a root, not a missing parent");
    assert_eq!(missing[0].related_id.as_deref(), Some("nope"));
    assert_eq!(missing[0].to_error().code(), "E_MISSING_PARENT");
}

#[test]
fn compaction_and_tool_call_issues() {
    let call = |id: &str, parent: &str, call_id: &str| json!({"type":"message","id":id,"parentId":parent,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":call_id,"name":"read","arguments":{"path":"a"}}]}});
    let result = |id: &str, parent: &str, call_id: &str| json!({"type":"message","id":id,"parentId":parent,"timestamp":"t","message":{"role":"toolResult","toolCallId":call_id,"toolName":"read","content":[]}});
    let v = vec![
        m("u1", None),
        call("a1", "u1", "c1"),
        result("r1", "a1", "c1"), // answered
        call("a2", "r1", "c2"),   // never answered
        result("r2", "a1", "c9"), // orphan: no call c9 on its path (and c1 unanswered on this path)
        json!({"type":"compaction","id":"k1","parentId":"r1","timestamp":"t","summary":"s","firstKeptEntryId":"a1","tokensBefore":1}),
        json!({"type":"compaction","id":"k2","parentId":"r1","timestamp":"t","summary":"s","firstKeptEntryId":"r2","tokensBefore":1}),
        json!({"type":"compaction","id":"k3","parentId":"k2","timestamp":"t","summary":"s","tokensBefore":1}),
        result("r3", "u1", "c1"), // orphan: c1 is on another branch
        call("a4", "u1", "c4"),
        result("r4", "a4", "c4"), // answered on one branch ...
        m("u5", Some("a4")),      // ... not on this one: unanswered on a path (SPEC §13.1)
    ];
    let list = EntryList::new(&v);
    let before = v.clone();
    let r = validate(&list, None);
    assert_eq!(v, before);
    let of = |k| r.of_kind(k).map(|i| (i.id.clone().unwrap(), i.related_id.clone())).collect::<Vec<_>>();
    let pair = |a: &str, b: &str| (a.to_string(), Some(b.to_string()));
    assert_eq!(of(IssueKind::UnansweredToolCall), vec![pair("a1", "c1"), pair("a2", "c2"), pair("a4", "c4")]);
    assert_eq!(
        of(IssueKind::OrphanToolResult),
        vec![("r2".to_string(), Some("c9".to_string())), ("r3".to_string(), Some("c1".to_string()))]
    );
    assert_eq!(
        of(IssueKind::KeptEntryNotOnPath),
        vec![("k2".to_string(), Some("r2".to_string())), ("k3".to_string(), None)]
    );
    assert_eq!(r.issues.iter().map(|i| i.index).collect::<Vec<_>>(), {
        let mut s = r.issues.iter().map(|i| i.index).collect::<Vec<_>>();
        s.sort();
        s
    });
    assert!(!r.is_valid());
    assert!(r.first_error().is_some());
}

#[test]
fn labels_last_one_wins() {
    let label = |id: &str, target: &str, l: Value| json!({"type":"label","id":id,"parentId":null,"timestamp":"t","targetId":target,"label":l});
    let mut v = vec![
        m("a", None),
        label("l1", "a", json!("first")),
        label("l2", "a", json!("second")),
        label("l3", "b", json!("x")),
    ];
    let t = TreeIndex::new(&EntryList::new(&v));
    assert_eq!(t.label("a"), Some("second"));
    assert_eq!(t.label("b"), Some("x"));
    v.push(label("l4", "a", Value::Null));
    v.push(json!({"type":"label","id":"l5","parentId":null,"timestamp":"t","targetId":"b"}));
    let list = EntryList::new(&v);
    let mut t = TreeIndex::new(&list);
    assert_eq!(t.label("a"), None);
    assert_eq!(t.label("b"), None);
    // Incremental push.
    t.push(&EntryMeta::from_value(&label("l6", "a", json!(5))));
    assert_eq!(t.label("a"), None, "a non-string label removes");
    t.push(&EntryMeta::from_value(&label("l7", "a", json!("back"))));
    assert_eq!(t.label("a"), Some("back"));
    assert_eq!(t.len(), v.len() + 2);
}

#[test]
fn stray_headers_are_not_indexed() {
    let v = vec![m("a", None), json!({"type":"session","id":"a","version":3}), m("b", Some("a"))];
    let list = EntryList::new(&v);
    assert_eq!(list.meta(1).kind, EntryKind::SessionHeader);
    assert_eq!(get_branch(&list, "b"), vec![0, 2]);
    assert!(validate(&list, None).of_kind(IssueKind::DuplicateId).next().is_none());
}

// ---------------------------------------------------------------------------------------------
// No panics, and the two paths agree, on any input

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(400)))]

    #[test]
    fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let a = parse_jsonl_bytes(&bytes);
        let b = scan_jsonl(&bytes);
        prop_assert_eq!(&a.errors, &b.errors);
        prop_assert_eq!(a.values.len(), b.lines.len());
        for opts in [ParseOptions::lenient(), ParseOptions::strict()] {
            let s = parse_session_bytes(&bytes, &opts);
            let r = scan_session(&bytes, &opts);
            prop_assert_eq!(s.is_ok(), r.is_ok());
            if let (Ok(s), Ok(r)) = (s, r) {
                prop_assert_eq!(&s.errors, &r.errors);
                prop_assert_eq!(s.entries.len(), r.entries.len());
            }
        }
    }

    #[test]
    fn jsonish_lines_never_panic(lines in proptest::collection::vec(
        prop_oneof![
            Just(HEADER.to_string()),
            Just(r#"{"type":"session","id":"s"}"#.to_string()),
            Just(r#"{"type":"session","id":"s","version":2}"#.to_string()),
            "[a-z]{1,3}".prop_map(|id| msg(&id, None)),
            ("[a-z]{1,2}", "[a-z]{1,2}").prop_map(|(id, p)| msg(&id, Some(&p))),
            "[a-z]{1,2}".prop_map(|id| format!(r#"{{"type":"compaction","id":"{id}","parentId":"a","firstKeptEntryIndex":1,"firstKeptEntryId":"b"}}"#)),
            Just(r#"{"type":"message","id":"t","parentId":"a","message":{"role":"toolResult","toolCallId":"c"}}"#.to_string()),
            Just(r#"{"type":"message","id":"c","parentId":"b","message":{"role":"assistant","content":[{"type":"toolCall","id":"c"}]}}"#.to_string()),
            Just("{broken".to_string()),
            Just("   ".to_string()),
            Just("{}{}".to_string()),
        ],
        0..25,
    )) {
        let text = lines.join("\n");
        let s = parse_session(&text, &ParseOptions::lenient()).unwrap();
        let list = s.entry_list();
        let t = TreeIndex::new(&list);
        for i in 0..list.len() {
            let _ = t.branch_to(&list, i);
            let _ = t.children(&list, i);
        }
        let _ = collect_entries_for_branch_summary(&list, Some("a"), "b");
        let _ = validate(&list, Some(&s.lines));
        let raw = scan_session(text.as_bytes(), &ParseOptions::lenient()).unwrap();
        prop_assert_eq!(&raw.errors, &s.errors);
    }
}

#[test]
fn spliced_preparation_json_equals_the_materialized_one_on_real_sessions() {
    use session_compaction::plan::prepare::CompactionSettings;
    for name in ["pi-session-large.jsonl", "pi-session-with-compactions.jsonl", "pi-session-v1-format.jsonl"] {
        let text = std::fs::read_to_string(format!("{}/examples/sessions/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let (tree, _) = session_compaction::session::SessionTree::from_jsonl(
            text,
            &session_compaction::io::ParseOptions::lenient(),
        )
        .unwrap();
        for keep in [1_000, 20_000, 60_000] {
            let settings = CompactionSettings { keep_recent_tokens: keep, ..Default::default() };
            let spliced: Option<serde_json::Value> =
                tree.prepare_compaction_json(&settings).map(|t| serde_json::from_str(&t).unwrap());
            let full = tree.prepare_compaction(&settings).map(|p| serde_json::to_value(p).unwrap());
            assert_eq!(spliced, full, "{name} keep {keep}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Entries that are not objects (SPEC §13.9)

/// (index, line, code, message) of each issue.
fn not_object_issues(
    r: &session_compaction::context::ContextValidation,
) -> Vec<(usize, Option<usize>, String, String)> {
    r.issues
        .iter()
        .map(|i| {
            (
                i.index.unwrap(),
                i.line,
                serde_json::to_value(i.code).unwrap().as_str().unwrap().to_string(),
                i.message.clone(),
            )
        })
        .collect()
}

#[test]
fn entries_that_are_not_objects_are_reported() {
    let v = vec![json!(null), json!(1), json!("x"), m("a", None), json!([1]), json!(true), json!(2.5)];
    let list = EntryList::new(&v);
    let r = session_compaction::context::validate_context(&list, None, Some(v.len() - 1));
    let issue =
        |i: usize, t: &str| (i, None, "E_UNKNOWN_ENTRY".to_string(), format!("entries[{i}] is not an object ({t})"));
    assert_eq!(
        not_object_issues(&r),
        vec![
            issue(0, "null"),
            issue(1, "number"),
            issue(2, "string"),
            issue(4, "array"),
            issue(5, "boolean"),
            issue(6, "number")
        ]
    );
    let first = &r.issues[0];
    assert_eq!(first.code, IssueKind::NotAnObject);
    assert_eq!(first.code.code(), "E_UNKNOWN_ENTRY");
    assert_eq!(first.related_id, None);
    assert_eq!(first.to_error().code(), "E_UNKNOWN_ENTRY");
    assert_eq!(first.to_error().to_string(), "entries[0]: unknown entry type `(not an object)`");
    let j = serde_json::to_value(first).unwrap();
    assert_eq!(j["code"], "E_UNKNOWN_ENTRY");
    // The other functions read them as entries of no known type.
    assert_eq!(EntryMeta::from_value(&json!(5)).kind, EntryKind::Other);
    assert_eq!(EntryMeta::from_value(&json!(5)).id, None);
    assert!(validate(&EntryList::new(&[m("a", None)]), None).is_valid());
}

#[test]
fn lines_that_are_not_objects_are_reported_alike_on_every_load_path() {
    let text = format!(
        "{HEADER}\n{}\n5\n[1]\n{}\nnull\n\"s\"\nfalse\n[[[[{{\"type\":\"message\"}}]]]]\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"y"}}"#,
    );
    let want = |i: usize, line: usize, t: &str| {
        (i, Some(line), "E_UNKNOWN_ENTRY".to_string(), format!("entries[{i}] is not an object ({t})"))
    };
    let expected = vec![
        want(1, 3, "number"),
        want(2, 4, "array"),
        want(4, 6, "null"),
        want(5, 7, "string"),
        want(6, 8, "boolean"),
        want(7, 9, "array"),
    ];
    // The handle (raw path: the byte scanner and its fallbacks).
    let (tree, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    // The load reports them too (no string `type`), and keeps them.
    assert_eq!(errors.iter().map(|e| e.line).collect::<Vec<_>>(), [3, 4, 6, 7, 8, 9]);
    assert_eq!(tree.entry_count(), 8);
    assert_eq!(not_object_issues(&tree.validate()), expected);
    let (tree, _) = SessionTree::from_bytes(text.clone().into_bytes(), &lenient()).unwrap();
    assert_eq!(not_object_issues(&tree.validate()), expected);
    // The value path (what parseSession then validateSession read).
    let s = parse_session(&text, &lenient()).unwrap();
    let r = session_compaction::context::validate_context(&s.entry_list(), Some(&s.lines), Some(s.entries.len() - 1));
    assert_eq!(not_object_issues(&r), expected);
    // The metadata of every reader agrees.
    for line in ["5", "[1]", "null", "\"s\"", "false", "[[[[{\"type\":\"message\"}]]]]"] {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(EntryMeta::from_json(line.as_bytes()).unwrap(), EntryMeta::from_value(&v), "{line}");
    }
}

// ---------------------------------------------------------------------------------------------
// Entries without a string `type` or `id` (SPEC §13.11)

/// (index, line, field, message) of each `E_MISSING_FIELD` issue.
fn missing_field_issues(
    r: &session_compaction::context::ContextValidation,
) -> Vec<(usize, Option<usize>, String, String)> {
    r.issues
        .iter()
        .filter(|i| i.code == IssueKind::MissingField)
        .map(|i| (i.index.unwrap(), i.line, i.field.clone().unwrap_or_default(), i.message.clone()))
        .collect()
}

#[test]
fn entries_without_type_or_id_are_reported_by_validation() {
    let v = vec![
        json!({}),
        json!({"type": "message"}),
        json!({"id": "x", "parentId": null}),
        json!({"type": 5, "id": "y"}),
        m("a", None),
        json!({"type": "custom", "id": 7}),
    ];
    let list = EntryList::new(&v);
    let r = session_compaction::context::validate_context(&list, None, Some(v.len() - 1));
    let want = |i: usize, f: &str| (i, None, f.to_string(), format!("entries[{i}] has no `{f}` (expected a string)"));
    assert_eq!(
        missing_field_issues(&r),
        vec![want(0, "type"), want(1, "id"), want(2, "type"), want(3, "type"), want(5, "id")]
    );
    let first = r.issues.iter().find(|i| i.code == IssueKind::MissingField).unwrap();
    assert_eq!(first.code.code(), "E_MISSING_FIELD");
    assert_eq!(first.to_error().code(), "E_MISSING_FIELD");
    assert_eq!(first.to_error().to_string(), "entries[0]: missing or invalid field `type`");
    let j = serde_json::to_value(first).unwrap();
    assert_eq!((j["code"].as_str(), j["field"].as_str()), (Some("E_MISSING_FIELD"), Some("type")));
    // The metadata tells an absent type from an unknown one.
    assert!(EntryMeta::from_value(&json!({"id": "q"})).no_type);
    assert!(!EntryMeta::from_value(&json!({"type": "whatever", "id": "q"})).no_type);
    assert_eq!(EntryMeta::from_value(&json!({"type": "whatever", "id": "q"})).missing_field(), None);
    assert!(validate(&EntryList::new(&[json!({"type": "whatever", "id": "q"})]), None).is_valid());
}

#[test]
fn lines_without_type_or_id_are_reported_alike_on_every_load_path() {
    let text = format!(
        "{HEADER}\n{}\n{{}}\n{}\n{}\n{}\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#,
        r#"{"type":"message","parentId":"a"}"#,
        r#"{"type":"message","type":null,"id":"c"}"#,
        r#"{"type":"custom","id":"d","parentId":"a"}"#,
    );
    let expected = vec![
        (1, Some(3), "type".to_string(), "entries[1] (line 3) has no `type` (expected a string)".to_string()),
        (2, Some(4), "id".to_string(), "entries[2] (line 4) has no `id` (expected a string)".to_string()),
        (3, Some(5), "type".to_string(), "entries[3] (line 5) has no `type` (expected a string)".to_string()),
    ];
    // The load reports the same lines and fields, and keeps the entries.
    let (tree, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    let load: Vec<(usize, String)> = errors.iter().map(|e| (e.line, e.error.to_string())).collect();
    assert_eq!(
        load,
        [
            (3, "line 3: missing or invalid field `type`".to_string()),
            (4, "line 4: missing or invalid field `id`".to_string()),
            (5, "line 5: missing or invalid field `type`".to_string()),
        ]
    );
    assert_eq!(tree.entry_count(), 5);
    assert_eq!(missing_field_issues(&tree.validate()), expected);
    let v = tree.validate();
    let issue = v.issues.iter().find(|i| i.code == IssueKind::MissingField).unwrap();
    assert_eq!(issue.to_error().to_string(), "line 3: missing or invalid field `type`");
    let (tree, _) = SessionTree::from_bytes(text.clone().into_bytes(), &lenient()).unwrap();
    assert_eq!(missing_field_issues(&tree.validate()), expected);
    // The value path (parseSession then validateSession).
    let s = parse_session(&text, &lenient()).unwrap();
    assert_eq!(s.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [3, 4, 5]);
    let r = session_compaction::context::validate_context(&s.entry_list(), Some(&s.lines), Some(s.entries.len() - 1));
    assert_eq!(missing_field_issues(&r), expected);
    // A handle built from the values (fromEntries) keeps them and reports them the same way,
    // without lines.
    let tree = SessionTree::from_values(s.header.clone(), &s.entries);
    assert_eq!(tree.entry_count(), 5);
    let no_lines: Vec<_> =
        missing_field_issues(&tree.validate()).into_iter().map(|(i, line, f, _)| (i, line, f)).collect();
    assert_eq!(no_lines, [(1, None, "type".to_string()), (2, None, "id".to_string()), (3, None, "type".to_string())]);
    // Every reader's metadata agrees (the byte scanner and the value reader).
    for line in [r#"{}"#, r#"{"type":"message","parentId":"a"}"#, r#"{"type":"message","type":null,"id":"c"}"#] {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(EntryMeta::from_json(line.as_bytes()).unwrap(), EntryMeta::from_value(&v), "{line}");
    }
}

// ---------------------------------------------------------------------------------------------
// v1 migration ids (SPEC §13.10)

const V1_HEADER: &str = r#"{"type":"session","id":"v1-session","timestamp":"2024-05-01T10:00:00.000Z","cwd":"/"}"#;

fn v1_text(extra: &str) -> String {
    format!(
        "{V1_HEADER}\n{}\n{}\n{extra}{}\n{}\n",
        r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"hi"}}"#,
        r#"{"type":"message","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"yo"}]}}"#,
        r#"{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}"#,
        r#"{"type":"message","timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"c"}}"#,
    )
}

/// The ids of a handle's entries.
fn handle_ids(tree: &SessionTree) -> Vec<Option<String>> {
    (0..tree.entry_count()).map(|i| tree.meta(i).id.clone()).collect()
}

#[test]
fn v1_ids_are_the_same_on_every_load_and_path() {
    let text = v1_text("");
    let a = parse_session(&text, &lenient()).unwrap();
    let ids: Vec<Option<String>> = a.entries.iter().map(|e| e["id"].as_str().map(str::to_owned)).collect();
    assert!(ids.iter().all(|i| i.as_ref().is_some_and(|i| i.len() == 8)), "{ids:?}");
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 4);
    assert_eq!(parse_session(&text, &lenient()).unwrap().entries, a.entries, "value path, twice");
    let (t1, _) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    let (t2, _) = SessionTree::from_bytes(text.clone().into_bytes(), &lenient()).unwrap();
    assert_eq!(handle_ids(&t1), ids, "raw path = value path");
    assert_eq!(handle_ids(&t2), ids);
    assert_eq!(t1.to_jsonl(), t2.to_jsonl());
    // The compaction's firstKeptEntryIndex 2 became the id of entry 2 of the file (entries[1]).
    assert_eq!(a.entries[2]["firstKeptEntryId"], a.entries[1]["id"]);
    // Injected ids are used exactly as before.
    let mut n = 0;
    let mut next = || {
        n += 1;
        format!("id{n}")
    };
    let p = parse_session_bytes_with(&text, &mut next);
    assert_eq!(p.iter().map(|e| e["id"].clone()).collect::<Vec<_>>(), ["id1", "id2", "id3", "id4"]);
}

fn parse_session_bytes_with(text: &str, next: &mut dyn FnMut() -> String) -> Vec<Value> {
    session_compaction::io::parse_session_with_ids(text.as_bytes(), &lenient(), next).unwrap().entries
}

#[test]
fn v1_ids_avoid_every_id_of_the_file() {
    let plain = parse_session(&v1_text(""), &lenient()).unwrap();
    let first = plain.entries[0]["id"].as_str().unwrap().to_string();
    // A record that already has the first derived id as its own (a custom entry with an id, in
    // a v1 file): the ids drawn avoid it, on both paths, the same way on every load.
    let extra = format!("{}\n", json!({"type": "custom", "customType": "k", "id": first}));
    let text = v1_text(&extra);
    let a = parse_session(&text, &lenient()).unwrap();
    let ids: Vec<String> = a.entries.iter().map(|e| e["id"].as_str().unwrap().to_string()).collect();
    assert!(!ids.contains(&first), "{ids:?} {first}");
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
    assert_eq!(ids[1], plain.entries[1]["id"], "the other draws are unchanged");
    assert_eq!(parse_session(&text, &lenient()).unwrap().entries, a.entries);
    let (t, _) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    assert_eq!(handle_ids(&t), ids.into_iter().map(Some).collect::<Vec<_>>());
}
