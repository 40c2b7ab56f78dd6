//! The syntax tree of a parsed template.

/// `~` whitespace-control flags of a tag: `open` = `{{~`, `close` = `~}}`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Strip {
    pub(super) open: bool,
    pub(super) close: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expr {
    Path(PathExpr),
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
    Undefined,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct PathExpr {
    /// `@name` (data variable) instead of a context lookup.
    pub(super) data: bool,
    /// Number of `../` steps.
    pub(super) depth: usize,
    /// Property names after removing `this`, `.` and `..`.
    pub(super) parts: Vec<String>,
    /// Source spelling, e.g. `this.foo` or `../a/b`.
    pub(super) original: String,
    /// A plain one-part name that may call a helper (`{{join …}}`), as in Handlebars.
    pub(super) simple: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Call {
    pub(super) head: Expr,
    pub(super) params: Vec<Expr>,
    pub(super) hash: Vec<(String, Expr)>,
}

#[derive(Debug)]
pub(super) struct Content {
    pub(super) original: String,
    pub(super) value: String,
    pub(super) left_stripped: bool,
    pub(super) right_stripped: bool,
}

#[derive(Debug)]
pub(super) enum Node {
    Content(Content),
    Mustache { call: Call, strip: Strip },
    Comment { strip: Strip },
    Block(Box<Block>),
}

#[derive(Debug, Default)]
pub(super) struct Program {
    pub(super) body: Vec<Node>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Helper {
    If,
    Unless,
    Each,
    Xml,
}

#[derive(Debug)]
pub(super) enum Inverse {
    /// `{{else}}…`
    Plain(Program),
    /// `{{else helper …}}…`: a chained block (Handlebars' `program.chained`).
    Chain(Box<Block>),
}

#[derive(Debug)]
pub(super) struct Block {
    pub(super) helper: Helper,
    pub(super) call: Call,
    pub(super) program: Program,
    pub(super) inverse: Option<Inverse>,
    pub(super) open_strip: Strip,
    pub(super) inverse_strip: Strip,
    pub(super) close_strip: Strip,
}
