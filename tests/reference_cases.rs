//! The cases the reference gets wrong and this engine does not (SPEC §12.8, §12.9, §12.10, §10):
//! a newest turn larger than `keepRecentTokens`, custom instructions without history, branch
//! instructions that replace the template, and composed summaries whose parts are kept apart.

#[path = "common/sync.rs"]
mod sync;
use futures_executor::block_on;
use serde_json::{json, Value};
use session_compaction::entry::EntryList;
use session_compaction::plan::cut_point::{find_cut_point, CutPointResult};
use session_compaction::plan::prepare::{prepare_compaction, CompactionPreparation, CompactionSettings};
use session_compaction::prompt::templates::{self as prompts, PromptTemplates};
use session_compaction::summarize::{
    compact, generate_branch_summary, BranchSummaryOptions, CompactOptions, Complete, Purpose, SummaryRequest,
    TURN_CONTEXT_SEPARATOR,
};
use session_compaction::Result;
use sync::Lock;

/// Records every request; answers with a fixed text per purpose.
#[derive(Default)]
struct Recorder {
    requests: Lock<Vec<SummaryRequest>>,
    answers: Vec<(Purpose, String)>,
}

impl Recorder {
    fn answering(answers: &[(Purpose, &str)]) -> Self {
        Self { requests: Lock::default(), answers: answers.iter().map(|(p, t)| (*p, t.to_string())).collect() }
    }
    fn request(&self, p: Purpose) -> SummaryRequest {
        self.requests.borrow().iter().find(|r| r.purpose == p).cloned().unwrap_or_else(|| panic!("no {p:?} request"))
    }
    fn purposes(&self) -> Vec<Purpose> {
        self.requests.borrow().iter().map(|r| r.purpose).collect()
    }
}

impl Complete for Recorder {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        let p = request.purpose;
        self.requests.borrow_mut().push(request);
        Ok(self.answers.iter().find(|(q, _)| *q == p).map_or_else(|| format!("{p:?} answer"), |(_, t)| t.clone()))
    }
}

fn chars(n: usize) -> String {
    "x".repeat(n)
}

fn msg(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": message})
}

fn user(id: &str, parent: Option<&str>, len: usize) -> Value {
    msg(id, parent, json!({"role": "user", "content": format!("{id} {}", chars(len)), "timestamp": 1}))
}

fn assistant_call(id: &str, parent: Option<&str>, call: &str, path: &str) -> Value {
    msg(
        id,
        parent,
        json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "read", "arguments": {"path": path}}],
               "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 2}),
    )
}

fn assistant_text(id: &str, parent: Option<&str>, len: usize) -> Value {
    msg(
        id,
        parent,
        json!({"role": "assistant", "content": [{"type": "text", "text": chars(len)}], "provider": "p", "model": "m",
               "stopReason": "stop", "timestamp": 2}),
    )
}

fn tool_result(id: &str, parent: Option<&str>, call: &str, len: usize) -> Value {
    msg(
        id,
        parent,
        json!({"role": "toolResult", "toolCallId": call, "toolName": "read", "content": [{"type": "text", "text": chars(len)}],
               "isError": false, "timestamp": 3}),
    )
}

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings { keep_recent_tokens: keep, ..CompactionSettings::default() }
}

/// u1 (small), a2 (small), u3 (small), a4 calls read, t5 (40 000 tokens): the newest turn alone
/// is far over any budget.
fn huge_last_turn() -> Vec<Value> {
    vec![
        user("u1", None, 40),
        assistant_text("a2", Some("u1"), 40),
        user("u3", Some("a2"), 40),
        assistant_call("a4", Some("u3"), "c1", "src/big.rs"),
        tool_result("t5", Some("a4"), "c1", 160_000),
    ]
}

// ----- §12.8 -----

#[test]
fn a_newest_turn_over_budget_is_kept_and_split_and_the_rest_summarized() {
    let entries = huge_last_turn();
    let list = EntryList::new(&entries);
    // The sum reaches 20 000 at t5 (index 4), which has no valid cut point at or after it: the
    // cut is a4, the last valid cut point before it; the turn started at u3.
    assert_eq!(
        find_cut_point(&list, 0, 5, 20_000),
        CutPointResult { first_kept_entry_index: 3, turn_start_index: 2, is_split_turn: true }
    );
    let prep = prepare_compaction(&list, &settings(20_000)).expect("something to compact (§12.8)");
    assert_eq!(prep.first_kept_entry_id, "a4");
    assert!(prep.is_split_turn);
    let roles = |ms: &[Value]| ms.iter().map(|m| m["role"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
    assert_eq!(roles(&prep.turn_prefix_messages), ["user"]);
    assert_eq!(roles(&prep.recent_messages), ["assistant", "toolResult"]);
    // The tool call of the kept part is not counted as summarized.
    assert!(prep.file_ops.read.is_empty(), "{:?}", prep.file_ops);
}

#[test]
fn a_single_turn_over_budget_keeps_only_its_last_cut_point() {
    // u1, a2 (call), t3 huge: the cut is a2; u1 alone becomes the turn prefix.
    let entries = vec![
        user("u1", None, 40),
        assistant_call("a2", Some("u1"), "c1", "a.rs"),
        tool_result("t3", Some("a2"), "c1", 160_000),
    ];
    let list = EntryList::new(&entries);
    assert_eq!(
        find_cut_point(&list, 0, 3, 20_000),
        CutPointResult { first_kept_entry_index: 1, turn_start_index: 0, is_split_turn: true }
    );
    let prep = prepare_compaction(&list, &settings(20_000)).expect("the user message is summarized");
    assert!(prep.messages_to_summarize.is_empty());
    assert_eq!(prep.turn_prefix_messages.len(), 1);
    assert_eq!(prep.first_kept_entry_id, "a2");
}

#[test]
fn nothing_to_compact_when_the_last_cut_point_before_the_budget_is_the_first() {
    // u1 then a huge tool result with no assistant between: the only cut point is u1.
    let entries = vec![user("u1", None, 40), tool_result("t2", Some("u1"), "c1", 160_000)];
    let list = EntryList::new(&entries);
    assert_eq!(
        find_cut_point(&list, 0, 2, 20_000),
        CutPointResult { first_kept_entry_index: 0, turn_start_index: -1, is_split_turn: false }
    );
    assert!(prepare_compaction(&list, &settings(20_000)).is_none());
}

#[test]
fn a_budget_reached_at_a_cut_point_is_unchanged() {
    // The ordinary case: the sum reaches the budget at a4 (a valid cut point): cut there.
    let entries = vec![
        user("u1", None, 4000),
        assistant_text("a2", Some("u1"), 4000),
        user("u3", Some("a2"), 4000),
        assistant_text("a4", Some("u3"), 4000),
    ];
    let list = EntryList::new(&entries);
    assert_eq!(
        find_cut_point(&list, 0, 4, 1500),
        CutPointResult { first_kept_entry_index: 2, turn_start_index: -1, is_split_turn: false }
    );
}

// ----- §12.9 and §12.10 in compact() -----

fn prefix_only_preparation() -> CompactionPreparation {
    let entries = huge_last_turn();
    let mut prep = prepare_compaction(&EntryList::new(&entries), &settings(20_000)).expect("prep");
    prep.messages_to_summarize.clear();
    prep
}

#[test]
fn custom_instructions_go_to_the_turn_prefix_when_there_is_no_history() {
    let prep = prefix_only_preparation();
    let model = Recorder::default();
    let options = CompactOptions { custom_instructions: Some("Keep the file names.".into()), ..Default::default() };
    let templates = PromptTemplates::default();
    block_on(compact(&prep, &model, &options, &templates)).expect("compact");
    assert_eq!(model.purposes(), [Purpose::TurnPrefix, Purpose::Short]);
    let prefix = model.request(Purpose::TurnPrefix).prompt;
    let base = templates.render(prompts::COMPACTION_TURN_PREFIX, &Value::Null).unwrap();
    assert!(prefix.ends_with(&format!("\n\n{base}\n\nAdditional focus: Keep the file names.")), "{prefix}");
    assert!(!model.request(Purpose::Short).prompt.contains("Additional focus"));
}

#[test]
fn custom_instructions_stay_on_the_history_request_when_there_is_history() {
    let entries = huge_last_turn();
    let prep = prepare_compaction(&EntryList::new(&entries), &settings(20_000)).expect("prep");
    let model = Recorder::default();
    let options = CompactOptions { custom_instructions: Some("Keep the file names.".into()), ..Default::default() };
    block_on(compact(&prep, &model, &options, &PromptTemplates::default())).expect("compact");
    assert_eq!(model.purposes(), [Purpose::History, Purpose::TurnPrefix, Purpose::Short]);
    assert!(model.request(Purpose::History).prompt.ends_with("\n\nAdditional focus: Keep the file names."));
    assert!(!model.request(Purpose::TurnPrefix).prompt.contains("Additional focus"));
}

#[test]
fn a_compaction_summary_keeps_its_file_blocks_after_a_blank_line() {
    let entries = huge_last_turn();
    let mut prep = prepare_compaction(&EntryList::new(&entries), &settings(20_000)).expect("prep");
    prep.file_ops.read = vec!["src/a.rs".into()];
    prep.file_ops.edited = vec!["src/b.rs".into()];
    // Trailing whitespace of a part is removed before the blank line.
    let model = Recorder::answering(&[(Purpose::History, "## Goal\nShip.  \n\n"), (Purpose::TurnPrefix, "Prefix.\n")]);
    let r = block_on(compact(&prep, &model, &CompactOptions::default(), &PromptTemplates::default())).expect("compact");
    assert_eq!(
        r.summary,
        format!(
            "## Goal\nShip.  \n\n{TURN_CONTEXT_SEPARATOR}Prefix.\n\n<read-files>\nsrc/a.rs\n</read-files>\n\n<modified-files>\nsrc/b.rs\n</modified-files>"
        )
    );
    // Without file operations nothing is appended, not even the blank line.
    prep.file_ops = Default::default();
    let r = block_on(compact(&prep, &Recorder::default(), &CompactOptions::default(), &PromptTemplates::default()))
        .expect("compact");
    assert!(r.summary.ends_with("TurnPrefix answer"), "{}", r.summary);
}

// ----- §10 and §12.10 in generateBranchSummary() -----

fn branch_entries() -> Vec<Value> {
    vec![
        user("u1", None, 40),
        assistant_call("a2", Some("u1"), "c1", "src/lib.rs"),
        tool_result("t3", Some("a2"), "c1", 40),
        assistant_text("a4", Some("t3"), 40),
    ]
}

#[test]
fn branch_custom_instructions_replace_the_template() {
    let entries = branch_entries();
    let model = Recorder::default();
    let templates = PromptTemplates::default();
    let options =
        BranchSummaryOptions { custom_instructions: Some("List the commands only.".into()), ..Default::default() };
    block_on(generate_branch_summary(&EntryList::new(&entries), &model, &options, &templates)).expect("summary");
    let prompt = model.request(Purpose::Branch).prompt;
    let template = templates.render(prompts::BRANCH_SUMMARY, &Value::Null).unwrap();
    assert!(prompt.ends_with("</conversation>\n\nList the commands only."), "{prompt}");
    assert!(!prompt.contains(&template));
    assert!(!prompt.contains("Additional focus"));
    // Without instructions (or with empty ones) the template is the instruction text.
    for custom in [None, Some(String::new())] {
        let model = Recorder::default();
        let options = BranchSummaryOptions { custom_instructions: custom, ..Default::default() };
        block_on(generate_branch_summary(&EntryList::new(&entries), &model, &options, &templates)).expect("summary");
        assert!(model.request(Purpose::Branch).prompt.ends_with(&format!("</conversation>\n\n{template}")));
    }
}

#[test]
fn a_branch_summary_reads_preamble_blank_line_text_blank_line_files() {
    let entries = branch_entries();
    let templates = PromptTemplates::default();
    let preamble = templates.render(prompts::BRANCH_SUMMARY_PREAMBLE, &Value::Null).unwrap();
    let model = Recorder::answering(&[(Purpose::Branch, "## Aim of the branch\nRead the library.\n")]);
    let s = block_on(generate_branch_summary(&EntryList::new(&entries), &model, &Default::default(), &templates))
        .expect("summary");
    assert_eq!(
        s.summary,
        format!("{preamble}\n\n## Aim of the branch\nRead the library.\n\n<read-files>\nsrc/lib.rs\n</read-files>")
    );
    assert!(preamble.ends_with(']'), "the preamble is the bracketed line: {preamble}");
    // An empty model answer adds no empty part.
    let model = Recorder::answering(&[(Purpose::Branch, "")]);
    let s = block_on(generate_branch_summary(&EntryList::new(&entries), &model, &Default::default(), &templates))
        .expect("summary");
    assert_eq!(s.summary, format!("{preamble}\n\n<read-files>\nsrc/lib.rs\n</read-files>"));
}
