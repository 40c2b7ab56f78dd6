//! The session handle decides its per-turn answers from what it keeps up to date (its context
//! fold) and from the part of the branch after the latest compaction's kept region (its
//! compaction window). This checks, over random sessions and random host operations (appends
//! on and off the leaf, compactions appended, leaf moves, pruning, rollbacks), that every such
//! answer is what the one-shot functions decide over the whole branch.

#[path = "common/cases.rs"]
mod cases;

use proptest::prelude::*;
use serde_json::{json, Value};
use session_compaction::context::{build_context_for_path, plan_context, plan_prune_in_context};
use session_compaction::entry::{EntryList, EntryMeta, EntrySource};
use session_compaction::io::ParseOptions;
use session_compaction::plan::prepare::{self, CompactionSettings, MessageRef};
use session_compaction::plan::prune::{plan_prune, PruneConfig};
use session_compaction::plan::tokens::TokenCalibration;
use session_compaction::prompt::templates::PromptTemplates;
use session_compaction::session::SessionTree;
use session_compaction::summarize::preview::compaction_previews;

/// What one step adds to the session or does to it.
#[derive(Debug, Clone)]
enum Step {
    /// Append an entry of this kind (see [`entry_of`]) under the leaf, or under an earlier entry.
    Append { kind: u8, size: usize, pick: usize, off_leaf: bool },
    /// Move the leaf to an entry picked by this number.
    Leaf(usize),
    /// Prune old tool outputs.
    Prune,
    /// Remove the entries after the first `n % len`.
    Truncate(usize),
    /// Remove one entry.
    Remove(usize),
    /// Save the session and load it again from its bytes (the leaf kept): its entries then
    /// carry the places the byte scanner records, which pruning splices at.
    Reload,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => (0u8..20, 0usize..4000, any::<usize>(), prop::bool::weighted(0.08))
            .prop_map(|(kind, size, pick, off_leaf)| Step::Append { kind, size, pick, off_leaf }),
        1 => any::<usize>().prop_map(Step::Leaf),
        1 => Just(Step::Prune),
        1 => any::<usize>().prop_map(Step::Truncate),
        1 => any::<usize>().prop_map(Step::Remove),
        1 => Just(Step::Reload),
    ]
}

/// An entry without `id`/`parentId`: messages of every role, tool calls and their results (of
/// `call`, the latest call on the branch), compactions keeping an earlier entry (or one not on
/// the branch), settings entries, a `message` entry without a message.
fn entry_of(kind: u8, size: usize, pick: usize, n: usize, ids: &[String], call: &str) -> Value {
    let message = |m: Value| json!({"type": "message", "message": m});
    match kind {
        0 | 1 | 18 | 19 => message(json!({"role": "user", "content": format!("question {n} {}", "q".repeat(size))})),
        2 => message(json!({"role": "assistant", "content": [{"type": "text", "text": "t".repeat(size)}],
            "provider": "prov", "model": format!("m{}", pick % 3), "stopReason": "stop",
            "usage": {"input": size + pick % 5000, "output": 9, "cacheRead": pick % 700, "cacheWrite": 0}})),
        3..=6 => message(json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("call{n}"),
            "name": (["read", "bash", "edit"][pick % 3]), "arguments": {"path": format!("src/f{}.rs", pick % 3)}}],
            "provider": "prov", "model": "m0", "stopReason": "toolUse",
            "usage": {"input": size * 2, "output": 4, "cacheRead": 0, "cacheWrite": 0}})),
        7..=10 => message(json!({"role": "toolResult", "toolCallId": call, "toolName": "bash",
            "content": [{"type": "text", "text": "o".repeat(size * 8)}], "isError": false})),
        11 => {
            let kept = match (pick % 6, ids.len()) {
                (0, _) | (_, 0) => Value::from("not-on-the-branch"),
                (_, len) => Value::from(ids[len - 1 - pick % len.min(12)].clone()),
            };
            json!({"type": "compaction", "summary": format!("summary {n}"), "firstKeptEntryId": kept,
                "tokensBefore": 5000, "details": {"readFiles": ["a.rs"], "modifiedFiles": ["b.rs"]}})
        }
        12 => json!({"type": "model_change", "model": format!("prov/m{}", pick % 3), "role": (["", "smol"][pick % 2])}),
        13 => json!({"type": "thinking_level_change", "thinkingLevel": (["low", "high"][pick % 2])}),
        14 => json!({"type": "branch_summary", "fromId": "x", "summary": "left behind"}),
        15 => json!({"type": "custom_message", "customType": "note", "content": "a note", "display": true}),
        17 => json!({"type": "message"}),
        _ => json!({"type": "ttsr_injection", "injectedRules": [format!("rule{}", pick % 2)]}),
    }
}

/// Applies `step` to `tree` through its public operations (errors are allowed: a refused
/// operation must leave the handle consistent too).
fn apply(tree: &mut SessionTree, step: &Step, n: usize) {
    let ids: Vec<String> = tree.branch_indices().iter().filter_map(|&i| tree.meta(i).id.clone()).collect();
    let call = tree
        .branch_indices()
        .iter()
        .rev()
        .find_map(|&i| tree.meta(i).message.as_ref()?.tool_calls.first()?.id.clone())
        .unwrap_or_default();
    match *step {
        Step::Append { kind, size, pick, off_leaf } => {
            let mut e = entry_of(kind, size, pick, n, &ids, &call);
            e["id"] = Value::from(format!("e{n}"));
            e["timestamp"] = Value::from("2026-01-01T00:00:00.000Z");
            if off_leaf && !ids.is_empty() {
                e["parentId"] = Value::from(ids[pick % ids.len()].clone());
            }
            match tree.append_entry(e.clone()) {
                Ok(_) => {}
                Err(err) if err.code() == "E_KEPT_NOT_ON_PATH" && e["type"] == "compaction" => {
                    // Refused (SPEC §13.2), but a loaded file may hold one: the session is
                    // loaded again with it, so later steps still meet such compactions.
                    if e.get("parentId").is_none() {
                        e["parentId"] = tree.leaf_id().map_or(Value::Null, Value::from);
                    }
                    let mut values: Vec<Value> = (0..tree.entry_count())
                        .map(|i| serde_json::from_str(tree.raw(i)).expect("stored JSON"))
                        .collect();
                    values.push(e);
                    *tree = SessionTree::from_values(tree.header().cloned(), &values);
                }
                Err(err) => panic!("a new id under a known parent: {err}"),
            }
        }
        Step::Leaf(pick) if tree.entry_count() > 0 => {
            let id = tree.meta(pick % tree.entry_count()).id.clone();
            tree.set_leaf(id.as_deref()).expect("a known id");
        }
        Step::Prune => {
            let config = PruneConfig { protect_tokens: 500, minimum_savings: 100, ..PruneConfig::default() };
            tree.prune_tool_outputs(&config, 1_767_225_600_000.0);
        }
        Step::Truncate(k) if tree.entry_count() > 0 => {
            let len = k % tree.entry_count();
            let leaf = (len > 0).then(|| tree.meta(len - 1).id.clone()).flatten();
            tree.truncate(len, leaf.as_deref()).expect("an entry that stays");
        }
        Step::Remove(k) if tree.entry_count() > 0 => {
            let i = k % tree.entry_count();
            let parent = tree.meta(i).parent_id.clone();
            tree.remove_entry(i, parent.as_deref()).expect("an entry that exists");
        }
        Step::Reload => {
            let leaf = tree.leaf_id().map(str::to_owned);
            let (mut again, _) =
                SessionTree::from_bytes(tree.to_jsonl().into_bytes(), &ParseOptions::lenient()).expect("reloads");
            again.set_leaf(leaf.as_deref()).expect("the leaf is still there");
            *tree = again;
        }
        _ => {}
    }
}

/// The message a [`MessageRef`] of `prepare_compaction_refs` stands for.
fn message_of(tree: &SessionTree, r: &MessageRef) -> Option<Value> {
    match r {
        MessageRef::Entry(i) => tree.entry(*i).get("message").cloned(),
        MessageRef::Derived(v) => Some(v.clone()),
    }
}

/// Every per-turn answer of the handle against the one-shot functions over the whole branch.
fn check(tree: &SessionTree, settings: &CompactionSettings) -> Result<(), TestCaseError> {
    // What the handle knows of each entry is what reading its stored text gives (pruning changes
    // the metadata in place); the places of parts of the text, where it knows them, too.
    for i in 0..tree.entry_count() {
        let (kept, read) = (tree.meta(i), EntryMeta::from_json(tree.raw(i).as_bytes()).expect("valid JSON"));
        // (Compared as printed: a usage number that is absent is NaN, which is not equal to itself.)
        prop_assert_eq!(
            format!("{:?}", kept.without_text_spans()),
            format!("{:?}", read.without_text_spans()),
            "entry {}",
            i
        );
        if kept.message_span.is_some() {
            prop_assert_eq!(kept.message_span, read.message_span, "entry {}", i);
        }
        if let Some(span) = kept.message.as_ref().and_then(|m| m.content_span) {
            prop_assert_eq!(Some(span), read.message.as_ref().and_then(|m| m.content_span), "entry {}", i);
        }
    }
    let branch = tree.branch_indices().to_vec();
    let whole = tree.branch_source();
    let start = tree.compaction_window_start();
    prop_assert!(start <= branch.len());

    prop_assert_eq!(tree.build_session_context(), build_context_for_path(tree, &branch));
    let plan = plan_context(tree, &branch);
    let fast = tree.context_plan();
    prop_assert_eq!(&fast.items, &plan.items);
    prop_assert_eq!(&fast.settings.repairs, &plan.repair_plan(tree).repairs);

    let expected = prepare::prepare_compaction(&whole, settings);
    prop_assert_eq!(&tree.prepare_compaction(settings), &expected);
    match (tree.prepare_compaction_refs(settings), &expected) {
        (None, None) => {}
        (Some((shell, lists)), Some(prep)) => {
            let got: Vec<Vec<Value>> =
                lists.iter().map(|l| l.iter().filter_map(|r| message_of(tree, r)).collect()).collect();
            prop_assert_eq!(&got[0], &prep.messages_to_summarize);
            prop_assert_eq!(&got[1], &prep.turn_prefix_messages);
            prop_assert_eq!(&got[2], &prep.recent_messages);
            prop_assert_eq!(&shell.first_kept_entry_id, &prep.first_kept_entry_id);
            prop_assert_eq!(shell.tokens_before, prep.tokens_before);
            prop_assert_eq!(&shell.previous_summary, &prep.previous_summary);
            prop_assert_eq!(shell.token_calibration_factor, prep.token_calibration_factor);
        }
        (got, _) => prop_assert!(false, "refs {:?} against {:?}", got.map(|g| g.0), expected),
    }
    prop_assert_eq!(tree.previous_compaction(), prepare::previous_compaction(&whole));

    let templates = PromptTemplates::default();
    let prune = PruneConfig { protect_tokens: 300, minimum_savings: 50, ..PruneConfig::default() };
    let previews =
        tree.compaction_previews(settings, &prune, &templates).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let full =
        compaction_previews(&whole, settings, &prune, &templates).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&previews, &full);
    // The wasm handle's preparation (references, previews from the handle's own context
    // decision and prune) previews what the whole branch does.
    let refs = tree.prepare_compaction_refs_with_previews(settings, &prune, &templates);
    let refs = refs.map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(refs.is_some(), expected.is_some());
    if let Some((shell, _)) = refs {
        prop_assert_eq!(shell.preview.as_ref(), Some(&full));
    }

    // Pruning's staleness rule reads the tool-call arguments the handle kept (read once per
    // entry, dropped when an entry changes): the same plan as over parsed values, read afresh.
    let values: Vec<Value> = branch.iter().map(|&i| tree.entry(i).into_owned()).collect();
    let fresh = plan_prune(&EntryList::new(&values), &prune);
    prop_assert_eq!(&plan_prune(&whole, &prune), &fresh);
    // The handle's own prune plan (from its context decision) is the one of the whole branch.
    let handle: Vec<(usize, Option<usize>)> =
        tree.plan_prune(&prune).candidates.iter().map(|c| (c.index, c.branch_position)).collect();
    let in_context: Vec<(usize, Option<usize>)> = plan_prune_in_context(tree, &branch, &prune)
        .candidates
        .iter()
        .map(|c| (c.index, branch.iter().position(|&i| i == c.index)))
        .collect();
    prop_assert_eq!(handle, in_context);

    // The JSON text path (what the JS handle parses) says what the value path says.
    let text = tree.prepare_compaction_json_with_preview(settings, &prune, &templates).expect("templates render");
    match (text, &expected) {
        (None, None) => {}
        (Some(text), Some(prep)) => {
            let v: Value = serde_json::from_str(&text).expect("valid JSON");
            prop_assert_eq!(&v["messagesToSummarize"], &Value::from(prep.messages_to_summarize.clone()));
            prop_assert_eq!(&v["recentMessages"], &Value::from(prep.recent_messages.clone()));
            prop_assert_eq!(&v["firstKeptEntryId"], &Value::from(prep.first_kept_entry_id.clone()));
            prop_assert_eq!(&v["preview"], &serde_json::to_value(&full).expect("serializable"));
        }
        (got, _) => prop_assert!(false, "text {:?} against {:?}", got, expected),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::cases(160), ..ProptestConfig::default() })]

    #[test]
    fn per_turn_answers_are_those_of_the_whole_branch(
        steps in prop::collection::vec(step(), 1..90),
        keep in 1u64..9000,
        calibrated in any::<bool>(),
    ) {
        let settings = CompactionSettings {
            keep_recent_tokens: keep,
            token_calibration: calibrated.then_some(TokenCalibration::Usage),
            ..CompactionSettings::default()
        };
        // A v3 header, so that a reload reads the entries as they are (no v1 migration).
        let header = json!({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"});
        let mut tree = SessionTree::new(Some(header));
        for (n, s) in steps.iter().enumerate() {
            apply(&mut tree, s, n);
            check(&tree, &settings)?;
        }
    }
}

#[test]
fn the_window_starts_at_the_kept_region_of_the_latest_compaction() {
    let mut tree = SessionTree::new(None);
    let add = |tree: &mut SessionTree, id: &str, e: Value| {
        let mut e = e;
        e["id"] = Value::from(id);
        tree.append_entry(e).expect("appended");
    };
    add(&mut tree, "a", json!({"type": "message", "message": {"role": "user", "content": "one"}}));
    add(&mut tree, "b", json!({"type": "message", "message": {"role": "user", "content": "two"}}));
    assert_eq!(tree.compaction_window_start(), 0);
    add(&mut tree, "c", json!({"type": "compaction", "summary": "s", "firstKeptEntryId": "b", "tokensBefore": 9}));
    assert_eq!(tree.compaction_window_start(), 1, "from the first kept entry, b");
    add(&mut tree, "d", json!({"type": "message", "message": {"role": "user", "content": "three"}}));
    let off = json!({"type": "compaction", "id": "e", "parentId": "d", "summary": "s2", "firstKeptEntryId": "zz", "tokensBefore": 9});
    assert_eq!(tree.append_entry(off.clone()).map_err(|e| e.code()), Err("E_KEPT_NOT_ON_PATH"), "refused (SPEC §13.2)");
    // A loaded file may hold one.
    let mut values: Vec<Value> =
        (0..tree.entry_count()).map(|i| serde_json::from_str(tree.raw(i)).expect("JSON")).collect();
    values.push(off);
    let mut tree = SessionTree::from_values(None, &values);
    assert_eq!(tree.compaction_window_start(), 4, "a kept entry not on the branch: from the compaction");
    assert_eq!(tree.compaction_window().len(), 1);
    tree.set_leaf(Some("d")).expect("known");
    assert_eq!(tree.compaction_window_start(), 1, "moving the leaf folds the new branch");
}

#[test]
fn the_revision_changes_when_an_existing_entry_changes_and_not_on_append() {
    let mut tree = SessionTree::new(None);
    let first = tree.revision();
    let user = |id: &str| json!({"type": "message", "id": id, "message": {"role": "user", "content": "hi"}});
    tree.append_entry(user("a")).expect("appended");
    tree.append_entry(user("b")).expect("appended");
    assert_eq!(tree.revision(), first, "appending keeps it");
    tree.set_leaf(Some("a")).expect("known");
    assert_eq!(tree.revision(), first, "moving the leaf keeps it");
    let clone = tree.clone();
    assert_ne!(clone.revision(), tree.revision(), "a clone is another session");
    let tool = json!({"type": "message", "id": "t", "parentId": "a", "message": {"role": "toolResult",
        "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": "x".repeat(200_000)}]}});
    tree.append_entry(tool).expect("appended");
    tree.append_entry(user("c")).expect("appended");
    let config = PruneConfig { protect_tokens: 0, minimum_savings: 0, ..PruneConfig::default() };
    let (plan, _) = tree.prune_tool_outputs(&config, 1.0);
    assert_eq!(plan.candidates.len(), 1);
    assert_eq!(tree.revision(), first, "pruning replaces in place: the indices stay");
    assert_eq!((tree.entry_version(2), tree.entry_version(3)), (1, 0), "the pruned entry's version goes up");
    tree.remove_entry(1, Some("a")).expect("exists");
    let removed = tree.revision();
    assert_eq!(tree.entry_version(1), 0, "a new revision starts every version again");
    assert_ne!(removed, first);
    tree.truncate(0, None).expect("empty");
    assert_ne!(tree.revision(), removed);
}

#[test]
fn kept_tool_call_arguments_are_dropped_when_entries_change() {
    let call = |id: &str, n: usize, path: &str| {
        json!({"type": "message", "id": id, "message": {"role": "assistant", "stopReason": "toolUse",
            "content": [{"type": "toolCall", "id": format!("c{n}"), "name": "read", "arguments": {"path": path}}]}})
    };
    let result = |id: &str, n: usize| {
        json!({"type": "message", "id": id, "message": {"role": "toolResult", "toolCallId": format!("c{n}"),
            "toolName": "read", "content": [{"type": "text", "text": "x".repeat(4000)}]}})
    };
    let mut tree = SessionTree::new(None);
    for e in [call("a1", 1, "f.rs"), result("r1", 1), call("a2", 2, "f.rs"), result("r2", 2)] {
        tree.append_entry(e).expect("appended");
    }
    let config = PruneConfig { protected_tools: Vec::new(), minimum_savings: 0, ..PruneConfig::default() };
    let superseded =
        |tree: &SessionTree| tree.plan_prune(&config).candidates.iter().filter(|c| c.superseded_by.is_some()).count();
    assert_eq!(superseded(&tree), 1, "the first read of f.rs is superseded by the second");
    tree.truncate(2, Some("r1")).expect("rolled back");
    for e in [call("a3", 2, "g.rs"), result("r3", 2)] {
        tree.append_entry(e).expect("appended");
    }
    assert_eq!(superseded(&tree), 0, "the entries now at those positions read another file");
}
