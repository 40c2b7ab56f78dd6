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
//! [`assemble_prompt`]: crate::summarize::assemble_prompt

use crate::error::Result;
use crate::summarize::{Complete, Purpose, SummaryRequest, NO_PRIOR_HISTORY};
use indexmap::{IndexMap, IndexSet};
use serde_json::Value;
use std::future::Future;

/// The first line of every sectioned extractive summary (all purposes except
/// [`Purpose::Short`]): it tells the reader that no model wrote the text.
pub const EXTRACTIVE_MARKER: &str = "_Extractive summary (no model was used): sentences quoted from the conversation._";

/// The label put before the items an update adds to a section of the previous summary.
pub const NEW_SINCE_LABEL: &str = "_New since the last summary:_";

/// The line put before the errors of a blocked section: an extractive summary cannot tell
/// whether later work fixed them.
const ERRORS_NOTE: &str = "_Errors seen, oldest first; later messages may have resolved some of them:_";

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
    fn complete(&self, request: SummaryRequest) -> impl Future<Output = Result<String>> {
        std::future::ready(Ok(self.summarize(&request)))
    }
}

/// The extractive answer to `request` with the default options
/// ([`ExtractiveSummarizer::default`]). Never panics, whatever the prompt holds.
pub fn extractive_summary(request: &SummaryRequest) -> String {
    ExtractiveSummarizer::default().summarize(request)
}

#[derive(Debug, Clone, Copy)]
struct Opts {
    max_bullets: usize,
    quote: usize,
}

/// `max_tokens` as a character budget (4 characters per token); 0 means no limit.
fn char_budget(max_tokens: u64) -> usize {
    if max_tokens == 0 {
        return usize::MAX;
    }
    usize::try_from(max_tokens.saturating_mul(4)).unwrap_or(usize::MAX)
}

// ---------------------------------------------------------------------------------------------
// The prompt frame (SPEC §9)

const CONV_OPEN: &str = "<conversation>\n";
const CONV_CLOSE: &str = "\n</conversation>\n\n";
const PREV_OPEN: &str = "<previous-summary>\n";
const PREV_CLOSE: &str = "\n</previous-summary>\n\n";
const CTX_OPEN: &str = "<additional-context>\n";
const CTX_CLOSE: &str = "</additional-context>\n\n";

#[derive(Debug, Default)]
struct PromptParts<'a> {
    conversation: &'a str,
    previous: Option<&'a str>,
    context: Vec<String>,
    instructions: &'a str,
}

/// Splits an assembled prompt into its blocks. The transcript may itself contain the closing
/// tags (sessions about this very format), so the conversation ends at the *last* closing tag
/// that is followed by the next expected block.
fn split_prompt(prompt: &str) -> PromptParts<'_> {
    let Some(open) = prompt.find(CONV_OPEN) else {
        return PromptParts { conversation: prompt, ..Default::default() };
    };
    let body = &prompt[open + CONV_OPEN.len()..];
    let with_prev = format!("{CONV_CLOSE}{PREV_OPEN}");
    let with_ctx = format!("{CONV_CLOSE}{CTX_OPEN}");
    let end = body.rfind(&with_prev).or_else(|| body.rfind(&with_ctx)).or_else(|| body.rfind(CONV_CLOSE));
    let (conversation, mut rest) = match end {
        Some(e) => (&body[..e], &body[e + CONV_CLOSE.len()..]),
        None => match body.rfind("\n</conversation>") {
            Some(e) => (&body[..e], &body[e + "\n</conversation>".len()..]),
            None => (body, ""),
        },
    };
    rest = rest.trim_start_matches('\n');
    let mut previous = None;
    if let Some(r) = rest.strip_prefix(PREV_OPEN) {
        let end = r.find(&format!("{PREV_CLOSE}{CTX_OPEN}")).or_else(|| r.rfind(PREV_CLOSE));
        match end {
            Some(e) => {
                previous = Some(&r[..e]);
                rest = &r[e + PREV_CLOSE.len()..];
            }
            None => {
                previous = Some(r.strip_suffix("\n</previous-summary>").unwrap_or(r));
                rest = "";
            }
        }
    }
    let mut context: Vec<String> = Vec::new();
    if let Some(r) = rest.strip_prefix(CTX_OPEN) {
        let (block, after) = match r.find(CTX_CLOSE) {
            Some(e) => (&r[..e], &r[e + CTX_CLOSE.len()..]),
            None => (r, ""),
        };
        for line in block.lines() {
            match (line.strip_prefix("- "), context.last_mut()) {
                (Some(item), _) => context.push(item.to_string()),
                (None, Some(last)) => {
                    last.push('\n');
                    last.push_str(line);
                }
                (None, None) => context.push(line.to_string()),
            }
        }
        context.retain(|c| !c.trim().is_empty());
        rest = after;
    }
    PromptParts { conversation, previous, context, instructions: rest }
}

// ---------------------------------------------------------------------------------------------
// The transcript (SPEC §8)

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Thinking,
    Assistant,
    Calls,
    ToolResult,
    Other,
}

const LABELS: [(&str, Role); 5] = [
    ("[User]: ", Role::User),
    ("[Assistant thinking]: ", Role::Thinking),
    ("[Assistant]: ", Role::Assistant),
    ("[Assistant tool calls]: ", Role::Calls),
    ("[Tool result]: ", Role::ToolResult),
];

fn label_at(s: &str) -> Option<(Role, usize)> {
    LABELS.iter().find(|(l, _)| s.starts_with(l)).map(|(l, r)| (*r, l.len()))
}

/// The parts of a serialized conversation: a part starts at the beginning or after a blank
/// line with one of the five labels. Text before the first label is an `Other` part.
fn split_parts(conv: &str) -> Vec<(Role, &str)> {
    let mut starts: Vec<(usize, Role, usize)> = Vec::new();
    if let Some((r, n)) = label_at(conv) {
        starts.push((0, r, n));
    }
    for (i, _) in conv.match_indices("\n\n[") {
        let at = i + 2;
        if let Some((r, n)) = conv.get(at..).and_then(label_at) {
            starts.push((at, r, n));
        }
    }
    let mut parts = Vec::new();
    let first = starts.first().map_or(conv.len(), |s| s.0);
    let lead = conv.get(..first).unwrap_or("").trim();
    if !lead.is_empty() {
        parts.push((Role::Other, lead));
    }
    for (k, &(at, role, n)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(conv.len(), |s| s.0.saturating_sub(2));
        parts.push((role, conv.get(at + n..end).unwrap_or("")));
    }
    parts
}

#[derive(Debug, Clone, PartialEq)]
struct Call {
    name: String,
    args: Vec<(String, Value)>,
}

impl Call {
    fn arg_str(&self, key: &str) -> Option<&str> {
        self.args.iter().find(|(k, _)| k == key).and_then(|(_, v)| v.as_str())
    }
}

/// Parses `name(k=JSON, …); name2(…)`. Stops at the first call it cannot read (keeping the
/// calls read so far and the name of the broken one).
fn parse_calls(s: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let Some(open) = rest.find('(') else {
            calls.push(Call { name: rest.to_string(), args: Vec::new() });
            break;
        };
        let name = rest[..open].trim().to_string();
        let mut r = &rest[open + 1..];
        let mut args = Vec::new();
        let mut ok = true;
        loop {
            if let Some(after) = r.strip_prefix(')') {
                r = after;
                break;
            }
            let Some(eq) = r.find('=') else {
                ok = false;
                break;
            };
            let key = r[..eq].to_string();
            let text = &r[eq + 1..];
            let Some((value, used)) = parse_value(text) else {
                ok = false;
                break;
            };
            args.push((key, value));
            r = text.get(used..).unwrap_or("");
            if let Some(after) = r.strip_prefix(", ") {
                r = after;
            } else if !r.starts_with(')') {
                ok = false;
                break;
            }
        }
        calls.push(Call { name, args });
        if !ok {
            break;
        }
        match r.strip_prefix("; ") {
            Some(after) => rest = after,
            None => break,
        }
    }
    calls
}

/// One `JSON.stringify` value at the start of `s` and its length in bytes.
fn parse_value(s: &str) -> Option<(Value, usize)> {
    match s.as_bytes().first()? {
        b'"' | b'[' | b'{' => {
            let mut it = serde_json::Deserializer::from_str(s).into_iter::<Value>();
            match it.next() {
                Some(Ok(v)) => Some((v, it.byte_offset())),
                _ if s.starts_with('"') => {
                    // Not valid for serde_json (a lone surrogate escape): keep the raw text.
                    let end = json_string_end(s)?;
                    Some((Value::String(s[1..end - 1].to_string()), end))
                }
                _ => None,
            }
        }
        _ => {
            let end = s.find([',', ')']).unwrap_or(s.len());
            let raw = &s[..end];
            Some((serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string())), end))
        }
    }
}

/// End (exclusive, in bytes) of the JSON string literal at the start of `s`.
fn json_string_end(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Text helpers

/// At most `max` characters of `s`; a longer text is cut (at a word boundary when one is
/// near) and ends with "…". Never splits a UTF-8 character.
fn clip_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let keep = max.saturating_sub(1);
    let cut = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
    let head = &s[..cut];
    let head = match head.rfind(char::is_whitespace) {
        Some(ws) if head[..ws].chars().count() * 3 >= keep * 2 => &head[..ws],
        _ => head,
    };
    format!("{}…", head.trim_end())
}

/// `s` on one line: runs of whitespace (newlines included) become one space.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An inline code span holding `s` exactly (fence longer than any backtick run inside).
fn code(s: &str) -> String {
    let s = one_line(s);
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A code span of `s`, clipped to `max` characters with "…" outside the span.
fn code_clipped(s: &str, max: usize) -> String {
    let s = one_line(s);
    if s.chars().count() <= max {
        return code(&s);
    }
    let clipped = clip_chars(&s, max);
    let inner = clipped.strip_suffix('…').unwrap_or(&clipped);
    format!("{} …", code(inner))
}

/// A quotation of `s` (one line, clipped).
fn quote(s: &str, max: usize) -> String {
    format!("\"{}\"", clip_chars(&one_line(s), max))
}

/// `word` occurs in `hay` (both lowercase) with no letter or digit right before or after it.
fn has_word(hay: &str, word: &str) -> bool {
    hay.match_indices(word).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

fn starts_with_any(s: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| s.starts_with(p))
}

/// Strips Markdown list, heading, quote and emphasis markers from the start of a line.
fn strip_markers(line: &str) -> &str {
    let mut l = line.trim();
    loop {
        let before = l;
        for p in ["- [ ] ", "- [x] ", "- [X] ", "- ", "* ", "+ ", "> ", "✓ ", "✅ ", "✔ ", "• "] {
            if let Some(r) = l.strip_prefix(p) {
                l = r.trim_start();
            }
        }
        let hashes = l.len() - l.trim_start_matches('#').len();
        if hashes > 0 && l[hashes..].starts_with(' ') {
            l = l[hashes..].trim_start();
        }
        let digits = l.len() - l.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && digits < 4 {
            if let Some(r) = l[digits..].strip_prefix(". ").or_else(|| l[digits..].strip_prefix(") ")) {
                l = r.trim_start();
            }
        }
        if l == before {
            return l;
        }
    }
}

/// The prose lines of a message: lines outside code fences and not indented like code.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            return false;
        }
        !fenced && !line.starts_with('\t') && !line.starts_with("    ") && !t.is_empty()
    })
}

/// The sentences of a message's prose (list items and headings count as sentences).
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        let line = strip_markers(line);
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|(_, n)| n.is_whitespace()) {
                let candidate = line[start..=i].trim();
                let lower = candidate.to_lowercase();
                if lower.ends_with("e.g.") || lower.ends_with("i.e.") || lower.ends_with(" vs.") {
                    continue;
                }
                if !candidate.is_empty() {
                    out.push(candidate.to_string());
                }
                start = i + c.len_utf8();
            }
        }
        let tail = line[start..].trim();
        if !tail.is_empty() {
            out.push(tail.to_string());
        }
    }
    out
}

fn word_count(s: &str) -> usize {
    s.split_whitespace().count()
}

/// The first one or two sentences of a user message, clipped.
fn lead(text: &str, max: usize) -> String {
    let s = sentences(text);
    let joined = match s.len() {
        0 => one_line(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")),
        1 => s[0].clone(),
        _ if s[0].chars().count() >= max / 2 => s[0].clone(),
        _ => format!("{} {}", s[0], s[1]),
    };
    clip_chars(&joined, max)
}

// ---------------------------------------------------------------------------------------------
// Facts of a conversation

/// A tool call and the text of its result (when one followed).
#[derive(Debug, Clone)]
struct Step {
    call: Call,
    result: Option<String>,
}

#[derive(Debug, Default, Clone, Copy)]
struct FileChange {
    edits: usize,
    writes: usize,
    failed: usize,
}

#[derive(Debug, Default)]
struct Facts {
    /// Substantive user messages (wrappers and command echoes left out), in order.
    requests: Vec<String>,
    /// (score, sentence) of stated constraints, in order.
    constraints: Vec<(u8, String)>,
    done: Vec<String>,
    decisions: Vec<String>,
    findings: Vec<String>,
    errors: Vec<String>,
    /// Successful file changes per path.
    changed: IndexMap<String, FileChange>,
    read: IndexSet<String>,
    modified: IndexSet<String>,
    commands: Vec<String>,
    intention: Option<String>,
    unanswered: Vec<String>,
    next: Vec<String>,
    pending: Option<String>,
    assistant_question: Option<String>,
    last_statement: Option<String>,
    /// The conversation had at least one part.
    has_parts: bool,
}

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

fn is_wrapper(text: &str) -> bool {
    let t = text.trim_start();
    (t.contains("<summary>\n") && t.contains("</summary>"))
        || t.starts_with("<system-reminder>")
        || t.starts_with("Ran `")
        || t.starts_with("Ran Python:")
}

/// A message that asks a question rather than for work.
fn is_question(text: &str) -> bool {
    let t = text.trim();
    let first =
        t.split(|c: char| !c.is_alphanumeric() && c != '\'').find(|w| !w.is_empty()).unwrap_or("").to_lowercase();
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

fn is_substantive(text: &str) -> bool {
    let t = text.trim();
    if t.starts_with('/') && !t.contains(char::is_whitespace) {
        return false; // a slash command such as `/mode`
    }
    let l = one_line(text).to_lowercase();
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
fn is_done_sentence(s: &str) -> bool {
    if s.ends_with('?') || s.ends_with(':') || word_count(s) < 3 {
        return false;
    }
    let l = s.to_lowercase();
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
fn is_intention(s: &str) -> bool {
    let l = s.to_lowercase();
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

const DECISION_MARKERS: [&str; 16] = [
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

const FINDING_MARKERS: [&str; 14] = [
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
fn constraint_score(s: &str) -> u8 {
    let t = s.trim_end();
    if t.ends_with('?') || t.ends_with(':') || word_count(t) < 4 || is_error_line(t) || t.contains("{\"") {
        return 0;
    }
    let l = t.to_lowercase().replace('’', "'");
    let personal = ["i don't", "i dont", "i do not"].iter().any(|p| l.contains(p))
        && !["i don't want", "i dont want", "i do not want"].iter().any(|p| l.contains(p));
    CONSTRAINT_WORDS
        .iter()
        .filter(|(_, w)| has_word(&l, w) && !(personal && matches!(*w, "don't" | "dont" | "do not")))
        .map(|(n, _)| *n)
        .max()
        .unwrap_or(0)
}

fn is_error_line(line: &str) -> bool {
    // Very long lines are minified code or data, not messages.
    if line.len() < 4 || line.len() > 400 {
        return false;
    }
    let l = line.to_lowercase();
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
    if NOT.iter().any(|n| l.contains(n)) {
        return false;
    }
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
    WORDS.iter().any(|w| has_word(&l, w)) || PHRASES.iter().any(|p| l.contains(p))
}

/// Trimmed error lines of a text, in order, without duplicates.
fn error_lines(text: &str) -> Vec<&str> {
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
fn is_viewing_command(command: &str) -> bool {
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

fn first_line(s: &str) -> &str {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("")
}

impl Facts {
    fn gather(parts: &[(Role, &str)], o: &Opts) -> Facts {
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
            let l = s.to_lowercase();
            if DECISION_MARKERS.iter().any(|m| l.contains(m)) && !s.ends_with('?') && word_count(&s) >= 4 {
                push_unique(&mut self.decisions, format!("User: {}", quote(&s, o.quote)));
            }
        }
        // Errors the user pasted (terminal output).
        let pasted: Vec<&str> = error_lines(t)
            .into_iter()
            .filter(|l| {
                let l = l.to_lowercase();
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
            let l = trimmed.to_lowercase();
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
            let l = s.to_lowercase();
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
            error_lines(result).into_iter().filter(|l| !viewing || l.to_lowercase().contains("no such file")).collect();
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
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let keep: IndexSet<usize> = ranked.into_iter().take(o.max_bullets).map(|(i, _)| i).collect();
        let mut seen = IndexSet::new();
        self.constraints = std::mem::take(&mut self.constraints)
            .into_iter()
            .enumerate()
            .filter(|(i, (_, s))| keep.contains(i) && seen.insert(s.to_lowercase()))
            .map(|(_, c)| c)
            .collect();
    }

    fn first_request(&self) -> Option<&str> {
        self.requests.iter().find(|r| is_substantive(r)).or(self.requests.first()).map(String::as_str)
    }

    fn latest_request(&self) -> Option<&str> {
        self.requests.iter().rev().find(|r| is_substantive(r)).or(self.requests.last()).map(String::as_str)
    }

    /// The latest request that asks for work: substantive, not a question, preferably of some
    /// length (a follow-up question or "do it all" names the work less well; the pending
    /// question quotes the latest message anyway).
    fn latest_work_request(&self) -> Option<&str> {
        self.latest_named_request()
            .or_else(|| self.requests.iter().rev().find(|r| is_substantive(r) && !is_question(r)).map(String::as_str))
            .or_else(|| self.latest_request())
    }

    /// The latest request that names the work: not a question, at least eight words, starting
    /// with a letter (pasted text such as a diff or a list does not).
    fn latest_named_request(&self) -> Option<&str> {
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

    fn modified_summary(&self, max_files: usize) -> Option<String> {
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

    fn read_only(&self) -> Vec<&String> {
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
        let l = t.to_lowercase();
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

fn join_files(files: &[&String], max: usize) -> String {
    let mut shown: Vec<String> = files.iter().take(max).map(|p| code(p)).collect();
    if files.len() > max {
        shown.push(format!("and {} more", files.len() - max));
    }
    shown.join(", ")
}

// ---------------------------------------------------------------------------------------------
// Sections

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
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
enum Style {
    Bullet,
    Checked,
    Unchecked,
    Numbered,
    Prose,
}

#[derive(Debug, Clone)]
struct Heading {
    level: usize,
    title: String,
    kind: Kind,
    style: Style,
}

fn classify(title: &str) -> Kind {
    let t = title.to_lowercase();
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
fn headings_of(instructions: &str) -> Vec<Heading> {
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

fn h(level: usize, title: &str, style: Style) -> Heading {
    Heading { level, title: title.to_string(), kind: classify(title), style }
}

/// The sections of the default templates (`prompts/`) for a purpose.
fn default_headings(purpose: Purpose) -> Vec<Heading> {
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

/// What one section holds: the previous summary's lines (updates) and the new items.
#[derive(Debug, Clone)]
struct Section {
    heading: Heading,
    prev: Vec<String>,
    items: Vec<String>,
    /// The previous lines are kept verbatim, capped from the start (foreign summaries).
    verbatim: bool,
}

/// The items of each kind of section for the given layout.
fn items_for(kind: Kind, purpose: Purpose, f: &Facts, layout: &[Heading], context: &[String], o: &Opts) -> Vec<String> {
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
fn replaces_previous(kind: Kind) -> bool {
    matches!(kind, Kind::InProgress | Kind::Next | Kind::Pending)
}

/// Kinds that hold a single statement (no cap, prose allowed).
fn is_single(kind: Kind) -> bool {
    matches!(kind, Kind::Pending)
}

// ---------------------------------------------------------------------------------------------
// Previous summary (updates)

#[derive(Debug, Clone)]
struct PrevSection {
    level: usize,
    title: String,
    body: Vec<String>,
}

#[derive(Debug, Default)]
struct Previous {
    preamble: Vec<String>,
    sections: Vec<PrevSection>,
    read_files: Vec<String>,
    modified_files: Vec<String>,
}

/// Cuts the `<read-files>` / `<modified-files>` blocks that end a stored summary.
fn strip_file_blocks(mut text: &str, prev: &mut Previous) -> String {
    loop {
        let t = text.trim_end();
        let mut cut = None;
        for (tag, is_read) in [("read-files", true), ("modified-files", false)] {
            let close = format!("</{tag}>");
            let open = format!("<{tag}>\n");
            if t.ends_with(&close) {
                if let Some(start) = t.rfind(&open) {
                    let inner = &t[start + open.len()..t.len() - close.len()];
                    let files = inner.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string);
                    if is_read {
                        prev.read_files.extend(files);
                    } else {
                        prev.modified_files.extend(files);
                    }
                    cut = Some(start);
                }
            }
        }
        match cut {
            Some(start) => text = &t[..start],
            None => return t.to_string(),
        }
    }
}

fn parse_previous(text: &str) -> Previous {
    let mut prev = Previous::default();
    let text = strip_file_blocks(text, &mut prev);
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
        }
        let level = t.len() - t.trim_start_matches('#').len();
        let is_heading =
            !fenced && (1..=3).contains(&level) && t[level..].starts_with(' ') && !t[level..].trim().is_empty();
        if is_heading {
            prev.sections.push(PrevSection { level, title: t[level..].trim().to_string(), body: Vec::new() });
        } else if !fenced && t.starts_with("**Turn Context") && t.ends_with("**") {
            let title = t.trim_matches('*').trim_end_matches(':').to_string();
            prev.sections.push(PrevSection { level: 2, title, body: Vec::new() });
        } else if !fenced && (line.trim() == "---" || line.trim() == EXTRACTIVE_MARKER) {
            continue;
        } else if let Some(s) = prev.sections.last_mut() {
            s.body.push(line.to_string());
        } else {
            prev.preamble.push(line.to_string());
        }
    }
    for s in &mut prev.sections {
        trim_blank(&mut s.body);
    }
    trim_blank(&mut prev.preamble);
    prev
}

fn trim_blank(lines: &mut Vec<String>) {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let lead = lines.iter().take_while(|l| l.trim().is_empty()).count();
    lines.drain(..lead);
}

fn is_none_line(l: &str) -> bool {
    matches!(l.trim().trim_end_matches('.').to_lowercase().as_str(), "none" | "_none_" | "n/a")
}

/// The sections of an update: each requested section merges the previous summary's section of
/// the same title with the new items; unmatched previous sections end up verbatim under
/// [`EARLIER_SUMMARY_TITLE`].
fn merge_previous(sections: &mut Vec<Section>, previous: &str, f: &Facts, o: &Opts) {
    let prev = parse_previous(previous);
    let mut used = vec![false; prev.sections.len()];
    for sec in sections.iter_mut() {
        let found = prev.sections.iter().position(|p| p.title.trim().eq_ignore_ascii_case(sec.heading.title.trim()));
        let Some(i) = found else { continue };
        used[i] = true;
        if sec.heading.kind == Kind::Container {
            continue;
        }
        let body: Vec<String> = prev.sections[i]
            .body
            .iter()
            .filter(|l| !is_none_line(l) && l.trim() != NEW_SINCE_LABEL && l.trim() != ERRORS_NOTE)
            .cloned()
            .collect();
        sec.prev = match sec.heading.kind {
            Kind::Goal => body
                .into_iter()
                .filter(|l| !(l.contains("Latest request:") && f.latest_work_request().is_some()))
                .collect(),
            k if replaces_previous(k) && (f.has_parts || !sec.items.is_empty()) => Vec::new(),
            _ => body,
        };
        // New items already in the previous section are not repeated.
        let existing: IndexSet<String> = sec.prev.iter().map(|l| strip_markers(l).to_string()).collect();
        sec.items.retain(|item| !existing.contains(item.as_str()));
    }
    // The objective of a summary in another format, when ours has none yet.
    if let Some(goal) = sections.iter_mut().find(|s| s.heading.kind == Kind::Goal && s.prev.is_empty()) {
        let foreign = prev
            .sections
            .iter()
            .find(|p| classify(&p.title) == Kind::Goal)
            .and_then(|p| p.body.iter().find(|l| !l.trim().is_empty()));
        if let Some(line) = foreign {
            goal.items.insert(0, format!("Earlier objective: {}", clip_chars(strip_markers(line), o.quote)));
        }
    }
    // Files listed by the previous summary's blocks stay in the reference details.
    if let Some(reference) = sections.iter_mut().find(|s| s.heading.kind == Kind::Reference) {
        let all = reference.prev.join("\n") + &reference.items.join("\n");
        let missing =
            |files: &[String]| -> Vec<String> { files.iter().filter(|p| !all.contains(&code(p))).cloned().collect() };
        let read = missing(&prev.read_files);
        let modified = missing(&prev.modified_files);
        let max = o.max_bullets * 2;
        if !read.is_empty() {
            reference.prev.push(format!("- Files read earlier: {}", join_files(&read.iter().collect::<Vec<_>>(), max)));
        }
        if !modified.is_empty() {
            reference
                .prev
                .push(format!("- Files modified earlier: {}", join_files(&modified.iter().collect::<Vec<_>>(), max)));
        }
    }
    let mut earlier: Vec<String> = prev.preamble.clone();
    for (p, _) in prev.sections.iter().zip(&used).filter(|(_, u)| !**u) {
        if p.title == EARLIER_SUMMARY_TITLE {
            earlier.extend(p.body.iter().cloned());
            continue;
        }
        if !earlier.is_empty() {
            earlier.push(String::new());
        }
        // Levels 4+ so that the next update keeps the block as one section.
        earlier.push(format!("{} {}", "#".repeat((p.level + 3).min(6)), p.title));
        earlier.extend(p.body.iter().cloned());
    }
    trim_blank(&mut earlier);
    if !earlier.is_empty() {
        let heading =
            Heading { level: 2, title: EARLIER_SUMMARY_TITLE.to_string(), kind: Kind::Unknown, style: Style::Prose };
        sections.push(Section { heading, prev: earlier, items: Vec::new(), verbatim: true });
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering

fn bullet(style: Style, n: usize) -> String {
    match style {
        Style::Checked => "- [x] ".to_string(),
        Style::Unchecked => "- [ ] ".to_string(),
        Style::Numbered => format!("{n}. "),
        Style::Bullet | Style::Prose => "- ".to_string(),
    }
}

fn render(sections: &[Section], new_cap: usize, prev_cap: usize) -> String {
    let mut out = String::new();
    out.push_str(EXTRACTIVE_MARKER);
    out.push_str("\n\n");
    for (i, sec) in sections.iter().enumerate() {
        let hd = &sec.heading;
        out.push_str(&"#".repeat(hd.level.clamp(1, 6)));
        out.push(' ');
        out.push_str(&hd.title);
        out.push('\n');
        if hd.kind == Kind::Container && sec.prev.is_empty() {
            continue;
        }
        let mut body: Vec<String> = Vec::new();
        // Previous lines: the most recent ones, or the first ones of a verbatim block.
        let prev_items = sec.prev.len();
        if prev_items > prev_cap {
            if sec.verbatim {
                body.extend(sec.prev.iter().take(prev_cap).cloned());
                body.push(format!("- … {} more lines of the earlier summary not shown", prev_items - prev_cap));
            } else {
                body.push(format!("- … {} earlier lines not shown", prev_items - prev_cap));
                body.extend(sec.prev.iter().skip(prev_items - prev_cap).cloned());
            }
        } else {
            body.extend(sec.prev.iter().cloned());
        }
        let n = sec.items.len();
        let shown = if is_single(hd.kind) { n } else { n.min(new_cap) };
        if shown > 0 && !body.is_empty() && !replaces_previous(hd.kind) && hd.kind != Kind::Goal {
            body.push(NEW_SINCE_LABEL.to_string());
        }
        if hd.kind == Kind::Blocked && shown > 0 && body.is_empty() {
            body.push(ERRORS_NOTE.to_string());
        }
        if n > shown {
            body.push(format!("- … {} earlier items not shown", n - shown));
        }
        let single_prose =
            hd.style == Style::Prose && n == 1 && sec.prev.is_empty() && matches!(hd.kind, Kind::Goal | Kind::Pending);
        for (k, item) in sec.items.iter().skip(n - shown).enumerate() {
            if single_prose {
                body.push(item.clone());
            } else {
                body.push(format!("{}{item}", bullet(hd.style, k + 1)));
            }
        }
        if body.is_empty() {
            body.push("None.".to_string());
        }
        for line in body {
            out.push_str(&line);
            out.push('\n');
        }
        if i + 1 < sections.len() {
            out.push('\n');
        }
    }
    out
}

fn sectioned_summary(purpose: Purpose, prompt: &PromptParts<'_>, f: &Facts, o: &Opts, budget: usize) -> String {
    let mut layout = headings_of(prompt.instructions);
    if layout.iter().all(|h| matches!(h.kind, Kind::Unknown | Kind::Container)) {
        layout = default_headings(purpose);
    }
    let mut sections: Vec<Section> = layout
        .iter()
        .map(|hd| Section {
            heading: hd.clone(),
            prev: Vec::new(),
            items: items_for(hd.kind, purpose, f, &layout, &prompt.context, o),
            verbatim: false,
        })
        .collect();
    if let Some(previous) = prompt.previous.filter(|p| !p.trim().is_empty()) {
        merge_previous(&mut sections, previous, f, o);
    }
    let m = o.max_bullets;
    let mut attempts: Vec<(usize, usize)> = vec![(m, usize::MAX), (m, 4 * m), (m, 2 * m), (m, m)];
    attempts.extend((1..m).rev().map(|k| (k, k)));
    let mut last = String::new();
    for (new_cap, prev_cap) in attempts {
        last = render(&sections, new_cap, prev_cap);
        if last.chars().count() <= budget {
            return last;
        }
    }
    truncate_lines(&last, budget)
}

/// The longest prefix of whole lines within `budget` characters (never less than the marker
/// line), followed by "…" when something was cut.
fn truncate_lines(text: &str, budget: usize) -> String {
    let cut = text.char_indices().nth(budget.saturating_sub(2)).map_or(text.len(), |(i, _)| i);
    let head = &text[..cut];
    let head = match head.rfind('\n') {
        Some(nl) if nl >= EXTRACTIVE_MARKER.len() => &head[..nl],
        _ => EXTRACTIVE_MARKER,
    };
    format!("{}\n…\n", head.trim_end())
}

// ---------------------------------------------------------------------------------------------
// The short summary

/// The first sentence of `text` without its final punctuation, on one line.
fn first_sentence(text: &str, max: usize) -> String {
    let s = sentences(text).into_iter().next().unwrap_or_else(|| one_line(text));
    let s = clip_chars(&one_line(&s), max);
    // No sentence break may remain inside: the short summary has at most two sentences.
    let s = s.replace(". ", ", ").replace("! ", ", ").replace("? ", ", ");
    s.trim_end_matches(['.', '!', '?', ':', ';', ',', ' ']).to_string()
}

fn file_name(path: &str) -> &str {
    path.trim_end_matches('/').rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or(path)
}

fn name_list(names: &[&str], max: usize) -> String {
    let shown: Vec<&str> = names.iter().take(max).copied().collect();
    let more = names.len().saturating_sub(max);
    match (shown.as_slice(), more) {
        ([], _) => String::new(),
        ([one], 0) => (*one).to_string(),
        (many, 0) => format!("{} and {}", many[..many.len() - 1].join(", "), many[many.len() - 1]),
        (many, n) => format!("{} and {n} other file{}", many.join(", "), if n == 1 { "" } else { "s" }),
    }
}

/// One or two first-person sentences about the latest work.
fn short_summary(f: &Facts, previous: Option<&str>, o: &Opts) -> String {
    let q = o.quote.min(160);
    // A recent request that names the work; else the objective of the summary so far; else
    // whatever the user asked last.
    let named = f.latest_named_request();
    let earlier =
        previous.filter(|p| p.trim() != NO_PRIOR_HISTORY).map(|p| previous_objective(p, q)).filter(|p| !p.is_empty());
    let request = match (named, earlier) {
        (Some(r), _) => Some(first_sentence(r, q)),
        (None, Some(e)) => Some(e),
        (None, None) => f.latest_work_request().map(|r| first_sentence(r, q)),
    }
    .filter(|r| !r.is_empty());
    let changed: Vec<&str> =
        f.changed.iter().rev().filter(|(_, c)| c.edits + c.writes > 0).map(|(p, _)| file_name(p)).collect();
    let mut first = match &request {
        Some(r) => format!("I worked on the request: {r}"),
        None => String::new(),
    };
    let mut second = if !changed.is_empty() {
        format!("I changed {}", name_list(&changed, 3))
    } else if let Some(done) = f.done.last() {
        format!("I reported: {}", first_sentence(done.trim_matches('"'), q))
    } else if !f.read.is_empty() {
        let read: Vec<&str> = f.read.iter().rev().map(|p| file_name(p)).collect();
        format!("I read {}", name_list(&read, 3))
    } else if let Some(c) = f.commands.last() {
        format!("I ran {}", first_sentence(c, 80))
    } else {
        String::new()
    };
    if first.is_empty() {
        if second.is_empty() {
            return "I have no recorded work to summarize yet.".to_string();
        }
        std::mem::swap(&mut first, &mut second);
    }
    // Plain text: no Markdown emphasis, code spans or quotation marks.
    let plain = |s: String| s.replace(['`', '*', '"'], "");
    if second.is_empty() {
        format!("{}.", plain(first))
    } else {
        format!("{}. {}.", plain(first), plain(second))
    }
}

/// The objective of a previous summary: our "Latest request" / "Initial request" line, the
/// first line of a goal section, or the first line of text.
fn previous_objective(previous: &str, max: usize) -> String {
    let prev = parse_previous(previous);
    let from_goal = prev.sections.iter().find(|s| classify(&s.title) == Kind::Goal).and_then(|s| {
        s.body
            .iter()
            .rev()
            .find(|l| l.contains("Latest request:"))
            .or_else(|| s.body.iter().find(|l| !l.trim().is_empty()))
    });
    let line =
        from_goal.or_else(|| prev.preamble.iter().find(|l| !l.trim().is_empty())).map(String::as_str).unwrap_or("");
    let line = strip_markers(line);
    let line = line.split_once("request: ").map_or(line, |(_, r)| r);
    first_sentence(line.trim_matches('"'), max).trim_matches('"').to_string()
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize::assemble_prompt;

    const HISTORY_INSTRUCTIONS: &str = include_str!("../../prompts/compaction-summary.md");
    const UPDATE_INSTRUCTIONS: &str = include_str!("../../prompts/compaction-update-summary.md");
    const TURN_INSTRUCTIONS: &str = include_str!("../../prompts/compaction-turn-prefix.md");
    const BRANCH_INSTRUCTIONS: &str = include_str!("../../prompts/branch-summary.md");
    const SHORT_INSTRUCTIONS: &str = include_str!("../../prompts/compaction-short-summary.md");

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
    fn helpers() {
        assert_eq!(clip_chars("héllo wörld", 20), "héllo wörld");
        assert_eq!(clip_chars("😀😀😀😀😀", 3), "😀😀…");
        assert_eq!(clip_chars("alpha beta gamma delta", 14), "alpha beta…");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(
            parse_calls("read(path=\"a, b).rs\", limit=10); bash(command=\"ls; echo)\"); x()"),
            vec![
                Call {
                    name: "read".into(),
                    args: vec![("path".into(), Value::from("a, b).rs")), ("limit".into(), Value::from(10))]
                },
                Call { name: "bash".into(), args: vec![("command".into(), Value::from("ls; echo)"))] },
                Call { name: "x".into(), args: vec![] },
            ]
        );
        assert_eq!(
            sentences("Done. Fixed it! Why? e.g. this one\n```\ncode. here\n```\n- item one"),
            ["Done.", "Fixed it!", "Why?", "e.g. this one", "item one"]
        );
        assert!(is_error_line("src/a.ts(1,2): error TS2339: nope"));
        assert!(!is_error_line("Finished with 0 errors"));
        assert!(!is_error_line("onError handler"));
        let parts = split_parts("[User]: a\n\n[Tool result]: b\n\n[User] not a label\n\n[Assistant]: c");
        assert_eq!(
            parts,
            vec![(Role::User, "a"), (Role::ToolResult, "b\n\n[User] not a label"), (Role::Assistant, "c")]
        );
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
