//! Property tests over random, well-formed session trees: branches, several compactions,
//! branch summaries, labels, settings entries and unknown entry types.

#[path = "common/cases.rs"]
mod cases;

use proptest::prelude::*;
use serde_json::{json, Value};
use session_compaction::context::{build_session_context, LeafSelector};
use session_compaction::entry::Role;
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::plan::cut_point::find_cut_point;
use session_compaction::plan::prepare::{prepare_compaction, CompactionSettings};
use session_compaction::plan::prune::{prune_tool_outputs, PruneConfig};
use session_compaction::session::SessionTree;
use std::collections::HashSet;

/// One step of a random session.
#[derive(Debug, Clone)]
enum Step {
    User(usize),
    /// An assistant turn with `n` tool calls (tool name index, output size) answered in order.
    Tools(Vec<(usize, usize)>),
    Text(usize),
    Bash(usize, bool),
    CustomMessage,
    BranchSummary(usize),
    Label,
    ModelChange,
    Unknown,
    /// Compact the current branch with this keepRecentTokens.
    Compact(u64),
    /// Move the leaf to an earlier entry (by fraction of the count).
    Branch(u8),
}

const TOOLS: [&str; 5] = ["bash", "read", "edit", "skill", "write"];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (1usize..400).prop_map(Step::User),
        5 => prop::collection::vec((0usize..5, 1usize..3000), 1..4).prop_map(Step::Tools),
        3 => (1usize..800).prop_map(Step::Text),
        1 => (1usize..500, any::<bool>()).prop_map(|(n, x)| Step::Bash(n, x)),
        1 => Just(Step::CustomMessage),
        1 => (0usize..200).prop_map(Step::BranchSummary),
        1 => Just(Step::Label),
        1 => Just(Step::ModelChange),
        1 => Just(Step::Unknown),
        1 => (1u64..3000).prop_map(Step::Compact),
        1 => any::<u8>().prop_map(Step::Branch),
    ]
}

struct Builder {
    tree: SessionTree,
    next: usize,
    t: i64,
}

impl Builder {
    fn new() -> Self {
        Self {
            tree: SessionTree::new(Some(
                json!({"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}),
            )),
            next: 0,
            t: 1_735_689_600_000,
        }
    }
    fn id(&mut self) -> String {
        self.next += 1;
        format!("e{:05}", self.next)
    }
    fn ts(&mut self) -> String {
        self.t += 1000;
        session_compaction::js::format_iso_timestamp(self.t as f64)
    }
    fn push(&mut self, mut e: Value) {
        let id = self.id();
        let ts = self.ts();
        e["id"] = json!(id);
        e["timestamp"] = json!(ts);
        self.tree.append_entry(e).expect("append");
    }
    fn msg(&mut self, m: Value) {
        let mut m = m;
        m["timestamp"] = json!(self.t);
        self.push(json!({"type": "message", "message": m}));
    }
    fn apply(&mut self, s: &Step) {
        match s {
            Step::User(n) => self.msg(json!({"role": "user", "content": "u".repeat(*n)})),
            Step::Tools(calls) => {
                let base = self.next;
                let content: Vec<Value> = calls.iter().enumerate().map(|(k, (tool, _))| json!({"type": "toolCall", "id": format!("c{base}-{k}"), "name": TOOLS[*tool], "arguments": {"path": format!("f{k}.rs")}})).collect();
                self.msg(json!({"role": "assistant", "content": content, "provider": "p", "model": "m", "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0}, "stopReason": "toolUse"}));
                for (k, (tool, size)) in calls.iter().enumerate() {
                    self.msg(json!({"role": "toolResult", "toolCallId": format!("c{base}-{k}"), "toolName": TOOLS[*tool], "content": [{"type": "text", "text": "o".repeat(*size)}], "isError": false}));
                }
            }
            Step::Text(n) => self.msg(json!({"role": "assistant", "content": [{"type": "text", "text": "a".repeat(*n)}], "provider": "p", "model": "m", "usage": {"input": 100, "output": 5, "cacheRead": 0, "cacheWrite": 0}, "stopReason": "stop"})),
            Step::Bash(n, excluded) => self.msg(json!({"role": "bashExecution", "command": "ls", "output": "b".repeat(*n), "exitCode": 0, "cancelled": false, "truncated": false, "excludeFromContext": excluded})),
            Step::CustomMessage => self.push(json!({"type": "custom_message", "customType": "note", "content": "remember", "display": true})),
            Step::BranchSummary(n) => {
                let from = self.tree.leaf_id().unwrap_or("root").to_string();
                self.push(json!({"type": "branch_summary", "fromId": from, "summary": "s".repeat(*n)}))
            }
            Step::Label => {
                if let Some(target) = self.tree.leaf_id().map(str::to_owned) {
                    self.push(json!({"type": "label", "targetId": target, "label": "mark"}))
                }
            }
            Step::ModelChange => self.push(json!({"type": "model_change", "model": "p/other"})),
            Step::Unknown => self.push(json!({"type": "future_thing", "payload": {"x": [1, 2]}})),
            Step::Compact(keep) => {
                let settings = CompactionSettings { keep_recent_tokens: *keep, ..Default::default() };
                if let Some(prep) = self.tree.prepare_compaction(&settings) {
                    self.push(json!({"type": "compaction", "summary": "sum", "firstKeptEntryId": prep.first_kept_entry_id, "tokensBefore": prep.tokens_before}));
                }
            }
            Step::Branch(f) => {
                let n = self.tree.entry_count();
                if n > 0 {
                    let i = (*f as usize * n) / 256;
                    let id = self.tree.meta(i).id.clone();
                    self.tree.set_leaf(id.as_deref()).unwrap();
                }
            }
        }
    }
}

/// A line that holds no JSON record: malformed JSON, a truncated record, or a blank line.
fn garbage_line() -> impl Strategy<Value = String> {
    let record = r#"{"type":"message","id":"zz","parentId":null,"message":{"role":"user","content":"h\u00e9 \"q\""}}"#;
    prop_oneof![
        (1usize..record.len()).prop_map(move |n| record[..n].to_string()),
        Just(String::new()),
        Just("   \t ".to_string()),
        Just("}{".to_string()),
        Just("not json at all".to_string()),
        "[a-z ]{1,20}\\{".prop_map(|s| s),
    ]
}

fn build(steps: &[Step]) -> SessionTree {
    let mut b = Builder::new();
    for s in steps {
        b.apply(s);
    }
    b.tree
}

fn entries_of(tree: &SessionTree) -> Vec<Value> {
    (0..tree.entry_count()).map(|i| tree.entry(i).into_owned()).collect()
}

/// Every toolResult in `messages` has its toolCall earlier in the same list.
fn tool_results_answered(messages: &[Value]) -> Result<(), String> {
    let mut calls = HashSet::new();
    for m in messages {
        if m["role"] == "assistant" {
            for b in m["content"].as_array().into_iter().flatten() {
                if b["type"] == "toolCall" {
                    calls.insert(b["id"].as_str().unwrap_or("").to_string());
                }
            }
        }
        if m["role"] == "toolResult" && !calls.contains(m["toolCallId"].as_str().unwrap_or("")) {
            return Err(format!("toolResult {} without its toolCall", m["toolCallId"]));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::cases(96), ..ProptestConfig::default() })]

    #[test]
    fn cut_point_is_never_a_tool_result(steps in prop::collection::vec(step(), 1..60), keep in 0u64..5000) {
        let tree = build(&steps);
        let branch = tree.branch_source();
        if branch.is_empty() { return Ok(()); }
        let cut = find_cut_point(&branch, 0, branch.len(), keep);
        let m = branch.meta(cut.first_kept_entry_index);
        prop_assert_ne!(m.role(), Some(Role::ToolResult));
        if cut.is_split_turn {
            prop_assert!(cut.turn_start_index >= 0 && cut.turn_start_index as usize <= cut.first_kept_entry_index);
        }
    }

    #[test]
    fn compaction_never_orphans_a_tool_result(steps in prop::collection::vec(step(), 1..80), keep in 1u64..4000) {
        let mut b = Builder::new();
        for s in &steps { b.apply(s); }
        b.apply(&Step::Compact(keep));
        let ctx = b.tree.build_session_context();
        prop_assert!(tool_results_answered(&ctx.messages).is_ok(), "{:?}", tool_results_answered(&ctx.messages));
        // the same through the pure functions over the whole entry list
        let entries = entries_of(&b.tree);
        let leaf = b.tree.leaf_id().map(|s| LeafSelector::Id(s.to_string())).unwrap_or(LeafSelector::BeforeFirst);
        let pure = build_session_context(&EntryList::new(&entries), &leaf);
        // the spliced JSON text of the whole context is the same object
        let text: serde_json::Value = serde_json::from_str(&b.tree.build_session_context_text()).expect("context text is JSON");
        prop_assert_eq!(text, serde_json::to_value(&ctx).expect("context serializes"));
        prop_assert_eq!(pure, ctx);
    }

    #[test]
    fn pruning_respects_protection_and_is_idempotent(steps in prop::collection::vec(step(), 1..80), protect in 0u64..3000, minimum in 0u64..2000, staleness in any::<bool>()) {
        let tree = build(&steps);
        let entries = entries_of(&tree);
        let list = EntryList::new(&entries);
        let config = PruneConfig { protect_tokens: protect, minimum_savings: minimum, protected_tools: vec!["skill".into(), "read".into()], staleness };
        let result = prune_tool_outputs(&list, &config, 42.0);
        // newest tool output within the protect window is never touched, unless a later result
        // of the same tool on the same target superseded it (SPEC §13.6)
        let mut acc = 0u64;
        let plan = session_compaction::plan::prune::plan_prune(&list, &config);
        prop_assert!(staleness || plan.candidates.iter().all(|c| c.superseded_by.is_none()));
        for c in plan.candidates.iter() {
            if let Some(by) = &c.superseded_by { prop_assert!(by.index > c.index); }
        }
        let pruned: HashSet<usize> =
            plan.candidates.iter().filter(|c| c.superseded_by.is_none()).map(|c| c.index).collect();
        let all: HashSet<usize> = result.pruned_entries.iter().map(|(i, _)| *i).collect();
        prop_assert_eq!(plan.candidates.len(), all.len());
        for i in (0..list.len()).rev() {
            let Some(m) = list.meta(i).message.as_ref() else { continue };
            if m.role != Role::ToolResult { continue; }
            if acc < protect { prop_assert!(!pruned.contains(&i), "entry {} inside the protect window was pruned", i); }
            if matches!(m.tool_name.as_deref(), Some("skill") | Some("read")) { prop_assert!(!all.contains(&i)); }
            acc += m.tokens;
        }
        // the input is not mutated, and a second run over the result prunes nothing
        prop_assert_eq!(&EntryList::new(&entries).values().to_vec(), &entries_of(&tree));
        let mut after = entries.clone();
        for (i, e) in result.pruned_entries { after[i] = e; }
        let again = prune_tool_outputs(&EntryList::new(&after), &config, 43.0);
        prop_assert_eq!(again.pruned_count, 0);
    }

    #[test]
    fn handle_and_pure_preparation_agree(steps in prop::collection::vec(step(), 1..80), keep in 1u64..4000) {
        let tree = build(&steps);
        let settings = CompactionSettings { keep_recent_tokens: keep, ..Default::default() };
        let path: Vec<Value> = tree.branch_indices().iter().map(|&i| tree.entry(i).into_owned()).collect();
        let pure = prepare_compaction(&EntryList::new(&path), &settings);
        prop_assert_eq!(&pure, &tree.prepare_compaction(&settings));
        // the handle's spliced JSON says exactly the same
        let spliced: Option<Value> = tree.prepare_compaction_json(&settings).map(|t| serde_json::from_str(&t).expect("valid JSON"));
        prop_assert_eq!(spliced, pure.map(|p| serde_json::to_value(p).unwrap()));
    }

    #[test]
    fn load_save_load_is_identity(
        steps in prop::collection::vec(step(), 1..60),
        garbage in prop::collection::vec((any::<prop::sample::Index>(), garbage_line()), 0..8),
    ) {
        use session_compaction::io::{parse_session, ParseOptions};
        let tree = build(&steps);
        let clean = tree.to_jsonl();
        // Garbage lines (malformed JSON, truncated records, blank lines) anywhere, the header's
        // place included: every one of them survives a load and a save in its place.
        let mut lines: Vec<String> = clean.lines().map(str::to_owned).collect();
        for (at, g) in &garbage {
            let i = at.index(lines.len() + 1);
            lines.insert(i, g.clone());
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let strict = garbage.iter().all(|(_, g)| g.trim().is_empty());
        // value path: parse → save gives the text back; parse → save → parse gives the same values
        let first = parse_session(&text, &ParseOptions { strict }).expect("load of a saved session");
        let saved = first.to_jsonl();
        prop_assert_eq!(&saved, &text);
        let second = parse_session(&saved, &ParseOptions::lenient()).expect("reload");
        prop_assert_eq!(&first.entries, &second.entries);
        prop_assert_eq!(&first.header, &second.header);
        prop_assert_eq!(&first.opaque, &second.opaque);
        prop_assert_eq!(&first.errors, &second.errors);
        let malformed = garbage.iter().filter(|(_, g)| !g.trim().is_empty()).count();
        prop_assert_eq!(first.errors.len(), malformed);
        // (a malformed line before the header makes the first line a damaged header: the
        // header is then still the first record, so nothing else changes)
        prop_assert!(first.header.is_some());
        prop_assert_eq!(first.entries, entries_of(&tree));
        // raw path: the handle writes unchanged entries, the header and every garbage line byte for byte
        let (handle, errors) = SessionTree::from_jsonl(text.clone(), &ParseOptions { strict }).expect("handle load");
        prop_assert_eq!(&errors, &first.errors);
        prop_assert_eq!(handle.to_jsonl(), text.clone());
        let (handle, _) = SessionTree::from_bytes(text.clone().into_bytes(), &ParseOptions::lenient()).expect("bytes load");
        prop_assert_eq!(handle.to_jsonl(), text);
    }

    #[test]
    fn walks_terminate_on_cycles(n in 2usize..30, links in prop::collection::vec(any::<u8>(), 2..30)) {
        // every entry's parent is another random entry: cycles everywhere
        let entries: Vec<Value> = (0..n).map(|i| json!({
            "type": "message", "id": format!("x{i}"), "parentId": format!("x{}", links[i % links.len()] as usize % n),
            "timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": "hi", "timestamp": 1}
        })).collect();
        let list = EntryList::new(&entries);
        for i in 0..n {
            let ctx = build_session_context(&list, &LeafSelector::Id(format!("x{i}")));
            prop_assert!(ctx.messages.len() <= n);
        }
        let tree = SessionTree::from_values(None, &entries);
        prop_assert!(tree.branch_indices().len() <= n);
        let _ = tree.prepare_compaction(&CompactionSettings::default());
    }
}

/// `f64::from_str` and [`session_compaction::js::parse_f64`] give the same bits (NaN for NaN,
/// refusal for refusal) on `s`.
fn same_as_from_str(s: &str) -> Result<(), TestCaseError> {
    match (s.parse::<f64>().ok(), session_compaction::js::parse_f64(s)) {
        (None, None) => {}
        (Some(w), Some(g)) if w.is_nan() => prop_assert!(g.is_nan(), "{:?}: {}", s, g),
        (Some(w), Some(g)) => prop_assert_eq!(w.to_bits(), g.to_bits(), "{:?}: {} vs {}", s, w, g),
        (w, g) => prop_assert!(false, "{:?}: from_str {:?}, parse_f64 {:?}", s, w, g),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::cases(2000), ..ProptestConfig::default() })]

    /// Decimal texts of every shape (signs, leading zeros, empty parts, long digit runs, large
    /// exponents) and a little noise parse as `from_str` parses them.
    #[test]
    fn parse_f64_agrees_with_from_str(
        s in r"[+-]?0{0,3}[0-9]{0,30}(\.[0-9]{0,30})?([eE][+-]?0{0,2}[0-9]{1,4})?[ .eE+x-]?"
    ) {
        same_as_from_str(&s)?;
    }

    /// Every double, written shortest (`{}`), in exponent form (`{:e}`) and with 17 significant
    /// digits, reads back as `from_str` reads it (the double itself).
    #[test]
    fn parse_f64_reads_every_double(bits in any::<u64>()) {
        let v = f64::from_bits(bits);
        for s in [format!("{v}"), format!("{v:e}"), format!("{v:.16e}")] {
            same_as_from_str(&s)?;
        }
    }
}
