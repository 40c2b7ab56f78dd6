//! Arbitrary bytes through load → validate → prepare → context → prune → save, on both the
//! value path (pure functions) and the raw path (session handle). Any panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use session_compaction::context::{build_session_context, LeafSelector};
use session_compaction::entry::EntrySource;
use session_compaction::io::{parse_session_bytes, ParseOptions};
use session_compaction::plan::prepare::{prepare_compaction, CompactionSettings};
use session_compaction::plan::prune::{prune_tool_outputs, PruneConfig};
use session_compaction::session::SessionTree;

fuzz_target!(|data: &[u8]| {
    let small = CompactionSettings { keep_recent_tokens: 3, ..Default::default() };
    let prune =
        PruneConfig { protect_tokens: 2, minimum_savings: 0, protected_tools: vec!["read".into()], staleness: true };
    if let Ok(parsed) = parse_session_bytes(data, &ParseOptions::lenient()) {
        let list = parsed.entry_list();
        let _ = session_compaction::tree::validate(&list, Some(&parsed.lines));
        let _ = prepare_compaction(&list, &small);
        let ctx = build_session_context(&list, &LeafSelector::Last);
        let _ = session_compaction::prompt::serialize::serialize_conversation(&ctx.messages);
        let _ = prune_tool_outputs(&list, &prune, 1.0);
        let _ = parsed.to_jsonl();
        if let Some(first) = (0..list.len()).find_map(|i| list.meta(i).id.clone()) {
            let _ = build_session_context(&list, &LeafSelector::Id(first));
        }
    }
    if let Ok((mut tree, _errors)) = SessionTree::from_bytes(data.to_vec(), &ParseOptions::lenient()) {
        let _ = tree.prepare_compaction(&small);
        let _ = tree.build_session_context();
        let _ = tree.build_session_context_json();
        let _ = tree.prune_tool_outputs(&prune, 1.0);
        let _ = tree.to_jsonl();
        if let Some(id) = (0..tree.entry_count()).find_map(|i| tree.meta(i).id.clone()) {
            let _ = tree.set_leaf(Some(&id));
            let _ = tree.prepare_compaction(&small);
        }
    }
});
