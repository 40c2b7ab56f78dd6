//! The leaf of a loaded session is a node of the tree (SPEC §13.12): records after the last
//! entry that has an id — a JSON value that is not an object, an entry without an id, a second
//! `session` header — are kept and saved, but the context and the next append continue from the
//! last real entry; and `append_entry` refuses a `session` record.

use serde_json::json;
use session_compaction::io::ParseOptions;
use session_compaction::session::SessionTree;

const BASE: &str = concat!(
    r#"{"type":"session","id":"s1","timestamp":"t","version":3}"#,
    "\n",
    r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hello"}}"#,
    "\n",
    r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"again"}}"#,
    "\n",
);

fn load(last: &str) -> SessionTree {
    let text = format!("{BASE}{last}\n");
    let (tree, _) = SessionTree::from_jsonl(text.clone(), &ParseOptions::lenient()).expect("loads");
    let (same, _) = SessionTree::from_bytes(text.into_bytes(), &ParseOptions::lenient()).expect("loads");
    assert_eq!(tree.leaf_id(), same.leaf_id(), "both load paths agree");
    tree
}

#[test]
fn records_that_are_no_node_after_the_last_entry_are_not_the_leaf() {
    for last in [
        "null",
        "42",
        r#""text""#,
        "[1]",
        r#"{"type":"custom","parentId":"b","timestamp":"t"}"#,
        r#"{"type":"session","id":"s2","timestamp":"t","version":3}"#,
        r#"{"type":"session","id":"s2","parentId":"b","timestamp":"t","version":3}"#,
    ] {
        let mut tree = load(last);
        assert_eq!(tree.leaf_id(), Some("b"), "{last}");
        assert_eq!(tree.build_session_context().messages.len(), 2, "{last}: the context is kept");
        let entry = tree.append_message(json!({"role": "user", "content": "next"}), 0.0).expect(last);
        assert_eq!(entry["parentId"], "b", "{last}: the next message continues the branch");
        assert_eq!(tree.build_session_context().messages.len(), 3, "{last}");
        // The record is still saved in its place.
        assert!(tree.to_jsonl().contains(last), "{last}");
    }
}

#[test]
fn the_last_entry_with_an_id_stays_the_leaf() {
    // Entries of known and unknown types, a `message` without a message: nodes, so leaves.
    for (last, id) in [
        (r#"{"id":"x","parentId":"b"}"#, "x"),
        (r#"{"type":"message","id":"c","parentId":"b","timestamp":"t","message":null}"#, "c"),
        (r#"{"type":"label","id":"l","parentId":"b","timestamp":"t","targetId":"a","label":"L"}"#, "l"),
    ] {
        assert_eq!(load(last).leaf_id(), Some(id), "{last}");
    }
    assert_eq!(load("not json").leaf_id(), Some("b"));
}

#[test]
fn append_entry_refuses_a_session_header() {
    let mut tree = load("");
    let err = tree
        .append_entry(json!({"type": "session", "id": "h2", "timestamp": "t", "version": 3}))
        .expect_err("a header is not an entry");
    assert_eq!(err.code(), "E_INVALID_ARGUMENT");
    assert!(err.to_string().contains("entry h2"), "{err}");
    assert_eq!(tree.leaf_id(), Some("b"));
    assert_eq!(tree.entry_count(), 2);
    tree.append_message(json!({"role": "user", "content": "next"}), 0.0).expect("still usable");
}
