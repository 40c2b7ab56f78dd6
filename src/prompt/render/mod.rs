//! A small, hand-written renderer for the Handlebars subset used by the prompt templates,
//! followed by the prompt layout pass (SPEC section 9, conformance README "Templates").
//!
//! Rendering is two steps:
//!
//! 1. **Handlebars** (with `noEscape`): values are inserted verbatim. Supported syntax:
//!    - `{{name}}`, `{{a.b}}`, `{{this}}`, `{{./a}}`, `{{a/b}}`, `{{a.[odd key]}}`, `{{../a}}`
//!      (inside `each`), `{{@root.a}}`, `{{@index}}`, `{{@key}}`, `{{@first}}`, `{{@last}}`;
//!      `{{{name}}}` and `{{&name}}` (the same as `{{name}}`, nothing is escaped anyway).
//!      Values are converted like JavaScript `String(value)`: numbers in JS notation, arrays
//!      joined with `,`, objects as `[object Object]`; `null` and missing values give `""`.
//!      `list.length` is the length of an array and the UTF-16 length of a string.
//!    - `{{#if path}}…{{else}}…{{/if}}` and `{{#unless path}}…{{/unless}}` with Handlebars
//!      truthiness (`0`, `""`, `false`, `null`, missing and `[]` are falsy; `includeZero=true`
//!      makes `0` truthy), including chained `{{else if other}}`.
//!    - `{{#each list}}…{{else}}…{{/each}}` over arrays and objects (JS key order).
//!    - `{{#xml "tag"}}…{{/xml}}`: the content is trimmed with JS `trim()`; renders `""` when
//!      the trimmed content is empty, else `<tag>\ncontent\n</tag>`.
//!    - `{{join list "sep"}}`: `list` joined like JS `Array.prototype.join`; `""` when `list` is
//!      not an array; the separator defaults to `", "` when it is not a string.
//!    - comments `{{! … }}` / `{{!-- … --}}`, whitespace control `{{~ … ~}}`, and escaped
//!      mustaches `\{{literal}}`.
//!
//!    String literals (`"…"` or `'…'`) are verbatim: there are no escape sequences except the
//!    quote itself (`\"`), exactly as in Handlebars. `"\n"` is a backslash and an `n`; a real
//!    line break between the quotes is a line break.
//!
//!    Whitespace follows Handlebars' standalone rule precisely: a line that holds only a block
//!    tag (`{{#…}}`, `{{else}}`, `{{/…}}`) or a comment, plus spaces or tabs, disappears together
//!    with its line break (also on the first or last line of the template).
//!
//! 2. **Layout** ([`layout`]): CRLF / CR → LF and NBSP → space; trailing spaces and tabs removed
//!    per line; in the leading indentation every two spaces become a TAB; 3+ newlines → 2; JS
//!    `trim()` of the whole text.
//!
//! Malformed templates (unclosed block, unknown helper, unterminated tag, …) give
//! [`Error::Template`](crate::error::Error::Template) with the line and column; so do partials,
//! sub-expressions, decorators, raw blocks, block parameters and blocks nested more than 64 deep. No input makes this module
//! panic. Known, deliberate differences from Handlebars.js: helper-argument errors (`{{#if}}`
//! without an argument, an unknown helper) are reported when the template is parsed, not when the
//! faulty branch runs; a block body made of numbers only renders them as text (Handlebars.js may
//! add them up or fail inside `xml`).

mod ast;
mod eval;
mod layout;
mod lexer;
mod parser;
mod whitespace;

pub use layout::layout;

use eval::render;
use parser::parse;
use serde_json::Value;

use crate::error::Result;

/// Deepest block nesting accepted, so hostile templates cannot exhaust the stack.
pub(super) const MAX_NESTING: usize = 64;

/// Renders a prompt template: Handlebars subset with `vars` as the context, then the layout
/// pass (SPEC section 9; exact rules in the conformance README "Templates").
///
/// `name` is only used in error messages (the template id, e.g. `file-operations.md`).
/// Static templates are rendered the same way with any `vars` (e.g. `Value::Null`).
///
/// # Errors
/// [`Error::Template`](crate::error::Error::Template) when `source` is not a valid template of the supported subset.
pub fn render_template(name: &str, source: &str, vars: &Value) -> Result<String> {
    let raw = render_handlebars(name, source, vars)?;
    Ok(layout(&raw))
}

/// Renders the Handlebars subset only, without the layout pass (SPEC section 9).
///
/// Useful to inspect the standalone-line handling; prompts should use [`render_template`].
///
/// # Errors
/// [`Error::Template`](crate::error::Error::Template) when `source` is not a valid template of the supported subset.
pub fn render_handlebars(name: &str, source: &str, vars: &Value) -> Result<String> {
    let program = parsed(name, source)?;
    Ok(render(&program, vars, source.len()))
}

/// How many parsed templates [`parsed`] keeps (a session renders a handful of templates, each
/// after every turn for the compaction preview).
const PARSED_KEPT: usize = 16;

/// A parsed template with its name and source.
type Parsed = (Box<str>, Box<str>, std::rc::Rc<ast::Program>);

thread_local! {
    /// The templates parsed last, by name and source, most recent last.
    static PARSED: std::cell::RefCell<Vec<Parsed>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`parse`], remembered for the last [`PARSED_KEPT`] templates (name and source are the key,
/// so a changed template is parsed again); errors are not remembered.
fn parsed(name: &str, source: &str) -> Result<std::rc::Rc<ast::Program>> {
    let hit = PARSED.with(|p| {
        let p = p.borrow();
        p.iter().rev().find(|(n, s, _)| &**n == name && &**s == source).map(|(_, _, prog)| prog.clone())
    });
    if let Some(program) = hit {
        return Ok(program);
    }
    let program = std::rc::Rc::new(parse(name, source)?);
    PARSED.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() >= PARSED_KEPT {
            p.remove(0);
        }
        p.push((name.into(), source.into(), program.clone()));
    });
    Ok(program)
}

/// Checks that `source` parses as a template of the supported subset, without rendering it
/// (SPEC section 9: host overrides are validated when they are installed).
///
/// # Errors
/// [`Error::Template`](crate::error::Error::Template) naming `name` and what is wrong (with line and column).
pub fn validate_template(name: &str, source: &str) -> Result<()> {
    parse(name, source).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use serde_json::json;

    fn rt(src: &str, vars: Value) -> String {
        render_template("t.md", src, &vars).expect("renders")
    }

    #[test]
    fn parsed_templates_are_remembered_by_name_and_source() {
        assert_eq!(rt("a {{x}}", json!({"x": 1})), "a 1");
        assert_eq!(rt("a {{x}}", json!({"x": 2})), "a 2", "the same template, other values");
        assert_eq!(rt("b {{x}}", json!({"x": 2})), "b 2", "a changed source is parsed again");
        assert!(render_template("t.md", "{{#if}}", &json!({})).is_err());
        assert!(render_template("t.md", "{{#if}}", &json!({})).is_err(), "errors are not remembered");
        for n in 0..(PARSED_KEPT + 3) {
            assert_eq!(rt(&format!("{n} {{{{x}}}}"), json!({"x": "y"})), format!("{n} y"));
        }
        PARSED.with(|p| assert_eq!(p.borrow().len(), PARSED_KEPT, "at most PARSED_KEPT are kept"));
        assert_eq!(rt("a {{x}}", json!({"x": 3})), "a 3");
    }

    fn err(src: &str) -> String {
        match render_template("bad.md", src, &json!({})) {
            Err(Error::Template { name, reason }) => {
                assert_eq!(name, "bad.md");
                reason
            }
            other => panic!("expected a template error for {src:?}, got {other:?}"),
        }
    }

    // ----- errors -----

    #[test]
    fn malformed_templates_are_errors() {
        assert!(err("{{#if a}}x").contains("unclosed block"));
        assert!(err("{{#if a}}x{{/unless}}").contains("does not match"));
        assert!(err("x{{/if}}").contains("no matching opening"));
        assert!(err("{{else}}").contains("outside of a block"));
        assert!(err("{{#if a}}1{{else}}2{{else}}3{{/if}}").contains("after"));
        assert!(err("{{#foo a}}x{{/foo}}").contains("unknown block helper"));
        assert!(err("{{#with a}}x{{/with}}").contains("unknown block helper"));
        assert!(err("{{foo bar}}").contains("unknown helper `foo`"));
        assert!(err("{{lookup a b}}").contains("unknown helper"));
        assert!(err("{{if a}}").contains("block helper"));
        assert!(err("{{#if}}x{{/if}}").contains("exactly one argument"));
        assert!(err("{{#if a b}}x{{/if}}").contains("exactly one argument"));
        assert!(err("{{#xml}}x{{/xml}}").contains("exactly one argument"));
        assert!(err("{{#each}}x{{/each}}").contains("exactly one argument"));
        assert!(err("{{name").contains("unterminated tag"));
        assert!(err("{{name ").contains("unterminated tag"));
        assert!(err("{{").contains("unterminated tag"));
        assert!(err("a {{join l \"x}}").contains("unterminated string"));
        assert!(err("{{! never closed").contains("unterminated comment"));
        assert!(err("{{!-- never closed }}").contains("unterminated comment"));
        assert!(err("{{}}").contains("empty tag"));
        assert!(err("{{a}}}").contains("}}}"));
        assert!(err("{{{a}}}}").contains("raw block"));
        assert!(err("{{#if a}}}x{{/if}}").contains("}}}"));
        assert!(err("{{{a}}").contains("unterminated") || err("{{{a}}").contains("unexpected"));
        assert!(err("{{> partial}}").contains("partials"));
        assert!(err("{{(sub)}}").contains("sub-expressions"));
        assert!(err("{{^x}}y{{/x}}").contains("inverted"));
        assert!(err("{{#each l as |x|}}{{/each}}").contains("block parameters"));
        assert!(err("{{a.b.this}}").contains("invalid path"));
        assert!(err("{{a.}}").contains("ends with"));
        assert!(err("{{a\"b\"}}").contains("unexpected"));
        assert!(err("{{{{raw}}}}x{{{{/raw}}}}").contains("raw blocks"));
        // Errors name the line and column.
        assert!(err("line one\n  {{#if a}}").contains("line 2, column 3"));
        assert!(validate_template("ok.md", "{{#if a}}{{/if}}").is_ok());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        // Run on a small stack (wasm's default is 1 MiB) to keep a safety margin.
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let src = "{{#if a}}".repeat(10_000);
                assert!(err(&src).contains("nested too deeply"));
                let src = format!("{{{{#if a}}}}{}", "{{else if a}}".repeat(10_000));
                assert!(err(&src).contains("nested too deeply"));
                let depth = MAX_NESTING;
                let mut ok = "{{#if a}}\n{{#xml \"t\"}}\n".repeat(depth / 2);
                ok.push('x');
                ok.push_str(&"\n{{/xml}}\n{{/if}}".repeat(depth / 2));
                let out = rt(&ok, json!({"a": 1}));
                let expected = format!("{}x{}", "<t>\n".repeat(depth / 2), "\n</t>".repeat(depth / 2));
                assert_eq!(out, expected);
                let mut chain = String::from("{{#if a}}");
                chain.push_str(&"{{else if b}}".repeat(depth - 2));
                chain.push_str("{{else}}E{{/if}}");
                assert_eq!(rt(&chain, json!({})), "E");
            })
            .expect("spawn");
        assert!(handle.join().is_ok());
    }

    #[test]
    fn arbitrary_inputs_never_panic() {
        let pieces = [
            "{{", "}}", "{", "}", "#if ", "#xml ", "/if", "/xml", "else", "~", "!", "--", "\"", "'", "\\", "\n", " ",
            "a", ".", "/", "[", "]", "@", "é", "😀", "join ", "(", "=", "^", "\r", "\u{a0}", "..", "this", "#each ",
        ];
        // Deterministic pseudo-random combinations.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..4000 {
            let mut src = String::new();
            let len = (seed % 14) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                src.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let _ = render_template("fuzz.md", &src, &json!({"a": [1], "l": ["x"]}));
        }
    }
}
