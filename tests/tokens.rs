//! Token counting the host controls (issue 11, SPEC §3): the text each estimate counts is the
//! text of the chars/4 rule (checked on every entry of the real sessions and the conformance
//! sessions), a native [`TokenCounter`] moves cut points and thresholds, and a counter equal to
//! chars/4 changes nothing.

use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::io::{parse_session, ParseOptions};
use session_compaction::plan::cut_point::find_cut_point;
use session_compaction::plan::overflow::estimate_context_tokens;
use session_compaction::plan::prepare::{prepare_compaction, CompactionSettings};
use session_compaction::plan::tokens::{entry_texts, CharsPerFour, Recounted, TokenCounter};
use session_compaction::summarize::preview::compaction_previews;
use std::path::PathBuf;

fn sessions() -> Vec<(String, Vec<serde_json::Value>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("examples/sessions"))
        .unwrap()
        .chain(std::fs::read_dir(root.join("tests/conformance/sessions")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let parsed = parse_session(&text, &ParseOptions::default()).unwrap();
            (p.display().to_string(), parsed.entries)
        })
        .collect()
}

#[test]
fn the_counted_texts_are_what_chars_over_four_counts() {
    let mut entries_seen = 0;
    for (name, entries) in sessions() {
        let list = EntryList::new(&entries);
        let texts = entry_texts(&list);
        for (i, t) in texts.iter().enumerate() {
            let tokens = t.tokens(&CharsPerFour);
            let meta = list.meta(i);
            match meta.kind {
                session_compaction::entry::EntryKind::Message => {
                    assert_eq!(tokens, meta.message_tokens(), "{name} entry {i}")
                }
                session_compaction::entry::EntryKind::BranchSummary
                | session_compaction::entry::EntryKind::Compaction => {
                    assert_eq!(tokens, list.summary_tokens(i), "{name} entry {i}")
                }
                _ => assert_eq!(tokens, 0, "{name} entry {i}"),
            }
            entries_seen += 1;
        }
    }
    assert!(entries_seen > 3000, "{entries_seen} entries checked");
}

#[test]
fn a_counter_equal_to_chars_over_four_changes_nothing() {
    let templates = session_compaction::prompt::templates::PromptTemplates::default();
    let settings = CompactionSettings { keep_recent_tokens: 3000, ..CompactionSettings::default() };
    for (name, entries) in sessions() {
        let list = EntryList::new(&entries);
        let same = Recounted::with_counter(&list, &CharsPerFour);
        assert_eq!(prepare_compaction(&same, &settings), prepare_compaction(&list, &settings), "{name}");
        assert_eq!(find_cut_point(&same, 0, list.len(), 2000), find_cut_point(&list, 0, list.len(), 2000), "{name}");
        assert_eq!(estimate_context_tokens(&same), estimate_context_tokens(&list), "{name}");
        let prune = session_compaction::plan::prune::PruneConfig::default();
        assert_eq!(
            compaction_previews(&same, &settings, &prune, &templates).unwrap(),
            compaction_previews(&list, &settings, &prune, &templates).unwrap(),
            "{name}"
        );
    }
}

/// A native tokenizer: one token per whitespace-separated word.
struct Words;

impl TokenCounter for Words {
    fn count_tokens(&self, text: &str) -> u64 {
        text.split_whitespace().count() as u64
    }
}

#[test]
fn a_native_counter_moves_the_cut_point() {
    // Ten messages: the old ones of many short words (many tokens, few chars per token for
    // Words), the last four of long words.
    let entries: Vec<serde_json::Value> = (0..10)
        .map(|i| {
            let text = if i < 6 { "a ".repeat(200) } else { format!("{} ", "b".repeat(39)).repeat(10) };
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            let message = if role == "user" {
                serde_json::json!({"role": "user", "content": text})
            } else {
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"})
            };
            let parent = if i == 0 { serde_json::Value::Null } else { serde_json::json!(format!("e{}", i - 1)) };
            serde_json::json!({"type": "message", "id": format!("e{i}"), "parentId": parent, "message": message})
        })
        .collect();
    let list = EntryList::new(&entries);
    // chars/4: every message is 100 tokens; Words: 200 for the old ones, 10 for the last four.
    assert_eq!(list.meta(0).message_tokens(), 100);
    let words = Recounted::with_counter(&list, &Words);
    assert_eq!((words.meta(0).message_tokens(), words.meta(9).message_tokens()), (200, 10));
    let settings = CompactionSettings { keep_recent_tokens: 240, ..CompactionSettings::default() };
    // chars/4 keeps the last three messages (300 ≥ 240); Words keeps the four short ones and
    // one old message (40 + 200 ≥ 240).
    assert_eq!(prepare_compaction(&list, &settings).unwrap().first_kept_entry_id, "e7");
    assert_eq!(prepare_compaction(&words, &settings).unwrap().first_kept_entry_id, "e5");
    assert_eq!(estimate_context_tokens(&words), 6.0 * 200.0 + 4.0 * 10.0);
}

/// A branch of 12 messages of 400 chars (100 tokens by chars/4), ids `e0` … `e11`.
fn long_branch() -> session_compaction::session::SessionTree {
    let mut s = session_compaction::session::SessionTree::new(None);
    let mut parent: Option<String> = None;
    for i in 0..12 {
        let text = format!("m{i} ").chars().chain(std::iter::repeat('x')).take(400).collect::<String>();
        let message = if i % 2 == 0 {
            serde_json::json!({"role": "user", "content": text, "timestamp": i})
        } else {
            serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop", "timestamp": i})
        };
        let id = format!("e{i}");
        s.append_entry(serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": message}))
            .unwrap();
        parent = Some(id);
    }
    s
}

/// Ten times chars/4.
fn tenfold(text: &str) -> u64 {
    10 * CharsPerFour.count_tokens(text)
}

#[test]
fn the_engine_compacts_with_the_hosts_counter() {
    use session_compaction::session::engine::SessionEngine;
    use session_compaction::summarize::extractive::ExtractiveSummarizer;
    let model = ExtractiveSummarizer::default();
    // chars/4: 1,200 tokens all fit in the 2,500 kept, nothing to compact.
    let engine = SessionEngine::new(long_branch());
    let plain = futures_executor::block_on(engine.compaction(&model).keep_recent_tokens(2500).now_ms(0.0).run());
    assert_eq!(plain.unwrap_err().code(), "E_NOTHING_TO_COMPACT");
    // Counted tenfold: 12,000 tokens, the last three messages (3,000 ≥ 2,500) are kept.
    let engine = SessionEngine::new(long_branch());
    let done = futures_executor::block_on(
        engine.compaction(&model).keep_recent_tokens(2500).count_tokens(tenfold).now_ms(0.0).run(),
    )
    .unwrap();
    assert_eq!(done.entry["firstKeptEntryId"], "e9");
    assert_eq!(done.result.context_tokens_before, Some(12_000.0));
    assert!(done.result.context_tokens_after.unwrap() < 12_000.0);
}

#[test]
fn the_automatic_check_uses_the_hosts_counter_for_the_threshold() {
    use session_compaction::plan::prepare::CompactionSettings;
    use session_compaction::session::engine::SessionEngine;
    use session_compaction::summarize::extractive::ExtractiveSummarizer;
    let models = [ExtractiveSummarizer::default()];
    let last = serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop", "timestamp": 11});
    let settings = CompactionSettings { reserve_tokens: 2000, keep_recent_tokens: 2500, ..Default::default() };
    // 1,200 by chars/4 is below the 8,000 threshold of a 10,000 window.
    let engine = SessionEngine::new(long_branch());
    let out =
        futures_executor::block_on(engine.auto_compaction(&last, 10_000.0, &models).settings(settings.clone()).run())
            .unwrap();
    assert_eq!(out.context_tokens, 1200.0);
    assert!(out.compaction.is_none());
    // 12,000 counted tenfold is above it: a threshold compaction keeping e9 … e11.
    let engine = SessionEngine::new(long_branch());
    let out = futures_executor::block_on(
        engine.auto_compaction(&last, 10_000.0, &models).settings(settings).count_tokens(tenfold).run(),
    )
    .unwrap();
    assert_eq!(out.context_tokens, 12_000.0);
    assert_eq!(out.compaction.expect("compacted").entry["firstKeptEntryId"], "e9");
}
