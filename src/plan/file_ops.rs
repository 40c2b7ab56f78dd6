//! File operations tracked across summaries: which files the agent read, wrote or edited,
//! from `read` / `write` / `edit` tool calls with a string `arguments.path`. SPEC §8.

use crate::entry::{MessageMeta, Role};
use crate::js::sort_utf16;
use indexmap::IndexSet;
use serde::{Deserialize, Serialize};

/// A set of paths in first-seen order (hashed with the fast hasher: the keys are the
/// session's own paths).
pub type PathSet = IndexSet<String, foldhash::fast::RandomState>;

/// The three sets of paths, each in first-seen order without duplicates (the wire form is
/// [`crate::plan::prepare::FileOpsLists`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOps {
    /// Paths passed to `read`.
    pub read: PathSet,
    /// Paths passed to `write`.
    pub written: PathSet,
    /// Paths passed to `edit`.
    pub edited: PathSet,
}

/// Sorted file lists for a summary: `readFiles` = read minus modified, `modifiedFiles` =
/// written ∪ edited, both in JavaScript sort order (UTF-16 code units). SPEC §8.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct FileLists {
    /// Files only read.
    pub read_files: Vec<String>,
    /// Files written or edited.
    pub modified_files: Vec<String>,
}

impl FileOps {
    /// Adds the file operations of one message's tool calls (assistant messages only).
    pub fn add_message(&mut self, meta: &MessageMeta) {
        if meta.role != Role::Assistant {
            return;
        }
        for call in &meta.tool_calls {
            let Some(path) = call.path.as_deref() else { continue };
            let set = match call.name.as_deref() {
                Some("read") => &mut self.read,
                Some("write") => &mut self.written,
                Some("edit") => &mut self.edited,
                _ => continue,
            };
            // Copied only when new.
            if !set.contains(path) {
                set.insert(path.to_owned());
            }
        }
    }

    /// Seeds the sets from a summary entry's `details`: `readFiles` → read, `modifiedFiles` →
    /// edited (string items only). SPEC §5, §10.
    pub fn add_details(&mut self, details: Option<&serde_json::Value>) {
        let Some(details) = details else { return };
        let strings = |key: &str| -> Vec<String> {
            details
                .get(key)
                .and_then(|v| v.as_array())
                .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }

    /// The sorted lists of SPEC §8.
    pub fn file_lists(&self) -> FileLists {
        let modified: IndexSet<&String, foldhash::fast::RandomState> =
            self.written.iter().chain(self.edited.iter()).collect();
        let mut read_files: Vec<String> = self.read.iter().filter(|p| !modified.contains(p)).cloned().collect();
        let mut modified_files: Vec<String> = modified.into_iter().cloned().collect();
        sort_utf16(&mut read_files);
        sort_utf16(&mut modified_files);
        FileLists { read_files, modified_files }
    }
}

/// The file operations of one message (SPEC §8; conformance op `extractFileOpsFromMessage`).
pub fn extract_file_ops_from_message(message: &serde_json::Value) -> FileOps {
    let mut ops = FileOps::default();
    ops.add_message(&MessageMeta::from_value(message));
    ops
}
