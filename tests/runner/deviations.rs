//! Known deviations (`tests/conformance/deviations.json`, SPEC §12 last paragraph): vectors made
//! before a SPEC §12 item whose `expected` contradicts it. Each listed vector is compared against
//! its expected value with the listed changes applied; the vector files are never edited.
//!
//! Format: `{"about": "…", "deviations": [{"name", "item", "why", "changes": [{"pointer", "old"?,
//! "new"}]}]}`. `pointer` is a JSON Pointer into the vector's `expected`; `old` is the value the
//! vector holds there (absent: the key is absent) and is checked, so a vector that was
//! regenerated with the new rule shows up as a stale deviation; `new` is the value under the item.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One change of an expected value.
#[derive(Debug, Clone)]
pub struct Change {
    pub pointer: String,
    pub old: Option<Value>,
    pub new: Value,
}

/// One listed vector.
#[derive(Debug, Clone)]
pub struct Deviation {
    pub item: String,
    pub changes: Vec<Change>,
}

/// The deviations by vector name (empty when the file does not exist).
pub fn load(dir: &Path) -> Result<BTreeMap<String, Deviation>, String> {
    let path = dir.join("deviations.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(BTreeMap::new()) };
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for d in doc["deviations"].as_array().ok_or("deviations.json: no `deviations` array")? {
        let name = d["name"].as_str().ok_or("deviations.json: an entry without `name`")?.to_string();
        let item = d["item"].as_str().ok_or_else(|| format!("deviations.json: {name} without `item`"))?.to_string();
        let mut changes = Vec::new();
        for c in d["changes"].as_array().ok_or_else(|| format!("deviations.json: {name} without `changes`"))? {
            let pointer =
                c["pointer"].as_str().ok_or_else(|| format!("deviations.json: {name}: change without `pointer`"))?;
            let new = c.get("new").cloned().ok_or_else(|| format!("deviations.json: {name}: change without `new`"))?;
            changes.push(Change { pointer: pointer.to_string(), old: c.get("old").cloned(), new });
        }
        if out.insert(name.clone(), Deviation { item, changes }).is_some() {
            return Err(format!("deviations.json: {name} listed twice"));
        }
    }
    Ok(out)
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn short(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 120 {
                format!("{}…", s.chars().take(120).collect::<String>())
            } else {
                s
            }
        }
    }
}

/// Applies `dev` to `expected`. Returns one line per change, `pointer: old → new`. Errors when
/// a pointer does not resolve or the vector's value there is not the recorded `old`.
pub fn apply(expected: &mut Value, dev: &Deviation) -> Result<Vec<String>, String> {
    let mut shown = Vec::new();
    for c in &dev.changes {
        let (parent, last) = match c.pointer.rfind('/') {
            Some(i) => (&c.pointer[..i], unescape(&c.pointer[i + 1..])),
            None => return Err(format!("pointer {:?} does not start with /", c.pointer)),
        };
        let slot = match expected.pointer_mut(parent) {
            Some(Value::Object(obj)) => Slot::Key(obj, last),
            Some(Value::Array(items)) => match last.parse::<usize>() {
                Ok(i) if i < items.len() => Slot::Index(items, i),
                _ => return Err(format!("{}: no such array item in expected", c.pointer)),
            },
            _ => return Err(format!("{}: no object or array at {parent:?} in expected", c.pointer)),
        };
        let current = match &slot {
            Slot::Key(obj, k) => obj.get(k).cloned(),
            Slot::Index(items, i) => Some(items[*i].clone()),
        };
        if current != c.old {
            return Err(format!(
                "stale deviation at {}: the vector holds {}, deviations.json records {} as old",
                c.pointer,
                short(current.as_ref()),
                short(c.old.as_ref())
            ));
        }
        shown.push(format!("{}: {} → {}", c.pointer, short(c.old.as_ref()), short(Some(&c.new))));
        match slot {
            Slot::Key(obj, k) => {
                obj.insert(k, c.new.clone());
            }
            Slot::Index(items, i) => items[i] = c.new.clone(),
        }
    }
    Ok(shown)
}

enum Slot<'a> {
    Key(&'a mut serde_json::Map<String, Value>, String),
    Index(&'a mut Vec<Value>, usize),
}
