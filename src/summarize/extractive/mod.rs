//! A summarizer that needs no model: [`ExtractiveSummarizer`] answers every [`SummaryRequest`]
//! by quoting and listing what the prompt's conversation already says (issue 4, "A summarizer
//! that needs no model"). It is deterministic (no I/O, no randomness, no clock), never fails and
//! never panics, so compaction works without an API key (the CLI's default).
//!
//! It reads the request's prompt as the engine assembles it (SPEC §9, [`assemble_prompt`]):
//! the `<conversation>` transcript (SPEC §8 serialization: `[User]: …`, `[Assistant]: …`,
//! `[Assistant tool calls]: name(k=JSON, …); …`, `[Tool result]: …`), the optional
//! `<previous-summary>` and `<additional-context>` blocks, and the instructions. The Markdown
//! headings of the instructions decide the sections it writes (so an overridden template gets its
//! own headings); without headings it uses the sections of the default templates of the request's
//! purpose. Each section is filled by simple rules:
//!
//! - goal / request / aim: the first and the latest substantive user message, a sentence or two;
//! - requirements: user sentences with *must, should, don't, never, always, prefer, use, …*;
//! - completed / steps: files changed by successful `edit` / `write` calls, commands run, and
//!   assistant sentences that report finished work (*Done, Fixed, Added, I've …*);
//! - underway: the last announced intention of the assistant and tool calls without a result;
//! - blocked / outcome: error lines of tool results and of user messages, quoted exactly;
//! - decisions and findings: sentences with *decided, instead of, rather than, the issue is, …*;
//! - next actions: steps the last assistant message announces, or answering a pending request;
//! - reference details: files read and modified (from `read` / `write` / `edit` calls), commands;
//! - pending question: the last user message when the conversation ends on it, or the question
//!   the assistant asked last.
//!
//! Every section answer starts with the line [`EXTRACTIVE_MARKER`]. An update keeps the previous
//! summary's sections and adds the new items after a "New since the last summary" line; sections
//! of a previous summary in another format are kept verbatim at the end. The short summary
//! ([`Purpose::Short`]) is one or two first-person sentences. Output length follows the request's
//! `max_tokens` at about four characters per token.
//!
//! Module map, in the order a request goes through it:
//! - `frame`: the prompt's `<conversation>`, `<previous-summary>` and `<additional-context>`
//!   blocks and the instructions (SPEC §9);
//! - `transcript`: the `[User]: …` / `[Assistant]: …` / `[Tool result]: …` parts of the
//!   transcript and the tool calls in them (SPEC §8);
//! - `cues` and `facts`: what the parts say (requests, constraints, finished work, errors,
//!   files, commands, questions), gathered once per request;
//! - `headings`: the sections to write, from the instructions' Markdown headings;
//! - `sections`: the items of each kind of section;
//! - `previous`: updates keep and extend the previous summary's sections;
//! - `render`: the sectioned summary written as Markdown within the budget;
//! - `short`: the short summary ([`Purpose::Short`]);
//! - `text`: clipping, quoting and sentence helpers shared by all of them.
//!
//! [`assemble_prompt`]: crate::summarize::assemble_prompt

mod cues;
mod facts;
mod frame;
mod headings;
mod previous;
mod render;
mod sections;
mod short;
mod text;
mod transcript;

use crate::error::Result;
use crate::summarize::{Complete, Purpose, SummaryRequest};
use facts::Facts;
use frame::split_prompt;
use render::sectioned_summary;
use short::short_summary;
use std::future::Future;
use text::clip_chars;
use transcript::split_parts;

/// The first line of every sectioned extractive summary (all purposes except
/// [`Purpose::Short`]): it tells the reader that no model wrote the text.
pub const EXTRACTIVE_MARKER: &str = "_Extractive summary (no model was used): sentences quoted from the conversation._";

/// The label put before the items an update adds to a section of the previous summary.
pub const NEW_SINCE_LABEL: &str = "_New since the last summary:_";

/// The line put before the errors of a blocked section: an extractive summary cannot tell
/// whether later work fixed them.
pub(super) const ERRORS_NOTE: &str = "_Errors seen, oldest first; later messages may have resolved some of them:_";

/// The heading under which an update keeps the parts of a previous summary that do not match
/// any requested section (for example a summary written by a model in another format).
pub const EARLIER_SUMMARY_TITLE: &str = "Earlier summary (kept verbatim)";

/// A deterministic [`Complete`] implementation that builds summaries from quotes of the
/// conversation instead of asking a model. See the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractiveSummarizer {
    /// Most items listed under one section (the most recent ones are kept; default 10).
    /// Lower values are used when the output would exceed the request's `max_tokens`.
    pub max_bullets: usize,
    /// Longest quotation in characters before it is cut with "…" (default 240).
    pub max_quote_chars: usize,
}

impl Default for ExtractiveSummarizer {
    /// Ten items per section, quotations of up to 240 characters.
    fn default() -> Self {
        Self { max_bullets: 10, max_quote_chars: 240 }
    }
}

impl ExtractiveSummarizer {
    /// The default summarizer (same as [`Default::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the answer to `request` (what [`Complete::complete`] resolves to). Never panics.
    pub fn summarize(&self, request: &SummaryRequest) -> String {
        let opts = Opts { max_bullets: self.max_bullets.max(1), quote: self.max_quote_chars.max(20) };
        let prompt = split_prompt(&request.prompt);
        let parts = split_parts(prompt.conversation);
        let facts = Facts::gather(&parts, &opts);
        let budget = char_budget(request.max_tokens);
        match request.purpose {
            Purpose::Short => clip_chars(&short_summary(&facts, prompt.previous, &opts), budget.max(40)),
            purpose => sectioned_summary(purpose, &prompt, &facts, &opts, budget),
        }
    }
}

impl Complete for ExtractiveSummarizer {
    /// Resolves immediately to [`ExtractiveSummarizer::summarize`]; never fails.
    fn complete(&self, request: SummaryRequest) -> impl Future<Output = Result<String>> + crate::host::MaybeSend {
        std::future::ready(Ok(self.summarize(&request)))
    }
    /// [`super::Summarizer::Extractive`].
    fn summarizer(&self) -> super::Summarizer {
        super::Summarizer::Extractive
    }
}

/// The extractive answer to `request` with the default options
/// ([`ExtractiveSummarizer::default`]). Never panics, whatever the prompt holds.
pub fn extractive_summary(request: &SummaryRequest) -> String {
    ExtractiveSummarizer::default().summarize(request)
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Opts {
    pub(super) max_bullets: usize,
    pub(super) quote: usize,
}

/// `max_tokens` as a character budget (4 characters per token); 0 means no limit.
fn char_budget(max_tokens: u64) -> usize {
    if max_tokens == 0 {
        return usize::MAX;
    }
    usize::try_from(max_tokens.saturating_mul(4)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize::assemble_prompt;

    const HISTORY_INSTRUCTIONS: &str = include_str!("../../../prompts/compaction-summary.md");
    const UPDATE_INSTRUCTIONS: &str = include_str!("../../../prompts/compaction-update-summary.md");
    const TURN_INSTRUCTIONS: &str = include_str!("../../../prompts/compaction-turn-prefix.md");
    const BRANCH_INSTRUCTIONS: &str = include_str!("../../../prompts/branch-summary.md");
    const SHORT_INSTRUCTIONS: &str = include_str!("../../../prompts/compaction-short-summary.md");

    fn request(purpose: Purpose, prompt: String, max_tokens: u64) -> SummaryRequest {
        SummaryRequest { purpose, system_prompt: "system".into(), prompt, max_tokens, reasoning: None }
    }

    fn history(conversation: &str) -> String {
        extractive_summary(&request(
            Purpose::History,
            assemble_prompt(conversation, None, &[], HISTORY_INSTRUCTIONS),
            13107,
        ))
    }

    /// The body of section `title` (up to the next heading).
    fn section<'a>(summary: &'a str, title: &str) -> &'a str {
        let start = summary.find(&format!(" {title}\n")).unwrap_or_else(|| panic!("no section {title} in:\n{summary}"));
        let body = &summary[start + title.len() + 2..];
        let end = body.find("\n#").unwrap_or(body.len());
        &body[..end]
    }

    const CONV: &str = "[User]: Please add a --verbose flag to the CLI in src/cli.rs. You must keep the output format unchanged. Also never print the API key.\n\n\
[Assistant thinking]: Let me look.\n\n\
[Assistant]: I'll read the CLI first.\n\n\
[Assistant tool calls]: read(path=\"src/cli.rs\"); read(path=\"src/main.rs\", offset=1, limit=20)\n\n\
[Tool result]: fn main() {}\n\n\
[Tool result]: // main\n\n\
[Assistant tool calls]: edit(path=\"src/cli.rs\", oldText=\"a, (b)\", newText=\"c; d=e\")\n\n\
[Tool result]: Successfully replaced text in src/cli.rs. Changed 3 characters to 4 characters.\n\n\
[Assistant tool calls]: bash(command=\"cargo build 2>&1 | tail -5\")\n\n\
[Tool result]: error[E0425]: cannot find value `verbose` in this scope\n  --> src/cli.rs:12:8\n\nCommand exited with code 101\n\n\
[Assistant]: Fixed the missing binding in src/cli.rs. We decided to use clap's `ArgAction::Count` instead of a bool.\n\nNext steps:\n1. Run the tests\n2. Update the README\n\n\
[User]: Does it also work with -vv?";

    #[test]
    fn history_sections_hold_real_content() {
        let s = history(CONV);
        assert!(s.starts_with(EXTRACTIVE_MARKER), "{s}");
        assert_eq!(s.lines().next(), Some(EXTRACTIVE_MARKER));
        for title in [
            "Objective",
            "Requirements and preferences",
            "Completed",
            "Underway",
            "Blocked",
            "Decisions",
            "Next actions",
            "Reference details",
            "Pending question",
        ] {
            assert!(s.contains(&format!(" {title}\n")), "missing {title}:\n{s}");
        }
        assert!(section(&s, "Objective").contains("Please add a --verbose flag to the CLI in src/cli.rs."), "{s}");
        let req = section(&s, "Requirements and preferences");
        assert!(req.contains("You must keep the output format unchanged."), "{s}");
        assert!(req.contains("never print the API key"), "{s}");
        let done = section(&s, "Completed");
        assert!(done.contains("- [x] Changed 1 file: `src/cli.rs` (1 edit)"), "{s}");
        assert!(done.contains("Fixed the missing binding in src/cli.rs."), "{s}");
        let blocked = section(&s, "Blocked");
        assert!(
            blocked
                .contains("`cargo build 2>&1 | tail -5`: ``error[E0425]: cannot find value `verbose` in this scope``"),
            "{s}"
        );
        assert!(blocked.contains("Command exited with code 101"), "{s}");
        assert!(
            section(&s, "Decisions").contains("We decided to use clap's `ArgAction::Count` instead of a bool."),
            "{s}"
        );
        let next = section(&s, "Next actions");
        assert!(next.contains("1. Answer the user's latest message"), "{s}");
        assert!(next.contains("Run the tests") && next.contains("Update the README"), "{s}");
        let reference = section(&s, "Reference details");
        assert!(reference.contains("Files read: `src/main.rs`"), "{s}");
        assert!(reference.contains("Files modified: `src/cli.rs`"), "{s}");
        assert!(reference.contains("`cargo build 2>&1 | tail -5`"), "{s}");
        assert_eq!(section(&s, "Pending question").trim(), "\"Does it also work with -vv?\"", "{s}");
    }

    #[test]
    fn assistant_question_and_unanswered_calls() {
        let conv = "[User]: Rename the crate to foo-bar.\n\n[Assistant]: Should I also rename the repository?";
        let s = history(conv);
        assert!(
            section(&s, "Pending question").contains("The assistant asked: \"Should I also rename the repository?\""),
            "{s}"
        );
        assert!(section(&s, "Next actions").contains("Wait for the user's answer"), "{s}");

        let conv = "[User]: Run the tests please.\n\n[Assistant]: Let me run the whole test suite now.\n\n[Assistant tool calls]: bash(command=\"cargo test\")";
        let s = history(conv);
        let underway = section(&s, "Underway");
        assert!(underway.contains("- [ ] Last announced step: \"Let me run the whole test suite now.\""), "{s}");
        assert!(underway.contains("Waiting for the result of bash `cargo test`"), "{s}");
        assert_eq!(section(&s, "Pending question").trim(), "None.", "{s}");
    }

    #[test]
    fn write_and_failed_edit() {
        let conv = "[User]: Create the config file.\n\n\
[Assistant tool calls]: write(path=\"conf/app.toml\", content=\"x = 1\"); edit(path=\"README.md\", oldText=\"a\", newText=\"b\")\n\n\
[Tool result]: Successfully wrote 5 bytes to conf/app.toml\n\n\
[Tool result]: Could not find the exact text in README.md. The old text must match exactly including all whitespace and newlines.";
        let s = history(conv);
        let done = section(&s, "Completed");
        assert!(done.contains("`conf/app.toml` (written)"), "{s}");
        assert!(!done.contains("README.md"), "a failed edit is not done work:\n{s}");
        assert!(
            section(&s, "Blocked").contains("edit `README.md`: `Could not find the exact text in README.md."),
            "{s}"
        );
        assert!(section(&s, "Reference details").contains("Files modified: `conf/app.toml`, `README.md`"), "{s}");
    }

    #[test]
    fn read_output_is_not_an_error() {
        let conv = "[User]: Look at the error handling.\n\n[Assistant tool calls]: read(path=\"src/error.rs\"); bash(command=\"grep -n Error src/lib.rs\")\n\n\
[Tool result]: pub enum Error { Failed }\n\n[Tool result]: 3: pub use error::Error;";
        let s = history(conv);
        assert_eq!(section(&s, "Blocked").trim(), "None.", "{s}");
    }

    #[test]
    fn short_is_one_or_two_first_person_sentences() {
        let prompt = assemble_prompt(CONV, Some("## Objective\n- Initial request: \"x\""), &[], SHORT_INSTRUCTIONS);
        let s = extractive_summary(&request(Purpose::Short, prompt, 512));
        assert!(s.starts_with("I "), "{s}");
        assert!(s.contains("--verbose flag"), "{s}");
        assert!(s.contains("cli.rs"), "{s}");
        assert!(!s.contains('\n'), "{s}");
        let ends = s.matches(". ").count() + s.matches("? ").count() + s.matches("! ").count() + 1;
        assert!(ends <= 2, "more than two sentences: {s}");
        assert!(s.ends_with('.'), "{s}");

        // Only the previous summary: its objective.
        let prompt = assemble_prompt(
            "",
            Some("## Objective\n- Latest request: \"Port the parser to Rust. Quickly.\""),
            &[],
            SHORT_INSTRUCTIONS,
        );
        let s = extractive_summary(&request(Purpose::Short, prompt, 512));
        assert_eq!(s, "I worked on the request: Port the parser to Rust.");
        let s = extractive_summary(&request(Purpose::Short, String::new(), 512));
        assert_eq!(s, "I have no recorded work to summarize yet.");
    }

    #[test]
    fn update_keeps_previous_sections_and_adds_new_items() {
        let first = history(CONV);
        let conv2 = "[User]: Now add a --quiet flag too. Don't touch the tests.\n\n\
[Assistant tool calls]: edit(path=\"src/flags.rs\", oldText=\"a\", newText=\"b\")\n\n\
[Tool result]: Successfully replaced text in src/flags.rs.\n\n\
[Assistant]: Added the --quiet flag.";
        let prompt = assemble_prompt(
            conv2,
            Some(&format!("{first}<read-files>\nsrc/old.rs\n</read-files>")),
            &["branch: main".to_string()],
            UPDATE_INSTRUCTIONS,
        );
        let s = extractive_summary(&request(Purpose::Update, prompt, 13107));
        assert_eq!(s.lines().next(), Some(EXTRACTIVE_MARKER), "{s}");
        assert_eq!(s.matches(EXTRACTIVE_MARKER).count(), 1, "{s}");
        let objective = section(&s, "Objective");
        assert!(objective.contains("Initial request: \"Please add a --verbose flag"), "{s}");
        assert!(objective.contains("Latest request: \"Now add a --quiet flag too."), "{s}");
        let done = section(&s, "Completed");
        let old = done.find("src/cli.rs").expect("previous item kept");
        let label = done.find(NEW_SINCE_LABEL).expect("label");
        let new = done.find("src/flags.rs").expect("new item");
        assert!(old < label && label < new, "{s}");
        assert!(section(&s, "Requirements and preferences").contains("Don't touch the tests."), "{s}");
        // The pending question of the previous summary is replaced by the current state.
        assert_eq!(section(&s, "Pending question").trim(), "None.", "{s}");
        let reference = section(&s, "Reference details");
        assert!(reference.contains("Files read earlier: `src/old.rs`"), "{s}");
        assert!(reference.contains("From the host: branch: main"), "{s}");
        assert!(!s.contains("Earlier summary"), "{s}");

        // Updating again does not nest labels.
        let prompt = assemble_prompt("[User]: Ship it.", Some(&s), &[], UPDATE_INSTRUCTIONS);
        let again = extractive_summary(&request(Purpose::Update, prompt, 13107));
        assert_eq!(section(&again, "Completed").matches(NEW_SINCE_LABEL).count(), 0, "{again}");
        assert!(section(&again, "Completed").contains("src/flags.rs"), "{again}");
    }

    #[test]
    fn update_keeps_a_foreign_summary_verbatim() {
        let prev =
            "# Context Checkpoint\n\n## Goal\nRefactor `coding-agent` into modes.\n\n## Key Files\n- `src/main.ts`\n";
        let prompt = assemble_prompt("[User]: continue", Some(prev), &[], UPDATE_INSTRUCTIONS);
        let s = extractive_summary(&request(Purpose::Update, prompt, 13107));
        assert!(section(&s, "Objective").contains("Earlier objective: Refactor `coding-agent` into modes."), "{s}");
        let earlier = section(&s, EARLIER_SUMMARY_TITLE);
        assert!(earlier.contains("Context Checkpoint") || s.contains("### Context Checkpoint"), "{s}");
        assert!(s.contains("#### Key Files\n- `src/main.ts`"), "{s}");
        assert_eq!(section(&s, "Pending question").trim(), "\"continue\"", "{s}");
    }

    #[test]
    fn turn_prefix_and_branch_use_their_sections() {
        let prompt = assemble_prompt(CONV, None, &[], TURN_INSTRUCTIONS);
        let s = extractive_summary(&request(Purpose::TurnPrefix, prompt, 8192));
        assert_eq!(s.lines().next(), Some(EXTRACTIVE_MARKER));
        assert!(section(&s, "Request").contains("User asked: \"Please add a --verbose flag"), "{s}");
        assert!(section(&s, "Request").contains("Constraint: \"Also never print the API key.\""), "{s}");
        assert!(!section(&s, "Request").contains("Constraint: \"You must"), "already quoted in the request:\n{s}");
        let steps = section(&s, "Steps so far");
        assert!(
            steps.contains("`src/cli.rs` (1 edit)")
                && steps.contains("Read `src/main.rs`")
                && steps.contains("Ran `cargo build"),
            "{s}"
        );
        assert!(steps.contains("error[E0425]"), "{s}");
        assert!(section(&s, "Context for the rest of the turn").contains("ArgAction::Count"), "{s}");

        let prompt = assemble_prompt(CONV, None, &[], BRANCH_INSTRUCTIONS);
        let s = extractive_summary(&request(Purpose::Branch, prompt, 2048));
        assert_eq!(s.lines().next(), Some(EXTRACTIVE_MARKER));
        assert!(section(&s, "Aim of the branch").contains("--verbose"), "{s}");
        assert!(section(&s, "What was tried").contains("src/cli.rs"), "{s}");
        assert!(section(&s, "Outcome").contains("error[E0425]"), "{s}");
        assert!(section(&s, "Worth remembering").contains("Files created or modified on this branch"), "{s}");
    }

    #[test]
    fn custom_headings_are_followed() {
        let prompt = assemble_prompt(CONV, None, &[], "Write:\n\n# Goal\nx\n\n# Errors\n- y\n\n# Mystery\nz");
        let s = extractive_summary(&request(Purpose::History, prompt, 1000));
        assert!(
            s.contains("# Goal\n- Initial request")
                && s.contains("# Errors\n_Errors seen")
                && s.contains("\n- `cargo build")
                && s.contains("# Mystery\nNone."),
            "{s}"
        );
        // No headings: the default sections of the purpose.
        let prompt = assemble_prompt(CONV, None, &[], "Summarize.");
        let s = extractive_summary(&request(Purpose::History, prompt, 1000));
        assert!(s.contains("## Objective") && s.contains("## Pending question"), "{s}");
    }

    #[test]
    fn budget_is_respected_roughly() {
        let mut conv = String::new();
        for i in 0..200 {
            conv.push_str(&format!("[User]: Please always keep file number {i} small.\n\n[Assistant tool calls]: edit(path=\"src/f{i}.rs\", oldText=\"a\", newText=\"b\")\n\n[Tool result]: error: failed to edit number {i}\n\n"));
        }
        for max_tokens in [50, 200, 1000] {
            let s = extractive_summary(&request(
                Purpose::History,
                assemble_prompt(&conv, None, &[], HISTORY_INSTRUCTIONS),
                max_tokens,
            ));
            assert!(s.starts_with(EXTRACTIVE_MARKER));
            assert!(
                s.chars().count() <= (max_tokens as usize * 4).max(EXTRACTIVE_MARKER.len() + 3),
                "{max_tokens}: {} chars",
                s.chars().count()
            );
        }
        let s = extractive_summary(&request(
            Purpose::History,
            assemble_prompt(&conv, None, &[], HISTORY_INSTRUCTIONS),
            1000,
        ));
        assert!(s.contains("earlier items not shown") || s.contains('…'), "{s}");
    }

    #[test]
    fn odd_inputs_never_panic() {
        let weird = [
            "",
            "<conversation>",
            "<conversation>\n",
            "<conversation>\n\n</conversation>\n\n",
            "just some text without any block",
            "<conversation>\n[User]: é😀\u{0301}\n\n[Assistant tool calls]: x(k=\"\\ud83d\"); (; y(a=[1, b=2)\n\n[Tool result]: ü\n</conversation>\n\n<previous-summary>\n",
            "<conversation>\n[Assistant tool calls]: read(path=\n</conversation>\n\n<additional-context>\n- a\nb\n",
            "[User]: \n\n[Assistant]: \n\n[Tool result]: \n\n[Assistant tool calls]: ",
            "<conversation>\n[User]: ```\nunterminated fence ### heading\n</conversation>\n\n<previous-summary>\n# \n## \n```\n</previous-summary>\n\n## \n#",
        ];
        let long_unicode =
            format!("<conversation>\n[User]: {}\n</conversation>\n\n## Objective\n", "漢字😀 must never. ".repeat(500));
        for prompt in weird.iter().map(|s| s.to_string()).chain([long_unicode]) {
            for purpose in [Purpose::History, Purpose::Update, Purpose::TurnPrefix, Purpose::Short, Purpose::Branch] {
                for max_tokens in [0, 1, 5, 100, 100_000] {
                    let s = extractive_summary(&request(purpose, prompt.clone(), max_tokens));
                    assert!(!s.is_empty());
                    if purpose != Purpose::Short {
                        assert!(s.starts_with(EXTRACTIVE_MARKER), "{purpose:?} {prompt:?}: {s}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_prefix_of_a_prompt_is_handled() {
        let full = assemble_prompt(
            &format!("{CONV}\n\n[User]: ünïcödé 😀 — «quotes» `a``b`"),
            Some("## Objective\n- x\n<read-files>\na.rs\n</read-files>"),
            &["ctx".into()],
            HISTORY_INSTRUCTIONS,
        );
        let summarizer = ExtractiveSummarizer { max_bullets: 2, max_quote_chars: 30 };
        for (i, _) in full.char_indices().step_by(3) {
            for purpose in [Purpose::Update, Purpose::Short, Purpose::Branch] {
                let s = summarizer.summarize(&request(purpose, full[..i].to_string(), 300));
                assert!(!s.is_empty());
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::test_cases(256)))]
        #[test]
        fn fragment_soups_never_panic(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("[User]: ".to_string()),
                    proptest::strategy::Just("\n\n[Assistant tool calls]: edit(path=\"".to_string()),
                    proptest::strategy::Just("\n\n[Tool result]: error: ".to_string()),
                    proptest::strategy::Just("\n\n[Assistant]: Done. Let me ".to_string()),
                    proptest::strategy::Just("<conversation>\n".to_string()),
                    proptest::strategy::Just("\n</conversation>\n\n<previous-summary>\n".to_string()),
                    proptest::strategy::Just("\n</previous-summary>\n\n".to_string()),
                    proptest::strategy::Just("\n## Status\n### ".to_string()),
                    proptest::strategy::Just("```".to_string()),
                    proptest::strategy::Just("\"); x(a=[1, {\"b\": \"\\ud800\"}])".to_string()),
                    "\\PC{0,12}",
                ],
                0..24,
            ),
            max_tokens in 0u64..400,
        ) {
            let prompt: String = pieces.concat();
            for purpose in [Purpose::History, Purpose::Update, Purpose::TurnPrefix, Purpose::Short, Purpose::Branch] {
                let s = extractive_summary(&request(purpose, prompt.clone(), max_tokens));
                proptest::prop_assert!(!s.is_empty());
                if purpose != Purpose::Short {
                    proptest::prop_assert!(s.starts_with(EXTRACTIVE_MARKER));
                }
            }
        }
    }

    #[test]
    fn plain_text_without_conversation_block() {
        let s =
            extractive_summary(&request(Purpose::History, "Please migrate the database to Postgres 16.".into(), 1000));
        assert!(section(&s, "Objective").contains("Please migrate the database to Postgres 16."), "{s}");
    }

    #[test]
    fn complete_resolves_to_the_same_text() {
        let req = request(Purpose::History, assemble_prompt(CONV, None, &[], HISTORY_INSTRUCTIONS), 4000);
        let summarizer = ExtractiveSummarizer { max_bullets: 3, max_quote_chars: 60 };
        let via_trait = futures_executor::block_on(summarizer.complete(req.clone())).unwrap();
        assert_eq!(via_trait, summarizer.summarize(&req));
        assert_eq!(via_trait, summarizer.summarize(&req), "deterministic");
        assert_ne!(via_trait, extractive_summary(&req), "options matter");
    }
}
