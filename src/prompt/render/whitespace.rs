//! Whitespace control: Handlebars' standalone-line and `~` rules, applied to the parsed tree.

use super::ast::*;
use crate::js::is_js_whitespace;

#[derive(Default)]
pub(super) struct StripInfo {
    open: bool,
    close: bool,
    open_standalone: bool,
    close_standalone: bool,
    inline_standalone: bool,
}

/// Whether the trailing whitespace of `s` contains a line break (`/\r?\n\s*?$/`).
pub(super) fn trailing_ws_has_newline(s: &str) -> bool {
    for c in s.chars().rev() {
        if c == '\n' {
            return true;
        }
        if !is_js_whitespace(c) {
            return false;
        }
    }
    false
}

/// Whether the leading whitespace of `s` contains a line break (`/^\s*?\r?\n/`).
pub(super) fn leading_ws_has_newline(s: &str) -> bool {
    for c in s.chars() {
        if c == '\n' {
            return true;
        }
        if !is_js_whitespace(c) {
            return false;
        }
    }
    false
}

pub(super) fn all_ws(s: &str) -> bool {
    s.chars().all(is_js_whitespace)
}

/// Handlebars `isPrevWhitespace(body, i, isRoot)`; `i = None` means "after the last node".
pub(super) fn is_prev_whitespace(body: &[Node], i: Option<usize>, is_root: bool) -> bool {
    let i = i.unwrap_or(body.len());
    if i == 0 {
        return is_root;
    }
    let has_sibling = i >= 2;
    match body.get(i - 1) {
        Some(Node::Content(c)) => {
            if has_sibling || !is_root {
                trailing_ws_has_newline(&c.original)
            } else {
                all_ws(&c.original) || trailing_ws_has_newline(&c.original)
            }
        }
        Some(_) => false,
        None => is_root,
    }
}

/// Handlebars `isNextWhitespace(body, i, isRoot)`; `i = None` means "before the first node".
pub(super) fn is_next_whitespace(body: &[Node], i: Option<usize>, is_root: bool) -> bool {
    let next = i.map_or(0, |i| i + 1);
    let has_sibling = body.len() > next + 1;
    match body.get(next) {
        None => is_root,
        Some(Node::Content(c)) => {
            if has_sibling || !is_root {
                leading_ws_has_newline(&c.original)
            } else {
                leading_ws_has_newline(&c.original) || all_ws(&c.original)
            }
        }
        Some(_) => false,
    }
}

/// Handlebars `omitRight`: strips the start of the content node after `i` (or the first node).
pub(super) fn omit_right(body: &mut [Node], i: Option<usize>, multiple: bool) {
    let idx = i.map_or(0, |i| i + 1);
    let Some(Node::Content(c)) = body.get_mut(idx) else {
        return;
    };
    if !multiple && c.right_stripped {
        return;
    }
    let new_value = if multiple {
        c.value.trim_start_matches(is_js_whitespace)
    } else {
        // /^[ \t]*\r?\n?/
        let s = c.value.trim_start_matches([' ', '\t']);
        let s = s.strip_prefix('\r').unwrap_or(s);
        s.strip_prefix('\n').unwrap_or(s)
    };
    let changed = new_value.len() != c.value.len();
    if changed {
        c.value = new_value.to_string();
    }
    c.right_stripped = changed;
}

/// Handlebars `omitLeft`: strips the end of the content node before `i` (or the last node).
/// Returns whether it changed.
pub(super) fn omit_left(body: &mut [Node], i: Option<usize>, multiple: bool) -> bool {
    let idx = match i {
        None => match body.len().checked_sub(1) {
            Some(idx) => idx,
            None => return false,
        },
        Some(0) => return false,
        Some(i) => i - 1,
    };
    let Some(Node::Content(c)) = body.get_mut(idx) else {
        return false;
    };
    if !multiple && c.left_stripped {
        return false;
    }
    let new_value =
        if multiple { c.value.trim_end_matches(is_js_whitespace) } else { c.value.trim_end_matches([' ', '\t']) };
    let changed = new_value.len() != c.value.len();
    if changed {
        c.value = new_value.to_string();
    }
    c.left_stripped = changed;
    changed
}

/// Handlebars `WhitespaceControl.Program`.
pub(super) fn whitespace_program(program: &mut Program, is_root: bool) {
    let body = &mut program.body;
    for i in 0..body.len() {
        let strip = match &mut body[i] {
            Node::Content(_) => continue,
            Node::Mustache { strip, .. } => StripInfo { open: strip.open, close: strip.close, ..StripInfo::default() },
            Node::Comment { strip } => {
                StripInfo { open: strip.open, close: strip.close, inline_standalone: true, ..StripInfo::default() }
            }
            Node::Block(block) => whitespace_block(block),
        };
        let prev_ws = is_prev_whitespace(body, Some(i), is_root);
        let next_ws = is_next_whitespace(body, Some(i), is_root);
        let open_standalone = strip.open_standalone && prev_ws;
        let close_standalone = strip.close_standalone && next_ws;
        let inline_standalone = strip.inline_standalone && prev_ws && next_ws;

        if strip.close {
            omit_right(body, Some(i), true);
        }
        if strip.open {
            omit_left(body, Some(i), true);
        }
        if inline_standalone {
            omit_right(body, Some(i), false);
            omit_left(body, Some(i), false);
        }
        if open_standalone {
            if let Node::Block(block) = &mut body[i] {
                omit_right(&mut block.program.body, None, false);
            }
            omit_left(body, Some(i), false);
        }
        if close_standalone {
            omit_right(body, Some(i), false);
            if let Node::Block(block) = &mut body[i] {
                match &mut block.inverse {
                    Some(Inverse::Plain(inverse)) => {
                        omit_left(&mut inverse.body, None, false);
                    }
                    // The chained wrapper program holds only a block: nothing to strip.
                    Some(Inverse::Chain(_)) => {}
                    None => {
                        omit_left(&mut block.program.body, None, false);
                    }
                }
            }
        }
    }
}

/// The program Handlebars calls `firstInverse` (and, for chains, also `lastInverse`).
pub(super) fn first_inverse(inverse: &mut Inverse) -> &mut Program {
    match inverse {
        Inverse::Plain(p) => p,
        Inverse::Chain(b) => &mut b.program,
    }
}

/// Handlebars `WhitespaceControl.BlockStatement`.
pub(super) fn whitespace_block(block: &mut Block) -> StripInfo {
    whitespace_program(&mut block.program, false);
    match &mut block.inverse {
        Some(Inverse::Plain(p)) => whitespace_program(p, false),
        // Visiting the chained wrapper program only visits its single block.
        Some(Inverse::Chain(b)) => {
            whitespace_block(b);
        }
        None => {}
    }

    let open_standalone = is_next_whitespace(&block.program.body, None, false);
    let close_standalone = match &mut block.inverse {
        Some(inverse) => is_prev_whitespace(&first_inverse(inverse).body, None, false),
        None => is_prev_whitespace(&block.program.body, None, false),
    };
    let strip = StripInfo {
        open: block.open_strip.open,
        close: block.close_strip.close,
        open_standalone,
        close_standalone,
        inline_standalone: false,
    };

    if block.open_strip.close {
        omit_right(&mut block.program.body, None, true);
    }
    if let Some(inverse) = &mut block.inverse {
        if block.inverse_strip.open {
            omit_left(&mut block.program.body, None, true);
        }
        if block.inverse_strip.close {
            omit_right(&mut first_inverse(inverse).body, None, true);
        }
        if block.close_strip.open {
            // For chains Handlebars' lastInverse is the first chained block's program.
            omit_left(&mut first_inverse(inverse).body, None, true);
        }
        // Standalone `{{else}}`.
        if is_prev_whitespace(&block.program.body, None, false)
            && is_next_whitespace(&first_inverse(inverse).body, None, false)
        {
            omit_left(&mut block.program.body, None, false);
            omit_right(&mut first_inverse(inverse).body, None, false);
        }
    } else if block.close_strip.open {
        omit_left(&mut block.program.body, None, true);
    }
    strip
}

#[cfg(test)]
mod tests {
    use crate::prompt::render::render_handlebars;
    use crate::prompt::render::render_template;
    use serde_json::json;
    use serde_json::Value;

    fn hb(src: &str, vars: Value) -> String {
        render_handlebars("t.md", src, &vars).expect("renders")
    }

    fn rt(src: &str, vars: Value) -> String {
        render_template("t.md", src, &vars).expect("renders")
    }

    // ----- standalone lines -----

    #[test]
    fn standalone_block_lines_vanish_with_their_line_break() {
        let t = "before\n{{#if a}}\ninside\n{{/if}}\nafter";
        assert_eq!(hb(t, json!({"a": true})), "before\ninside\nafter");
        assert_eq!(hb(t, json!({"a": false})), "before\nafter");
        // Surrounding spaces and tabs on the tag line go too.
        let t = "before\n  {{#if a}}  \ninside\n\t{{/if}}\t\nafter";
        assert_eq!(hb(t, json!({"a": true})), "before\ninside\nafter");
        // A standalone {{else}}.
        let t = "x\n{{#if a}}\nyes\n  {{else}}  \nno\n{{/if}}\ny";
        assert_eq!(hb(t, json!({"a": true})), "x\nyes\ny");
        assert_eq!(hb(t, json!({"a": false})), "x\nno\ny");
    }

    #[test]
    fn standalone_on_first_and_last_line() {
        // First line, no preceding text; last line without a trailing newline.
        assert_eq!(hb("{{#if a}}\nA\n{{/if}}", json!({"a": 1})), "A\n");
        assert_eq!(hb("{{#if a}}\nA\n{{/if}}\n", json!({"a": 1})), "A\n");
        assert_eq!(hb("  {{#if a}}  \nA\n  {{/if}}  ", json!({"a": 1})), "A\n");
        assert_eq!(hb("{{#if a}}\nA\n{{/if}}", json!({})), "");
        // The only line.
        assert_eq!(hb("{{#if a}}{{/if}}", json!({"a": 1})), "");
        assert_eq!(hb("  {{! just a comment }}  ", json!({})), "");
        assert_eq!(hb("{{! c }}\nline", json!({})), "line");
    }

    #[test]
    fn tags_sharing_a_line_with_text_are_not_standalone() {
        assert_eq!(hb("a {{#if x}}\nb\n{{/if}}", json!({"x": 1})), "a \nb\n");
        assert_eq!(hb("{{#if x}}b{{/if}}\nc", json!({"x": 1})), "b\nc");
        // Mustaches are never standalone.
        assert_eq!(hb("a\n{{v}}\nb", json!({"v": ""})), "a\n\nb");
        assert_eq!(hb("a\n  {{join l \",\"}}  \nb", json!({"l": []})), "a\n    \nb");
    }

    #[test]
    fn crlf_standalone_lines() {
        let t = "a\r\n{{#if x}}\r\nb\r\n{{/if}}\r\nc";
        assert_eq!(hb(t, json!({"x": 1})), "a\r\nb\r\nc");
        assert_eq!(rt(t, json!({"x": 1})), "a\nb\nc");
        assert_eq!(rt(t, json!({})), "a\nc");
    }

    #[test]
    fn tilde_whitespace_control() {
        assert_eq!(hb("a   {{~x~}}   b", json!({"x": "X"})), "aXb");
        assert_eq!(hb("a \n {{~#if x}} \n B \n {{~/if~}} \n c", json!({"x": 1})), "a Bc");
        assert_eq!(hb("[ {{~! c ~}} ]", json!({})), "[]");
    }

    #[test]
    fn comments_and_escapes() {
        assert_eq!(hb("a{{! note }}b", json!({})), "ab");
        assert_eq!(hb("a{{!-- has }} inside --}}b", json!({})), "ab");
        assert_eq!(hb("a{{!--}}b", json!({})), "ab");
        assert_eq!(hb("a{{!--~}} \n b", json!({})), "ab");
        // `{{else}}` and `{{^}}` are single tokens: a third brace is text.
        assert_eq!(hb("{{#if a}}x{{else}}}{{/if}}", json!({})), "}");
        assert_eq!(hb("{{#if a}}x{{^}}}}{{/if}}", json!({})), "}}");
        assert_eq!(hb("\\{{x}} {{x}}", json!({"x": "v"})), "{{x}} v");
        assert_eq!(hb("\\\\{{x}}", json!({"x": "v"})), "\\v");
        assert_eq!(hb("a}}b{c}", json!({})), "a}}b{c}");
    }
}
