//! The parser: tags and content into the syntax tree.

use super::ast::*;
use super::lexer::*;
use super::whitespace::whitespace_program;
use super::MAX_NESTING;
use crate::error::{Error, Result};

pub(super) struct Parser<'s> {
    name: &'s str,
    src: &'s str,
}

/// Which part of an open block is being filled.
#[derive(Clone, Copy)]
pub(super) enum Segment {
    Main,
    Chain(usize),
    Else,
}

/// One `{{else helper …}}` part of an open block.
pub(super) struct ChainPart {
    helper: Helper,
    call: Call,
    strip: Strip,
    body: Vec<Node>,
}

/// A block whose closing tag has not been seen yet.
pub(super) struct OpenBlock {
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

pub(super) fn parse(name: &str, src: &str) -> Result<Program> {
    let items = Lexer { name, src, pos: 0 }.tokenize()?;
    let parser = Parser { name, src };
    let mut program = parser.build(items)?;
    whitespace_program(&mut program, true);
    Ok(program)
}

pub(super) fn block_helper(call: &Call) -> std::result::Result<Helper, String> {
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

pub(super) fn helper_name_of(call: &Call) -> String {
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
