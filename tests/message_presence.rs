//! Which `message` entries have a message (SPEC §2): a `message` field that is absent or `null`
//! gives none, and of duplicate `message` keys the last one counts (as `JSON.parse` reads the
//! line). The same on every path: the session handle loaded from text (its context, its JSON
//! context, its model messages, its compaction) and the functions over parsed values.

use serde_json::{json, Value};
use session_compaction::context::{build_session_context, LeafSelector};
use session_compaction::entry::EntryList;
use session_compaction::io::parse_session;
use session_compaction::plan::prepare::CompactionSettings;
use session_compaction::prompt::templates::PromptTemplates;
use session_compaction::session::SessionTree;

const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;

/// A `message` entry line `id` (child of `parent`) whose text after the head is `rest`.
fn line(id: &str, parent: Option<&str>, rest: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:0{}.000Z"{rest}}}"#,
        id.len()
    )
}

fn user(text: &str) -> String {
    format!(r#"{{"role":"user","content":"{text}","timestamp":1}}"#)
}

/// The session: `first`, then one line per `rests` entry (a chain), then `last`.
fn session(rests: &[&str]) -> String {
    let mut lines = vec![HEADER.to_string(), line("a", None, &format!(r#","message":{}"#, user("first")))];
    let mut parent = "a".to_string();
    for (k, rest) in rests.iter().enumerate() {
        let id = format!("m{k}");
        lines.push(line(&id, Some(&parent), rest));
        parent = id;
    }
    lines.push(line("z", Some(&parent), &format!(r#","message":{}"#, user("last"))));
    lines.join("\n") + "\n"
}

/// The contents of the user messages of `messages`.
fn contents(messages: &[Value]) -> Vec<String> {
    messages.iter().map(|m| m["content"].as_str().map_or_else(|| m["content"].to_string(), str::to_string)).collect()
}

/// Every path's context of `text`, as message contents: handle, handle JSON, handle model
/// messages, value path.
fn every_context(text: &str) -> [Vec<String>; 4] {
    let (tree, errors) = SessionTree::from_jsonl(text.to_string(), &Default::default()).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let handle = contents(&tree.build_session_context().messages);
    let json: Vec<Value> = serde_json::from_str(&tree.build_session_context_json()).unwrap();
    let (llm, repairs) = tree.build_llm_messages(&PromptTemplates::default()).unwrap();
    assert!(repairs.is_empty(), "{repairs:?}");
    let parsed = parse_session(text, &Default::default()).unwrap();
    let values = build_session_context(&EntryList::new(&parsed.entries), &LeafSelector::Last);
    [handle, contents(&json), contents(&llm), contents(&values.messages)]
}

#[test]
fn an_absent_or_null_message_gives_no_message_on_any_path() {
    for rest in ["", r#","message":null"#, r#","message": null "#] {
        let text = session(&[rest]);
        for (path, got) in every_context(&text).iter().enumerate() {
            assert_eq!(got, &["first", "last"], "path {path}, entry text {rest:?}");
        }
    }
}

#[test]
fn of_duplicate_message_keys_the_last_counts_on_every_path() {
    let cases = [
        (format!(r#","message":{},"message":{}"#, user("one"), user("two")), "two"),
        // An escaped spelling of the key is the same key.
        (format!(r#","message":{},"mess\u0061ge":{}"#, user("one"), user("two")), "two"),
        // A later `null` takes the message away.
        (format!(r#","message":{},"message":null"#, user("one")), ""),
        (format!(r#","message":null,"message":{}"#, user("two")), "two"),
    ];
    for (rest, want) in &cases {
        let text = session(&[rest]);
        let expected: Vec<&str> = ["first", want, "last"].into_iter().filter(|s| !s.is_empty()).collect();
        for (path, got) in every_context(&text).iter().enumerate() {
            assert_eq!(got, &expected, "path {path}, entry text {rest}");
        }
    }
}

#[test]
fn a_compaction_summarizes_only_the_messages_there_are() {
    // Enough text before the kept part that there is something to summarize.
    let long = "x".repeat(4000);
    let rests = [
        format!(r#","message":{}"#, user(&long)),
        r#","message":null"#.to_string(),
        format!(r#","message":{},"message":{}"#, user("one"), user(&long)),
        format!(r#","message":{}"#, user(&long)),
    ];
    let rests: Vec<&str> = rests.iter().map(String::as_str).collect();
    let text = session(&rests);
    let (tree, _) = SessionTree::from_jsonl(text.clone(), &Default::default()).unwrap();
    let settings = CompactionSettings { keep_recent_tokens: 10, ..Default::default() };
    let prep = tree.prepare_compaction(&settings).expect("something to summarize");
    let summarized: Vec<Value> = prep.messages_to_summarize.iter().map(|m| json!(m["content"])).collect();
    // The null entry gives nothing; the duplicate gives its last message.
    assert!(!summarized.iter().any(Value::is_null), "{summarized:?}");
    assert!(!summarized.contains(&json!("one")), "{summarized:?}");
    assert!(summarized.contains(&json!(long)), "{summarized:?}");
}
