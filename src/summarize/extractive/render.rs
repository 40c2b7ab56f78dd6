//! The sectioned summary: the sections the headings ask for, filled from the facts, merged with
//! the previous summary on updates and rendered as Markdown within the character budget.

use super::facts::Facts;
use super::frame::PromptParts;
use super::headings::{default_headings, headings_of, Kind, Style};
use super::previous::merge_previous;
use super::sections::{is_single, items_for, replaces_previous, Section};
use super::{Opts, ERRORS_NOTE, EXTRACTIVE_MARKER, NEW_SINCE_LABEL};
use crate::summarize::Purpose;

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

pub(super) fn sectioned_summary(
    purpose: Purpose,
    prompt: &PromptParts<'_>,
    f: &Facts,
    o: &Opts,
    budget: usize,
) -> String {
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
