//! Updates (SPEC §9 update prompt): the previous summary's sections are kept and the new items
//! merged in after [`NEW_SINCE_LABEL`]; sections in another format are kept verbatim.

use super::facts::{join_files, Facts};
use super::headings::{classify, Heading, Kind, Style};
use super::sections::{replaces_previous, Section};
use super::text::{clip_chars, code, strip_markers};
use super::{Opts, EARLIER_SUMMARY_TITLE, ERRORS_NOTE, EXTRACTIVE_MARKER, NEW_SINCE_LABEL};
use indexmap::IndexSet;

#[derive(Debug, Clone)]
pub(super) struct PrevSection {
    level: usize,
    pub(super) title: String,
    pub(super) body: Vec<String>,
}

#[derive(Debug, Default)]
pub(super) struct Previous {
    pub(super) preamble: Vec<String>,
    pub(super) sections: Vec<PrevSection>,
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

pub(super) fn parse_previous(text: &str) -> Previous {
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
    matches!(crate::js::lowercase(l.trim().trim_end_matches('.')).as_str(), "none" | "_none_" | "n/a")
}

/// The sections of an update: each requested section merges the previous summary's section of
/// the same title with the new items; unmatched previous sections end up verbatim under
/// [`EARLIER_SUMMARY_TITLE`].
pub(super) fn merge_previous(sections: &mut Vec<Section>, previous: &str, f: &Facts, o: &Opts) {
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
