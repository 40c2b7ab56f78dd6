//! Property (issue 9): random operation sequences on random trees — appends with interrupted
//! turns, steering messages inside tool calls and parallel calls answered in any order, leaf
//! moves, compactions whose hooks return random compactions or move the leaf, navigation with and
//! without a summary, pruning, saving and reloading with garbage lines inserted — and after every
//! step every provider-facing output satisfies SPEC §13.1, no entry is on the wrong branch
//! (§13.2), and a save after a reload gives back every line of the file that was loaded (§13.3).
//!
//! Cases: 24 (kept small for `npm test`), times `SC_PROPTEST_SCALE` for a long run.

#[path = "common/cases.rs"]
mod cases;

#[path = "common/sync.rs"]
mod sync;
use futures_executor::block_on;
use proptest::prelude::*;
use serde_json::{json, Value};
use session_compaction::context::convert::convert_to_llm_provider_valid;
use session_compaction::context::repair::{check_provider_valid, RepairKind};
use session_compaction::entry::{EntryKind, EntrySource, Selection};
use session_compaction::io::ParseOptions;
use session_compaction::plan::cut_point::is_valid_first_kept;
use session_compaction::plan::prepare::CompactionSettings;
use session_compaction::plan::prune::PruneConfig;
use session_compaction::prompt::templates::PromptTemplates;
use session_compaction::session::engine::{CompactRun, HooksByName, NavigateRun, SessionEngine, SharedSession};
use session_compaction::session::SessionTree;
use session_compaction::summarize::{Complete, SummaryRequest};
use session_compaction::tree::IssueKind;
use session_compaction::Result;
use std::sync::Arc;
use sync::SyncCell;

/// What a compaction's hooks do.
#[derive(Debug, Clone)]
enum HookPlan {
    None,
    Cancel,
    /// `session_before_compact` supplies a compaction keeping from the entry at this fraction of
    /// all entries (any entry: on or off the branch, a tool result, …), or an unknown id.
    Supply(Option<u8>),
    /// `session.compacting` moves the leaf to the entry at this fraction.
    MoveLeaf(u8),
    /// `session.compacting` appends a user message at the current leaf.
    Append,
    /// `session_compact` fails.
    FailAfter,
}

#[derive(Debug, Clone)]
enum Op {
    User(usize),
    /// An assistant message with calls (output sizes); `answered` results in the order given by
    /// `order` (a permutation seed), a steering user message after `steer` results.
    Tools {
        sizes: Vec<usize>,
        answered: usize,
        order: u8,
        steer: Option<usize>,
        /// How the calls' ids are written (a seed: own ids, repeated across messages, one for
        /// all calls of the message, empty).
        ids: u8,
    },
    Text(usize),
    SetLeaf(u8),
    Compact {
        keep: u64,
        hook: HookPlan,
    },
    Navigate {
        target: u8,
        summarize: bool,
    },
    Prune(u64),
    /// Save (`toJsonl`), insert garbage lines (position seed, kind seed), reload leniently and
    /// go on with the reloaded session at the same leaf.
    SaveReload(Vec<(u8, u8)>),
}

fn hook_plan() -> impl Strategy<Value = HookPlan> {
    prop_oneof![
        3 => Just(HookPlan::None),
        1 => Just(HookPlan::Cancel),
        2 => prop::option::weighted(0.9, any::<u8>()).prop_map(HookPlan::Supply),
        2 => any::<u8>().prop_map(HookPlan::MoveLeaf),
        1 => Just(HookPlan::Append),
        1 => Just(HookPlan::FailAfter),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1usize..300).prop_map(Op::User),
        6 => (prop::collection::vec(1usize..2000, 1..4), 0usize..5, any::<u8>(), prop::option::weighted(0.3, 0usize..4), any::<u8>())
            .prop_map(|(sizes, answered, order, steer, ids)| Op::Tools { sizes, answered, order, steer, ids }),
        2 => (1usize..600).prop_map(Op::Text),
        2 => any::<u8>().prop_map(Op::SetLeaf),
        3 => (1u64..2500, hook_plan()).prop_map(|(keep, hook)| Op::Compact { keep, hook }),
        2 => (any::<u8>(), any::<bool>()).prop_map(|(target, summarize)| Op::Navigate { target, summarize }),
        1 => (0u64..3000).prop_map(Op::Prune),
        1 => prop::collection::vec((any::<u8>(), any::<u8>()), 0..4).prop_map(Op::SaveReload),
    ]
}

struct Model;

impl Complete for Model {
    async fn complete(&self, _request: SummaryRequest) -> Result<String> {
        Ok("SUMMARY".into())
    }
}

struct PlanHooks {
    session: SharedSession,
    plan: HookPlan,
    next_id: Arc<SyncCell<usize>>,
}

fn pick(s: &SessionTree, f: u8) -> Option<String> {
    let n = s.entry_count();
    (n > 0).then(|| s.meta(f as usize * n / 256).id.clone()).flatten()
}

impl HooksByName for PlanHooks {
    async fn call(&self, name: &str, _event: Value) -> Result<Value> {
        self.session.write(|s| self.act(s, name))
    }
}

impl PlanHooks {
    fn act(&self, s: &mut SessionTree, name: &str) -> Result<Value> {
        Ok(match (&self.plan, name) {
            (HookPlan::Cancel, "session_before_compact") => json!({"cancel": true}),
            (HookPlan::Supply(f), "session_before_compact") => {
                let id = f.and_then(|f| pick(s, f)).unwrap_or_else(|| "unknown-id".into());
                json!({"compaction": {"summary": "hook summary", "firstKeptEntryId": id, "tokensBefore": 1}})
            }
            (HookPlan::MoveLeaf(f), "session.compacting") => {
                let id = pick(s, *f);
                s.set_leaf(id.as_deref())?;
                Value::Null
            }
            (HookPlan::Append, "session.compacting") => {
                let n = self.next_id.get() + 1;
                self.next_id.set(n);
                s.append_entry(
                    json!({"type": "message", "id": format!("h{n}"), "timestamp": "2025-01-01T00:00:00.000Z",
                    "message": {"role": "user", "content": "typed during the compaction", "timestamp": 1}}),
                )?;
                Value::Null
            }
            (HookPlan::FailAfter, "session_compact") => {
                return Err(session_compaction::Error::Hook { hook: name.into(), message: "after".into() })
            }
            _ => Value::Null,
        })
    }
}

struct World {
    engine: SessionEngine,
    next: usize,
    ids: Arc<SyncCell<usize>>,
}

impl World {
    fn new() -> Self {
        let header =
            json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"});
        Self { engine: SessionEngine::new(SessionTree::new(Some(header))), next: 0, ids: Arc::new(SyncCell::new(0)) }
    }
    fn append(&mut self, message: Value) -> String {
        self.next += 1;
        let id = format!("e{}", self.next);
        let entry = json!({"type": "message", "id": id, "timestamp": "2025-01-01T00:00:00.000Z", "message": message});
        self.engine.session().write(|s| s.append_entry(entry)).expect("append");
        id
    }
    fn apply(&mut self, op: &Op) -> std::result::Result<(), String> {
        match op {
            Op::User(n) => {
                self.append(json!({"role": "user", "content": "u".repeat(*n), "timestamp": 1}));
            }
            Op::Text(n) => {
                self.append(json!({"role": "assistant", "content": [{"type": "text", "text": "a".repeat(*n)}], "stopReason": "stop", "timestamp": 2}));
            }
            Op::Tools { sizes, answered, order, steer, ids } => {
                let base = self.next + 1;
                // Mostly ids of their own; sometimes ids that restart in every message (as some
                // providers write them), one id for every call of the message, or empty ids.
                let calls: Vec<String> = (0..sizes.len())
                    .map(|k| match ids % 8 {
                        0 => format!("call_{k}"),
                        1 => "same".to_string(),
                        2 => String::new(),
                        _ => format!("c{base}-{k}"),
                    })
                    .collect();
                let content: Vec<Value> = calls
                    .iter()
                    .map(|c| json!({"type": "toolCall", "id": c, "name": "bash", "arguments": {"command": "ls"}}))
                    .collect();
                self.append(json!({"role": "assistant", "content": content, "stopReason": "toolUse", "timestamp": 2}));
                let mut idx: Vec<usize> = (0..sizes.len()).collect();
                idx.rotate_left(*order as usize % sizes.len());
                for (n, &k) in idx.iter().take(*answered).enumerate() {
                    if *steer == Some(n) {
                        self.append(json!({"role": "user", "content": "steering while tools run", "timestamp": 3}));
                    }
                    self.append(json!({"role": "toolResult", "toolCallId": calls[k], "toolName": "bash",
                        "content": [{"type": "text", "text": "o".repeat(sizes[k])}], "isError": false, "timestamp": 4}));
                }
            }
            Op::SetLeaf(f) => {
                let id = pick(&self.engine.session().snapshot(), *f);
                self.engine.session().write(|s| s.set_leaf(id.as_deref())).map_err(|e| e.to_string())?;
            }
            Op::Compact { keep, hook } => {
                let (prepared_leaf, count) = {
                    let s = self.engine.session().snapshot();
                    (s.leaf_id().map(str::to_owned), s.entry_count())
                };
                let hooks =
                    PlanHooks { session: self.engine.session().clone(), plan: hook.clone(), next_id: self.ids.clone() };
                let run = CompactRun {
                    settings: CompactionSettings { keep_recent_tokens: *keep, ..Default::default() },
                    ..Default::default()
                };
                match block_on(self.engine.compact(&Model, &hooks, &run, None, 1.0e12)) {
                    Ok(done) => {
                        // At the end of the prepared branch (SPEC §13.2): under the host's leaf
                        // when it descends from the prepared leaf (an append, a move down the
                        // branch), and then the leaf; else under the prepared leaf, the host's leaf
                        // left elsewhere.
                        let s = self.engine.session().snapshot();
                        let extends = |id: Option<&str>| {
                            let (Some(p), Some(i)) = (prepared_leaf.as_deref(), id.and_then(|id| s.index_of(id)))
                            else {
                                return false;
                            };
                            s.tree_index().branch_to(&s, i).iter().any(|&a| s.meta(a).id.as_deref() == Some(p))
                        };
                        let parent = done.entry["parentId"].as_str();
                        let leaf = s.leaf_id();
                        let at_end = if leaf == done.entry["id"].as_str() {
                            extends(parent)
                        } else {
                            parent == prepared_leaf.as_deref() && !extends(leaf)
                        };
                        if !at_end {
                            return Err(format!(
                                "compaction appended under {parent:?} (leaf {leaf:?}), not at the end of the prepared branch (leaf {prepared_leaf:?})"
                            ));
                        }
                        if matches!(hook, HookPlan::FailAfter) {
                            return Err("a failing after-hook succeeded".into());
                        }
                    }
                    Err(e) => {
                        let s = self.engine.session().snapshot();
                        let compactions =
                            (0..s.entry_count()).filter(|&i| s.meta(i).kind == EntryKind::Compaction).count();
                        let before = (0..count.min(s.entry_count()))
                            .filter(|&i| s.meta(i).kind == EntryKind::Compaction)
                            .count();
                        if compactions != before {
                            return Err(format!("a failed compaction ({e}) left its entry"));
                        }
                        if let (HookPlan::Supply(_), "E_HOOK") = (hook, e.code()) {
                            if !e.to_string().contains("firstKeptEntryId") {
                                return Err(format!("hook refusal without the id: {e}"));
                            }
                        }
                    }
                }
            }
            Op::Navigate { target, summarize } => {
                let Some(id) = pick(&self.engine.session().snapshot(), *target) else { return Ok(()) };
                let hooks = PlanHooks {
                    session: self.engine.session().clone(),
                    plan: HookPlan::None,
                    next_id: self.ids.clone(),
                };
                let run = NavigateRun { summarize: *summarize, ..Default::default() };
                block_on(self.engine.navigate_tree(&id, Some(&Model), &hooks, &run, None, 1.0e12))
                    .map_err(|e| e.to_string())?;
            }
            Op::Prune(protect) => {
                let config = PruneConfig { protect_tokens: *protect, minimum_savings: 0, ..PruneConfig::default() };
                self.engine.session().write(|s| s.prune_tool_outputs(&config, 1.0e12));
            }
            Op::SaveReload(garbage) => {
                let (saved, leaf) = {
                    let s = self.engine.session().snapshot();
                    (s.to_jsonl(), s.leaf_id().map(str::to_owned))
                };
                let mut lines: Vec<String> = saved.lines().map(str::to_owned).collect();
                for (pos, kind) in garbage {
                    let line = match kind % 4 {
                        0 => r#"{"type":"message","id":"cut"#.to_owned(),
                        1 => "not json at all".to_owned(),
                        2 => String::new(),
                        _ => r#"{"type":"custom"}{"type":"label""#.to_owned(),
                    };
                    let at = 1 + usize::from(*pos) % lines.len().max(1);
                    lines.insert(at.min(lines.len()), line);
                }
                let input = lines.join("\n") + "\n";
                let (mut tree, _bad) =
                    SessionTree::from_jsonl(input.clone(), &ParseOptions::lenient()).map_err(|e| e.to_string())?;
                if tree.to_jsonl() != input {
                    return Err("save after a reload did not give back every line".into());
                }
                tree.set_leaf(leaf.as_deref()).map_err(|e| e.to_string())?;
                self.engine = SessionEngine::new(tree);
            }
        }
        Ok(())
    }
}

/// SPEC §13.1 on every provider-facing output of the current branch, the same repairs
/// everywhere, every repaired unanswered or orphan result also an issue of `validate()`
/// (path-aware), and every compaction on the branch of its `firstKeptEntryId` at a valid cut.
fn check(s: &SessionTree) -> std::result::Result<(), String> {
    let templates = PromptTemplates::default();
    let json: Vec<Value> = serde_json::from_str(&s.build_session_context_json()).map_err(|e| e.to_string())?;
    check_provider_valid(&json).map_err(|e| format!("buildSessionContextJson: {e}"))?;
    let (llm, repairs) = s.build_llm_messages(&templates).map_err(|e| e.to_string())?;
    check_provider_valid(&llm).map_err(|e| format!("buildLlmMessages: {e}"))?;
    let stored = s.build_session_context();
    let (converted, _) = convert_to_llm_provider_valid(&stored.messages, &templates).map_err(|e| e.to_string())?;
    check_provider_valid(&converted).map_err(|e| format!("convertToLlm {{repair}}: {e}"))?;
    // The handle converts only what conversion changes (the rest is its stored message): the same
    // messages as converting the whole provider-valid context.
    if llm != converted {
        return Err(format!("buildLlmMessages {llm:?} differs from convertToLlm {{repair}} {converted:?}"));
    }
    if stored.repairs != repairs || s.context_repairs() != repairs {
        return Err("the outputs report different repairs".into());
    }
    let report = s.validate();
    if report.repairs != repairs {
        return Err("validate() reports other repairs".into());
    }
    for r in &repairs {
        let code = match r.kind {
            RepairKind::MissingToolResult => IssueKind::UnansweredToolCall,
            RepairKind::OrphanToolResult | RepairKind::DuplicateToolResult => IssueKind::OrphanToolResult,
            RepairKind::MovedAfterToolResults | RepairKind::RenamedToolCallId => continue,
        };
        if !report.issues.iter().any(|i| i.code == code && i.id == r.entry_id && i.related_id == r.tool_call_id) {
            return Err(format!("repair {r:?} has no {code:?} issue in validate()"));
        }
    }
    if let Some(i) = report.issues.iter().find(|i| i.code == IssueKind::KeptEntryNotOnPath) {
        return Err(format!("compaction off its branch: {}", i.message));
    }
    for i in 0..s.entry_count() {
        if s.meta(i).kind != EntryKind::Compaction {
            continue;
        }
        let path = s.tree_index().branch_to(s, i);
        let kept = s.meta(i).first_kept_entry_id.clone();
        let pos = path.iter().position(|&p| s.meta(p).id == kept).ok_or("firstKeptEntryId off the path")?;
        let before = &path[..path.len() - 1];
        if !is_valid_first_kept(&Selection::new(s, before), pos) {
            return Err(format!("compaction {:?} keeps from {kept:?}, not a valid cut point", s.meta(i).id));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::cases(24), ..ProptestConfig::default() })]

    #[test]
    fn every_step_keeps_provider_outputs_valid_and_compactions_on_their_branch(ops in prop::collection::vec(op(), 1..45)) {
        let mut world = World::new();
        for (k, op) in ops.iter().enumerate() {
            world.apply(op).map_err(|e| TestCaseError::fail(format!("step {k} {op:?}: {e}")))?;
            check(&world.engine.session().snapshot()).map_err(|e| TestCaseError::fail(format!("after step {k} {op:?}: {e}")))?;
        }
    }
}
