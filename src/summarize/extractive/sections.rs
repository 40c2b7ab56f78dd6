//! The section writers: the items of each [`Kind`] of section, taken from the [`Facts`].

use super::facts::{join_files, Facts};
use super::headings::{Heading, Kind};
use super::text::{clip_chars, code, lead, one_line, quote};
use super::Opts;
use crate::summarize::Purpose;

/// What one section holds: the previous summary's lines (updates) and the new items.
#[derive(Debug, Clone)]
pub(super) struct Section {
    pub(super) heading: Heading,
    pub(super) prev: Vec<String>,
    pub(super) items: Vec<String>,
    /// The previous lines are kept verbatim, capped from the start (foreign summaries).
    pub(super) verbatim: bool,
}

/// The items of each kind of section for the given layout.
pub(super) fn items_for(
    kind: Kind,
    purpose: Purpose,
    f: &Facts,
    layout: &[Heading],
    context: &[String],
    o: &Opts,
) -> Vec<String> {
    let has = |k: Kind| layout.iter().any(|h| h.kind == k);
    let q = o.quote;
    let files_max = o.max_bullets * 2;
    let errors_home = if has(Kind::Blocked) {
        Kind::Blocked
    } else if has(Kind::Outcome) {
        Kind::Outcome
    } else if has(Kind::Steps) {
        Kind::Steps
    } else {
        Kind::Findings
    };
    let mut items = Vec::new();
    match kind {
        Kind::Goal => {
            let first = f.first_request();
            let latest = f.latest_work_request();
            match purpose {
                Purpose::Update => {
                    if let Some(l) = latest {
                        items.push(format!("Latest request: {}", quote(&lead(l, q), q)));
                    }
                }
                Purpose::TurnPrefix => {
                    if let Some(r) = first {
                        items.push(format!("User asked: {}", quote(&lead(r, q * 2), q * 2)));
                    }
                }
                _ => {
                    let label = if purpose == Purpose::Branch { "Started with" } else { "Initial request" };
                    if let Some(r) = first {
                        items.push(format!("{label}: {}", quote(&lead(r, q), q)));
                    }
                    if let Some(l) = latest.filter(|l| Some(*l) != first) {
                        items.push(format!("Latest request: {}", quote(&lead(l, q), q)));
                    }
                }
            }
            if !has(Kind::Constraints) {
                // Constraints not already quoted in the request itself.
                let quoted = items.join("\n");
                items.extend(
                    f.constraints
                        .iter()
                        .filter(|(_, c)| !quoted.contains(c.as_str()))
                        .map(|(_, c)| format!("Constraint: {}", quote(c, q))),
                );
            }
        }
        Kind::Constraints => items.extend(f.constraints.iter().map(|(_, c)| quote(c, q))),
        Kind::Done => {
            if !has(Kind::Steps) {
                items.extend(f.done.iter().cloned());
                // Last, so that the cap (which keeps the newest items) keeps it.
                items.extend(f.modified_summary(files_max));
            }
        }
        Kind::Steps => {
            items.extend(f.modified_summary(files_max));
            let read = f.read_only();
            if !read.is_empty() && !has(Kind::Reference) {
                items.push(format!("Read {}", join_files(&read, files_max)));
            }
            if !has(Kind::Reference) {
                let n = f.commands.len();
                let shown: Vec<String> =
                    f.commands.iter().skip(n.saturating_sub(o.max_bullets / 2 + 1)).map(|c| code(c)).collect();
                if !shown.is_empty() {
                    let earlier =
                        if n > shown.len() { format!(" (and {} earlier)", n - shown.len()) } else { String::new() };
                    items.push(format!("Ran {}{earlier}", shown.join(", ")));
                }
            }
            if !has(Kind::Done) {
                items.extend(f.done.iter().cloned());
            }
            if errors_home == Kind::Steps {
                items.extend(f.errors.iter().map(|e| format!("Error: {e}")));
            }
        }
        Kind::InProgress => {
            if let Some(i) = &f.intention {
                items.push(format!("Last announced step: {}", quote(i, q)));
            }
            items.extend(f.unanswered.iter().map(|c| format!("Waiting for the result of {c}")));
        }
        Kind::Blocked => {
            if errors_home == Kind::Blocked {
                items.extend(f.errors.iter().cloned());
            }
        }
        Kind::Outcome => {
            if errors_home == Kind::Outcome {
                items.extend(f.errors.iter().map(|e| format!("Error: {e}")));
            }
            if let Some(s) = &f.last_statement {
                items.push(format!("Last assistant message: {}", quote(s, q)));
            }
            if !has(Kind::InProgress) {
                if let Some(i) = f.intention.as_ref().filter(|i| Some(*i) != f.last_statement.as_ref()) {
                    items.push(format!("Stopped while: {}", quote(i, q)));
                }
            }
            if !has(Kind::Pending) {
                if let Some(p) = &f.pending {
                    items.push(format!("Ended on the user's message: {}", quote(p, q)));
                }
            }
        }
        Kind::Decisions => {
            items.extend(f.decisions.iter().cloned());
            if !has(Kind::Findings) {
                items.extend(f.findings.iter().map(|x| format!("Finding: {x}")));
            }
        }
        Kind::Findings => {
            if !has(Kind::Decisions) {
                items.extend(f.decisions.iter().cloned());
            }
            items.extend(f.findings.iter().cloned());
            if errors_home == Kind::Findings {
                items.extend(f.errors.iter().map(|e| format!("Error: {e}")));
            }
            if !has(Kind::Reference) && (purpose == Purpose::Branch || !has(Kind::Steps)) {
                let modified: Vec<&String> = f.modified.iter().collect();
                if !modified.is_empty() {
                    let verb = if purpose == Purpose::Branch {
                        "Files created or modified on this branch (they may still contain those changes)"
                    } else {
                        "Files modified"
                    };
                    items.push(format!("{verb}: {}", join_files(&modified, files_max)));
                }
                items.extend(context.iter().map(|c| format!("From the host: {}", clip_chars(&one_line(c), q))));
            }
        }
        Kind::Next => {
            if f.pending.is_some() {
                items.push("Answer the user's latest message (see the pending question).".to_string());
            } else if let Some(question) = &f.assistant_question {
                items.push(format!("Wait for the user's answer to: {}", quote(question, q)));
            }
            items.extend(f.next.iter().cloned());
            if f.next.is_empty() && f.pending.is_none() {
                if let Some(i) = &f.intention {
                    items.push(format!("Continue with: {}", quote(i, q)));
                }
            }
        }
        Kind::Reference => {
            let read = f.read_only();
            if !read.is_empty() {
                items.push(format!("Files read: {}", join_files(&read, files_max)));
            }
            let modified: Vec<&String> = f.modified.iter().collect();
            if !modified.is_empty() {
                items.push(format!("Files modified: {}", join_files(&modified, files_max)));
            }
            let n = f.commands.len();
            let shown: Vec<String> = f.commands.iter().skip(n.saturating_sub(o.max_bullets)).map(|c| code(c)).collect();
            if !shown.is_empty() {
                let label = if n > shown.len() {
                    format!("Commands run (last {} of {n})", shown.len())
                } else {
                    "Commands run".to_string()
                };
                items.push(format!("{label}: {}", shown.join(", ")));
            }
            items.extend(context.iter().map(|c| format!("From the host: {}", clip_chars(&one_line(c), q))));
        }
        Kind::Pending => {
            if let Some(p) = &f.pending {
                items.push(quote(p, q));
            } else if let Some(question) = &f.assistant_question {
                items.push(format!("The assistant asked: {}", quote(question, q)));
            }
        }
        Kind::Container | Kind::Unknown => {}
    }
    items
}

/// Kinds whose content describes the most recent state: an update replaces them.
pub(super) fn replaces_previous(kind: Kind) -> bool {
    matches!(kind, Kind::InProgress | Kind::Next | Kind::Pending)
}

/// Kinds that hold a single statement (no cap, prose allowed).
pub(super) fn is_single(kind: Kind) -> bool {
    matches!(kind, Kind::Pending)
}
