//! Vector loading, entry resolution, comparison, and the op dispatch of the conformance runner.

pub mod compare;
pub mod convert_ops;
pub mod deviations;
pub mod load_ops;
pub mod ops;
pub mod summary_ops;

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Outcome of a whole run.
#[derive(Default)]
pub struct Report {
    pub passed: usize,
    pub skipped: usize,
    pub skipped_ops: BTreeMap<String, usize>,
    pub failures: Vec<String>,
    /// Vectors compared under a known deviation (`deviations.json`): name, item, old → new.
    pub deviations: Vec<String>,
}

/// Shared state of one run: the vector folder and a cache of session files.
pub struct Ctx {
    pub dir: PathBuf,
    files: std::cell::RefCell<HashMap<String, std::rc::Rc<Vec<Value>>>>,
    pub templates: session_compaction::prompt::templates::PromptTemplates,
}

impl Ctx {
    /// All lines of a session file (header included), parsed.
    pub fn file_lines(&self, rel: &str) -> std::rc::Rc<Vec<Value>> {
        if let Some(v) = self.files.borrow().get(rel) {
            return v.clone();
        }
        let text = std::fs::read_to_string(self.dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let lines: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("vector session line"))
            .collect();
        let rc = std::rc::Rc::new(lines);
        self.files.borrow_mut().insert(rel.to_string(), rc.clone());
        rc
    }

    /// Resolves `input.entries` (inline array, `{file}`, or `{file, ids}`).
    pub fn entries(&self, spec: &Value) -> Vec<Value> {
        match spec {
            Value::Array(a) => a.clone(),
            Value::Object(o) => {
                let file = o["file"].as_str().expect("entries.file");
                let lines = self.file_lines(file);
                let entries: Vec<Value> = lines.iter().skip(1).cloned().collect();
                match o.get("ids") {
                    Some(Value::Array(ids)) => {
                        let by_id: HashMap<&str, &Value> =
                            entries.iter().filter_map(|e| Some((e.get("id")?.as_str()?, e))).collect();
                        ids.iter().map(|id| (*by_id.get(id.as_str().unwrap()).expect("id in file")).clone()).collect()
                    }
                    _ => entries,
                }
            }
            _ => panic!("bad entries spec"),
        }
    }
}

/// Ops that belong to the summarization pipeline (issue: summarization) and are not run here yet.
pub const SKIPPED_OPS: &[&str] = &[];

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut items: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    items.sort();
    for p in items {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

pub fn run_all(dir: &Path) -> Report {
    let templates = session_compaction::prompt::templates::PromptTemplates::from_dir(dir.join("templates"))
        .expect("conformance templates");
    let ctx = Ctx { dir: dir.to_path_buf(), files: Default::default(), templates };
    let mut files = Vec::new();
    collect(&dir.join("cases"), &mut files);
    let mut report = Report::default();
    let mut known = match deviations::load(dir) {
        Ok(d) => d,
        Err(e) => {
            report.failures.push(e);
            Default::default()
        }
    };
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let vector: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                report.failures.push(format!("{}: unreadable vector: {e}", path.display()));
                continue;
            }
        };
        let name = vector["name"].as_str().unwrap_or("?").to_string();
        let op = vector["op"].as_str().unwrap_or("?").to_string();
        if SKIPPED_OPS.contains(&op.as_str()) {
            report.skipped += 1;
            *report.skipped_ops.entry(op).or_default() += 1;
            continue;
        }
        let mut expected = vector["expected"].clone();
        if let Some(dev) = known.remove(&name) {
            match deviations::apply(&mut expected, &dev) {
                Ok(lines) => {
                    for line in lines {
                        report.deviations.push(format!("{name} [{op}] §{}: {line}", dev.item));
                    }
                }
                Err(e) => {
                    report.failures.push(format!("{name} [{op}]: deviations.json: {e}"));
                    continue;
                }
            }
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ops::run(&ctx, &op, &vector["input"])));
        match result {
            Ok(Ok(actual)) => {
                let entries = vector["input"].get("entries").filter(|e| e.is_object()).map(|e| ctx.entries(e));
                match compare::check(&expected, &actual, entries.as_deref(), &op) {
                    Ok(()) => report.passed += 1,
                    Err(diff) => report.failures.push(format!("{name} [{op}]: {diff}")),
                }
            }
            Ok(Err(e)) => report.failures.push(format!("{name} [{op}]: {e}")),
            Err(_) => report.failures.push(format!("{name} [{op}]: panicked")),
        }
    }
    for name in known.keys() {
        report.failures.push(format!("deviations.json lists {name}, which is not a vector"));
    }
    report
}
