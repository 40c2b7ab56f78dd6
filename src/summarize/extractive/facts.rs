//! The facts of a conversation ([`Facts`]): requests, constraints, finished steps, errors, files
//! read and changed, commands, intentions and pending questions, gathered in one pass over the parts.

use super::cues::{
    constraint_score, error_lines, first_line, is_done_sentence, is_error_line, is_intention, is_question,
    is_substantive, is_viewing_command, is_wrapper, DECISION_MARKERS, FINDING_MARKERS,
};
use super::text::{
    clip_chars, code, code_clipped, has_word, lead, prose_lines, quote, sentences, strip_markers, word_count,
};
use super::transcript::{parse_calls, Call, Role};
use super::Opts;
use crate::js::lowercase;
use indexmap::{IndexMap, IndexSet};

/// A tool call and the text of its result (when one followed).
#[derive(Debug, Clone)]
struct Step {
    call: Call,
    result: Option<String>,
}

#[derive(Debug, Default, Clone, Copy)]
pub(super) struct FileChange {
    pub(super) edits: usize,
    pub(super) writes: usize,
    failed: usize,
}

#[derive(Debug, Default)]
pub(super) struct Facts {
    /// Substantive user messages (wrappers and command echoes left out), in order.
    pub(super) requests: Vec<String>,
    /// (score, sentence) of stated constraints, in order.
    pub(super) constraints: Vec<(u8, String)>,
    pub(super) done: Vec<String>,
    pub(super) decisions: Vec<String>,
    pub(super) findings: Vec<String>,
    pub(super) errors: Vec<String>,
    /// Successful file changes per path.
    pub(super) changed: IndexMap<String, FileChange>,
    pub(super) read: IndexSet<String>,
    pub(super) modified: IndexSet<String>,
    pub(super) commands: Vec<String>,
    pub(super) intention: Option<String>,
    pub(super) unanswered: Vec<String>,
    pub(super) next: Vec<String>,
    pub(super) pending: Option<String>,
    pub(super) assistant_question: Option<String>,
    pub(super) last_statement: Option<String>,
    /// The conversation had at least one part.
    pub(super) has_parts: bool,
}

impl Facts {
    pub(super) fn gather(parts: &[(Role, &str)], o: &Opts) -> Facts {
        let mut f = Facts { has_parts: !parts.is_empty(), ..Facts::default() };
        let user_like = if parts.iter().any(|(r, _)| *r != Role::Other) { Role::User } else { Role::Other };
        let mut steps: Vec<Step> = Vec::new();
        // Index in `steps` of the next call waiting for its result.
        let mut awaiting = steps.len();
        // Calls before this index were followed by other messages: a missing result was left
        // out of the transcript (branch summaries carry no tool results), not pending.
        let mut settled = 0;
        let mut last_assistant: Option<&str> = None;
        for &(role, text) in parts {
            if !matches!(role, Role::Calls | Role::Thinking) {
                settled = steps.len();
            }
            match role {
                r if r == user_like => f.user_text(text, o),
                Role::Assistant => {
                    f.assistant_text(text, o);
                    last_assistant = Some(text);
                }
                Role::Calls => {
                    // Results of an earlier batch that never came stay unanswered.
                    awaiting = steps.len();
                    steps.extend(parse_calls(text).into_iter().map(|call| Step { call, result: None }));
                }
                Role::ToolResult => match steps.get_mut(awaiting) {
                    Some(step) => {
                        step.result = Some(text.to_string());
                        awaiting += 1;
                    }
                    None => f.result_errors(None, text, o),
                },
                _ => {}
            }
        }
        for (i, step) in steps.iter().enumerate() {
            f.step(step, i >= settled, o);
        }
        f.finish(parts, &steps[settled.min(steps.len())..], last_assistant, o);
        f
    }

    fn user_text(&mut self, text: &str, o: &Opts) {
        let t = text.trim();
        if t.is_empty() {
            return;
        }
        if let Some(rest) = t.strip_prefix("Ran `") {
            // A command the user ran (`!cmd`): keep the command and its errors.
            let cmd = rest.split('`').next().unwrap_or("");
            self.add_command(cmd, o);
            for line in error_lines(rest).into_iter().take(2) {
                push_unique(
                    &mut self.errors,
                    format!("{} (run by the user): {}", code_clipped(cmd, 80), code_clipped(line, o.quote)),
                );
            }
            return;
        }
        if is_wrapper(t) {
            return;
        }
        self.requests.push(t.to_string());
        // Paragraphs of pasted output (errors, prompts, stack traces) state no requirements.
        let prose = t.split("\n\n").filter(|para| {
            !para.lines().any(|l| {
                let l = l.trim();
                is_error_line(l)
                    || l.contains('➜')
                    || l.starts_with("$ ")
                    || l.starts_with("at ")
                    || l.starts_with("> ")
            })
        });
        for s in prose.flat_map(sentences) {
            let score = constraint_score(&s);
            if score >= 2 && s.chars().count() <= o.quote * 2 {
                self.constraints.push((score, s.clone()));
            }
            let l = lowercase(&s);
            if DECISION_MARKERS.iter().any(|m| l.contains(m)) && !s.ends_with('?') && word_count(&s) >= 4 {
                push_unique(&mut self.decisions, format!("User: {}", quote(&s, o.quote)));
            }
        }
        // Errors the user pasted (terminal output).
        let pasted: Vec<&str> = error_lines(t)
            .into_iter()
            .filter(|l| {
                let l = lowercase(l);
                ["error:", "exception:", "panicked", "failed:", "error ts", "traceback"].iter().any(|m| l.contains(m))
                    || l.starts_with("error")
            })
            .take(2)
            .collect();
        for line in pasted {
            push_unique(&mut self.errors, format!("Reported by the user: {}", code_clipped(line, o.quote)));
        }
    }

    fn assistant_text(&mut self, text: &str, o: &Opts) {
        let mut in_summary_list = false;
        for line in prose_lines(text) {
            let trimmed = line.trim();
            let is_item = trimmed.starts_with("- ")
                || trimmed.starts_with("* ")
                || trimmed.chars().next().is_some_and(|c| c.is_ascii_digit());
            let l = lowercase(trimmed);
            if !is_item {
                in_summary_list = l.ends_with(':')
                    && [
                        "what i changed",
                        "what was done",
                        "what we've done",
                        "summary of",
                        "changes:",
                        "i've made",
                        "i made",
                        "here's what",
                        "fixed:",
                        "done:",
                    ]
                    .iter()
                    .any(|m| l.contains(m));
            } else if in_summary_list {
                let item = strip_markers(trimmed);
                if word_count(item) >= 2 && !item.ends_with(':') {
                    push_unique(&mut self.done, quote(item, o.quote));
                }
                continue;
            }
        }
        for s in sentences(text) {
            let l = lowercase(&s);
            if is_done_sentence(&s) {
                push_unique(&mut self.done, quote(&s, o.quote));
            }
            // Statements only: no questions, no lead-ins ("The fix is:"), no announcements, no
            // guesses.
            let hedged = ["might", "maybe", "perhaps", "probably", "likely", "i bet", "i guess", "could be", "if "]
                .iter()
                .any(|h| has_word(&l, h.trim()) && l.contains(h));
            if s.ends_with('?') || s.ends_with(':') || word_count(&s) < 5 || is_intention(&s) || hedged {
                continue;
            }
            let item = quote(&s, o.quote);
            if DECISION_MARKERS.iter().any(|m| l.contains(m)) {
                push_unique(&mut self.decisions, item);
            } else if FINDING_MARKERS.iter().any(|m| l.contains(m)) {
                push_unique(&mut self.findings, item);
            }
        }
    }

    fn add_command(&mut self, cmd: &str, o: &Opts) {
        let line = first_line(cmd);
        if line.is_empty() || is_viewing_command(cmd) {
            return;
        }
        let c = clip_chars(line, o.quote.min(120));
        self.commands.retain(|x| x != &c);
        self.commands.push(c);
    }

    /// Records one tool call; `trailing`: no message followed it (still waiting).
    fn step(&mut self, step: &Step, trailing: bool, o: &Opts) {
        let call = &step.call;
        let path = call.arg_str("path").or_else(|| call.arg_str("file_path")).or_else(|| call.arg_str("file"));
        let failed = step
            .result
            .as_deref()
            .is_some_and(|r| error_lines(first_line(r)).len() == 1 || r.trim_start().starts_with("Error"));
        match (call.name.as_str(), path) {
            ("read", Some(p)) => {
                self.read.insert(p.to_string());
            }
            (name @ ("write" | "edit"), Some(p)) => {
                self.modified.insert(p.to_string());
                let entry = self.changed.entry(p.to_string()).or_default();
                if step.result.is_none() && trailing {
                } else if failed {
                    entry.failed += 1;
                } else if name == "edit" {
                    entry.edits += 1;
                } else {
                    entry.writes += 1;
                }
            }
            ("bash", _) => {
                if let Some(cmd) = call.arg_str("command") {
                    self.add_command(cmd, o);
                }
            }
            _ => {}
        }
        if let Some(result) = &step.result {
            if call.name != "read" {
                self.result_errors(Some(call), result, o);
            }
        }
    }

    fn result_errors(&mut self, call: Option<&Call>, result: &str, o: &Opts) {
        let command = call.and_then(|c| c.arg_str("command"));
        let viewing = command.is_some_and(is_viewing_command);
        let lines: Vec<&str> =
            error_lines(result).into_iter().filter(|l| !viewing || lowercase(l).contains("no such file")).collect();
        if lines.is_empty() {
            return;
        }
        let source = match (call, command) {
            (Some(_), Some(cmd)) => code_clipped(first_line(cmd), 80),
            (Some(c), None) => match c.arg_str("path") {
                Some(p) => format!("{} {}", c.name, code(p)),
                None => code(&c.name),
            },
            (None, _) => "Tool result".to_string(),
        };
        let shown: Vec<String> = lines.iter().take(2).map(|l| code_clipped(l, o.quote)).collect();
        let more = match lines.len().saturating_sub(2) {
            0 => String::new(),
            n => format!(" (+{n} more error line{})", if n == 1 { "" } else { "s" }),
        };
        push_unique(&mut self.errors, format!("{source}: {}{more}", shown.join("; ")));
    }

    /// Works out the state at the end; `trailing`: the calls no message followed.
    fn finish(&mut self, parts: &[(Role, &str)], trailing: &[Step], last_assistant: Option<&str>, o: &Opts) {
        // The last part that carries meaning (thinking is skipped).
        let last = parts
            .iter()
            .rev()
            .find(|(r, t)| *r != Role::Thinking && !(matches!(r, Role::User | Role::Other) && is_wrapper(t)));
        if let Some(&(role, text)) = last {
            if matches!(role, Role::User | Role::Other) && !text.trim().is_empty() {
                self.pending = Some(lead(text, o.quote));
            }
        }
        if let Some(text) = last_assistant {
            let s = sentences(text);
            self.last_statement = s.iter().find(|x| word_count(x) >= 3).cloned().or_else(|| s.first().cloned());
            self.intention = s.iter().rev().find(|x| is_intention(x)).cloned();
            let ends_on_assistant = last.is_some_and(|(r, _)| *r == Role::Assistant);
            if ends_on_assistant {
                if let Some(q) = s.iter().rev().find(|x| x.ends_with('?')) {
                    self.assistant_question = Some(q.clone());
                }
            }
            self.next = announced_steps(text, o);
        }
        for step in trailing.iter().rev().take_while(|s| s.result.is_none()) {
            let args = step
                .call
                .args
                .iter()
                .find(|(k, _)| matches!(k.as_str(), "path" | "command"))
                .and_then(|(_, v)| v.as_str());
            let what = match args {
                Some(a) => format!("{} {}", step.call.name, code_clipped(first_line(a), 100)),
                None => code(&step.call.name),
            };
            self.unanswered.insert(0, what);
        }
        // Keep the strongest constraints, in conversation order.
        let mut ranked: Vec<(usize, u8)> = self.constraints.iter().enumerate().map(|(i, (s, _))| (i, *s)).collect();
        // Strongest first; equal strengths in conversation order (the stable sort keeps it).
        crate::js::sort_by_key_stable(&mut ranked, |&(_, strength)| usize::from(u8::MAX - strength));
        let keep: IndexSet<usize> = ranked.into_iter().take(o.max_bullets).map(|(i, _)| i).collect();
        let mut seen = IndexSet::new();
        self.constraints = std::mem::take(&mut self.constraints)
            .into_iter()
            .enumerate()
            .filter(|(i, (_, s))| keep.contains(i) && seen.insert(lowercase(s)))
            .map(|(_, c)| c)
            .collect();
    }

    pub(super) fn first_request(&self) -> Option<&str> {
        self.requests.iter().find(|r| is_substantive(r)).or(self.requests.first()).map(String::as_str)
    }

    fn latest_request(&self) -> Option<&str> {
        self.requests.iter().rev().find(|r| is_substantive(r)).or(self.requests.last()).map(String::as_str)
    }

    /// The latest request that asks for work: substantive, not a question, preferably of some
    /// length (a follow-up question or "do it all" names the work less well; the pending
    /// question quotes the latest message anyway).
    pub(super) fn latest_work_request(&self) -> Option<&str> {
        self.latest_named_request()
            .or_else(|| self.requests.iter().rev().find(|r| is_substantive(r) && !is_question(r)).map(String::as_str))
            .or_else(|| self.latest_request())
    }

    /// The latest request that names the work: not a question, at least eight words, starting
    /// with a letter (pasted text such as a diff or a list does not).
    pub(super) fn latest_named_request(&self) -> Option<&str> {
        self.requests
            .iter()
            .rev()
            .find(|r| {
                is_substantive(r)
                    && !is_question(r)
                    && word_count(r) >= 8
                    && r.trim_start().starts_with(char::is_alphabetic)
            })
            .map(String::as_str)
    }

    pub(super) fn modified_summary(&self, max_files: usize) -> Option<String> {
        let changed: Vec<(&String, &FileChange)> =
            self.changed.iter().filter(|(_, c)| c.edits + c.writes > 0).collect();
        if changed.is_empty() {
            return None;
        }
        let mut shown: Vec<String> = changed
            .iter()
            .rev()
            .take(max_files)
            .rev()
            .map(|(p, c)| {
                let mut what = Vec::new();
                if c.writes > 0 {
                    what.push("written".to_string());
                }
                match c.edits {
                    0 => {}
                    1 => what.push("1 edit".to_string()),
                    n => what.push(format!("{n} edits")),
                }
                format!("{} ({})", code(p), what.join(", "))
            })
            .collect();
        if changed.len() > max_files {
            shown.push(format!("and {} more", changed.len() - max_files));
        }
        Some(format!(
            "Changed {} file{}: {}",
            changed.len(),
            if changed.len() == 1 { "" } else { "s" },
            shown.join(", ")
        ))
    }

    pub(super) fn read_only(&self) -> Vec<&String> {
        self.read.iter().filter(|p| !self.modified.contains(*p)).collect()
    }
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The steps the last assistant message announces: list items after a line that introduces
/// next / remaining steps.
fn announced_steps(text: &str, o: &Opts) -> Vec<String> {
    let mut out = Vec::new();
    let mut collecting = false;
    for line in prose_lines(text) {
        let t = line.trim();
        let is_item = t.starts_with("- ")
            || t.starts_with("* ")
            || t.chars().next().is_some_and(|c| c.is_ascii_digit()) && t.contains(". ");
        if is_item && collecting {
            let item = strip_markers(t);
            if !item.is_empty() {
                out.push(clip_chars(item, o.quote));
            }
            continue;
        }
        let l = lowercase(t);
        collecting = [
            "next step",
            "next:",
            "remaining",
            "todo",
            "to do",
            "still need",
            "what's left",
            "left to do",
            "next up",
            "then:",
        ]
        .iter()
        .any(|m| l.contains(m));
    }
    out
}

pub(super) fn join_files(files: &[&String], max: usize) -> String {
    let mut shown: Vec<String> = files.iter().take(max).map(|p| code(p)).collect();
    if files.len() > max {
        shown.push(format!("and {} more", files.len() - max));
    }
    shown.join(", ")
}
