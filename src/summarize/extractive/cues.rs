//! Cues of what a sentence or line says: filler and wrapper messages, questions, finished work,
//! intentions, decisions, findings, constraints, error lines and viewing commands.

use super::text::{contains, has_word, one_line, starts_with_any, word_count};
use crate::js::lowercase;
use indexmap::IndexSet;

const FILLERS: [&str; 16] = [
    "ok",
    "okay",
    "yes",
    "no",
    "continue",
    "go",
    "go on",
    "thanks",
    "thank you",
    "wow",
    "nice",
    "great",
    "sure",
    "y",
    "k",
    "proceed",
];

pub(super) fn is_wrapper(text: &str) -> bool {
    let t = text.trim_start();
    (t.contains("<summary>\n") && t.contains("</summary>"))
        || t.starts_with("<system-reminder>")
        || t.starts_with("Ran `")
        || t.starts_with("Ran Python:")
}

/// A message that asks a question rather than for work.
pub(super) fn is_question(text: &str) -> bool {
    let t = text.trim();
    let first = lowercase(t.split(|c: char| !c.is_alphanumeric() && c != '\'').find(|w| !w.is_empty()).unwrap_or(""));
    t.ends_with('?')
        || matches!(
            first.as_str(),
            "what"
                | "why"
                | "how"
                | "where"
                | "when"
                | "who"
                | "which"
                | "is"
                | "are"
                | "do"
                | "does"
                | "did"
                | "can"
                | "could"
                | "would"
                | "will"
                | "whats"
                | "what's"
        )
}

pub(super) fn is_substantive(text: &str) -> bool {
    let t = text.trim();
    if t.starts_with('/') && !t.contains(char::is_whitespace) {
        return false; // a slash command such as `/mode`
    }
    let l = lowercase(&one_line(text));
    let l = l.trim_matches(|c: char| !c.is_alphanumeric() && c != ' ');
    !l.is_empty() && !FILLERS.contains(&l) && (word_count(l) >= 3 || text.contains('?'))
}

const DONE_VERBS: [&str; 40] = [
    "done",
    "fixed",
    "added",
    "created",
    "implemented",
    "updated",
    "removed",
    "refactored",
    "moved",
    "renamed",
    "wrote",
    "written",
    "changed",
    "replaced",
    "committed",
    "completed",
    "finished",
    "deleted",
    "extracted",
    "merged",
    "converted",
    "ported",
    "cleaned",
    "simplified",
    "installed",
    "configured",
    "migrated",
    "restored",
    "reverted",
    "split",
    "resolved",
    "verified",
    "pushed",
    "built",
    "published",
    "documented",
    "tested",
    "released",
    "integrated",
    "all",
];

/// An assistant sentence that reports finished work.
pub(super) fn is_done_sentence(s: &str) -> bool {
    if s.ends_with('?') || s.ends_with(':') || word_count(s) < 3 {
        return false;
    }
    let l = lowercase(s);
    let l = l.trim_start_matches(|c: char| !c.is_alphanumeric());
    if starts_with_any(
        l,
        &["let me", "let's", "now let", "i'll", "i will", "i need", "we need", "next", "first", "then", "to do"],
    ) {
        return false;
    }
    let first = l.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
    if first == "all" {
        return l.contains("pass") || l.contains("work") || l.contains("done") || l.contains("green");
    }
    if DONE_VERBS.contains(&first) {
        return true;
    }
    starts_with_any(
        l,
        &[
            "i've ",
            "i have ",
            "we've ",
            "we have ",
            "successfully",
            "it builds",
            "it works",
            "everything works",
            "everything is working",
            "the build passes",
            "tests pass",
        ],
    ) || [
        " has been ",
        " have been ",
        " are now passing",
        " now passes",
        " now works",
        " is now fixed",
        " all pass",
        " successfully",
    ]
    .iter()
    .any(|p| l.contains(p))
}

/// An announced next action (`Let me …`, `Now I'll …`, `Next, …`).
pub(super) fn is_intention(s: &str) -> bool {
    let l = lowercase(s);
    let l = l.trim_start_matches(|c: char| !c.is_alphanumeric());
    if word_count(l) < 3 || l.ends_with('?') {
        return false;
    }
    if starts_with_any(
        l,
        &[
            "let me",
            "let's",
            "i'll",
            "i will",
            "i need to",
            "i'm going to",
            "next,",
            "next i",
            "next we",
            "first,",
            "first i",
            "then i",
            "then we",
            "we need to",
            "we'll",
        ],
    ) {
        return true;
    }
    // "Now …" announces a step when a verb follows ("Now update the theme:"), not in
    // "Now `x` is used".
    const VERBS: [&str; 32] = [
        "let",
        "let's",
        "i",
        "i'll",
        "we",
        "we'll",
        "update",
        "fix",
        "add",
        "run",
        "check",
        "create",
        "remove",
        "write",
        "read",
        "test",
        "implement",
        "build",
        "move",
        "rename",
        "replace",
        "verify",
        "commit",
        "change",
        "make",
        "edit",
        "look",
        "try",
        "wire",
        "use",
        "refactor",
        "delete",
    ];
    let mut words = l.split_whitespace();
    words.next() == Some("now") && words.next().is_some_and(|w| VERBS.contains(&w.trim_end_matches([',', ':'])))
}

pub(super) const DECISION_MARKERS: [&str; 16] = [
    "decided",
    "decision",
    "we'll go with",
    "going with",
    "go with",
    "instead of",
    "rather than",
    "chose ",
    "agreed",
    "opted",
    "switch to",
    "stick with",
    "the plan is",
    "approach:",
    "we'll use",
    "let's use",
];

pub(super) const FINDING_MARKERS: [&str; 14] = [
    "the issue is",
    "the problem is",
    "the cause",
    "root cause",
    "turns out",
    "the reason",
    "is caused by",
    "the bug is",
    "the fix is",
    "the error is",
    "the problem was",
    "the issue was",
    "the culprit",
    "this means",
];

/// (weight, word) of the words that mark a stated requirement or preference.
const CONSTRAINT_WORDS: [(u8, &str); 19] = [
    (3, "must"),
    (3, "never"),
    (3, "always"),
    (3, "don't"),
    (3, "do not"),
    (3, "dont"),
    (3, "avoid"),
    (3, "prefer"),
    (1, "only"),
    (2, "make sure"),
    (2, "should"),
    (2, "shouldn't"),
    (1, "need to"),
    (1, "needs to"),
    (1, "use"),
    (1, "keep"),
    (1, "without"),
    (1, "instead"),
    (1, "want"),
];

/// How strongly a user sentence states a requirement (0: not one). Questions, lead-ins
/// ending with `:`, pasted output and "I don't think …" are not requirements.
pub(super) fn constraint_score(s: &str) -> u8 {
    let t = s.trim_end();
    if t.ends_with('?') || t.ends_with(':') || word_count(t) < 4 || is_error_line(t) || t.contains("{\"") {
        return 0;
    }
    let l = lowercase(t).replace('’', "'");
    let personal = ["i don't", "i dont", "i do not"].iter().any(|p| l.contains(p))
        && !["i don't want", "i dont want", "i do not want"].iter().any(|p| l.contains(p));
    CONSTRAINT_WORDS
        .iter()
        .filter(|(_, w)| has_word(&l, w) && !(personal && matches!(*w, "don't" | "dont" | "do not")))
        .map(|(n, _)| *n)
        .max()
        .unwrap_or(0)
}

pub(super) fn is_error_line(line: &str) -> bool {
    // Very long lines are minified code or data, not messages.
    if line.len() < 4 || line.len() > 400 {
        return false;
    }
    let l = lowercase(line);
    const NOT: [&str; 12] = [
        "0 errors",
        "no errors",
        "without error",
        "error-free",
        "errors: 0",
        "0 failed",
        "failed: 0",
        "fail 0",
        "failures: 0",
        "0 failures",
        "exited with code 0",
        "no issues",
    ];
    const WORDS: [&str; 12] = [
        "error",
        "errors",
        "failed",
        "failure",
        "fail",
        "failing",
        "exception",
        "panic",
        "panicked",
        "traceback",
        "fatal",
        "enoent",
    ];
    const PHRASES: [&str; 12] = [
        "could not",
        "cannot find",
        "can't find",
        "no such file",
        "not found",
        "command exited with code",
        "command aborted",
        "segmentation fault",
        "permission denied",
        "is not a function",
        "undefined is not",
        "npm err!",
    ];
    // The cues first: most lines have none, and then the negations need no search.
    let cue = WORDS.iter().any(|w| has_word(&l, w)) || PHRASES.iter().any(|p| contains(&l, p));
    cue && !NOT.iter().any(|n| contains(&l, n))
}

/// Trimmed error lines of a text, in order, without duplicates.
pub(super) fn error_lines(text: &str) -> Vec<&str> {
    let mut seen = IndexSet::new();
    for line in text.lines() {
        let t = line.trim();
        if is_error_line(t) {
            seen.insert(t);
        }
    }
    seen.into_iter().collect()
}

/// A bash command whose output is file content or a listing (its "errors" are data).
pub(super) fn is_viewing_command(command: &str) -> bool {
    let first_segment = command
        .split("&&")
        .flat_map(|s| s.split(';'))
        .map(str::trim)
        .find(|s| !s.is_empty() && !s.starts_with("cd "))
        .unwrap_or("");
    let program = first_segment.split_whitespace().next().unwrap_or("");
    let program = program.rsplit('/').next().unwrap_or(program);
    matches!(
        program,
        "cat"
            | "head"
            | "tail"
            | "less"
            | "grep"
            | "rg"
            | "ag"
            | "find"
            | "ls"
            | "tree"
            | "wc"
            | "sed"
            | "awk"
            | "echo"
            | "diff"
    ) || (program == "git"
        && first_segment
            .split_whitespace()
            .nth(1)
            .is_some_and(|s| matches!(s, "diff" | "show" | "log" | "status" | "grep" | "blame")))
}

pub(super) fn first_line(s: &str) -> &str {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_are_recognised() {
        assert!(is_error_line("src/a.ts(1,2): error TS2339: nope"));
        assert!(!is_error_line("Finished with 0 errors"));
        assert!(!is_error_line("onError handler"));
    }
}
