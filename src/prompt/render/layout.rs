//! The layout pass applied to every rendered template.

use crate::js::js_trim;

/// The layout pass applied to every rendered template (SPEC section 9, conformance README
/// "Templates"):
///
/// 1. CRLF and lone CR become LF, NBSP (U+00A0) becomes a space;
/// 2. per line, trailing spaces and tabs are removed (a whitespace-only line becomes empty);
/// 3. in the leading indentation every 2 spaces become a TAB; an odd space stays in place,
///    before the next TAB or the text;
/// 4. 3 or more consecutive newlines become 2;
/// 5. the result is trimmed with JavaScript `trim()` ([`crate::js::js_trim`]: unlike Rust's
///    `str::trim` it removes U+FEFF and keeps U+0085).
pub fn layout(text: &str) -> String {
    // Step 1: line endings and NBSP.
    let mut normalized = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                normalized.push('\n');
            }
            '\u{00A0}' => normalized.push(' '),
            other => normalized.push(other),
        }
    }

    // Steps 2 and 3, line by line.
    let mut lines_out = String::with_capacity(normalized.len());
    for (i, line) in normalized.split('\n').enumerate() {
        if i > 0 {
            lines_out.push('\n');
        }
        let line = line.trim_end_matches([' ', '\t']);
        let rest = line.trim_start_matches([' ', '\t']);
        let indent = &line[..line.len() - rest.len()];
        let mut spaces = 0usize;
        for ch in indent.chars() {
            if ch == '\t' {
                push_tabs_for_spaces(&mut lines_out, spaces);
                spaces = 0;
                lines_out.push('\t');
            } else {
                spaces += 1;
            }
        }
        push_tabs_for_spaces(&mut lines_out, spaces);
        lines_out.push_str(rest);
    }

    // Step 4: collapse runs of 3+ newlines to 2.
    let mut collapsed = String::with_capacity(lines_out.len());
    let mut newline_run = 0usize;
    for c in lines_out.chars() {
        if c == '\n' {
            newline_run += 1;
            if newline_run <= 2 {
                collapsed.push('\n');
            }
        } else {
            newline_run = 0;
            collapsed.push(c);
        }
    }

    // Step 5: JS trim.
    js_trim(&collapsed).to_string()
}

fn push_tabs_for_spaces(out: &mut String, spaces: usize) {
    for _ in 0..spaces / 2 {
        out.push('\t');
    }
    if spaces % 2 == 1 {
        out.push(' ');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::is_js_whitespace;
    use crate::prompt::render::render_template;
    use serde_json::json;
    use serde_json::Value;

    fn rt(src: &str, vars: Value) -> String {
        render_template("t.md", src, &vars).expect("renders")
    }

    // ----- layout -----

    #[test]
    fn layout_rules() {
        // CRLF and lone CR.
        assert_eq!(layout("a\r\nb\rc"), "a\nb\nc");
        // NBSP becomes a space (then trailing spaces go).
        assert_eq!(layout("a\u{a0}b\u{a0}\u{a0}"), "a b");
        // Trailing spaces and tabs; whitespace-only lines become empty.
        assert_eq!(layout("a \t\n \t \nb"), "a\n\nb");
        // Indentation: 2 spaces → TAB, odd space kept before the next TAB or the text.
        assert_eq!(
            layout("x\n  two\n    four\n   three\n\t tab-space\n \ttab after space"),
            "x\n\ttwo\n\t\tfour\n\t three\n\t tab-space\n \ttab after space"
        );
        assert_eq!(layout("x\n   \tmixed"), "x\n\t \tmixed");
        // Only leading indentation changes.
        assert_eq!(layout("a    b"), "a    b");
        // 3+ newlines → 2.
        assert_eq!(layout("a\n\n\n\n\nb\n\nc"), "a\n\nb\n\nc");
        assert_eq!(layout("a\n \n\t\n\nb"), "a\n\nb");
        // JS trim of the whole text.
        assert_eq!(layout("\u{feff}\u{3000}\n  x  \n\u{2029}"), "x");
        assert_eq!(layout("\n\n  x\n  y"), "x\n\ty");
        assert_eq!(layout("\u{85}x\u{85}"), "\u{85}x\u{85}");
        assert_eq!(layout("   "), "");
        assert_eq!(layout(""), "");
    }

    #[test]
    fn js_whitespace_set() {
        assert!(is_js_whitespace('\u{feff}'));
        assert!(is_js_whitespace('\u{3000}'));
        assert!(is_js_whitespace('\u{2028}'));
        assert!(!is_js_whitespace('\u{85}'));
        assert!(!is_js_whitespace('\u{180e}'));
        assert!(!is_js_whitespace('\u{200b}'));
        assert_eq!(js_trim("\u{feff} a \u{a0}"), "a");
    }

    #[test]
    fn render_template_applies_layout() {
        let src = "Title  \n\n\n\n  indented\n{{#if x}}\n   odd {{x}}\n{{/if}}\n";
        assert_eq!(rt(src, json!({"x": "v"})), "Title\n\n\tindented\n\t odd v");
        assert_eq!(rt(src, json!({})), "Title\n\n\tindented");
    }
}
