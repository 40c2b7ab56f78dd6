//! The short summary ([`Purpose::Short`](crate::summarize::Purpose::Short)): one or two first-person sentences.

use super::facts::Facts;
use super::headings::{classify, Kind};
use super::previous::parse_previous;
use super::text::{clip_chars, one_line, sentences, strip_markers};
use super::Opts;
use crate::summarize::NO_PRIOR_HISTORY;

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
pub(super) fn short_summary(f: &Facts, previous: Option<&str>, o: &Opts) -> String {
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
