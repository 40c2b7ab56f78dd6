//! Inputs of pathological shapes load in time and memory linear in their size, never panic, and
//! save back byte for byte: runs of opaque lines are one span, bad lines are listed up to
//! `MAX_LISTED_ERRORS`, deep nesting is a per-line error or a kept record (SPEC §1, §13.3).

use serde_json::{json, Value};
use session_compaction::io::{parse_session, parsed_session_json, scan_session, ParseOptions, MAX_LISTED_ERRORS};
use session_compaction::session::SessionTree;

const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":""}"#;

fn lenient() -> ParseOptions {
    ParseOptions::lenient()
}

fn entry(id: &str, parent: Option<&str>) -> String {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2024-01-01T00:00:01.000Z",
           "message":{"role":"user","content":"hi","timestamp":1}})
    .to_string()
}

#[test]
fn a_run_of_blank_lines_is_one_span_and_saves_exactly() {
    let n = 200_000;
    let text = format!("{HEADER}\n{}{}\n{}", "\n".repeat(n), entry("a", None), "  \n\t\n".repeat(3));
    let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
    assert!(raw.errors.is_empty(), "{:?}", raw.errors);
    let runs: Vec<(usize, usize, usize)> = raw.opaque.iter().map(|o| (o.line, o.position, o.count)).collect();
    assert_eq!(runs, vec![(2, 1, n), (n + 3, 2, 6)]);
    // Expanded per line where lines are listed.
    let lines: Vec<(usize, &str)> = raw.opaque[1].lines(text.as_bytes()).collect();
    assert_eq!(lines, vec![(n + 3, "  "), (n + 4, "\t"), (n + 5, "  "), (n + 6, "\t"), (n + 7, "  "), (n + 8, "\t")]);
    let (tree, errors) = SessionTree::from_bytes(text.clone().into_bytes(), &lenient()).unwrap();
    assert!(errors.is_empty());
    assert_eq!(tree.entry_count(), 1);
    assert_eq!(tree.to_jsonl(), text);
    assert_eq!(tree.opaque_lines().count(), n + 6);
    assert_eq!(tree.opaque_lines().nth(n), Some((2, n + 3, "  ")));
}

#[test]
fn a_blank_line_with_spaces_then_empty_lines_is_one_run() {
    let text = format!("{HEADER}\n \t\r\n\n\n{}\n\n", entry("a", None));
    let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
    let runs: Vec<(usize, usize, usize)> = raw.opaque.iter().map(|o| (o.line, o.position, o.count)).collect();
    assert_eq!(runs, vec![(2, 1, 3), (6, 2, 1)]);
    let lines: Vec<(usize, &str)> = raw.opaque[0].lines(text.as_bytes()).collect();
    assert_eq!(lines, vec![(2, " \t"), (3, ""), (4, "")]);
    assert_eq!(raw.entries[0].raw.line, 5);
    let (tree, _) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    assert_eq!(tree.to_jsonl(), text.replace("\r\n", "\n"));
}

#[test]
fn a_header_then_a_million_blank_lines_stays_usable() {
    let n = 1_000_000;
    let text = format!("{HEADER}\n{}", "\n".repeat(n));
    let (mut tree, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    assert!(errors.is_empty());
    assert_eq!(tree.entry_count(), 0);
    tree.append_entry(serde_json::from_str(&entry("b", None)).unwrap()).unwrap();
    let saved = tree.to_jsonl();
    assert_eq!(saved, format!("{text}{}\n", entry("b", None)));
    let (again, _) = SessionTree::from_jsonl(saved.clone(), &lenient()).unwrap();
    assert_eq!(again.entry_count(), 1);
    assert_eq!(again.to_jsonl(), saved);
}

#[test]
fn crlf_runs_are_split_per_line_and_saved_with_crlf() {
    let text = format!("{HEADER}\r\n\r\n x \r\r\n\r\n{}\r\n", entry("a", None));
    let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
    assert_eq!(raw.opaque.len(), 1);
    assert_eq!(raw.opaque[0].count, 3);
    let lines: Vec<(usize, &str)> = raw.opaque[0].lines(text.as_bytes()).collect();
    assert_eq!(lines, vec![(2, ""), (3, " x "), (4, "")]);
    assert_eq!(raw.errors.iter().map(|e| (e.line, e.error.code())).collect::<Vec<_>>(), vec![(3, "E_PARSE")]);
    let (tree, _) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    // The first line ends with CRLF: every line is saved with CRLF (a run of `\r` before a `\n`
    // is one line end).
    assert_eq!(tree.to_jsonl(), text.replace("\r\r\n", "\r\n"));
    // The value path says the same line by line.
    let p = parse_session(&text, &lenient()).unwrap();
    let want: Vec<(usize, usize, &str)> = p.opaque.iter().map(|o| (o.line, o.position, o.text.as_str())).collect();
    assert_eq!(want, vec![(2, 1, ""), (3, 1, " x "), (4, 1, "")]);
}

#[test]
fn a_crlf_file_is_saved_with_crlf_and_an_lf_file_with_lf() {
    use session_compaction::io::LineEnd;
    assert_eq!(LineEnd::of(b"{}\r\n{}\n"), LineEnd::CrLf);
    assert_eq!(LineEnd::of(b"{}\r\r\n"), LineEnd::CrLf);
    assert_eq!(LineEnd::of(b"{}\n{}\r\n"), LineEnd::Lf);
    assert_eq!(LineEnd::of(b"\r{}"), LineEnd::Lf);
    assert_eq!(LineEnd::of(b"\n"), LineEnd::Lf);
    assert_eq!(LineEnd::of(b""), LineEnd::Lf);
    // A clean CRLF file (a Windows checkout) saves byte for byte; appended lines end as its own do.
    let text = format!("{HEADER}\r\n{}\r\n\r\n{}\r\n", entry("a", None), entry("b", Some("a")));
    for (mut tree, how) in [
        (SessionTree::from_bytes(text.clone().into_bytes(), &lenient()).unwrap().0, "bytes"),
        (SessionTree::from_jsonl(text.clone(), &lenient()).unwrap().0, "text"),
    ] {
        assert_eq!(tree.to_jsonl(), text, "{how}");
        tree.append_entry(serde_json::from_str(&entry("c", Some("b"))).unwrap()).unwrap();
        assert_eq!(tree.to_jsonl(), format!("{text}{}\r\n", entry("c", Some("b"))), "{how}");
    }
    // Runs of blank and malformed lines ended by LF alone inside a CRLF file follow the rule too.
    for (input, saved) in [
        (format!("{HEADER}\r\n\n\n{}\r\n", entry("a", None)), format!("{HEADER}\r\n\r\n\r\n{}\r\n", entry("a", None))),
        (
            format!("{HEADER}\r\nbad1\nbad2\n{}\r\n", entry("a", None)),
            format!("{HEADER}\r\nbad1\r\nbad2\r\n{}\r\n", entry("a", None)),
        ),
    ] {
        let (tree, _) = SessionTree::from_bytes(input.into_bytes(), &lenient()).unwrap();
        assert_eq!(tree.to_jsonl(), saved);
    }
    // The first line decides: a file that begins with LF is saved with LF throughout.
    let mixed = format!("{HEADER}\n{}\r\n", entry("a", None));
    let (tree, _) = SessionTree::from_bytes(mixed.clone().into_bytes(), &lenient()).unwrap();
    assert_eq!(tree.to_jsonl(), mixed.replace("\r\n", "\n"));
    // A session built from values has no file: LF.
    let built = SessionTree::from_values(None, &[serde_json::from_str(&entry("a", None)).unwrap()]);
    assert_eq!(built.to_jsonl(), format!("{}\n", entry("a", None)));
}

#[test]
fn a_value_nested_deep_where_the_metadata_does_not_read_keeps_the_entry_whole() {
    use session_compaction::entry::EntrySource;
    use session_compaction::prompt::templates::PromptTemplates;
    let user = |extra: &str, entry_extra: &str| {
        format!(
            r#"{{"type":"message","id":"c","parentId":"b","timestamp":"t"{entry_extra},"message":{{"role":"user","content":"second question","timestamp":1{extra}}}}}"#
        )
    };
    let session = |line: &str| {
        let reply = r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"answer"}],"stopReason":"stop","timestamp":1}}"#;
        format!("{HEADER}\n{}\n{reply}\n{line}\n", entry("a", None))
    };
    let (plain, _) = SessionTree::from_jsonl(session(&user("", "")), &lenient()).unwrap();
    for depth in [150usize, 600, 100_000] {
        let deep = format!("{}0{}", r#"[{"k":"#.repeat(depth / 2), "}]".repeat(depth / 2));
        for line in [user(&format!(r#","details":{deep}"#), ""), user("", &format!(r#","data":{deep}"#))] {
            let (tree, errors) = SessionTree::from_jsonl(session(&line), &lenient()).unwrap();
            assert!(errors.is_empty(), "{depth}: {errors:?}");
            assert_eq!(tree.entry_count(), 3, "{depth}");
            // The metadata is the one of the same message without the deep value: its role, its size.
            let (m, p) = (tree.meta(2).message.as_ref().unwrap(), plain.meta(2).message.as_ref().unwrap());
            assert_eq!(
                (m.role, tree.meta(2).message_of_tokens()),
                (p.role, plain.meta(2).message_of_tokens()),
                "{depth}"
            );
            // So the model is sent it (it was left out as a message of no known role).
            let (plan, repairs) = tree.llm_messages(&PromptTemplates::default()).unwrap();
            assert_eq!((plan.len(), repairs.len()), (3, 0), "{depth}");
            // The context's last message is the stored one, byte for byte.
            let message = &line[line.find(r#""message":"#).unwrap() + 10..line.len() - 1];
            assert!(tree.build_session_context_json().ends_with(&format!(",{message}]")), "{depth}");
        }
    }
    // Read whole, such a record is converted where a value is needed, and kept where none can be
    // built: a v2 hook message is migrated through its value, a deep one stays as written.
    let deep = format!("{}0{}", "[".repeat(600), "]".repeat(600));
    let v2 = HEADER.replace(r#""version":3"#, r#""version":2"#);
    let hook = format!(
        r#"{{"type":"message","id":"h","parentId":null,"timestamp":"t","message":{{"role":"hookMessage","customType":"x","content":"hello","display":true,"details":{deep},"timestamp":1}}}}"#
    );
    let (tree, errors) = SessionTree::from_jsonl(format!("{v2}\n{hook}\n"), &lenient()).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tree.entry_count(), 1);
    assert_eq!(tree.to_jsonl().lines().nth(1), Some(hook.as_str()), "kept whole, not null");
    // A tool result that deep, with `content` twice (so it cannot be spliced), is not pruned: its
    // line stays whole (it was written as `null`), and the prune reports only what it changed.
    let big = "out ".repeat(5000);
    let call = r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{}},{"type":"toolCall","id":"t2","name":"bash","arguments":{}}],"stopReason":"toolUse","timestamp":1}}"#;
    let result = |id: &str, parent: &str, call: &str, extra: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"t","message":{{"role":"toolResult","toolCallId":"{call}","toolName":"bash","content":[{{"type":"text","text":"{big}"}}]{extra},"isError":false,"timestamp":1}}}}"#
        )
    };
    let stuck = result("c", "b", "t1", &format!(r#","content":[{{"type":"text","text":"{big}"}}],"details":{deep}"#));
    let fine = result("d", "c", "t2", "");
    let text = format!("{HEADER}\n{}\n{call}\n{stuck}\n{fine}\n{}\n", entry("a", None), entry("e", Some("d")));
    let (mut tree, errors) = SessionTree::from_jsonl(text, &lenient()).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let config = session_compaction::plan::prune::PruneConfig {
        protect_tokens: 0,
        minimum_savings: 0,
        protected_tools: vec![],
        staleness: false,
    };
    let planned: Vec<usize> = tree.plan_prune(&config).candidates.iter().map(|c| c.index).collect();
    assert_eq!(planned, vec![3, 2]);
    let (plan, lines) = tree.prune_tool_outputs(&config, 1.7e12);
    assert_eq!(plan.candidates.iter().map(|c| c.index).collect::<Vec<_>>(), vec![3]);
    assert_eq!(plan.tokens_saved, plan.candidates[0].savings);
    assert_eq!(lines.len(), 1);
    let saved = tree.to_jsonl();
    assert_eq!(saved.lines().nth(3), Some(stuck.as_str()), "kept whole, not null");
    assert!(saved.lines().nth(4).unwrap().contains("prunedAt"));
    // Broken nesting stays a malformed line, kept as written.
    for bad in [r#"[{"k":[}]"#, r#"[[[[[[["#, r#"{"k":{"k":1,}}"#, r#"[{"k" 1}]"#, r#"[1,]"#] {
        let line = user(&format!(r#","details":{bad}"#), "");
        let (tree, errors) = SessionTree::from_jsonl(session(&line), &lenient()).unwrap();
        assert_eq!(tree.entry_count(), 2, "{bad}");
        assert_eq!(errors.iter().map(|e| (e.line, e.error.code())).collect::<Vec<_>>(), vec![(4, "E_PARSE")], "{bad}");
        assert_eq!(tree.to_jsonl(), session(&line), "{bad}");
    }
}

#[test]
fn an_input_that_is_not_a_session_is_one_run() {
    for line in ["{}", "[]", "\"x\"", "1", ""] {
        let n = 50_000;
        let text = format!("{line}\n").repeat(n);
        let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
        assert!(raw.entries.is_empty() && raw.header.is_none(), "{line}");
        let runs: Vec<(usize, usize, usize)> = raw.opaque.iter().map(|o| (o.line, o.position, o.count)).collect();
        assert_eq!(runs, vec![(1, 0, n)], "{line}");
        assert_eq!(raw.errors.iter().map(|e| e.error.code()).collect::<Vec<_>>(), vec!["E_HEADER"], "{line}");
        let (tree, _) = SessionTree::from_bytes(text.clone().into_bytes(), &lenient()).unwrap();
        assert_eq!(tree.to_jsonl(), text, "{line}");
        // parseSession lists every line.
        let json: Value = serde_json::from_str(&parsed_session_json(&raw, text.as_bytes())).unwrap();
        let opaque = json["opaqueLines"].as_array().unwrap();
        assert_eq!(opaque.len(), n, "{line}");
        assert_eq!(opaque[n - 1], json!({"line": n, "position": 0, "text": line}));
    }
    // Without a final line end, the last line is still one of the run.
    let raw = scan_session(b"1\n2\n\r\n3", &lenient()).unwrap();
    assert_eq!((raw.opaque[0].count, raw.opaque[0].range.clone()), (4, 0..7));
    let lines: Vec<(usize, &str)> = raw.opaque[0].lines(b"1\n2\n\r\n3").collect();
    assert_eq!(lines, vec![(1, "1"), (2, "2"), (3, ""), (4, "3")]);
}

#[test]
fn millions_of_bad_lines_are_listed_up_to_the_bound() {
    let extra = 7;
    let n = MAX_LISTED_ERRORS + extra;
    let text = format!("{HEADER}\n{}", "x\n".repeat(n));
    let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
    assert_eq!(raw.opaque.len(), 1);
    assert_eq!(raw.errors.len(), MAX_LISTED_ERRORS + 1);
    assert!(raw.errors[..MAX_LISTED_ERRORS].iter().enumerate().all(|(k, e)| e.line == k + 2));
    assert!(raw.errors[0].to_string().contains("malformed JSON"), "{}", raw.errors[0]);
    let last = raw.errors.last().unwrap();
    assert_eq!((last.line, last.error.code()), (MAX_LISTED_ERRORS + 2, "E_PARSE"));
    assert!(last.to_string().contains(&format!("{extra} more bad lines")), "{last}");
    // The value path lists the same.
    let p = parse_session(&text, &lenient()).unwrap();
    assert_eq!(p.errors, raw.errors);
    assert_eq!(p.opaque.len(), n);
    // Strict mode: the first bad line.
    let strict = scan_session(text.as_bytes(), &ParseOptions::strict()).unwrap_err();
    assert_eq!(strict.to_string(), raw.errors[0].to_string());
    let (tree, errors) = SessionTree::from_bytes(text.clone().into_bytes(), &lenient()).unwrap();
    assert_eq!(errors, raw.errors);
    assert_eq!(tree.to_jsonl(), text);
}

#[test]
fn entries_without_ids_are_listed_up_to_the_bound_with_the_lowest_lines() {
    // Missing-field errors (found after the scan) and parse errors (found by it) merge by line.
    let n = MAX_LISTED_ERRORS + 3;
    let mut text = format!("{HEADER}\n{}", "{}\n".repeat(n));
    text.push_str("bad\n");
    let raw = scan_session(text.as_bytes(), &lenient()).unwrap();
    assert_eq!(raw.entries.len(), n);
    assert_eq!(raw.errors.len(), MAX_LISTED_ERRORS + 1);
    assert!(raw.errors[..MAX_LISTED_ERRORS].iter().all(|e| e.error.code() == "E_MISSING_FIELD"));
    assert_eq!(raw.errors[MAX_LISTED_ERRORS - 1].line, MAX_LISTED_ERRORS + 1);
    let last = raw.errors.last().unwrap();
    assert_eq!(last.line, MAX_LISTED_ERRORS + 2);
    assert!(last.to_string().contains("4 more bad lines"), "{last}");
}

#[test]
fn deep_nesting_is_a_line_error_or_a_kept_record() {
    let d = 1_000_000;
    // Unclosed: a malformed line with its number, no stack overflow on either path.
    let open = format!("{HEADER}\n{}\n{}\n", "[".repeat(d), entry("a", None));
    let raw = scan_session(open.as_bytes(), &lenient()).unwrap();
    assert_eq!(raw.errors.iter().map(|e| (e.line, e.error.code())).collect::<Vec<_>>(), vec![(2, "E_PARSE")]);
    assert_eq!(raw.entries.len(), 1);
    let p = parse_session(&open, &lenient()).unwrap();
    assert_eq!(p.errors, raw.errors);
    let (tree, _) = SessionTree::from_jsonl(open.clone(), &lenient()).unwrap();
    assert_eq!(tree.to_jsonl(), open);
    // Closed, inside an entry's message: the handle keeps the record; the value path cannot
    // build it and keeps the line as written, saying why.
    let message = format!("{}1{}", "[".repeat(d), "]".repeat(d));
    let deep = format!(
        "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{{\"role\":\"user\",\"content\":{message}}}}}\n"
    );
    let (tree, errors) = SessionTree::from_jsonl(deep.clone(), &lenient()).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tree.entry_count(), 1);
    assert_eq!(tree.to_jsonl(), deep);
    let p = parse_session(&deep, &lenient()).unwrap();
    assert_eq!(p.errors.iter().map(|e| (e.line, e.error.code())).collect::<Vec<_>>(), vec![(2, "E_PARSE")]);
    assert!(p.errors[0].to_string().contains("nested deeper than 512"), "{}", p.errors[0]);
}

#[test]
fn one_huge_line_loads() {
    let text = format!(
        "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}\n",
        "a".repeat(20_000_000)
    );
    let (tree, errors) = SessionTree::from_jsonl(text.clone(), &lenient()).unwrap();
    assert!(errors.is_empty());
    assert_eq!(tree.entry_count(), 1);
    assert_eq!(tree.to_jsonl(), text);
}
