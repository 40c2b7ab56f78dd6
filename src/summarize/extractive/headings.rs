//! The sections to write: the Markdown headings of the instructions (or the default templates'
//! headings of the purpose), each classified as a [`Kind`] with a bullet [`Style`].

use crate::summarize::Purpose;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Goal,
    Constraints,
    Done,
    Steps,
    InProgress,
    Blocked,
    Outcome,
    Decisions,
    Findings,
    Next,
    Reference,
    Pending,
    Container,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    Bullet,
    Checked,
    Unchecked,
    Numbered,
    Prose,
}

#[derive(Debug, Clone)]
pub(super) struct Heading {
    pub(super) level: usize,
    pub(super) title: String,
    pub(super) kind: Kind,
    pub(super) style: Style,
}

pub(super) fn classify(title: &str) -> Kind {
    let t = crate::js::lowercase(title);
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if has(&["pending", "question", "open request"]) {
        Kind::Pending
    } else if has(&["next", "todo", "to do", "follow-up"]) {
        Kind::Next
    } else if has(&["block", "error", "problem", "issue", "fail"]) {
        Kind::Blocked
    } else if has(&["underway", "in progress", "ongoing", "current", "in-progress"]) {
        Kind::InProgress
    } else if has(&["steps", "tried", "actions taken", "what was done", "work done"]) {
        Kind::Steps
    } else if has(&["complete", "done", "accomplish", "finished"]) {
        Kind::Done
    } else if has(&["outcome", "result"]) {
        Kind::Outcome
    } else if has(&["decision", "decided"]) {
        Kind::Decisions
    } else if has(&["requirement", "preference", "constraint", "convention", "rule"]) {
        Kind::Constraints
    } else if has(&["objective", "goal", "aim", "request", "task", "purpose", "intent"]) {
        Kind::Goal
    } else if has(&["reference", "detail", "file", "path", "command"]) {
        Kind::Reference
    } else if has(&["remember", "finding", "context", "learn", "note", "insight", "lesson"]) {
        Kind::Findings
    } else if has(&["status", "progress"]) {
        Kind::Steps
    } else {
        Kind::Unknown
    }
}

fn style_of(first_body_line: Option<&str>) -> Style {
    let Some(l) = first_body_line.map(str::trim) else { return Style::Prose };
    if l.starts_with("- [x]") || l.starts_with("- [X]") {
        Style::Checked
    } else if l.starts_with("- [ ]") {
        Style::Unchecked
    } else if l.starts_with("- ") || l.starts_with("* ") {
        Style::Bullet
    } else if l.chars().next().is_some_and(|c| c.is_ascii_digit()) && (l.contains(". ") || l.contains(") ")) {
        Style::Numbered
    } else {
        Style::Prose
    }
}

/// The Markdown headings of the instructions (levels 1–6, outside code fences), with the kind
/// of content each asks for and the list style of its description.
pub(super) fn headings_of(instructions: &str) -> Vec<Heading> {
    let mut out: Vec<Heading> = Vec::new();
    let mut fenced = false;
    let mut need_style = false;
    for line in instructions.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let level = t.len() - t.trim_start_matches('#').len();
        if (1..=6).contains(&level) && t[level..].starts_with(' ') && !t[level..].trim().is_empty() {
            let title = t[level..].trim().trim_end_matches('#').trim().to_string();
            out.push(Heading { level, kind: classify(&title), title, style: Style::Prose });
            need_style = true;
        } else if need_style && !t.trim().is_empty() {
            if let Some(h) = out.last_mut() {
                h.style = style_of(Some(t));
            }
            need_style = false;
        }
    }
    // A heading directly followed by a deeper one only groups its children.
    for i in 0..out.len() {
        let deeper_follows = out.get(i + 1).is_some_and(|n| n.level > out[i].level);
        if deeper_follows {
            out[i].kind = Kind::Container;
        }
    }
    out
}

pub(super) fn h(level: usize, title: &str, style: Style) -> Heading {
    Heading { level, title: title.to_string(), kind: classify(title), style }
}

/// The sections of the default templates (`prompts/`) for a purpose.
pub(super) fn default_headings(purpose: Purpose) -> Vec<Heading> {
    match purpose {
        Purpose::TurnPrefix => vec![
            h(2, "Request", Style::Prose),
            h(2, "Steps so far", Style::Bullet),
            h(2, "Context for the rest of the turn", Style::Bullet),
        ],
        Purpose::Branch => vec![
            h(2, "Aim of the branch", Style::Prose),
            h(2, "What was tried", Style::Bullet),
            h(2, "Outcome", Style::Bullet),
            h(2, "Worth remembering", Style::Bullet),
        ],
        _ => {
            let mut v = vec![
                h(2, "Objective", Style::Prose),
                h(2, "Requirements and preferences", Style::Bullet),
                h(2, "Status", Style::Prose),
                h(3, "Completed", Style::Checked),
                h(3, "Underway", Style::Unchecked),
                h(3, "Blocked", Style::Bullet),
                h(2, "Decisions", Style::Bullet),
                h(2, "Next actions", Style::Numbered),
                h(2, "Reference details", Style::Bullet),
                h(2, "Pending question", Style::Prose),
            ];
            v[2].kind = Kind::Container;
            v
        }
    }
}
