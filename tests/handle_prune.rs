//! The session handle's pruning (SPEC §7) rewrites each pruned entry from its stored text: the
//! result equals the value path's (the pure `prune_tool_outputs` on the branch's entries) on
//! the real sessions, the handle stores exactly the reported lines, and a save and reload
//! keeps them.

use serde_json::Value;
use session_compaction::entry::{EntryList, EntryMeta, EntrySource};
use session_compaction::io::ParseOptions;
use session_compaction::plan::prune::{prune_tool_outputs, PruneConfig};
use session_compaction::session::SessionTree;

fn load(name: &str) -> SessionTree {
    let path = format!("{}/examples/sessions/{name}", env!("CARGO_MANIFEST_DIR"));
    SessionTree::from_bytes(std::fs::read(path).unwrap(), &ParseOptions::lenient()).unwrap().0
}

fn branch_values(tree: &SessionTree) -> Vec<Value> {
    tree.branch_indices().iter().map(|&i| tree.entry(i).into_owned()).collect()
}

#[test]
fn the_handle_prunes_what_the_pure_function_prunes_on_real_sessions() {
    let mut pruned_somewhere = 0;
    let mut compared = 0;
    for name in ["pi-session-large.jsonl", "pi-session-with-compactions.jsonl", "pi-session-v1-format.jsonl"] {
        for (protect, staleness) in [(2_000, true), (2_000, false), (40_000, true)] {
            let config =
                PruneConfig { protect_tokens: protect, minimum_savings: 1_000, protected_tools: vec![], staleness };
            let mut tree = load(name);
            let branch = tree.branch_indices().to_vec();
            let values = branch_values(&tree);
            let (plan, lines) = tree.prune_tool_outputs(&config, 1.767e12);
            assert_eq!(lines.len(), plan.candidates.len(), "{name}");
            // The pure function sees the whole branch; the handle only what the model still
            // sees (SPEC §7 on a handle): compare on the sessions where they agree.
            let pure = prune_tool_outputs(&EntryList::new(&values), &config, 1.767e12);
            if plan.candidates.iter().all(|c| branch.contains(&c.index)) && pure.pruned_count == lines.len() {
                for ((bi, want), (line, c)) in pure.pruned_entries.iter().zip(lines.iter().zip(&plan.candidates)) {
                    assert_eq!(branch[*bi], c.index, "{name}: same entry, same order");
                    let got: Value = serde_json::from_str(line).unwrap();
                    assert_eq!(&got, want, "{name}: entry {}", c.index);
                    compared += 1;
                }
            }
            for (line, c) in lines.iter().zip(&plan.candidates) {
                assert_eq!(tree.raw(c.index), line, "{name}: the handle stores the reported line");
                let m = tree.meta(c.index).message.as_ref().unwrap();
                assert!(m.pruned, "{name}: the metadata knows it is pruned");
                assert_eq!(m.tokens, (c.notice.encode_utf16().count() as u64).div_ceil(4));
                // The metadata changed in place is what reading the new text gives, the places
                // of the message and its content included.
                let read = EntryMeta::from_json(line.as_bytes()).unwrap();
                assert_eq!(tree.meta(c.index), &read, "{name}: entry {}", c.index);
                assert!(read.message.as_ref().unwrap().content_span.is_some(), "{name}");
            }
            pruned_somewhere += lines.len();
            // Saved and reloaded: the same entries.
            let again = SessionTree::from_jsonl(tree.to_jsonl(), &ParseOptions::strict()).unwrap().0;
            assert_eq!(branch_values(&again), branch_values(&tree), "{name}");
            // A second pass prunes nothing.
            let (_, more) = tree.prune_tool_outputs(&config, 1.767e12);
            assert!(more.is_empty(), "{name}");
        }
    }
    assert!(pruned_somewhere > 100, "the real sessions have outputs to prune: {pruned_somewhere}");
    assert!(compared > 100, "compared with the value path: {compared}");
}
