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
//! [`Error::Template`] with the line and column; so do partials, sub-expressions, decorators,
//! raw blocks, block parameters and blocks nested more than 64 deep. No input makes this module
//! panic. Known, deliberate differences from Handlebars.js: helper-argument errors (`{{#if}}`
//! without an argument, an unknown helper) are reported when the template is parsed, not when the
//! faulty branch runs; a block body made of numbers only renders them as text (Handlebars.js may
//! add them up or fail inside `xml`).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::js::{array_index_key, format_number, is_js_whitespace, js_trim, number_value, object_entries};

/// Deepest block nesting accepted, so hostile templates cannot exhaust the stack.
const MAX_NESTING: usize = 64;

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/// Renders a prompt template: Handlebars subset with `vars` as the context, then the layout
/// pass (SPEC section 9; exact rules in the conformance README "Templates").
///
/// `name` is only used in error messages (the template id, e.g. `file-operations.md`).
/// Static templates are rendered the same way with any `vars` (e.g. `Value::Null`).
///
/// # Errors
/// [`Error::Template`] when `source` is not a valid template of the supported subset.
pub fn render_template(name: &str, source: &str, vars: &Value) -> Result<String> {
    let raw = render_handlebars(name, source, vars)?;
    Ok(layout(&raw))
}

/// Renders the Handlebars subset only, without the layout pass (SPEC section 9).
///
/// Useful to inspect the standalone-line handling; prompts should use [`render_template`].
///
/// # Errors
/// [`Error::Template`] when `source` is not a valid template of the supported subset.
pub fn render_handlebars(name: &str, source: &str, vars: &Value) -> Result<String> {
    let program = parse(name, source)?;
    let root = Val::from_json(vars);
    let mut renderer = Renderer { contexts: vec![root.clone()], frames: Vec::new(), root };
    let mut out = String::with_capacity(source.len());
    renderer.program(&program, &mut out);
    Ok(out)
}

/// Checks that `source` parses as a template of the supported subset, without rendering it
/// (SPEC section 9: host overrides are validated when they are installed).
///
/// # Errors
/// [`Error::Template`] naming `name` and what is wrong (with line and column).
pub fn validate_template(name: &str, source: &str) -> Result<()> {
    parse(name, source).map(|_| ())
}

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

// ---------------------------------------------------------------------------------------------
// Syntax tree
// ---------------------------------------------------------------------------------------------

/// `~` whitespace-control flags of a tag: `open` = `{{~`, `close` = `~}}`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Strip {
    open: bool,
    close: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Path(PathExpr),
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
    Undefined,
}

#[derive(Debug, Clone, PartialEq)]
struct PathExpr {
    /// `@name` (data variable) instead of a context lookup.
    data: bool,
    /// Number of `../` steps.
    depth: usize,
    /// Property names after removing `this`, `.` and `..`.
    parts: Vec<String>,
    /// Source spelling, e.g. `this.foo` or `../a/b`.
    original: String,
    /// A plain one-part name that may call a helper (`{{join …}}`), as in Handlebars.
    simple: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct Call {
    head: Expr,
    params: Vec<Expr>,
    hash: Vec<(String, Expr)>,
}

#[derive(Debug)]
struct Content {
    original: String,
    value: String,
    left_stripped: bool,
    right_stripped: bool,
}

#[derive(Debug)]
enum Node {
    Content(Content),
    Mustache { call: Call, strip: Strip },
    Comment { strip: Strip },
    Block(Box<Block>),
}

#[derive(Debug, Default)]
struct Program {
    body: Vec<Node>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Helper {
    If,
    Unless,
    Each,
    Xml,
}

#[derive(Debug)]
enum Inverse {
    /// `{{else}}…`
    Plain(Program),
    /// `{{else helper …}}…`: a chained block (Handlebars' `program.chained`).
    Chain(Box<Block>),
}

#[derive(Debug)]
struct Block {
    helper: Helper,
    call: Call,
    program: Program,
    inverse: Option<Inverse>,
    open_strip: Strip,
    inverse_strip: Strip,
    close_strip: Strip,
}

// ---------------------------------------------------------------------------------------------
// Lexer: content and tags
// ---------------------------------------------------------------------------------------------

#[derive(Debug)]
enum TagKind {
    Mustache(Call),
    Comment,
    Open(Call),
    Close(String),
    Else,
    ElseChain(Call),
}

#[derive(Debug)]
struct Tag {
    pos: usize,
    kind: TagKind,
    strip: Strip,
}

#[derive(Debug)]
enum Item {
    Content(String),
    Tag(Tag),
}

struct Lexer<'s> {
    name: &'s str,
    src: &'s str,
    pos: usize,
}

/// 1-based line and column (in characters) of byte offset `pos` (clamped to a char boundary).
fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let mut line = 1;
    let mut col = 1;
    for (i, c) in src.char_indices() {
        if i >= pos {
            break;
        }
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    (line, col)
}

fn template_error(name: &str, src: &str, pos: usize, reason: impl std::fmt::Display) -> Error {
    let (line, col) = line_col(src, pos);
    Error::Template { name: name.to_string(), reason: format!("line {line}, column {col}: {reason}") }
}

/// Characters that end a Handlebars identifier (the complement of its `ID` class).
fn is_id_char(c: char) -> bool {
    !(is_js_whitespace(c)
        || matches!(
            c,
            '!' | '"'
                | '#'
                | '%'
                | '&'
                | '\''
                | '('
                | ')'
                | '*'
                | '+'
                | ','
                | '.'
                | '/'
                | ';'
                | '<'
                | '='
                | '>'
                | '@'
                | '['
                | '\\'
                | ']'
                | '^'
                | '`'
                | '{'
                | '|'
                | '}'
                | '~'
        ))
}

/// Handlebars' `LOOKAHEAD` after an identifier: `[=~}\s\/.)]` (or the end, which then fails
/// as an unterminated tag).
fn is_id_lookahead(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(c, '=' | '~' | '}' | '/' | '.' | ')') || is_js_whitespace(c),
    }
}

/// Handlebars' `LITERAL_LOOKAHEAD` after a number or keyword literal: `[~}\s)]`.
fn is_literal_lookahead(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(c, '~' | '}' | ')') || is_js_whitespace(c),
    }
}

impl<'s> Lexer<'s> {
    fn err(&self, pos: usize, reason: impl std::fmt::Display) -> Error {
        template_error(self.name, self.src, pos, reason)
    }

    fn rest(&self) -> &'s str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if is_js_whitespace(c) {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    /// Splits the whole source into content pieces and tags.
    fn tokenize(mut self) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        let bytes = self.src.as_bytes();
        while self.pos < self.src.len() {
            let rest = self.rest();
            let Some(off) = rest.find("{{") else {
                items.push(Item::Content(rest.to_string()));
                break;
            };
            let q = self.pos + off;
            let text = &rest[..off];
            if text.ends_with("\\\\") {
                // `\\{{`: a literal backslash, then a real mustache.
                items.push(Item::Content(text[..text.len() - 1].to_string()));
                self.pos = q;
                items.push(Item::Tag(self.tag()?));
            } else if let Some(before) = text.strip_suffix('\\') {
                // `\{{`: an escaped mustache; the text up to the next mustache is literal.
                if !before.is_empty() {
                    items.push(Item::Content(before.to_string()));
                }
                let start = q + 2;
                let end = match self.src.get(start..).and_then(|s| s.find("{{")) {
                    None => self.src.len(),
                    Some(o) => {
                        let r = start + o;
                        if r >= start + 2 && bytes[r - 2] == b'\\' && bytes[r - 1] == b'\\' {
                            r - 2
                        } else if r > start && bytes[r - 1] == b'\\' {
                            r - 1
                        } else {
                            r
                        }
                    }
                };
                items.push(Item::Content(self.src[q..end].to_string()));
                self.pos = end;
            } else {
                if !text.is_empty() {
                    items.push(Item::Content(text.to_string()));
                }
                self.pos = q;
                items.push(Item::Tag(self.tag()?));
            }
        }
        Ok(items)
    }

    /// Reads one tag; `self.pos` is at its `{{`.
    fn tag(&mut self) -> Result<Tag> {
        let start = self.pos;
        let rest = self.rest();
        if rest.starts_with("{{{{") {
            return Err(self.err(start, "raw blocks ({{{{…}}}}) are not supported"));
        }
        // Comments.
        let tilde = rest.as_bytes().get(2) == Some(&b'~');
        let after_open = if tilde { 3 } else { 2 };
        if rest[after_open..].starts_with("!--") {
            // Handlebars matches the closing `--}}` from the `!`, so `{{!--}}` is complete.
            let body_start = start + after_open + 1;
            let end = self
                .find_comment_end(body_start, true)
                .ok_or_else(|| self.err(start, "unterminated comment (missing `--}}`)"))?;
            let text = &self.src[start..end];
            self.pos = end;
            return Ok(Tag {
                pos: start,
                kind: TagKind::Comment,
                strip: Strip { open: tilde, close: text.ends_with("~}}") },
            });
        }
        if rest[after_open..].starts_with('!') {
            let body_start = start + after_open + 1;
            let end = self
                .find_comment_end(body_start, false)
                .ok_or_else(|| self.err(start, "unterminated comment (missing `}}`)"))?;
            let text = &self.src[start..end];
            self.pos = end;
            return Ok(Tag {
                pos: start,
                kind: TagKind::Comment,
                strip: Strip { open: tilde, close: text.ends_with("~}}") },
            });
        }

        self.pos = start + after_open;
        let strip_open = tilde;
        match self.peek() {
            Some('#') => {
                self.pos += 1;
                match self.peek() {
                    Some('>') => return Err(self.err(start, "partial blocks are not supported")),
                    Some('*') => return Err(self.err(start, "decorators are not supported")),
                    _ => {}
                }
                let (call, close) = self.call(start, false)?;
                Ok(Tag { pos: start, kind: TagKind::Open(call), strip: Strip { open: strip_open, close } })
            }
            Some('/') => {
                self.pos += 1;
                self.skip_ws();
                let name_start = self.pos;
                let head = self.helper_name(start)?;
                let name = match head {
                    Expr::Path(p) => p.original,
                    _ => self.src[name_start..self.pos].to_string(),
                };
                self.skip_ws();
                let close = self.close(start, false)?;
                Ok(Tag { pos: start, kind: TagKind::Close(name), strip: Strip { open: strip_open, close } })
            }
            Some('^') => {
                self.pos += 1;
                self.skip_ws();
                if self.at_close(false) {
                    let close = self.else_close(start)?;
                    Ok(Tag { pos: start, kind: TagKind::Else, strip: Strip { open: strip_open, close } })
                } else {
                    Err(self.err(start, "inverted sections ({{^name}}) are not supported"))
                }
            }
            Some('>') => Err(self.err(start, "partials are not supported")),
            Some('*') => Err(self.err(start, "decorators are not supported")),
            Some('{') => {
                self.pos += 1;
                let (call, close) = self.call(start, true)?;
                Ok(Tag { pos: start, kind: TagKind::Mustache(call), strip: Strip { open: strip_open, close } })
            }
            Some('&') => {
                self.pos += 1;
                let (call, close) = self.call(start, false)?;
                Ok(Tag { pos: start, kind: TagKind::Mustache(call), strip: Strip { open: strip_open, close } })
            }
            _ => {
                let before_ws = self.pos;
                self.skip_ws();
                let is_else = self.rest().starts_with("else")
                    && match self.peek_at(4) {
                        None => true,
                        Some(c) => c == '~' || c == '}' || is_js_whitespace(c),
                    };
                if is_else {
                    self.pos += 4;
                    self.skip_ws();
                    if self.at_close(false) {
                        let close = self.else_close(start)?;
                        return Ok(Tag { pos: start, kind: TagKind::Else, strip: Strip { open: strip_open, close } });
                    }
                    let (call, close) = self.call(start, false)?;
                    return Ok(Tag {
                        pos: start,
                        kind: TagKind::ElseChain(call),
                        strip: Strip { open: strip_open, close },
                    });
                }
                self.pos = before_ws;
                let (call, close) = self.call(start, false)?;
                Ok(Tag { pos: start, kind: TagKind::Mustache(call), strip: Strip { open: strip_open, close } })
            }
        }
    }

    /// Finds the end (exclusive byte offset) of a comment whose body starts at `body_start`.
    fn find_comment_end(&self, body_start: usize, long: bool) -> Option<usize> {
        let bytes = self.src.as_bytes();
        let mut from = body_start;
        loop {
            let r = from + self.src.get(from..)?.find("}}")?;
            if !long {
                return Some(r + 2);
            }
            let dashes_plain = r >= body_start + 2 && &bytes[r - 2..r] == b"--";
            let dashes_tilde = r >= body_start + 3 && &bytes[r - 3..r] == b"--~";
            if dashes_plain || dashes_tilde {
                return Some(r + 2);
            }
            from = r + 1;
        }
    }

    fn at_close(&self, triple: bool) -> bool {
        let rest = self.rest();
        if triple {
            rest.starts_with("}}}") || rest.starts_with("}~}}")
        } else {
            rest.starts_with("}}") || rest.starts_with("~}}")
        }
    }

    /// Consumes the closing `}}` / `~}}` (or `}}}` / `}~}}` for a triple stash); returns the
    /// right-strip flag.
    fn close(&mut self, start: usize, triple: bool) -> Result<bool> {
        let rest = self.rest();
        if rest.starts_with("}}}}") {
            return Err(self.err(start, "`}}}}` is only valid after a raw block"));
        }
        if triple {
            if rest.starts_with("}}}") {
                self.pos += 3;
                return Ok(false);
            }
            if rest.starts_with("}~}}") {
                self.pos += 4;
                return Ok(true);
            }
        } else {
            if rest.starts_with("}}}") || rest.starts_with("}~}}") {
                return Err(self.err(start, "`}}}` closes a tag opened with `{{`"));
            }
            if rest.starts_with("}}") {
                self.pos += 2;
                return Ok(false);
            }
            if rest.starts_with("~}}") {
                self.pos += 3;
                return Ok(true);
            }
        }
        if rest.is_empty() {
            Err(self.err(start, "unterminated tag (missing `}}`)"))
        } else {
            let shown: String = rest.chars().take(12).collect();
            Err(self.err(start, format!("unexpected `{shown}` in tag")))
        }
    }

    /// Consumes the `}}` / `~}}` of `{{else}}` or `{{^}}`. Handlebars lexes these tags as one
    /// token, so a third `}` right after them is ordinary text.
    fn else_close(&mut self, start: usize) -> Result<bool> {
        let rest = self.rest();
        if rest.starts_with("}}") {
            self.pos += 2;
            Ok(false)
        } else if rest.starts_with("~}}") {
            self.pos += 3;
            Ok(true)
        } else {
            self.close(start, false)
        }
    }

    /// Parses `helperName param* hash?` and the closing braces.
    fn call(&mut self, start: usize, triple: bool) -> Result<(Call, bool)> {
        self.skip_ws();
        if self.at_close(triple) || self.rest().is_empty() {
            if self.rest().is_empty() {
                return Err(self.err(start, "unterminated tag (missing `}}`)"));
            }
            return Err(self.err(start, "empty tag"));
        }
        let head = self.helper_name(start)?;
        let mut params = Vec::new();
        let mut hash = Vec::new();
        loop {
            self.skip_ws();
            if self.rest().is_empty() {
                return Err(self.err(start, "unterminated tag (missing `}}`)"));
            }
            if self.at_close(triple) {
                break;
            }
            if self.rest().starts_with("as") && self.is_block_params() {
                return Err(self.err(start, "block parameters (`as |x|`) are not supported"));
            }
            if let Some(key) = self.hash_key() {
                self.skip_ws();
                let value = self.param(start)?;
                hash.push((key, value));
                continue;
            }
            if !hash.is_empty() {
                return Err(self.err(start, "positional parameter after a hash argument"));
            }
            params.push(self.param(start)?);
        }
        let close = self.close(start, triple)?;
        Ok((Call { head, params, hash }, close))
    }

    fn is_block_params(&self) -> bool {
        let after = self.rest().get(2..).unwrap_or("");
        let trimmed = after.trim_start_matches(is_js_whitespace);
        trimmed.len() < after.len() && trimmed.starts_with('|')
    }

    /// If the cursor is at `ID=`, consumes it and returns the key.
    fn hash_key(&mut self) -> Option<String> {
        let rest = self.rest();
        let id_len: usize = rest.chars().take_while(|&c| is_id_char(c)).map(char::len_utf8).sum();
        if id_len == 0 {
            return None;
        }
        let after = &rest[id_len..];
        let trimmed = after.trim_start_matches(is_js_whitespace);
        if trimmed.starts_with('=') {
            let key = rest[..id_len].to_string();
            self.pos += id_len + (after.len() - trimmed.len()) + 1;
            Some(key)
        } else {
            None
        }
    }

    /// A helper name: a path, a data path or a literal.
    fn helper_name(&mut self, start: usize) -> Result<Expr> {
        self.param(start)
    }

    /// A parameter: literal or path (sub-expressions are not supported).
    fn param(&mut self, start: usize) -> Result<Expr> {
        let Some(c) = self.peek() else {
            return Err(self.err(start, "unterminated tag (missing `}}`)"));
        };
        match c {
            '"' | '\'' => self.string_literal(c),
            '(' => Err(self.err(start, "sub-expressions are not supported")),
            '@' => {
                self.pos += 1;
                self.path(start, true)
            }
            _ => {
                if let Some(e) = self.number_or_keyword() {
                    return Ok(e);
                }
                self.path(start, false)
            }
        }
    }

    fn string_literal(&mut self, quote: char) -> Result<Expr> {
        let open = self.pos;
        self.pos += 1;
        let mut raw = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(self.err(open, "unterminated string literal"));
            };
            if c == '\\' && self.peek() == Some(quote) {
                self.pos += quote.len_utf8();
                raw.push(quote);
            } else if c == quote {
                break;
            } else {
                raw.push(c);
            }
        }
        Ok(Expr::Str(raw))
    }

    fn number_or_keyword(&mut self) -> Option<Expr> {
        let rest = self.rest();
        for (word, expr) in [
            ("true", Expr::Bool(true)),
            ("false", Expr::Bool(false)),
            ("null", Expr::Null),
            ("undefined", Expr::Undefined),
        ] {
            if rest.starts_with(word) && is_literal_lookahead(rest[word.len()..].chars().next()) {
                self.pos += word.len();
                return Some(expr);
            }
        }
        // -?[0-9]+(\.[0-9]+)?
        let b = rest.as_bytes();
        let mut i = 0;
        if b.first() == Some(&b'-') {
            i += 1;
        }
        let digits_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == digits_start {
            return None;
        }
        if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if is_literal_lookahead(rest[j..].chars().next()) {
                i = j;
            }
        }
        if !is_literal_lookahead(rest[i..].chars().next()) {
            return None;
        }
        let n: f64 = rest[..i].parse().ok()?;
        self.pos += i;
        Some(Expr::Num(n))
    }

    /// `pathSegments`: `ID (SEP ID)*` where ID may be `..`, `.`, `this`, `[literal]`.
    fn path(&mut self, start: usize, data: bool) -> Result<Expr> {
        let mut segments: Vec<(String, bool)> = Vec::new(); // (part, is_literal)
        let mut original = if data { String::from("@") } else { String::new() };
        loop {
            // One ID.
            let rest = self.rest();
            let (part, literal, len) = if rest.starts_with("..") {
                ("..".to_string(), false, 2)
            } else if rest.starts_with('.') && is_id_lookahead(rest[1..].chars().next()) {
                (".".to_string(), false, 1)
            } else if let Some(inner) = rest.strip_prefix('[') {
                let Some(close) = inner.find(']') else {
                    return Err(self.err(start, "unterminated `[` in path"));
                };
                (inner[..close].to_string(), true, close + 2)
            } else {
                let len: usize = rest.chars().take_while(|&c| is_id_char(c)).map(char::len_utf8).sum();
                if len == 0 {
                    let shown: String = rest.chars().take(12).collect();
                    return Err(if rest.is_empty() {
                        self.err(start, "unterminated tag (missing `}}`)")
                    } else {
                        self.err(start, format!("unexpected `{shown}` in tag"))
                    });
                }
                if !is_id_lookahead(rest[len..].chars().next()) {
                    let shown: String = rest[len..].chars().take(12).collect();
                    return Err(self.err(start, format!("unexpected `{shown}` in tag")));
                }
                (rest[..len].to_string(), false, len)
            };
            original.push_str(&rest[..len]);
            self.pos += len;
            segments.push((part, literal));
            // SEP?
            match self.peek() {
                Some(sep @ ('.' | '/')) => {
                    // A following ID is required.
                    self.pos += 1;
                    original.push(sep);
                    let dangling = match self.peek() {
                        None => true,
                        Some(c) => is_js_whitespace(c) || c == '}' || c == '~',
                    };
                    if dangling {
                        return Err(self.err(start, format!("path `{original}` ends with `{sep}`")));
                    }
                }
                _ => break,
            }
        }
        // preparePath
        let mut depth = 0;
        let mut parts = Vec::new();
        let mut scoped = false;
        for (part, literal) in &segments {
            if !literal && (part == ".." || part == "." || part == "this") {
                if !parts.is_empty() {
                    return Err(self.err(start, format!("invalid path: {original}")));
                }
                scoped = true;
                if part == ".." {
                    depth += 1;
                }
            } else {
                parts.push(part.clone());
            }
        }
        let simple = !data && !scoped && depth == 0 && parts.len() == 1;
        Ok(Expr::Path(PathExpr { data, depth, parts, original, simple }))
    }
}

// ---------------------------------------------------------------------------------------------
// Parser: items → tree
// ---------------------------------------------------------------------------------------------

struct Parser<'s> {
    name: &'s str,
    src: &'s str,
}

/// Which part of an open block is being filled.
#[derive(Clone, Copy)]
enum Segment {
    Main,
    Chain(usize),
    Else,
}

/// One `{{else helper …}}` part of an open block.
struct ChainPart {
    helper: Helper,
    call: Call,
    strip: Strip,
    body: Vec<Node>,
}

/// A block whose closing tag has not been seen yet.
struct OpenBlock {
    pos: usize,
    name: String,
    helper: Helper,
    call: Call,
    open_strip: Strip,
    main: Vec<Node>,
    chains: Vec<ChainPart>,
    else_part: Option<(Strip, Vec<Node>)>,
    current: Vec<Node>,
    segment: Segment,
}

impl OpenBlock {
    /// Moves the body being filled into its segment.
    fn finish_segment(&mut self) {
        let body = std::mem::take(&mut self.current);
        match self.segment {
            Segment::Main => self.main = body,
            Segment::Chain(i) => {
                if let Some(part) = self.chains.get_mut(i) {
                    part.body = body;
                }
            }
            Segment::Else => {
                if let Some((_, else_body)) = &mut self.else_part {
                    *else_body = body;
                }
            }
        }
    }

    /// Builds the block the way Handlebars' grammar does (`prepareBlock`): each
    /// `{{else helper}}` becomes a block inside the inverse of the previous one.
    fn build(mut self, close_strip: Strip) -> Block {
        self.finish_segment();
        let mut tail: Option<(Inverse, Strip)> =
            self.else_part.map(|(strip, body)| (Inverse::Plain(Program { body }), strip));
        for (k, part) in self.chains.into_iter().enumerate().rev() {
            let (inverse, inverse_strip) = match tail.take() {
                Some((inverse, strip)) => (Some(inverse), strip),
                None => (None, Strip::default()),
            };
            let block = Block {
                helper: part.helper,
                call: part.call,
                program: Program { body: part.body },
                inverse,
                open_strip: part.strip,
                inverse_strip,
                // The first chained block gets the real close strip, later ones their own.
                close_strip: if k == 0 { close_strip } else { part.strip },
            };
            tail = Some((Inverse::Chain(Box::new(block)), part.strip));
        }
        let (inverse, inverse_strip) = match tail {
            Some((inverse, strip)) => (Some(inverse), strip),
            None => (None, Strip::default()),
        };
        Block {
            helper: self.helper,
            call: self.call,
            program: Program { body: self.main },
            inverse,
            open_strip: self.open_strip,
            inverse_strip,
            close_strip,
        }
    }
}

fn parse(name: &str, src: &str) -> Result<Program> {
    let items = Lexer { name, src, pos: 0 }.tokenize()?;
    let parser = Parser { name, src };
    let mut program = parser.build(items)?;
    whitespace_program(&mut program, true);
    Ok(program)
}

fn block_helper(call: &Call) -> std::result::Result<Helper, String> {
    let name = match &call.head {
        Expr::Path(p) if p.simple => p.parts.first().map_or("", String::as_str),
        Expr::Path(p) => return Err(format!("unknown block helper `{}`", p.original)),
        _ => return Err("a block helper name must be an identifier".to_string()),
    };
    let helper = match name {
        "if" => Helper::If,
        "unless" => Helper::Unless,
        "each" => Helper::Each,
        "xml" => Helper::Xml,
        other => return Err(format!("unknown block helper `{other}`")),
    };
    if call.params.len() != 1 {
        return Err(format!("#{name} requires exactly one argument (got {})", call.params.len()));
    }
    Ok(helper)
}

fn helper_name_of(call: &Call) -> String {
    match &call.head {
        Expr::Path(p) => p.original.clone(),
        _ => String::new(),
    }
}

impl Parser<'_> {
    fn err(&self, pos: usize, reason: impl std::fmt::Display) -> Error {
        template_error(self.name, self.src, pos, reason)
    }

    /// Builds the tree with an explicit stack of open blocks (no recursion).
    fn build(&self, items: Vec<Item>) -> Result<Program> {
        let mut root: Vec<Node> = Vec::new();
        let mut open: Vec<OpenBlock> = Vec::new();
        // Nesting of the resulting tree: blocks plus chained `{{else helper}}` parts.
        let mut depth = 0usize;
        for item in items {
            let tag = match item {
                Item::Content(text) => {
                    let body = match open.last_mut() {
                        Some(block) => &mut block.current,
                        None => &mut root,
                    };
                    body.push(Node::Content(Content {
                        value: text.clone(),
                        original: text,
                        left_stripped: false,
                        right_stripped: false,
                    }));
                    continue;
                }
                Item::Tag(tag) => tag,
            };
            let node = match tag.kind {
                TagKind::Mustache(call) => {
                    self.check_mustache(&call, tag.pos)?;
                    Node::Mustache { call, strip: tag.strip }
                }
                TagKind::Comment => Node::Comment { strip: tag.strip },
                TagKind::Open(call) => {
                    let helper = block_helper(&call).map_err(|r| self.err(tag.pos, r))?;
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(self.err(tag.pos, "blocks are nested too deeply"));
                    }
                    open.push(OpenBlock {
                        pos: tag.pos,
                        name: helper_name_of(&call),
                        helper,
                        call,
                        open_strip: tag.strip,
                        main: Vec::new(),
                        chains: Vec::new(),
                        else_part: None,
                        current: Vec::new(),
                        segment: Segment::Main,
                    });
                    continue;
                }
                TagKind::Else | TagKind::ElseChain(_) => {
                    let Some(block) = open.last_mut() else {
                        return Err(self.err(tag.pos, "`{{else}}` outside of a block"));
                    };
                    if block.else_part.is_some() {
                        return Err(self.err(
                            tag.pos,
                            format!("`{{{{else}}}}` after `{{{{else}}}}` in `{{{{#{}}}}}`", block.name),
                        ));
                    }
                    block.finish_segment();
                    match tag.kind {
                        TagKind::ElseChain(call) => {
                            let helper = block_helper(&call).map_err(|r| self.err(tag.pos, r))?;
                            depth += 1;
                            if depth > MAX_NESTING {
                                return Err(self.err(tag.pos, "blocks are nested too deeply"));
                            }
                            block.chains.push(ChainPart { helper, call, strip: tag.strip, body: Vec::new() });
                            block.segment = Segment::Chain(block.chains.len() - 1);
                        }
                        _ => {
                            block.else_part = Some((tag.strip, Vec::new()));
                            block.segment = Segment::Else;
                        }
                    }
                    continue;
                }
                TagKind::Close(name) => {
                    let Some(block) = open.pop() else {
                        return Err(self.err(tag.pos, format!("`{{{{/{name}}}}}` has no matching opening block")));
                    };
                    if name != block.name {
                        return Err(
                            self.err(tag.pos, format!("`{{{{/{name}}}}}` does not match `{{{{#{}}}}}`", block.name))
                        );
                    }
                    depth = depth.saturating_sub(1 + block.chains.len());
                    Node::Block(Box::new(block.build(tag.strip)))
                }
            };
            match open.last_mut() {
                Some(block) => block.current.push(node),
                None => root.push(node),
            }
        }
        if let Some(block) = open.last() {
            return Err(self.err(block.pos, format!("unclosed block `{{{{#{}}}}}`", block.name)));
        }
        Ok(Program { body: root })
    }

    fn check_mustache(&self, call: &Call, pos: usize) -> Result<()> {
        match &call.head {
            Expr::Path(p) if p.simple => {
                let name = p.parts.first().map_or("", String::as_str);
                match name {
                    "join" => Ok(()),
                    "if" | "unless" | "each" | "xml" => {
                        Err(self
                            .err(pos, format!("`{name}` is a block helper: use `{{{{#{name} …}}}}…{{{{/{name}}}}}`")))
                    }
                    _ if !call.params.is_empty() || !call.hash.is_empty() => {
                        Err(self.err(pos, format!("unknown helper `{name}`")))
                    }
                    _ => Ok(()),
                }
            }
            Expr::Path(p) if !call.params.is_empty() || !call.hash.is_empty() => {
                Err(self.err(pos, format!("unknown helper `{}`", p.original)))
            }
            _ if !call.params.is_empty() || !call.hash.is_empty() => {
                Err(self.err(pos, "a literal cannot take parameters"))
            }
            _ => Ok(()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Whitespace control (Handlebars' standalone and `~` rules)
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct StripInfo {
    open: bool,
    close: bool,
    open_standalone: bool,
    close_standalone: bool,
    inline_standalone: bool,
}

/// Whether the trailing whitespace of `s` contains a line break (`/\r?\n\s*?$/`).
fn trailing_ws_has_newline(s: &str) -> bool {
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
fn leading_ws_has_newline(s: &str) -> bool {
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

fn all_ws(s: &str) -> bool {
    s.chars().all(is_js_whitespace)
}

/// Handlebars `isPrevWhitespace(body, i, isRoot)`; `i = None` means "after the last node".
fn is_prev_whitespace(body: &[Node], i: Option<usize>, is_root: bool) -> bool {
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
fn is_next_whitespace(body: &[Node], i: Option<usize>, is_root: bool) -> bool {
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
fn omit_right(body: &mut [Node], i: Option<usize>, multiple: bool) {
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
fn omit_left(body: &mut [Node], i: Option<usize>, multiple: bool) -> bool {
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
fn whitespace_program(program: &mut Program, is_root: bool) {
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
fn first_inverse(inverse: &mut Inverse) -> &mut Program {
    match inverse {
        Inverse::Plain(p) => p,
        Inverse::Chain(b) => &mut b.program,
    }
}

/// Handlebars `WhitespaceControl.BlockStatement`.
fn whitespace_block(block: &mut Block) -> StripInfo {
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

// ---------------------------------------------------------------------------------------------
// Values (JavaScript semantics)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Val<'v> {
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    Str(Cow<'v, str>),
    Arr(&'v [Value]),
    Obj(&'v Map<String, Value>),
}

impl<'v> Val<'v> {
    fn from_json(v: &'v Value) -> Val<'v> {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => Val::Num(number_value(n)),
            Value::String(s) => Val::Str(Cow::Borrowed(s.as_str())),
            Value::Array(a) => Val::Arr(a.as_slice()),
            Value::Object(o) => Val::Obj(o),
        }
    }

    fn from_literal(e: &Expr) -> Val<'v> {
        match e {
            Expr::Str(s) => Val::Str(Cow::Owned(s.clone())),
            Expr::Num(n) => Val::Num(*n),
            Expr::Bool(b) => Val::Bool(*b),
            Expr::Null => Val::Null,
            Expr::Undefined | Expr::Path(_) => Val::Undefined,
        }
    }

    /// Handlebars `lookupProperty`: own properties only.
    fn property(&self, name: &str) -> Val<'v> {
        match self {
            Val::Obj(m) => m.get(name).map_or(Val::Undefined, Val::from_json),
            Val::Arr(a) => {
                if name == "length" {
                    return Val::Num(a.len() as f64);
                }
                match array_index_key(name).and_then(|i| a.get(i as usize)) {
                    Some(v) => Val::from_json(v),
                    None => Val::Undefined,
                }
            }
            Val::Str(s) => {
                if name == "length" {
                    Val::Num(s.encode_utf16().count() as f64)
                } else {
                    Val::Undefined
                }
            }
            _ => Val::Undefined,
        }
    }

    fn is_nullish(&self) -> bool {
        matches!(self, Val::Undefined | Val::Null)
    }

    /// JavaScript truthiness.
    fn js_truthy(&self) -> bool {
        match self {
            Val::Undefined | Val::Null => false,
            Val::Bool(b) => *b,
            Val::Num(n) => *n != 0.0 && !n.is_nan(),
            Val::Str(s) => !s.is_empty(),
            Val::Arr(_) | Val::Obj(_) => true,
        }
    }

    /// The condition of Handlebars' `if` helper: falsy or an empty array → false.
    fn if_truthy(&self, include_zero: bool) -> bool {
        match self {
            Val::Num(n) if *n == 0.0 => include_zero,
            Val::Arr(a) => !a.is_empty(),
            other => other.js_truthy(),
        }
    }

    /// JavaScript `String(value)`.
    fn write_js_string(&self, out: &mut String) {
        match self {
            Val::Undefined => out.push_str("undefined"),
            Val::Null => out.push_str("null"),
            Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Val::Num(n) => out.push_str(&format_number(*n)),
            Val::Str(s) => out.push_str(s),
            Val::Arr(a) => write_array_join(a, ",", out),
            Val::Obj(_) => out.push_str("[object Object]"),
        }
    }
}

/// JavaScript `Array.prototype.join(sep)`: `null` / `undefined` elements are empty.
fn write_array_join(items: &[Value], sep: &str, out: &mut String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        let v = Val::from_json(item);
        if !v.is_nullish() {
            v.write_js_string(out);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

/// Data variables of one `each` iteration.
#[derive(Clone)]
struct Frame<'v> {
    key: Val<'v>,
    index: usize,
    first: bool,
    last: bool,
}

struct Renderer<'v> {
    /// Context stack: the last one is `this`; `../` walks back.
    contexts: Vec<Val<'v>>,
    /// Data frames of the enclosing `each` blocks.
    frames: Vec<Frame<'v>>,
    root: Val<'v>,
}

impl<'v> Renderer<'v> {
    fn eval(&self, e: &Expr) -> Val<'v> {
        let Expr::Path(p) = e else {
            return Val::from_literal(e);
        };
        let (base, rest): (Val<'v>, &[String]) = if p.data {
            let Some(first) = p.parts.first() else {
                return Val::Undefined;
            };
            let base = if first == "root" {
                self.root.clone()
            } else {
                match self.frames.len().checked_sub(1 + p.depth).and_then(|i| self.frames.get(i)) {
                    None => Val::Undefined,
                    Some(f) => match first.as_str() {
                        "index" => Val::Num(f.index as f64),
                        "key" => f.key.clone(),
                        "first" => Val::Bool(f.first),
                        "last" => Val::Bool(f.last),
                        _ => Val::Undefined,
                    },
                }
            };
            (base, &p.parts[1..])
        } else {
            let base = self
                .contexts
                .len()
                .checked_sub(1 + p.depth)
                .and_then(|i| self.contexts.get(i))
                .cloned()
                .unwrap_or(Val::Undefined);
            (base, &p.parts[..])
        };
        let mut v = base;
        for part in rest {
            if v.is_nullish() {
                return v;
            }
            v = v.property(part);
        }
        v
    }

    fn program(&mut self, program: &Program, out: &mut String) {
        for node in &program.body {
            match node {
                Node::Content(c) => out.push_str(&c.value),
                Node::Comment { .. } => {}
                Node::Mustache { call, .. } => self.mustache(call, out),
                Node::Block(b) => self.block(b, out),
            }
        }
    }

    fn mustache(&mut self, call: &Call, out: &mut String) {
        if let Expr::Path(p) = &call.head {
            if p.simple && p.parts.first().is_some_and(|n| n == "join") {
                self.join(call, out);
                return;
            }
        }
        let value = match &call.head {
            Expr::Path(_) => self.eval(&call.head),
            // A literal head is a property name, as in Handlebars (`{{"a b"}}`).
            literal => {
                let mut key = String::new();
                Val::from_literal(literal).write_js_string(&mut key);
                match self.contexts.last() {
                    Some(ctx) => ctx.property(&key),
                    None => Val::Undefined,
                }
            }
        };
        if !value.is_nullish() {
            value.write_js_string(out);
        }
    }

    /// `{{join list sep}}`.
    fn join(&self, call: &Call, out: &mut String) {
        let list = call.params.first().map_or(Val::Undefined, |e| self.eval(e));
        let Val::Arr(items) = list else {
            return;
        };
        let sep = match call.params.get(1).map(|e| self.eval(e)) {
            Some(Val::Str(s)) => s.into_owned(),
            _ => ", ".to_string(),
        };
        write_array_join(items, &sep, out);
    }

    fn inverse(&mut self, block: &Block, out: &mut String) {
        match &block.inverse {
            Some(Inverse::Plain(p)) => self.program(p, out),
            Some(Inverse::Chain(b)) => self.block(b, out),
            None => {}
        }
    }

    fn block(&mut self, block: &Block, out: &mut String) {
        let param = block.call.params.first().map_or(Val::Undefined, |e| self.eval(e));
        match block.helper {
            Helper::If | Helper::Unless => {
                let include_zero = block
                    .call
                    .hash
                    .iter()
                    .find(|(k, _)| k == "includeZero")
                    .is_some_and(|(_, e)| self.eval(e).js_truthy());
                let mut cond = param.if_truthy(include_zero);
                if block.helper == Helper::Unless {
                    cond = !cond;
                }
                if cond {
                    self.program(&block.program, out);
                } else {
                    self.inverse(block, out);
                }
            }
            Helper::Xml => {
                let mut tag = String::new();
                param.write_js_string(&mut tag);
                let mut inner = String::new();
                self.program(&block.program, &mut inner);
                let content = js_trim(&inner);
                if !content.is_empty() {
                    out.push('<');
                    out.push_str(&tag);
                    out.push_str(">\n");
                    out.push_str(content);
                    out.push_str("\n</");
                    out.push_str(&tag);
                    out.push('>');
                }
            }
            Helper::Each => {
                let items: Vec<(Val<'v>, Val<'v>)> = match param {
                    Val::Arr(a) => a.iter().enumerate().map(|(i, v)| (Val::Num(i as f64), Val::from_json(v))).collect(),
                    Val::Obj(m) => object_entries(m)
                        .into_iter()
                        .map(|(k, v)| (Val::Str(Cow::Borrowed(k.as_str())), Val::from_json(v)))
                        .collect(),
                    _ => Vec::new(),
                };
                if items.is_empty() {
                    self.inverse(block, out);
                    return;
                }
                let count = items.len();
                for (index, (key, item)) in items.into_iter().enumerate() {
                    self.frames.push(Frame { key, index, first: index == 0, last: index + 1 == count });
                    self.contexts.push(item);
                    self.program(&block.program, out);
                    self.contexts.pop();
                    self.frames.pop();
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hb(src: &str, vars: Value) -> String {
        render_handlebars("t.md", src, &vars).expect("renders")
    }

    fn rt(src: &str, vars: Value) -> String {
        render_template("t.md", src, &vars).expect("renders")
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

    // ----- variables and values -----

    #[test]
    fn variables_are_inserted_verbatim() {
        assert_eq!(hb("a {{x}} b", json!({"x": "<&\"'>"})), "a <&\"'> b");
        assert_eq!(hb("{{a.b.c}}", json!({"a": {"b": {"c": "deep"}}})), "deep");
        assert_eq!(hb("{{a/b}}", json!({"a": {"b": 1}})), "1");
        assert_eq!(hb("{{{x}}}|{{&x}}", json!({"x": "<b>"})), "<b>|<b>");
        assert_eq!(hb("{{this.x}}{{./x}}", json!({"x": "y"})), "yy");
        assert_eq!(hb("{{a.[b c]}}", json!({"a": {"b c": "sp"}})), "sp");
        assert_eq!(hb("{{ x }}", json!({"x": "spaced"})), "spaced");
        // A value that looks like a tag is not re-parsed.
        assert_eq!(hb("{{x}}", json!({"x": "{{y}}"})), "{{y}}");
    }

    #[test]
    fn missing_and_null_values_are_empty() {
        assert_eq!(hb("[{{nope}}]", json!({})), "[]");
        assert_eq!(hb("[{{a.b.c}}]", json!({"a": null})), "[]");
        assert_eq!(hb("[{{a.b}}]", json!({"a": 5})), "[]");
        assert_eq!(hb("[{{x}}]", json!({"x": null})), "[]");
        assert_eq!(hb("[{{x}}]", Value::Null), "[]");
    }

    #[test]
    fn values_are_formatted_like_js_string() {
        assert_eq!(hb("{{n}}", json!({"n": 1})), "1");
        assert_eq!(hb("{{n}}", json!({"n": 1.5})), "1.5");
        assert_eq!(hb("{{n}}", json!({"n": 1.0})), "1");
        assert_eq!(hb("{{n}}", json!({"n": -0.0})), "0");
        assert_eq!(hb("{{n}}", json!({"n": 1e21})), "1e+21");
        assert_eq!(hb("{{n}}", json!({"n": 0.000001})), "0.000001");
        assert_eq!(hb("{{n}}", json!({"n": 1e-7})), "1e-7");
        assert_eq!(hb("{{n}}", json!({"n": 12345678901234567890u64})), "12345678901234567000");
        assert_eq!(hb("{{b}}/{{c}}", json!({"b": true, "c": false})), "true/false");
        assert_eq!(hb("{{a}}", json!({"a": ["x", 1, null, ["y", "z"], true]})), "x,1,,y,z,true");
        assert_eq!(hb("{{o}}", json!({"o": {"k": 1}})), "[object Object]");
        assert_eq!(hb("{{this}}", json!({"k": 1})), "[object Object]");
        assert_eq!(hb("{{a}}", json!({"a": [1, [2, [3, null]]]})), "1,2,3,");
    }

    #[test]
    fn length_of_arrays_and_strings() {
        assert_eq!(hb("{{l.length}}", json!({"l": [1, 2, 3]})), "3");
        assert_eq!(hb("{{l.length}}", json!({"l": []})), "0");
        // UTF-16 code units, like JS.
        assert_eq!(hb("{{s.length}}", json!({"s": "a😀é"})), "4");
        assert_eq!(hb("{{l.1}}", json!({"l": ["a", "b"]})), "b");
        assert_eq!(hb("[{{l.01}}]", json!({"l": ["a", "b"]})), "[]");
        assert_eq!(hb("[{{o.length}}]", json!({"o": {}})), "[]");
        assert_eq!(hb("{{o.length}}", json!({"o": {"length": 7}})), "7");
    }

    // ----- if / unless / else -----

    #[test]
    fn if_uses_handlebars_truthiness() {
        let t = "{{#if v}}T{{else}}F{{/if}}";
        for (v, expected) in [
            (json!(0), "F"),
            (json!(-0.0), "F"),
            (json!(""), "F"),
            (json!(false), "F"),
            (json!(null), "F"),
            (json!([]), "F"),
            (json!(1), "T"),
            (json!(-1), "T"),
            (json!("0"), "T"),
            (json!(" "), "T"),
            (json!(true), "T"),
            (json!([0]), "T"),
            (json!({}), "T"),
        ] {
            assert_eq!(hb(t, json!({ "v": v.clone() })), expected, "value {v}");
        }
        assert_eq!(hb(t, json!({})), "F");
        assert_eq!(hb("{{#if l.length}}n{{/if}}", json!({"l": []})), "");
        assert_eq!(hb("{{#if l.length}}n{{/if}}", json!({"l": ["a"]})), "n");
        assert_eq!(hb("{{#if missing.length}}n{{/if}}", json!({})), "");
        assert_eq!(hb("{{#if v includeZero=true}}T{{/if}}", json!({"v": 0})), "T");
        assert_eq!(hb("{{#unless v}}U{{else}}E{{/unless}}", json!({"v": 0})), "U");
        assert_eq!(hb("{{#unless v}}U{{else}}E{{/unless}}", json!({"v": 1})), "E");
    }

    #[test]
    fn chained_else_if() {
        let t = "{{#if a}}A{{else if b}}B{{else}}C{{/if}}";
        assert_eq!(hb(t, json!({"a": 1, "b": 1})), "A");
        assert_eq!(hb(t, json!({"a": 0, "b": 1})), "B");
        assert_eq!(hb(t, json!({})), "C");
        let t = "{{#if a}}\nA\n{{else if b}}\nB\n{{else}}\nC\n{{/if}}\nend";
        assert_eq!(hb(t, json!({"a": 1})), "A\nend");
        assert_eq!(hb(t, json!({"b": 1})), "B\nend");
        assert_eq!(hb(t, json!({})), "C\nend");
    }

    #[test]
    fn nested_blocks() {
        let t = "{{#if a}}[{{#if b}}AB{{else}}A{{/if}}]{{/if}}";
        assert_eq!(hb(t, json!({"a": 1, "b": 1})), "[AB]");
        assert_eq!(hb(t, json!({"a": 1})), "[A]");
        assert_eq!(hb(t, json!({"b": 1})), "");
        let t = "{{#if a}}\n  {{#if b}}\n  both\n  {{/if}}\n  after\n{{/if}}\n";
        assert_eq!(hb(t, json!({"a": 1, "b": 1})), "  both\n  after\n");
        assert_eq!(hb(t, json!({"a": 1})), "  after\n");
    }

    // ----- xml -----

    #[test]
    fn xml_wraps_trimmed_content() {
        assert_eq!(hb("{{#xml \"t\"}}  hi \n{{/xml}}", json!({})), "<t>\nhi\n</t>");
        assert_eq!(hb("{{#xml \"t\"}} \n\t {{/xml}}", json!({})), "");
        assert_eq!(hb("{{#xml \"t\"}}{{x}}{{/xml}}", json!({"x": ""})), "");
        // JS trim: U+FEFF and U+3000 are trimmed, U+0085 is not.
        assert_eq!(hb("{{#xml \"t\"}}\u{feff}a\u{3000}{{/xml}}", json!({})), "<t>\na\n</t>");
        assert_eq!(hb("{{#xml \"t\"}}\u{85}a{{/xml}}", json!({})), "<t>\n\u{85}a\n</t>");
        // The tag can come from a variable; no escaping of the content.
        assert_eq!(hb("{{#xml tag}}a<b>&{{/xml}}", json!({"tag": "x-y"})), "<x-y>\na<b>&\n</x-y>");
        assert_eq!(hb("{{#xml 'single'}}v{{/xml}}", json!({})), "<single>\nv\n</single>");
    }

    // ----- join -----

    #[test]
    fn join_uses_verbatim_separators() {
        let v = json!({"l": ["a", "b", "c"]});
        assert_eq!(hb("{{join l \", \"}}", v.clone()), "a, b, c");
        // No escape sequences: backslash + n stays two characters.
        assert_eq!(hb("{{join l \"\\n\"}}", v.clone()), "a\\nb\\nc");
        // A real line break between the quotes joins with a line break.
        assert_eq!(hb("{{join l \"\n\"}}", v.clone()), "a\nb\nc");
        // Only the quote itself can be escaped, as in Handlebars.
        assert_eq!(hb("{{join l \"\\\"\"}}", v.clone()), "a\"b\"c");
        assert_eq!(hb("{{join l}}", v.clone()), "a, b, c");
        assert_eq!(hb("{{join l 5}}", v.clone()), "a, b, c");
        assert_eq!(hb("[{{join missing \"-\"}}]", v.clone()), "[]");
        assert_eq!(hb("[{{join s \"-\"}}]", json!({"s": "abc"})), "[]");
        assert_eq!(hb("[{{join}}]", v), "[]");
        assert_eq!(
            hb("{{join l \"|\"}}", json!({"l": [1, null, true, [2, 3], {"a": 1}]})),
            "1||true|2,3|[object Object]"
        );
        assert_eq!(hb("{{join l sep}}", json!({"l": [1, 2], "sep": "+"})), "1+2");
    }

    // ----- each -----

    #[test]
    fn each_over_arrays_and_objects() {
        assert_eq!(
            hb("{{#each l}}{{@index}}={{this}}{{#unless @last}},{{/unless}}{{/each}}", json!({"l": ["a", "b"]})),
            "0=a,1=b"
        );
        assert_eq!(
            hb("{{#each l}}{{name}}/{{../top}};{{/each}}", json!({"l": [{"name": "x"}, {"name": "y"}], "top": "T"})),
            "x/T;y/T;"
        );
        assert_eq!(
            hb("{{#each o}}{{@key}}:{{this}} {{/each}}", json!({"o": {"b": 1, "2": 2, "a": 3, "1": 4}})),
            "1:4 2:2 b:1 a:3 "
        );
        assert_eq!(hb("{{#each l}}x{{else}}empty{{/each}}", json!({"l": []})), "empty");
        assert_eq!(hb("{{#each l}}x{{else}}empty{{/each}}", json!({})), "empty");
        assert_eq!(hb("{{#each l}}{{@root.r}}{{/each}}", json!({"l": [1], "r": "R"})), "R");
        assert_eq!(hb("{{#each l}}- {{this}}\n{{/each}}", json!({"l": ["a", "b"]})), "- a\n- b\n");
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
