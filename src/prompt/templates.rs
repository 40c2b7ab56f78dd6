//! The prompt templates (SPEC section 9): the ten files in `prompts/`, embedded at compile time
//! and overridable by the host.
//!
//! Templates are identified by their file name (e.g. `compaction-summary.md`, see
//! [`TEMPLATE_NAMES`]). A [`PromptTemplates`] value holds one text per id; it starts with the
//! embedded texts and has no global state, so each engine or session can carry its own set
//! (the conformance runner installs `tests/conformance/templates` with
//! [`PromptTemplates::from_dir`]). Rendering goes through [`crate::prompt::render::render_template`]:
//! the Handlebars subset, then the layout pass.

use serde_json::{json, Value};
use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::prompt::frames::Frames;
use crate::prompt::render::{render_template, validate_template};

/// Id of the system prompt of every summarization request; no variables (SPEC section 9).
pub const SUMMARIZATION_SYSTEM: &str = "summarization-system.md";
/// Id of the instructions for a first compaction summary; no variables (SPEC section 9).
pub const COMPACTION_SUMMARY: &str = "compaction-summary.md";
/// Id of the instructions for updating a previous compaction summary; no variables
/// (SPEC section 9).
pub const COMPACTION_UPDATE_SUMMARY: &str = "compaction-update-summary.md";
/// Id of the instructions for summarizing the prefix of a split turn; no variables
/// (SPEC section 9).
pub const COMPACTION_TURN_PREFIX: &str = "compaction-turn-prefix.md";
/// Id of the instructions for the short, PR-style summary; no variables (SPEC section 9).
pub const COMPACTION_SHORT_SUMMARY: &str = "compaction-short-summary.md";
/// Id of the instructions for a branch summary; no variables (SPEC section 9).
pub const BRANCH_SUMMARY: &str = "branch-summary.md";
/// Id of the line put before a branch summary's model text (a blank line between them,
/// SPEC §12.10); no variables (SPEC sections 9 and 10).
pub const BRANCH_SUMMARY_PREAMBLE: &str = "branch-summary-preamble.md";
/// Id of the user-message wrapper of a `branchSummary` message; variable `summary`
/// (SPEC sections 6 and 9).
pub const BRANCH_SUMMARY_CONTEXT: &str = "branch-summary-context.md";
/// Id of the user-message wrapper of a `compactionSummary` message; variable `summary`
/// (SPEC sections 6 and 9).
pub const COMPACTION_SUMMARY_CONTEXT: &str = "compaction-summary-context.md";
/// Id of the `<read-files>` / `<modified-files>` block; variables `readFiles` and
/// `modifiedFiles` (SPEC sections 8 and 9).
pub const FILE_OPERATIONS: &str = "file-operations.md";

/// Every template id, in a fixed order: the file names of `prompts/` and of the conformance
/// `templates/` folder (SPEC section 9; conformance README "Templates").
pub const TEMPLATE_NAMES: [&str; 10] = [
    SUMMARIZATION_SYSTEM,
    COMPACTION_SUMMARY,
    COMPACTION_UPDATE_SUMMARY,
    COMPACTION_TURN_PREFIX,
    COMPACTION_SHORT_SUMMARY,
    BRANCH_SUMMARY,
    BRANCH_SUMMARY_PREAMBLE,
    BRANCH_SUMMARY_CONTEXT,
    COMPACTION_SUMMARY_CONTEXT,
    FILE_OPERATIONS,
];

/// The embedded texts, in the order of [`TEMPLATE_NAMES`].
const EMBEDDED: [&str; 10] = [
    include_str!("../../prompts/summarization-system.md"),
    include_str!("../../prompts/compaction-summary.md"),
    include_str!("../../prompts/compaction-update-summary.md"),
    include_str!("../../prompts/compaction-turn-prefix.md"),
    include_str!("../../prompts/compaction-short-summary.md"),
    include_str!("../../prompts/branch-summary.md"),
    include_str!("../../prompts/branch-summary-preamble.md"),
    include_str!("../../prompts/branch-summary-context.md"),
    include_str!("../../prompts/compaction-summary-context.md"),
    include_str!("../../prompts/file-operations.md"),
];

fn index_of(name: &str) -> Option<usize> {
    TEMPLATE_NAMES.iter().position(|n| *n == name)
}

fn unknown(name: &str) -> Error {
    Error::Template {
        name: name.to_string(),
        reason: format!("unknown template id (expected one of: {})", TEMPLATE_NAMES.join(", ")),
    }
}

/// The embedded (built-in) text of template `name`, or `None` for an unknown id
/// (SPEC section 9).
pub fn embedded_template(name: &str) -> Option<&'static str> {
    index_of(name).and_then(|i| EMBEDDED.get(i).copied())
}

/// A set of the ten prompt templates (SPEC section 9): the embedded texts, each of which the
/// host may override. No global state: clone it, keep one per engine, or build one from a
/// folder with [`PromptTemplates::from_dir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplates {
    /// Overrides, in the order of [`TEMPLATE_NAMES`]; `None` means the embedded text.
    overrides: [Option<String>; 10],
    /// The frames of the current texts (SPEC section 13.4), kept in step with `overrides`.
    frames: Frames,
}

impl Default for PromptTemplates {
    /// All ten templates with their embedded texts (SPEC section 9).
    fn default() -> Self {
        let frames = Frames::from_texts(TEMPLATE_NAMES.iter().copied().zip(EMBEDDED));
        PromptTemplates { overrides: Default::default(), frames }
    }
}

impl PromptTemplates {
    /// All ten templates with their embedded texts; the same as [`Default::default`]
    /// (SPEC section 9).
    pub fn new() -> Self {
        Self::default()
    }

    /// Overrides template `name` with `text` (SPEC section 9: a host can override any
    /// template). The text is parsed first; on error nothing changes.
    ///
    /// # Errors
    /// [`Error::Template`] when `name` is not one of [`TEMPLATE_NAMES`] or `text` is not a
    /// valid template.
    pub fn set(&mut self, name: &str, text: &str) -> Result<()> {
        let i = index_of(name).ok_or_else(|| unknown(name))?;
        validate_template(name, text)?;
        if let Some(slot) = self.overrides.get_mut(i) {
            *slot = Some(text.to_string());
        }
        self.frames = Frames::from_templates(self);
        Ok(())
    }

    /// Removes the override of template `name`, going back to its embedded text
    /// (SPEC section 9).
    ///
    /// # Errors
    /// [`Error::Template`] when `name` is not one of [`TEMPLATE_NAMES`].
    pub fn unset(&mut self, name: &str) -> Result<()> {
        let i = index_of(name).ok_or_else(|| unknown(name))?;
        if let Some(slot) = self.overrides.get_mut(i) {
            *slot = None;
        }
        self.frames = Frames::from_templates(self);
        Ok(())
    }

    /// Removes every override: all templates go back to their embedded texts (SPEC section 9).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// The frames of the current texts: the tags content must never open or close
    /// (SPEC section 13.4, [`Frames`]).
    pub fn frames(&self) -> &Frames {
        &self.frames
    }

    /// Whether template `name` is currently overridden (SPEC section 9); `false` for unknown ids.
    pub fn is_overridden(&self, name: &str) -> bool {
        index_of(name).and_then(|i| self.overrides.get(i)).is_some_and(Option::is_some)
    }

    /// The current source text of template `name` (the override or the embedded text), before
    /// rendering (SPEC section 9). Returns `""` for an unknown id.
    pub fn get(&self, name: &str) -> &str {
        let Some(i) = index_of(name) else {
            return "";
        };
        match self.overrides.get(i) {
            Some(Some(text)) => text,
            _ => EMBEDDED.get(i).copied().unwrap_or(""),
        }
    }

    /// Renders template `name` with `vars` as the Handlebars context, then applies the layout
    /// pass (SPEC section 9). Static templates take no variables: pass `&Value::Null`.
    ///
    /// # Errors
    /// [`Error::Template`] for an unknown id or a template that does not parse.
    pub fn render(&self, name: &str, vars: &Value) -> Result<String> {
        if index_of(name).is_none() {
            return Err(unknown(name));
        }
        render_template(name, self.get(name), vars)
    }

    /// Builds a set from a folder: every file of the folder named like a template id
    /// (e.g. `compaction-summary.md`) overrides that template; other files are ignored, and
    /// ids without a file keep their embedded text (SPEC section 9; the conformance runner
    /// uses it with `tests/conformance/templates`). Native builds only.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `dir` is not a readable folder; [`Error::Template`]
    /// when a template file cannot be read as UTF-8 or does not parse.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_dir(dir: impl AsRef<std::path::Path>) -> Result<Self> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "template folder {} does not exist or is not a folder",
                dir.display()
            )));
        }
        let mut templates = PromptTemplates::default();
        for name in TEMPLATE_NAMES {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => templates.set(name, &text)?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(Error::Template {
                        name: name.to_string(),
                        reason: format!("cannot read {}: {e}", path.display()),
                    })
                }
            }
        }
        Ok(templates)
    }
}

/// A file path as one line of a file list (SPEC §13.4): each line break in it — `\n`, `\r`,
/// U+000B, U+000C, U+0085, U+2028, U+2029 — is written as its JSON escape (`\n`, `\r`,
/// `\u000b`, `\f`, `\u0085`, `\u2028`, `\u2029`), so that one path stays one line; nothing else
/// changes (a backslash stays a backslash: Windows paths keep their form). Borrowed when the path
/// has no line break.
pub fn path_line(path: &str) -> Cow<'_, str> {
    let escape = |c: char| -> Option<&'static str> {
        Some(match c {
            '\n' => "\\n",
            '\r' => "\\r",
            '\u{000B}' => "\\u000b",
            '\u{000C}' => "\\f",
            '\u{0085}' => "\\u0085",
            '\u{2028}' => "\\u2028",
            '\u{2029}' => "\\u2029",
            _ => return None,
        })
    };
    if !path.chars().any(|c| escape(c).is_some()) {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len() + 8);
    for c in path.chars() {
        match escape(c) {
            Some(e) => out.push_str(e),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Renders the file-operations block (`file-operations.md` with `{readFiles, modifiedFiles}`):
/// `<read-files>` and `<modified-files>` with one path per line, each only when its list is
/// non-empty; `""` when both are empty (SPEC sections 8 and 9). The reference's
/// `formatFileOperations`: each path's frame tags are escaped (SPEC §13.4), its line breaks are
/// kept (a conformance vector pins them); the blocks the engine appends to a summary are
/// [`format_file_blocks`]. The lists are used as given (callers pass them sorted, SPEC
/// section 8).
///
/// # Errors
/// [`Error::Template`] when the installed `file-operations.md` does not parse.
pub fn format_file_operations(
    templates: &PromptTemplates,
    read_files: &[String],
    modified_files: &[String],
) -> Result<String> {
    render_file_operations(templates, read_files, modified_files, false)
}

/// The file-operation blocks of a summary the engine composes (a compaction, a branch summary,
/// a preview's figure; SPEC §8, §13.4): [`format_file_operations`] with each path also written
/// as one line ([`path_line`]), so that a path with a line break cannot pass for two paths in
/// the stored summary or in a prompt that feeds it back.
///
/// # Errors
/// [`Error::Template`] when the installed `file-operations.md` does not parse.
pub fn format_file_blocks(
    templates: &PromptTemplates,
    read_files: &[String],
    modified_files: &[String],
) -> Result<String> {
    render_file_operations(templates, read_files, modified_files, true)
}

/// [`format_file_operations`] (`one_line == false`) or [`format_file_blocks`] (`true`).
fn render_file_operations(
    templates: &PromptTemplates,
    read_files: &[String],
    modified_files: &[String],
    one_line: bool,
) -> Result<String> {
    // A path is content: it can never close or open a frame (SPEC section 13.4).
    let frames = templates.frames();
    let safe = |list: &[String]| -> Vec<String> {
        list.iter()
            .map(|p| {
                let p = frames.neutralize(p);
                if one_line {
                    path_line(&p).into_owned()
                } else {
                    p.into_owned()
                }
            })
            .collect()
    };
    templates.render(FILE_OPERATIONS, &json!({ "readFiles": safe(read_files), "modifiedFiles": safe(modified_files) }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn conformance_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
    }

    fn conformance_templates() -> PromptTemplates {
        PromptTemplates::from_dir(conformance_dir().join("templates")).expect("conformance templates")
    }

    fn case_files(op: &str) -> Vec<(String, Value)> {
        let dir = conformance_dir().join("cases").join(op);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(&p).expect("read case");
                let value: Value = serde_json::from_str(&text).expect("case JSON");
                (p.display().to_string(), value)
            })
            .collect()
    }

    fn strings(v: &Value) -> Vec<String> {
        v.as_array().expect("array").iter().map(|s| s.as_str().expect("string").to_string()).collect()
    }

    fn lists(read: &[&str], modified: &[&str]) -> (Vec<String>, Vec<String>) {
        (read.iter().map(|s| s.to_string()).collect(), modified.iter().map(|s| s.to_string()).collect())
    }

    // ----- the set itself -----

    #[test]
    fn embedded_texts_and_ids() {
        let t = PromptTemplates::default();
        assert_eq!(TEMPLATE_NAMES.len(), 10);
        for (i, name) in TEMPLATE_NAMES.iter().enumerate() {
            assert_eq!(t.get(name), EMBEDDED[i]);
            assert_eq!(embedded_template(name), Some(EMBEDDED[i]));
            assert!(!t.get(name).trim().is_empty(), "{name} is empty");
            assert!(!t.is_overridden(name));
            // Every embedded template parses and renders.
            t.render(name, &json!({"summary": "S", "readFiles": ["a"], "modifiedFiles": ["b"]}))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert_eq!(t.get(COMPACTION_SUMMARY), include_str!("../../prompts/compaction-summary.md"));
        assert_eq!(t.get("nope.md"), "");
        assert_eq!(embedded_template("nope.md"), None);
        assert_eq!(PromptTemplates::new(), t);
    }

    #[test]
    fn set_unset_and_reset() {
        let mut t = PromptTemplates::default();
        t.set(COMPACTION_SHORT_SUMMARY, "Short: {{x}}").expect("set");
        assert!(t.is_overridden(COMPACTION_SHORT_SUMMARY));
        assert_eq!(t.get(COMPACTION_SHORT_SUMMARY), "Short: {{x}}");
        assert_eq!(t.render(COMPACTION_SHORT_SUMMARY, &json!({"x": 1})).expect("render"), "Short: 1");
        t.set(BRANCH_SUMMARY, "B").expect("set");

        // Unknown id.
        match t.set("other.md", "x") {
            Err(Error::Template { name, reason }) => {
                assert_eq!(name, "other.md");
                assert!(reason.contains("unknown template id"));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(t.render("other.md", &Value::Null), Err(Error::Template { .. })));
        assert!(t.unset("other.md").is_err());

        // An invalid text is refused and the previous one kept.
        match t.set(BRANCH_SUMMARY, "{{#if a}}never closed") {
            Err(Error::Template { name, reason }) => {
                assert_eq!(name, BRANCH_SUMMARY);
                assert!(reason.contains("unclosed block"), "{reason}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(t.get(BRANCH_SUMMARY), "B");

        t.unset(BRANCH_SUMMARY).expect("unset");
        assert_eq!(t.get(BRANCH_SUMMARY), include_str!("../../prompts/branch-summary.md"));
        assert!(t.is_overridden(COMPACTION_SHORT_SUMMARY));
        t.reset();
        assert_eq!(t, PromptTemplates::default());
    }

    #[test]
    fn from_dir_installs_the_conformance_templates() {
        let dir = conformance_dir().join("templates");
        let t = conformance_templates();
        for name in TEMPLATE_NAMES {
            let text = std::fs::read_to_string(dir.join(name)).expect("template file");
            assert_eq!(t.get(name), text, "{name}");
            assert!(t.is_overridden(name));
        }
        assert_eq!(
            t.render(SUMMARIZATION_SYSTEM, &Value::Null).expect("render"),
            "You write compact hand-off notes for a coding session.\n\n\tNever continue the dialogue; output only the note."
        );
        assert_eq!(
            t.render(COMPACTION_SUMMARY, &Value::Null).expect("render"),
            "CONFORMANCE TEMPLATE: first summary.\nWrite the hand-off note with these headings:\n\n## Goal\n## Done\n\t- finished items\n\t\t- nested detail\n\t - odd indent\n## Next"
        );
        assert_eq!(
            t.render(COMPACTION_TURN_PREFIX, &Value::Null).expect("render"),
            "CONFORMANCE TEMPLATE: turn prefix.\nDescribe only the start of the unfinished turn so the kept tail makes sense."
        );
        assert!(PromptTemplates::from_dir(dir.join("missing-folder")).is_err());
    }

    #[test]
    fn from_dir_ignores_unknown_files_and_keeps_missing_ones() {
        let dir = std::env::temp_dir().join(format!("prompts-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("compaction-summary.md"), "Mine.\r\n").expect("write");
        std::fs::write(dir.join("unrelated.md"), "{{#if").expect("write");
        let t = PromptTemplates::from_dir(&dir).expect("from_dir");
        assert_eq!(t.get(COMPACTION_SUMMARY), "Mine.\r\n");
        assert_eq!(t.render(COMPACTION_SUMMARY, &Value::Null).expect("render"), "Mine.");
        assert_eq!(t.get(BRANCH_SUMMARY), include_str!("../../prompts/branch-summary.md"));
        std::fs::write(dir.join("branch-summary.md"), "{{/if}}").expect("write");
        assert!(matches!(
            PromptTemplates::from_dir(&dir),
            Err(Error::Template { ref name, .. }) if name == BRANCH_SUMMARY
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    // ----- file operations -----

    #[test]
    fn conformance_file_operations_examples() {
        let t = conformance_templates();
        let (r, m) = lists(&["a", "b"], &["c"]);
        // The two blocks are glued: the standalone `{{/if}}` line takes its line break along.
        assert_eq!(
            format_file_operations(&t, &r, &m).expect("render"),
            "<read-files>\na\nb\n</read-files><modified-files>\nc\n</modified-files>"
        );
        let (r, m) = lists(&["a"], &[]);
        assert_eq!(format_file_operations(&t, &r, &m).expect("render"), "<read-files>\na\n</read-files>");
        let (r, m) = lists(&[], &["c"]);
        assert_eq!(format_file_operations(&t, &r, &m).expect("render"), "<modified-files>\nc\n</modified-files>");
        assert_eq!(format_file_operations(&t, &[], &[]).expect("render"), "");
    }

    #[test]
    fn conformance_format_file_operations_vectors() {
        let t = conformance_templates();
        let cases = case_files("formatFileOperations");
        assert!(!cases.is_empty());
        for (file, case) in &cases {
            let read = strings(&case["input"]["readFiles"]);
            let modified = strings(&case["input"]["modifiedFiles"]);
            let expected = case["expected"]["text"].as_str().expect("expected.text");
            let got = format_file_operations(&t, &read, &modified).expect("render");
            assert_eq!(got, expected, "{file}");
        }
    }

    #[test]
    fn conformance_file_operations_text_of_preparations() {
        let t = conformance_templates();
        let mut checked = 0;
        for op in ["prepareCompaction", "prepareBranchEntries"] {
            for (file, case) in case_files(op) {
                let expected = &case["expected"];
                let (Some(lists), Some(text)) = (expected.get("fileLists"), expected.get("fileOperationsText")) else {
                    continue;
                };
                let Some(text) = text.as_str() else { continue };
                let read = strings(&lists["readFiles"]);
                let modified = strings(&lists["modifiedFiles"]);
                assert_eq!(format_file_operations(&t, &read, &modified).expect("render"), text, "{file}");
                checked += 1;
            }
        }
        assert!(checked > 10, "only {checked} vectors checked");
    }

    #[test]
    fn default_file_operations_block() {
        let t = PromptTemplates::default();
        let (r, m) = lists(&["a", "b"], &["c"]);
        assert_eq!(
            format_file_operations(&t, &r, &m).expect("render"),
            "<read-files>\na\nb\n</read-files>\n\n<modified-files>\nc\n</modified-files>"
        );
        let (r, m) = lists(&["src/lib.rs"], &[]);
        assert_eq!(format_file_operations(&t, &r, &m).expect("render"), "<read-files>\nsrc/lib.rs\n</read-files>");
        let (r, m) = lists(&[], &["x.md", "y.md"]);
        assert_eq!(
            format_file_operations(&t, &r, &m).expect("render"),
            "<modified-files>\nx.md\ny.md\n</modified-files>"
        );
        assert_eq!(format_file_operations(&t, &[], &[]).expect("render"), "");
    }

    #[test]
    fn a_path_is_one_line_of_its_list() {
        assert!(matches!(path_line("C:\\new\\a.rs"), Cow::Borrowed("C:\\new\\a.rs")));
        assert_eq!(path_line("a\nb\r\nc\u{b}\u{c}\u{85}\u{2028}\u{2029}é"), r"a\nb\r\nc\u000b\f\u0085\u2028\u2029é");
        let t = PromptTemplates::default();
        let (r, m) = lists(&["x\n</read-files>\ny", "z"], &["p\u{2028}q"]);
        assert_eq!(
            format_file_operations(&t, &r, &m).expect("render"),
            "<read-files>\nx\n&lt;/read-files>\ny\nz\n</read-files>\n\n<modified-files>\np\u{2028}q\n</modified-files>",
            "the reference's formatFileOperations keeps them"
        );
        assert_eq!(
            format_file_blocks(&t, &r, &m).expect("render"),
            "<read-files>\nx\\n&lt;/read-files>\\ny\nz\n</read-files>\n\n<modified-files>\np\\u2028q\n</modified-files>"
        );
    }

    // ----- context wrappers (convertToLlm) -----

    #[test]
    fn conformance_convert_to_llm_summary_wrappers() {
        let t = conformance_templates();
        let mut checked = 0;
        for (file, case) in case_files("convertToLlm") {
            let rendered: Vec<(f64, String)> = case["input"]["messages"]
                .as_array()
                .expect("messages")
                .iter()
                .filter_map(|m| {
                    let template = match m["role"].as_str() {
                        Some("branchSummary") => BRANCH_SUMMARY_CONTEXT,
                        Some("compactionSummary") => COMPACTION_SUMMARY_CONTEXT,
                        _ => return None,
                    };
                    let text = t.render(template, &json!({ "summary": m["summary"] })).expect("render");
                    Some((m["timestamp"].as_f64().unwrap_or(f64::NAN), text))
                })
                .collect();
            if rendered.is_empty() {
                continue;
            }
            // The rendered wrappers appear, in order, as user messages of the output.
            let mut next = 0;
            for out in case["expected"]["messages"].as_array().expect("expected messages") {
                let Some((ts, text)) = rendered.get(next) else {
                    break;
                };
                let out_text = out["content"][0]["text"].as_str();
                if out["role"] == "user" && out_text == Some(text.as_str()) && out["timestamp"].as_f64() == Some(*ts) {
                    next += 1;
                }
            }
            assert_eq!(next, rendered.len(), "{file}: wrapper text not found in order");
            checked += rendered.len();
        }
        assert!(checked >= 5, "only {checked} summary messages checked");
    }

    #[test]
    fn conformance_context_wrapper_examples() {
        let t = conformance_templates();
        assert_eq!(
            t.render(BRANCH_SUMMARY_CONTEXT, &json!({"summary": "We explored option B."})).expect("render"),
            "[branch-context]\n<summary>\nWe explored option B.\n</summary>"
        );
        assert_eq!(
            t.render(COMPACTION_SUMMARY_CONTEXT, &json!({"summary": "## Goal\nShip it."})).expect("render"),
            "[compaction-context]\n\tEarlier work, summarized:\n\n<summary>\n## Goal\nShip it.\n</summary>"
        );
        // The layout pass runs over the whole text, the summary included.
        assert_eq!(
            t.render(
                BRANCH_SUMMARY_CONTEXT,
                &json!({"summary": "  indented two\n    four\n   three\n\t tab-space\n \ttab after space"})
            )
            .expect("render"),
            "[branch-context]\n<summary>\n\tindented two\n\t\tfour\n\t three\n\t tab-space\n \ttab after space\n</summary>"
        );
    }

    #[test]
    fn default_context_wrappers() {
        let t = PromptTemplates::default();
        for name in [BRANCH_SUMMARY_CONTEXT, COMPACTION_SUMMARY_CONTEXT] {
            let out = t.render(name, &json!({"summary": "## Objective\nShip it.\n\n\n\nDone."})).expect("render");
            assert!(out.ends_with("\n\n<summary>\n## Objective\nShip it.\n\nDone.\n</summary>"), "{name}: {out}");
            assert!(!out.starts_with('<'));
        }
    }

    // ----- static templates as the vectors use them -----

    #[test]
    fn conformance_requests_use_the_rendered_static_templates() {
        let t = conformance_templates();
        let system = t.render(SUMMARIZATION_SYSTEM, &Value::Null).expect("render");
        let preamble = t.render(BRANCH_SUMMARY_PREAMBLE, &Value::Null).expect("render");
        let mut checked = 0;
        for op in ["compact", "generateBranchSummary"] {
            for (file, case) in case_files(op) {
                let Some(requests) = case["expected"]["requests"].as_array() else {
                    continue;
                };
                let overridden = !case["input"]["options"]["promptOverride"].is_null();
                for request in requests {
                    assert_eq!(request["systemPrompt"].as_str(), Some(system.as_str()), "{file}");
                    let template = match request["purpose"].as_str() {
                        Some("history") => COMPACTION_SUMMARY,
                        Some("update") => COMPACTION_UPDATE_SUMMARY,
                        Some("turnPrefix") => COMPACTION_TURN_PREFIX,
                        Some("short") => COMPACTION_SHORT_SUMMARY,
                        Some("branch") => BRANCH_SUMMARY,
                        other => panic!("{file}: purpose {other:?}"),
                    };
                    let instructions = t.render(template, &Value::Null).expect("render");
                    let prompt = match &request["prompt"] {
                        Value::String(s) => s.as_str(),
                        digest => digest["tail"].as_str().expect("digest tail"),
                    };
                    let found = prompt.ends_with(&format!("\n\n{instructions}"))
                        || prompt.contains(&format!("\n\n{instructions}\n\nAdditional focus: "));
                    let may_be_overridden =
                        overridden && (template == COMPACTION_SUMMARY || template == COMPACTION_UPDATE_SUMMARY);
                    assert!(found || may_be_overridden, "{file}: {template} not found in prompt");
                    checked += 1;
                }
                if op == "generateBranchSummary" {
                    if let Some(summary) = case["expected"]["result"]["summary"].as_str() {
                        if summary != "No content to summarize" {
                            assert!(summary.starts_with(&preamble), "{file}");
                        }
                    }
                }
            }
        }
        assert!(checked > 20, "only {checked} requests checked");
    }

    // ----- default templates: content checks -----

    #[test]
    fn default_templates_render_to_useful_prompts() {
        let t = PromptTemplates::default();
        let r = |name: &str| t.render(name, &Value::Null).expect("render");

        let system = r(SUMMARIZATION_SYSTEM);
        assert!(system.contains("hand-off summary"));
        assert!(system.contains("Do not answer"));

        for name in [COMPACTION_SUMMARY, COMPACTION_UPDATE_SUMMARY] {
            let text = r(name);
            for heading in [
                "## Objective",
                "## Requirements and preferences",
                "## Status",
                "### Completed",
                "### Underway",
                "### Blocked",
                "## Decisions",
                "## Next actions",
                "## Reference details",
                "## Pending question",
            ] {
                assert!(text.contains(&format!("\n{heading}\n")), "{name}: {heading}");
            }
            assert!(text.contains("<conversation>"), "{name}");
        }
        assert!(r(COMPACTION_UPDATE_SUMMARY).contains("<previous-summary>"));
        assert!(r(COMPACTION_TURN_PREFIX).contains("## Request"));
        let short = r(COMPACTION_SHORT_SUMMARY);
        assert!(short.contains("one or two sentences") && short.contains("pull-request"));
        let branch = r(BRANCH_SUMMARY);
        assert!(branch.contains("## What was tried") && branch.contains("## Outcome"));

        // The preamble is one line; a blank line separates it from the model text (§12.10).
        let preamble = r(BRANCH_SUMMARY_PREAMBLE);
        assert!(!preamble.contains('\n'));
        assert!(!preamble.is_empty());

        // No template renders with leftover tags or indentation artefacts.
        for name in TEMPLATE_NAMES {
            let out =
                t.render(name, &json!({"summary": "S", "readFiles": ["a"], "modifiedFiles": []})).expect("render");
            assert!(!out.contains("{{") && !out.contains("}}"), "{name}");
            assert!(!out.contains("\n\n\n"), "{name}");
            assert_eq!(out, crate::prompt::render::layout(&out), "{name} is not stable under layout");
        }
    }
}
