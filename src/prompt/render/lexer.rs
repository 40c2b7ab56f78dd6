//! The lexer: a template's text as content and tags.

use super::ast::*;
use crate::error::{Error, Result};
use crate::js::is_js_whitespace;

#[derive(Debug)]
pub(super) enum TagKind {
    Mustache(Call),
    Comment,
    Open(Call),
    Close(String),
    Else,
    ElseChain(Call),
}

#[derive(Debug)]
pub(super) struct Tag {
    pub(super) pos: usize,
    pub(super) kind: TagKind,
    pub(super) strip: Strip,
}

#[derive(Debug)]
pub(super) enum Item {
    Content(String),
    Tag(Tag),
}

pub(super) struct Lexer<'s> {
    pub(super) name: &'s str,
    pub(super) src: &'s str,
    pub(super) pos: usize,
}

/// 1-based line and column (in characters) of byte offset `pos` (clamped to a char boundary).
pub(super) fn line_col(src: &str, pos: usize) -> (usize, usize) {
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

pub(super) fn template_error(name: &str, src: &str, pos: usize, reason: impl std::fmt::Display) -> Error {
    let (line, col) = line_col(src, pos);
    Error::Template { name: name.to_string(), reason: format!("line {line}, column {col}: {reason}") }
}

/// Characters that end a Handlebars identifier (the complement of its `ID` class).
pub(super) fn is_id_char(c: char) -> bool {
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
pub(super) fn is_id_lookahead(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(c, '=' | '~' | '}' | '/' | '.' | ')') || is_js_whitespace(c),
    }
}

/// Handlebars' `LITERAL_LOOKAHEAD` after a number or keyword literal: `[~}\s)]`.
pub(super) fn is_literal_lookahead(c: Option<char>) -> bool {
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
    pub(super) fn tokenize(mut self) -> Result<Vec<Item>> {
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
        let n = crate::js::parse_f64(&rest[..i])?;
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
