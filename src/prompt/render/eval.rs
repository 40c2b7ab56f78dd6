//! Values with JavaScript semantics, and the renderer that walks the syntax tree.

use super::ast::*;
use crate::js::{array_index_key, format_number, js_trim, number_value, object_entries};
use serde_json::{Map, Value};
use std::borrow::Cow;

#[derive(Debug, Clone)]
pub(super) enum Val<'v> {
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
pub(super) fn write_array_join(items: &[Value], sep: &str, out: &mut String) {
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

/// Renders a parsed template with `vars` as the context (`capacity`: a guess of the output
/// length in bytes).
pub(super) fn render(program: &Program, vars: &Value, capacity: usize) -> String {
    let root = Val::from_json(vars);
    let mut renderer = Renderer { contexts: vec![root.clone()], frames: Vec::new(), root };
    let mut out = String::with_capacity(capacity);
    renderer.program(program, &mut out);
    out
}

/// Data variables of one `each` iteration.
#[derive(Clone)]
pub(super) struct Frame<'v> {
    key: Val<'v>,
    index: usize,
    first: bool,
    last: bool,
}

pub(super) struct Renderer<'v> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::render::render_handlebars;
    use serde_json::json;

    fn hb(src: &str, vars: Value) -> String {
        render_handlebars("t.md", src, &vars).expect("renders")
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
}
