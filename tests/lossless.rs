//! Lossless storage (SPEC §13.3): every input line survives a load and a save in its place, and
//! the load paths agree on every input. The three JS load paths run on these core functions:
//! `parseSession` and `SessionTree.fromJsonl` on [`scan_session_str`] (the former splicing the
//! records with [`parsed_session_json`]), `SessionTree.fromBytes` on [`scan_session`]; the value
//! path [`parse_session_with_ids`] (the native API and the conformance `loadSession`) decides the
//! same.

#[path = "common/cases.rs"]
mod cases;

use proptest::prelude::*;
use serde_json::{json, Value};
use session_compaction::entry::EntryMeta;
use session_compaction::io::{
    parse_line_value, parse_session, parse_session_with_ids, parsed_session_json, scan_session, scan_session_str,
    scan_session_with_ids, serialize_session_lines, ParseOptions, ParsedSession, RawSession,
};
use session_compaction::session::SessionTree;

const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

fn msg(id: &str, parent: Option<&str>, text: &str) -> String {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":text,"timestamp":1}}).to_string()
}

fn lenient() -> ParseOptions {
    ParseOptions::lenient()
}

/// The text a lossless save writes for `input`: every line, ended as the first one is (CRLF or
/// LF), BOM dropped.
fn normalized(input: &[u8]) -> String {
    let text = String::from_utf8_lossy(input);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut out = String::new();
    // Every line ends as the first line does (SPEC §13.3).
    let end = match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    };
    let mut parts: Vec<&str> = text.split('\n').collect();
    if parts.last() == Some(&"") {
        parts.pop();
    }
    for p in parts {
        out.push_str(p.trim_end_matches('\r'));
        out.push_str(end);
    }
    out
}

/// What a raw load says, as comparable values: header, entries (each record parsed), their
/// lines, the opaque lines, the errors, migrated.
fn raw_view(raw: &RawSession, input: &[u8]) -> Value {
    let buf = raw.buffer(input);
    let entries: Vec<Value> =
        raw.entries.iter().map(|e| parse_line_value(&buf[e.raw.range.clone()]).unwrap_or(Value::Null)).collect();
    let lines: Vec<usize> = raw.entries.iter().map(|e| e.raw.line).collect();
    let opaque: Vec<Value> = raw
        .opaque
        .iter()
        .flat_map(|o| o.lines(buf).map(move |(line, text)| json!({"line": line, "position": o.position, "text": text})))
        .collect();
    json!({"header": raw.header, "entries": entries, "lines": lines, "opaque": opaque,
           "errors": serde_json::to_value(&raw.errors).unwrap(), "migrated": raw.migrated})
}

fn value_view(p: &ParsedSession) -> Value {
    json!({"header": p.header, "entries": p.entries, "lines": p.lines, "opaque": serde_json::to_value(&p.opaque).unwrap(),
           "errors": serde_json::to_value(&p.errors).unwrap(), "migrated": p.header.is_some() && p.migrated})
}

fn counter() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("gen{n}")
    }
}

/// Loads `input` through every core path and checks that they agree; returns the bytes load.
fn agree(input: &[u8]) -> Result<RawSession, TestCaseError> {
    let text = String::from_utf8_lossy(input).into_owned();
    let value = parse_session_with_ids(input, &lenient(), &mut counter()).expect("lenient");
    let bytes = scan_session_with_ids(input, &lenient(), &mut counter()).expect("lenient");
    prop_assert_eq!(raw_view(&bytes, input), value_view(&value), "value path vs raw path");
    // Metadata read from the bytes equals the metadata of the values.
    for (m, v) in bytes.entries.iter().zip(&value.entries) {
        prop_assert_eq!(format!("{:?}", m.meta.without_text_spans()), format!("{:?}", EntryMeta::from_value(v)));
    }
    if !bytes.migrated {
        // (a migration draws random ids: only the id-injecting variants compare)
        let str_raw = scan_session_str(&text, &lenient()).expect("lenient");
        prop_assert_eq!(raw_view(&str_raw, text.as_bytes()), raw_view(&bytes, input), "str vs bytes");
        // parseSession's JSON text holds the same records.
        let json: Value = serde_json::from_str(&parsed_session_json(&str_raw, text.as_bytes())).expect("json");
        let view = raw_view(&str_raw, text.as_bytes());
        prop_assert_eq!(&json["entries"], &view["entries"]);
        prop_assert_eq!(&json["header"], &view["header"]);
        prop_assert_eq!(&json["errors"], &view["errors"]);
        prop_assert_eq!(&json["opaqueLines"], &view["opaque"]);
    }
    // Strict mode fails exactly when lenient mode reports something, with the first error.
    let strict = scan_session(input, &ParseOptions::strict());
    match bytes.errors.first() {
        Some(e) => prop_assert_eq!(strict.err(), Some(e.error.clone())),
        None => prop_assert!(strict.is_ok()),
    }
    Ok(bytes)
}

fn base_session() -> String {
    let mut lines = vec![HEADER.to_string()];
    let mut parent: Option<String> = None;
    for i in 0..6 {
        let id = format!("e{i}");
        lines.push(msg(&id, parent.as_deref(), &format!("h\u{e9}llo {i} \"quoted\" \\ {{x}}")));
        parent = Some(id);
    }
    lines.push(r#"{"type":"custom","id":"c","parentId":"e5","data":{"deep":[[[1,2],{"k":null}]],"n":-1.5e3}}"#.into());
    lines.join("\n") + "\n"
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(prop::sample::Index, usize),
    Insert(prop::sample::Index, Vec<u8>),
    JoinLines(prop::sample::Index),
    DuplicateLine(prop::sample::Index),
    Truncate(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let bytes = prop::collection::vec(
        prop_oneof![
            Just(b'\n'),
            Just(b'{'),
            Just(b'}'),
            Just(b'"'),
            Just(b','),
            Just(b'\\'),
            Just(b'\r'),
            Just(b' '),
            Just(0xff),
            Just(0xc3),
            Just(b'1'),
            Just(b'['),
        ],
        1..4,
    );
    prop_oneof![
        (any::<prop::sample::Index>(), 1usize..6).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<prop::sample::Index>(), bytes).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::JoinLines),
        any::<prop::sample::Index>().prop_map(Mutation::DuplicateLine),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
    ]
}

fn apply(input: &mut Vec<u8>, m: &Mutation) {
    let newlines: Vec<usize> = input.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i).collect();
    match m {
        Mutation::Delete(at, n) if !input.is_empty() => {
            let a = at.index(input.len());
            input.drain(a..(a + n).min(input.len()));
        }
        Mutation::Insert(at, bytes) => {
            let a = at.index(input.len() + 1);
            input.splice(a..a, bytes.iter().copied());
        }
        Mutation::JoinLines(at) if !newlines.is_empty() => {
            input.remove(newlines[at.index(newlines.len())]);
        }
        Mutation::DuplicateLine(at) if !newlines.is_empty() => {
            let k = at.index(newlines.len());
            let start = if k == 0 { 0 } else { newlines[k - 1] + 1 };
            let line = input[start..=newlines[k]].to_vec();
            input.splice(start..start, line);
        }
        Mutation::Truncate(at) if !input.is_empty() => input.truncate(at.index(input.len())),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(400)))]

    #[test]
    fn load_paths_agree_on_mutated_sessions(mutations in prop::collection::vec(mutation(), 1..5)) {
        let mut input = base_session().into_bytes();
        for m in &mutations {
            apply(&mut input, m);
        }
        let raw = agree(&input)?;
        // Nothing is lost: unless glued records were split or the file was migrated, the
        // handle writes the input back (line ends as the first line's, invalid UTF-8 replaced).
        let glued = raw.errors.iter().any(|e| e.error.to_string().contains("two or more"));
        if !glued && !raw.migrated {
            let (tree, _) = SessionTree::from_bytes(input.clone(), &lenient()).expect("lenient");
            prop_assert_eq!(tree.to_jsonl(), normalized(&input));
            let value = parse_session_with_ids(&input, &lenient(), &mut counter()).expect("lenient");
            // The value path re-serializes the records (compact JSON): compare values line by line.
            let saved = value.to_jsonl();
            let again = parse_session(&saved, &lenient()).expect("lenient");
            prop_assert_eq!(&again.entries, &value.entries);
            prop_assert_eq!(&again.header, &value.header);
            prop_assert_eq!(again.opaque.iter().map(|o| &o.text).collect::<Vec<_>>(), value.opaque.iter().map(|o| &o.text).collect::<Vec<_>>());
        }
    }
}

#[test]
fn a_truncated_line_survives_load_and_save() {
    let truncated = &msg("b", Some("a"), "lost?")[..40];
    let text = format!("{HEADER}\n{}\n{truncated}\n{}\n", msg("a", None, "x"), msg("c", Some("a"), "y"));
    let (tree, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    assert_eq!(errors.iter().map(|e| (e.line, e.error.code())).collect::<Vec<_>>(), vec![(3, "E_PARSE")]);
    assert_eq!(tree.entry_count(), 2);
    assert_eq!(tree.to_jsonl(), text);
    let parsed = parse_session(&text, &lenient()).unwrap();
    assert_eq!(parsed.opaque.len(), 1);
    assert_eq!((parsed.opaque[0].line, parsed.opaque[0].position), (3, 2));
    assert_eq!(parsed.opaque[0].text, truncated);
    assert_eq!(parsed.to_jsonl(), text);
    assert_eq!(serialize_session_lines(parsed.header.as_ref(), &parsed.entries, &parsed.opaque), text);
}

#[test]
fn glued_records_are_split_into_entries_with_a_warning() {
    let text = format!("{HEADER}{}\n{}{}\n", msg("a", None, "x"), msg("b", Some("a"), "y"), msg("c", Some("b"), "z"));
    for (entries, errors) in [
        {
            let p = parse_session(&text, &lenient()).unwrap();
            (p.entries.iter().map(|e| e["id"].as_str().unwrap().to_string()).collect::<Vec<_>>(), p.errors)
        },
        {
            let (t, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
            ((0..t.entry_count()).map(|i| t.get_entry_at(i)).collect(), errors)
        },
    ] {
        assert_eq!(entries, ["a", "b", "c"]);
        assert_eq!(
            errors.iter().map(|e| (e.line, e.error.code())).collect::<Vec<_>>(),
            vec![(1, "E_PARSE"), (2, "E_PARSE")]
        );
        assert!(errors[0].error.to_string().contains("split into 2 entries"));
    }
    let (t, _) = SessionTree::from_jsonl(text, &lenient()).unwrap();
    assert_eq!(t.header().unwrap()["id"], "s1");
    assert_eq!(
        t.to_jsonl(),
        format!("{HEADER}\n{}\n{}\n{}\n", msg("a", None, "x"), msg("b", Some("a"), "y"), msg("c", Some("b"), "z"))
    );
}

trait IdAt {
    fn get_entry_at(&self, i: usize) -> String;
}
impl IdAt for SessionTree {
    fn get_entry_at(&self, i: usize) -> String {
        use session_compaction::entry::EntrySource;
        self.meta(i).id.clone().unwrap_or_default()
    }
}

#[test]
fn deep_nesting_and_huge_numbers_are_entries_on_every_path() {
    let deep = |d: usize, id: &str| {
        format!(r#"{{"type":"custom","id":"{id}","parentId":null,"data":{}0{}}}"#, "[".repeat(d), "]".repeat(d))
    };
    let big = r#"{"type":"custom","id":"big","parentId":null,"data":{"n":1e400,"m":-2e308}}"#;
    let text = format!("{HEADER}\n{}\n{}\n{big}\n{}\n", deep(128, "d128"), deep(400, "d400"), deep(5000, "d5000"));
    let (tree, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tree.entry_count(), 4);
    assert_eq!(tree.to_jsonl(), text, "kept as written");
    let (bytes_tree, _) = SessionTree::from_bytes(text.clone().into_bytes(), &lenient()).unwrap();
    assert_eq!(bytes_tree.to_jsonl(), text);
    let raw = scan_session_str(&text, &lenient()).unwrap();
    let json = parsed_session_json(&raw, text.as_bytes());
    assert!(json.contains("1e400") && json.contains(&deep(5000, "d5000")), "spliced as written");
    // The value path holds values: depth up to 512 levels, huge numbers as JavaScript writes them.
    let p = parse_session(&text, &lenient()).unwrap();
    assert_eq!(p.entries.len(), 3);
    assert_eq!(p.entries[2]["data"], json!({"n": null, "m": null}));
    assert_eq!(p.opaque.len(), 1, "only the 5000-deep line is beyond a value");
    assert!(p.errors[0].error.to_string().contains("deeper than 512"));
}

#[test]
fn invalid_utf8_is_replaced_on_every_path() {
    let mut bytes = format!("{HEADER}\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"custom\",\"id\":\"u\",\"parentId\":null,\"t\":\"a\xffb\xc3\"}\n");
    let (tree, errors) = SessionTree::from_bytes(bytes.clone(), &lenient()).unwrap();
    assert!(errors.is_empty());
    assert_eq!(tree.get_entry("u").unwrap()["t"], "a\u{fffd}b\u{fffd}");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (str_tree, _) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    assert_eq!(tree.to_jsonl(), str_tree.to_jsonl());
    assert_eq!(tree.to_jsonl(), text);
}
