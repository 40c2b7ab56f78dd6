//! The caches of the per-turn pure functions ([`ContextCache`], [`PrepareCache`]) decide exactly
//! what the one-shot functions decide, over random call sequences of a host: entry lists that
//! grow, shrink, have an entry replaced, switch leaf or branch; entries with duplicate ids,
//! parents named before they exist, parent cycles, compactions, settings entries.

#[path = "common/cases.rs"]
mod cases;

use proptest::prelude::*;
use serde_json::{json, Value};
use session_compaction::context::{session_context_plan, ContextCache, LeafSelector};
use session_compaction::entry::{EntryList, Selection};
use session_compaction::plan::prepare::{prepare_compaction_refs, CompactionSettings};
use session_compaction::plan::prepare_cache::PrepareCache;
use session_compaction::tree::TreeIndex;

/// One generated entry: its kind and a few numbers that pick ids and sizes.
#[derive(Debug, Clone)]
struct Gen {
    kind: u8,
    size: usize,
    /// How the id is chosen: mostly fresh, sometimes a duplicate or none.
    id: u8,
    /// How the parent is chosen: the previous entry, an earlier one, one named before it exists, none.
    parent: u8,
    pick: usize,
}

fn gen() -> impl Strategy<Value = Gen> {
    (0u8..16, 0usize..3000, 0u8..40, 0u8..40, any::<usize>()).prop_map(|(kind, size, id, parent, pick)| Gen {
        kind,
        size,
        id,
        parent,
        pick,
    })
}

/// The entries of a generated session (not necessarily well formed: that is the point).
fn entries(gens: &[Gen]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut calls: Vec<String> = Vec::new();
    for (n, g) in gens.iter().enumerate() {
        let id = match g.id {
            0 if !ids.is_empty() => Some(ids[g.pick % ids.len()].clone()),
            1 => None,
            _ => Some(format!("e{n}")),
        };
        let parent = match g.parent {
            0..=2 if !ids.is_empty() => Value::from(ids[g.pick % ids.len()].clone()),
            3 => Value::from(format!("e{}", n + 1 + g.pick % 3)),
            4 => Value::Null,
            _ => ids.last().map_or(Value::Null, |p| Value::from(p.clone())),
        };
        let m = |message: Value| json!({"type": "message", "message": message});
        let mut e = match g.kind {
            0 | 1 => m(json!({"role": "user", "content": "u".repeat(g.size)})),
            2 => m(json!({"role": "assistant", "content": [{"type": "text", "text": "a".repeat(g.size)}],
                "provider": "p", "model": format!("m{}", g.pick % 2), "stopReason": "stop",
                "usage": {"input": g.size * 2, "output": 5, "cacheRead": 0, "cacheWrite": 0}})),
            3 | 4 => {
                let call = format!("c{n}");
                calls.push(call.clone());
                let tool = ["read", "write", "edit", "bash"][g.pick % 4];
                m(json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": tool,
                    "arguments": {"path": format!("f{}.rs", g.pick % 5)}}], "stopReason": "toolUse",
                    "usage": {"input": g.size, "output": 5, "cacheRead": 0, "cacheWrite": 0}}))
            }
            5 | 6 => {
                let call = calls.get(calls.len().saturating_sub(1 + g.pick % 2)).cloned().unwrap_or_default();
                m(json!({"role": "toolResult", "toolCallId": call, "toolName": "read",
                    "content": [{"type": "text", "text": "o".repeat(g.size)}]}))
            }
            7 => m(json!({"role": "bashExecution", "command": "ls", "output": "b".repeat(g.size),
                "excludeFromContext": g.pick % 3 == 0})),
            8 => json!({"type": "custom_message", "customType": "note", "content": "x", "display": true}),
            9 => json!({"type": "branch_summary", "fromId": "e0", "summary": "s".repeat(g.size % 3 * 40)}),
            10 | 11 => {
                let kept = if g.pick % 7 == 0 {
                    Value::from("nowhere")
                } else if ids.is_empty() || g.pick % 7 == 1 {
                    // An entry after the compaction (SPEC §12.1: not found before it).
                    Value::from(format!("e{}", n + 1))
                } else {
                    Value::from(ids[g.pick % ids.len()].clone())
                };
                json!({"type": "compaction", "summary": "sum", "firstKeptEntryId": kept, "tokensBefore": 1,
                    "details": {"readFiles": ["r.rs"], "modifiedFiles": []}})
            }
            12 => {
                json!({"type": "model_change", "model": format!("p/m{}", g.pick % 3), "role": (["", "smol"][g.pick % 2])})
            }
            13 => json!({"type": "thinking_level_change", "thinkingLevel": (["low", "high"][g.pick % 2])}),
            14 => json!({"type": "ttsr_injection", "injectedRules": [format!("r{}", g.pick % 3)]}),
            _ => match ids.last() {
                Some(t) => json!({"type": "label", "targetId": t, "label": "mark"}),
                None => json!({"type": "mode_change", "mode": "plan"}),
            },
        };
        if let Some(id) = &id {
            e["id"] = Value::from(id.clone());
            ids.push(id.clone());
        }
        e["parentId"] = parent;
        e["timestamp"] = json!("2025-01-01T00:00:00.000Z");
        out.push(e);
    }
    out
}

/// One call of a host: how long the list is, which leaf, and whether an entry object was
/// replaced by another one before the call.
#[derive(Debug, Clone)]
struct Call {
    /// Grow by this many entries (0..=3), or shrink when `shrink`.
    grow: usize,
    shrink: bool,
    leaf: u8,
    pick: usize,
    replace: Option<usize>,
}

fn call() -> impl Strategy<Value = Call> {
    (0usize..4, prop::bool::weighted(0.1), 0u8..10, any::<usize>(), prop::option::weighted(0.1, any::<usize>()))
        .prop_map(|(grow, shrink, leaf, pick, replace)| Call { grow, shrink, leaf, pick, replace })
}

/// Length of the common prefix of two lists of object identities.
fn common(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::cases(200), ..ProptestConfig::default() })]

    #[test]
    fn caches_decide_what_the_one_shot_functions_decide(
        gens in prop::collection::vec(gen(), 1..70),
        calls in prop::collection::vec(call(), 1..25),
        keep in 1u64..3000,
    ) {
        let mut pool = entries(&gens);
        // Object identity of each position (a replaced entry is a new object).
        let mut objects: Vec<u64> = (0..pool.len() as u64).collect();
        let mut next_object = pool.len() as u64;
        let settings = CompactionSettings { keep_recent_tokens: keep, ..Default::default() };
        let (mut context, mut prepare) = (ContextCache::new(), PrepareCache::new());
        let (mut last_list, mut last_path): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
        let mut len = 0usize;
        for c in &calls {
            if let Some(r) = c.replace.filter(|_| len > 0) {
                let (at, from) = (r % len, (r / 7) % pool.len());
                pool[at] = pool[from].clone();
                objects[at] = next_object;
                next_object += 1;
            }
            len = if c.shrink { len.saturating_sub(1 + c.pick % 5) } else { (len + c.grow).min(pool.len()) };
            let values = &pool[..len];
            let list = EntryList::new(values);
            let leaf = match c.leaf {
                0 => LeafSelector::BeforeFirst,
                1..=3 if len > 0 => LeafSelector::Id(values[c.pick % len]["id"].as_str().unwrap_or("").to_string()),
                4 => LeafSelector::Id("unknown".into()),
                _ => LeafSelector::Last,
            };
            let identity = &objects[..len];
            context.sync(&list, common(&last_list, identity));
            prop_assert_eq!(context.plan(&list, &leaf), session_context_plan(&list, &leaf));
            last_list = identity.to_vec();
            // prepareCompaction on the branch of that leaf, as a host passes it.
            let index = TreeIndex::new(&list);
            let branch = match session_compaction::context::resolve_leaf(&list, &index, &leaf) {
                Some(l) => index.branch_to(&list, l),
                None => Vec::new(),
            };
            let path = Selection::new(&list, &branch);
            let path_identity: Vec<u64> = branch.iter().map(|&i| objects[i]).collect();
            prepare.sync(&path, common(&last_path, &path_identity));
            prop_assert_eq!(prepare.prepare_refs(&path, &settings), prepare_compaction_refs(&path, &settings));
            last_path = path_identity;
        }
    }
}
