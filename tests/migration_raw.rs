//! The raw path's v1/v2 → v3 migration (SPEC §1 "Older files") gives what the value path
//! gives: the same header, entries, metadata, errors and opaque lines, on crafted sessions
//! with every case the migration treats apart (existing ids, compactions keeping an earlier,
//! the same, a later, a non-object or a header record, `hookMessage`, extra `session` records,
//! non-object records, empty objects, settings entries, padded and glued lines, bad lines).

#[path = "common/cases.rs"]
mod cases;

use proptest::prelude::*;
use serde_json::Value;
use session_compaction::entry::EntryMeta;
use session_compaction::io::{parse_session_with_ids, scan_session_with_ids, ParseOptions};

/// Loads `text` on both paths with the same ids; asserts they agree.
fn agree(text: &str) {
    let ids = |n: &mut usize| {
        *n += 1;
        format!("{:08x}", 0xa000_0000u32 + *n as u32)
    };
    let (mut a, mut b) = (0, 0);
    let value = parse_session_with_ids(text.as_bytes(), &ParseOptions::default(), &mut || ids(&mut a)).unwrap();
    let raw = scan_session_with_ids(text.as_bytes(), &ParseOptions::default(), &mut || ids(&mut b)).unwrap();
    assert_eq!(a, b, "the same number of ids drawn\n{text}");
    assert_eq!(raw.migrated, value.migrated, "{text}");
    assert_eq!(raw.header, value.header, "{text}");
    assert_eq!(raw.errors, value.errors, "{text}");
    let buf = raw.buffer(text.as_bytes());
    if let (Some(h), Some(line)) = (&raw.header, &raw.header_line) {
        let parsed: Value = serde_json::from_slice(&buf[line.range.clone()]).unwrap();
        assert_eq!(&parsed, h);
    }
    assert_eq!(raw.entries.len(), value.entries.len(), "{text}");
    for (m, (v, &line)) in raw.entries.iter().zip(value.entries.iter().zip(&value.lines)) {
        assert_eq!(m.raw.line, line);
        let parsed = session_compaction::io::parse_line_value(&buf[m.raw.range.clone()]).unwrap();
        assert_eq!(&parsed, v, "line {line} of\n{text}");
        assert_eq!(
            format!("{:?}", m.meta.without_text_spans()),
            format!("{:?}", EntryMeta::from_value(v)),
            "line {line} of\n{text}"
        );
    }
    let opaque: Vec<(usize, usize, &[u8])> = raw
        .opaque
        .iter()
        .flat_map(|o| o.lines(buf).map(move |(line, text)| (line, o.position, text.as_bytes())))
        .collect();
    let want: Vec<(usize, usize, &[u8])> =
        value.opaque.iter().map(|o| (o.line, o.position, o.text.as_bytes())).collect();
    assert_eq!(opaque, want, "{text}");
}

const LINES: &[&str] = &[
    r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#,
    r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"usage":{"input":5,"output":1}}}"#,
    r#"{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}]}}"#,
    r#"{"type":"message","message":{"role":"hookMessage","customType":"h","content":"from a hook","display":true}}"#,
    r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":1,"tokensBefore":10}"#,
    r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":0,"tokensBefore":10}"#,
    r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":3,"tokensBefore":10}"#,
    r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":99,"tokensBefore":10}"#,
    r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":"2","firstKeptEntryId":"keep"}"#,
    r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":1.5,"firstKeptEntryId":"keep"}"#,
    r#"{"type":"model_change","provider":"p","modelId":"m"}"#,
    r#"{"type":"thinking_level_change","thinkingLevel":"high"}"#,
    r#"{"type":"message","id":"own","message":{"role":"user","content":"has an id"}}"#,
    r#"{"type":"message","parentId":"elsewhere","message":{"role":"user","content":"has a parent"}}"#,
    r#"{"type":"message","id":null,"message":{"role":"user","content":"null id"}}"#,
    r#"{"type":"session","id":"extra","timestamp":"t","cwd":"/"}"#,
    r#"{"type":"label","targetId":"x","label":"l"}"#,
    r#"{"type":"unknown_kind","data":{"id":"nested"}}"#,
    r#"{}"#,
    r#"{ }"#,
    r#"  {"type":"message","message":{"role":"user","content":"padded"}}  "#,
    r#"[1,2]"#,
    r#"0"#,
    r#"7"#,
    r#""text""#,
    r#"null"#,
    r#"{"type":"custom","customType":"c","data":{}}{"type":"custom","customType":"d"}"#,
    r#"{"type":"message","message":{"role":"user","content":"é \u00e9 \ud83d\ude00"}}"#,
    r#"{"type":"message","message":"not an object"}"#,
    r#"{"type":"message","id":1,"message":{"role":"user","content":"number id"}}"#,
    r#"{"type":"message""#,
    "",
    "   ",
    "garbage",
];

fn session(version: Option<&str>, picks: &[usize]) -> String {
    let v = version.map_or(String::new(), |v| format!(",\"version\":{v}"));
    let mut text = format!("{{\"type\":\"session\",\"id\":\"s1\",\"timestamp\":\"t\",\"cwd\":\"/\"{v}}}\n");
    for &p in picks {
        text.push_str(LINES[p % LINES.len()]);
        text.push('\n');
    }
    text
}

#[test]
fn every_case_line_by_line_agrees_in_v1_and_v2() {
    for version in [None, Some("1"), Some("2"), Some("\"1\"")] {
        for p in 0..LINES.len() {
            agree(&session(version, &[0, 1, 2, p, 0, 2]));
        }
        agree(&session(version, &(0..LINES.len()).collect::<Vec<_>>()));
    }
}

#[test]
fn a_v1_file_loaded_by_the_handle_equals_its_value_path_load() {
    let text = session(None, &(0..LINES.len()).collect::<Vec<_>>());
    let (tree, _) =
        session_compaction::session::SessionTree::from_jsonl(text.clone(), &ParseOptions::default()).unwrap();
    assert!(tree.migrated());
    assert_eq!(tree.source_version(), Some(1.0));
    let value = session_compaction::io::parse_session(&text, &ParseOptions::default()).unwrap();
    assert_eq!(tree.entry_count(), value.entries.len());
    // Random ids differ between the loads; the shape does not.
    let reloaded = session_compaction::io::parse_session(&tree.to_jsonl(), &ParseOptions::default()).unwrap();
    assert!(!reloaded.migrated, "saved as v3");
    assert_eq!(reloaded.entries.len(), value.entries.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::cases(300), ..ProptestConfig::default() })]
    #[test]
    fn random_mixes_agree(picks in proptest::collection::vec(0usize..LINES.len(), 0..24), v in 0usize..3) {
        agree(&session([None, Some("1"), Some("2")][v], &picks));
    }
}
