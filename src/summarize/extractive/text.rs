//! Text helpers: clipping, inline code, quoting, word search, sentences and prose lines.

/// At most `max` characters of `s`; a longer text is cut (at a word boundary when one is
/// near) and ends with "…". Never splits a UTF-8 character.
pub(super) fn clip_chars(s: &str, max: usize) -> String {
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
pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An inline code span holding `s` exactly (fence longer than any backtick run inside).
pub(super) fn code(s: &str) -> String {
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
pub(super) fn code_clipped(s: &str, max: usize) -> String {
    let s = one_line(s);
    if s.chars().count() <= max {
        return code(&s);
    }
    let clipped = clip_chars(&s, max);
    let inner = clipped.strip_suffix('…').unwrap_or(&clipped);
    format!("{} …", code(inner))
}

/// A quotation of `s` (one line, clipped).
pub(super) fn quote(s: &str, max: usize) -> String {
    format!("\"{}\"", clip_chars(&one_line(s), max))
}

/// The byte offsets of the non-overlapping occurrences of `needle` (not empty) in `hay`, left to
/// right: what `hay.match_indices(needle)` gives. Found by a scan for the needle's first byte and
/// a compare of the rest: for the short cue words and the short lines the summarizer checks by
/// the dozen, `str`'s own search spends more on setting up its Two-Way searcher (once per call)
/// than on searching. An occurrence starts at a character boundary (a UTF-8 lead byte is never
/// inside a character).
pub(super) fn occurrences<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let mut from = 0;
    std::iter::from_fn(move || {
        let (&first, rest) = n.split_first()?;
        // The last offset where the needle still fits.
        let last = h.len().checked_sub(n.len())?;
        while from <= last {
            let i = from + h[from..=last].iter().position(|&b| b == first)?;
            if &h[i + 1..i + n.len()] == rest {
                from = i + n.len();
                return Some(i);
            }
            from = i + 1;
        }
        None
    })
}

/// `hay.contains(needle)`, by [`occurrences`] (an empty needle is contained in every text).
pub(super) fn contains(hay: &str, needle: &str) -> bool {
    needle.is_empty() || occurrences(hay, needle).next().is_some()
}

/// `word` occurs in `hay` (both lowercase) with no letter or digit right before or after it.
pub(super) fn has_word(hay: &str, word: &str) -> bool {
    occurrences(hay, word).any(|i| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

pub(super) fn starts_with_any(s: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| s.starts_with(p))
}

/// Strips Markdown list, heading, quote and emphasis markers from the start of a line.
pub(super) fn strip_markers(line: &str) -> &str {
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
pub(super) fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
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
pub(super) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        let line = strip_markers(line);
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|(_, n)| n.is_whitespace()) {
                let candidate = line[start..=i].trim();
                let lower = crate::js::lowercase(candidate);
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

pub(super) fn word_count(s: &str) -> usize {
    s.split_whitespace().count()
}

/// The first one or two sentences of a user message, clipped.
pub(super) fn lead(text: &str, max: usize) -> String {
    let s = sentences(text);
    let joined = match s.len() {
        0 => one_line(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")),
        1 => s[0].clone(),
        _ if s[0].chars().count() >= max / 2 => s[0].clone(),
        _ => format!("{} {}", s[0], s[1]),
    };
    clip_chars(&joined, max)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::test_cases(256)))]
        /// `occurrences` and `contains` give what `match_indices` and `contains` of `str` give.
        #[test]
        fn occurrences_are_the_match_indices(hay in "[ab é✓xX]{0,40}", needle in "[ab é✓]{1,4}") {
            let ours: Vec<usize> = super::occurrences(&hay, &needle).collect();
            let std: Vec<usize> = hay.match_indices(needle.as_str()).map(|(i, _)| i).collect();
            prop_assert_eq!(ours, std);
            prop_assert_eq!(super::contains(&hay, &needle), hay.contains(needle.as_str()));
        }
    }

    #[test]
    fn occurrences_do_not_overlap_and_fit() {
        assert_eq!(super::occurrences("aaaa", "aa").collect::<Vec<_>>(), [0, 2]);
        assert_eq!(super::occurrences("aaa", "aa").collect::<Vec<_>>(), [0]);
        assert_eq!(super::occurrences("ab", "abc").count(), 0);
        assert_eq!(super::occurrences("", "a").count(), 0);
        assert_eq!(super::occurrences("é error", "error").collect::<Vec<_>>(), [3]);
        assert!(super::contains("x", ""));
        assert!(super::has_word("build failed: 2 errors", "failed"));
        assert!(!super::has_word("onerror handler", "error"));
    }

    use super::*;

    #[test]
    fn clipping_code_and_sentences() {
        assert_eq!(clip_chars("héllo wörld", 20), "héllo wörld");
        assert_eq!(clip_chars("😀😀😀😀😀", 3), "😀😀…");
        assert_eq!(clip_chars("alpha beta gamma delta", 14), "alpha beta…");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(
            sentences("Done. Fixed it! Why? e.g. this one\n```\ncode. here\n```\n- item one"),
            ["Done.", "Fixed it!", "Why?", "e.g. this one", "item one"]
        );
    }
}
