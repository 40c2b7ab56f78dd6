//! The session tree over any [`EntrySource`]: id index, branches (root → leaf), children, common
//! ancestors, labels, branch-summary collection and a validation report. SPEC §1 (data model),
//! §10 (tree navigation); conformance ops `getBranch` and `collectEntriesForBranchSummary`.
//!
//! Links follow the reference: `parentId` is looked up by id (the **last** entry with an id
//! wins); a `parentId` that is not a non-empty string, or names no entry, ends a walk (the
//! entry is a root). Entries of type `session` (stray headers) are not indexed. Unlike the
//! reference, every walk terminates on a parent cycle (it stops before the first repeated
//! entry). All indices are positions in the source; nothing here panics or mutates entries.

use crate::entry::EntrySource;
use crate::entry::{EntryKind, EntryMeta, Role};
use crate::error::Error;
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Id index, children and labels of a session's entries; build once, then [`TreeIndex::push`]
/// appended entries (O(1) each).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeIndex {
    /// Per id (of an entry, or named by a `parentId`): the entry holding it and its children.
    /// One map and one key per id, with a fast hasher: building the index costs about one
    /// allocation per entry.
    nodes: HashMap<String, Node, foldhash::fast::RandomState>,
    labels: HashMap<String, String>,
    len: usize,
}

/// What the index knows about one id.
#[derive(Debug, Clone, Default, PartialEq)]
struct Node {
    /// The last entry with this id (`None`: only named by `parentId`s so far).
    index: Option<usize>,
    /// The entries whose `parentId` is this id, in source order.
    children: Children,
}

/// A list of entry indices that needs no allocation for up to one element (most entries have
/// one child).
#[derive(Debug, Clone, Default, PartialEq)]
enum Children {
    #[default]
    None,
    One(usize),
    Many(Vec<usize>),
}

impl Children {
    fn push(&mut self, i: usize) {
        match self {
            Children::None => *self = Children::One(i),
            Children::One(a) => *self = Children::Many(vec![*a, i]),
            Children::Many(v) => v.push(i),
        }
    }

    fn as_slice(&self) -> &[usize] {
        match self {
            Children::None => &[],
            Children::One(a) => std::slice::from_ref(a),
            Children::Many(v) => v,
        }
    }
}

/// `parentId` as a link: a non-empty string (the reference tests it for truthiness).
fn parent_link(meta: &EntryMeta) -> Option<&str> {
    meta.parent_id.as_deref().filter(|p| !p.is_empty())
}

/// Cuts a leaf-first walk that went around a cycle just before the first repeated entry.
fn truncate_at_repeat(path: &mut Vec<usize>) {
    let mut seen = HashSet::with_capacity(path.len());
    if let Some(cut) = path.iter().position(|i| !seen.insert(*i)) {
        path.truncate(cut);
    }
}

impl TreeIndex {
    /// Indexes every entry of `entries`, in order.
    pub fn new<S: EntrySource + ?Sized>(entries: &S) -> Self {
        let mut index =
            Self { nodes: HashMap::with_capacity_and_hasher(entries.len(), Default::default()), ..Self::default() };
        for i in 0..entries.len() {
            index.push(entries.meta(i));
        }
        index
    }

    /// Adds the next entry (its index is [`TreeIndex::len`] before the call): a later entry
    /// with the same id replaces the earlier one in the index; a `label` entry sets its target's
    /// label (a non-empty string) or removes it (absent, empty or not a string).
    ///
    /// Returns true when the entry's id was known before (an earlier entry has it, or a
    /// `parentId` named it): then the parent of an earlier entry may have changed, so a branch
    /// computed before this push may be stale. False for an entry with a new id or none.
    pub fn push(&mut self, meta: &EntryMeta) -> bool {
        let i = self.len;
        self.len += 1;
        if meta.kind == EntryKind::SessionHeader {
            return false;
        }
        let mut known = false;
        if let Some(id) = &meta.id {
            // One hash and one probe for the common case, a new id (the key is copied first; for
            // a known id, rare, the copy is dropped).
            match self.nodes.entry(id.clone()) {
                std::collections::hash_map::Entry::Occupied(mut node) => {
                    node.get_mut().index = Some(i);
                    known = true;
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(Node { index: Some(i), children: Children::None });
                }
            }
        }
        if let Some(p) = parent_link(meta) {
            match self.nodes.get_mut(p) {
                Some(node) => node.children.push(i),
                None => {
                    self.nodes.insert(p.to_string(), Node { index: None, children: Children::One(i) });
                }
            }
        }
        if meta.kind == EntryKind::Label {
            if let Some(target) = &meta.target_id {
                match meta.label.as_deref().filter(|l| !l.is_empty()) {
                    Some(l) => {
                        self.labels.insert(target.clone(), l.to_string());
                    }
                    None => {
                        self.labels.remove(target);
                    }
                }
            }
        }
        known
    }

    /// Number of entries indexed (header-type entries included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no entry was indexed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Index of the entry with this id (the last one for duplicate ids).
    pub fn get(&self, id: &str) -> Option<usize> {
        self.nodes.get(id).and_then(|n| n.index)
    }

    /// Index of entry `i`'s parent, if its `parentId` names an entry (`i < entries.len()`).
    pub fn parent<S: EntrySource + ?Sized>(&self, entries: &S, i: usize) -> Option<usize> {
        parent_link(entries.meta(i)).and_then(|p| self.get(p))
    }

    /// Indices of the entries whose parent is entry `i`, in source order. Empty for an entry
    /// without id or shadowed by a later entry with the same id.
    pub fn children<S: EntrySource + ?Sized>(&self, entries: &S, i: usize) -> &[usize] {
        match entries.meta(i).id.as_deref() {
            Some(id) if self.get(id) == Some(i) => self.nodes.get(id).map_or(&[], |n| n.children.as_slice()),
            _ => &[],
        }
    }

    /// Indices of the roots: entries whose parent is absent, empty or unknown (header-type
    /// entries excluded), in source order.
    pub fn roots<S: EntrySource + ?Sized>(&self, entries: &S) -> Vec<usize> {
        (0..entries.len())
            .filter(|&i| entries.meta(i).kind != EntryKind::SessionHeader && self.parent(entries, i).is_none())
            .collect()
    }

    /// Whether the entry with id `id` is on the path from entry `from` to its root, `from`
    /// included (the walk stops at a repeated entry on a cycle). False without `from` or `id`.
    /// The one rule of a compaction's kept entry (SPEC §5, §13.2: the validator's
    /// `E_KEPT_NOT_ON_PATH`, `SessionTree::append_entry`'s) and of a compaction's place at the end
    /// of its branch (the engine). O(depth of `from`).
    pub fn on_path<S: EntrySource + ?Sized>(&self, entries: &S, from: Option<usize>, id: Option<&str>) -> bool {
        let (Some(from), Some(id)) = (from, id) else { return false };
        self.walk_up(entries, from).iter().any(|&a| entries.meta(a).id.as_deref() == Some(id))
    }

    /// Leaf-first walk from entry `i` to its root (ends before a repeated entry).
    fn walk_up<S: EntrySource + ?Sized>(&self, entries: &S, i: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut cur = Some(i);
        while let Some(c) = cur {
            if path.len() > entries.len() {
                // Longer than the session: it went around a cycle.
                truncate_at_repeat(&mut path);
                return path;
            }
            path.push(c);
            cur = self.parent(entries, c);
        }
        path
    }

    /// The branch ending at entry `i`: root-first indices from its root to `i` (the
    /// reference's `getBranch`, by index). SPEC §1.
    pub fn branch_to<S: EntrySource + ?Sized>(&self, entries: &S, i: usize) -> Vec<usize> {
        let mut path = self.walk_up(entries, i);
        path.reverse();
        path
    }

    /// `getBranch(fromId)`: root-first indices from the root to the entry `from_id`; empty when
    /// `from_id` is empty or unknown. SPEC §1; conformance op `getBranch`.
    pub fn branch<S: EntrySource + ?Sized>(&self, entries: &S, from_id: &str) -> Vec<usize> {
        match self.get(from_id) {
            Some(i) if !from_id.is_empty() => self.branch_to(entries, i),
            _ => Vec::new(),
        }
    }

    /// The deepest entry on both root paths of entries `a` and `b` (`None`: different roots).
    pub fn common_ancestor<S: EntrySource + ?Sized>(&self, entries: &S, a: usize, b: usize) -> Option<usize> {
        let on_a: HashSet<usize> = self.walk_up(entries, a).into_iter().collect();
        self.walk_up(entries, b).into_iter().find(|i| on_a.contains(i))
    }

    /// The label of entry `id`: the last `label` entry targeting it, unless that one removed it.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(String::as_str)
    }

    /// All current labels, by target id.
    pub fn labels(&self) -> &HashMap<String, String> {
        &self.labels
    }

    /// `collectEntriesForBranchSummary(oldLeafId, targetId)` (SPEC §10): with no old leaf (or an
    /// empty one), nothing. Otherwise the common ancestor is the deepest entry of the target's
    /// root path whose id is on the old leaf's root path (`None` when the target is unknown or
    /// on another root); the result is the entries from the old leaf back to, not including,
    /// that ancestor (to the root when there is none), oldest first, compactions included.
    /// Returns `(indices, commonAncestorId)`; an unknown old leaf gives no entries.
    pub fn collect_for_branch_summary<S: EntrySource + ?Sized>(
        &self,
        entries: &S,
        old_leaf_id: Option<&str>,
        target_id: &str,
    ) -> (Vec<usize>, Option<String>) {
        let Some(old) = old_leaf_id.filter(|s| !s.is_empty()) else {
            return (Vec::new(), None);
        };
        let old_ids: HashSet<&str> =
            self.branch(entries, old).iter().filter_map(|&i| entries.meta(i).id.as_deref()).collect();
        let common = self
            .branch(entries, target_id)
            .iter()
            .rev()
            .filter_map(|&i| entries.meta(i).id.as_deref())
            .find(|id| old_ids.contains(id))
            .map(str::to_owned);
        let mut out = Vec::new();
        let mut cur = Some(old);
        while let Some(id) = cur {
            if id.is_empty() || Some(id) == common.as_deref() {
                break;
            }
            let Some(i) = self.get(id) else { break };
            if out.len() > entries.len() {
                truncate_at_repeat(&mut out);
                break;
            }
            out.push(i);
            cur = entries.meta(i).parent_id.as_deref();
        }
        out.reverse();
        (out, common)
    }
}

/// `getBranch(fromId)` over `entries`: root-first indices, empty for an unknown id. Builds an
/// index (O(n)); keep a [`TreeIndex`] for repeated walks. SPEC §1; conformance op `getBranch`.
pub fn get_branch<S: EntrySource + ?Sized>(entries: &S, from_id: &str) -> Vec<usize> {
    TreeIndex::new(entries).branch(entries, from_id)
}

/// `collectEntriesForBranchSummary(entries, oldLeafId, targetId)` (SPEC §10): the entries to
/// summarize when navigating from `old_leaf_id` to `target_id`, oldest first, and the common
/// ancestor's id. See [`TreeIndex::collect_for_branch_summary`]. Conformance op
/// `collectEntriesForBranchSummary`.
pub fn collect_entries_for_branch_summary<S: EntrySource + ?Sized>(
    entries: &S,
    old_leaf_id: Option<&str>,
    target_id: &str,
) -> (Vec<usize>, Option<String>) {
    TreeIndex::new(entries).collect_for_branch_summary(entries, old_leaf_id, target_id)
}

// ---------------------------------------------------------------------------------------------
// Validation

/// The kinds of problem [`validate`] reports. Serialized as the stable code of the matching
/// [`Error`] (for example `"E_DUPLICATE_ID"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub enum IssueKind {
    /// Two entries share an id (the later one wins in the index).
    #[serde(rename = "E_DUPLICATE_ID")]
    DuplicateId,
    /// A `parentId` names no entry.
    #[serde(rename = "E_MISSING_PARENT")]
    MissingParent,
    /// Following `parentId` links returns to an entry.
    #[serde(rename = "E_CYCLE")]
    Cycle,
    /// A compaction's `firstKeptEntryId` is absent or not on its path before it.
    #[serde(rename = "E_KEPT_NOT_ON_PATH")]
    KeptEntryNotOnPath,
    /// A toolResult answers no call of the nearest assistant message above it on its path, or
    /// a call already answered there (SPEC §13.1).
    #[serde(rename = "E_ORPHAN_TOOL_RESULT")]
    OrphanToolResult,
    /// A toolCall without a result before the next assistant message (or the end) on some
    /// root-to-leaf path through it, or on the path to the current leaf (SPEC §13.1).
    #[serde(rename = "E_UNANSWERED_TOOL_CALL")]
    UnansweredToolCall,
    /// A `label` entry whose `targetId` names no entry (or that has none).
    #[serde(rename = "E_NOT_FOUND")]
    LabelTargetNotFound,
    /// An entry that is not a JSON object (`null`, a boolean, a number, a string, an array):
    /// kept, read as an entry of no known type (SPEC §13.9).
    #[serde(rename = "E_UNKNOWN_ENTRY")]
    NotAnObject,
    /// An entry (an object) without a string `type`, or with one but without a string `id`:
    /// kept, as the loaders keep it, and reported like they report it (SPEC §13.11).
    #[serde(rename = "E_MISSING_FIELD")]
    MissingField,
    /// The session header's `version` is newer than this engine reads (the loaders' rule,
    /// [`crate::io::HeaderVersion`]; SPEC §13.11).
    #[serde(rename = "E_UNSUPPORTED_VERSION")]
    UnsupportedVersion,
    /// The session header's `version` is no version (`field: "version"`; SPEC §13.11).
    #[serde(rename = "E_MISSING_FIELD")]
    InvalidVersion,
}

impl IssueKind {
    /// The stable code (same as [`Error::code`] of [`ValidationIssue::to_error`]).
    pub fn code(self) -> &'static str {
        match self {
            IssueKind::DuplicateId => "E_DUPLICATE_ID",
            IssueKind::MissingParent => "E_MISSING_PARENT",
            IssueKind::Cycle => "E_CYCLE",
            IssueKind::KeptEntryNotOnPath => "E_KEPT_NOT_ON_PATH",
            IssueKind::OrphanToolResult => "E_ORPHAN_TOOL_RESULT",
            IssueKind::UnansweredToolCall => "E_UNANSWERED_TOOL_CALL",
            IssueKind::LabelTargetNotFound => "E_NOT_FOUND",
            IssueKind::NotAnObject => "E_UNKNOWN_ENTRY",
            IssueKind::MissingField | IssueKind::InvalidVersion => "E_MISSING_FIELD",
            IssueKind::UnsupportedVersion => "E_UNSUPPORTED_VERSION",
        }
    }
}

/// One problem found by [`validate`]. Line numbers are 1-based and present when the caller gave
/// them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct ValidationIssue {
    /// What is wrong (serialized as its code).
    pub code: IssueKind,
    /// Human-readable description naming the entry id.
    pub message: String,
    /// Index of the entry concerned; absent for the header of a session handle, which is no
    /// entry (a header in a list given to `validateSession` has its index there).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub index: Option<usize>,
    /// Its id, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub id: Option<String>,
    /// Its source line.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub line: Option<usize>,
    /// The other id involved: the missing parent, the cycle's closing parent, the
    /// `firstKeptEntryId`, the tool call id, or the label's `targetId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub related_id: Option<String>,
    /// The other entry involved: the earlier duplicate.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub related_index: Option<usize>,
    /// The other entry's source line (for a duplicate: the earlier line).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub related_line: Option<usize>,
    /// The field an `E_MISSING_FIELD` issue is about (`type` or `id`; `version` for a header).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub field: Option<String>,
    /// The error of a header issue, as the loaders report it ([`ValidationIssue::to_error`]).
    #[serde(skip)]
    error: Option<Error>,
}

impl ValidationIssue {
    /// The issue as an [`Error`] (for callers that treat issues as failures).
    pub fn to_error(&self) -> Error {
        if let Some(e) = &self.error {
            return e.clone();
        }
        let index = self.index.unwrap_or_default();
        let id = self.id.clone().unwrap_or_else(|| format!("#{index}"));
        let related = self.related_id.clone().unwrap_or_else(|| "(none)".to_string());
        match self.code {
            IssueKind::DuplicateId => Error::DuplicateId { id },
            IssueKind::MissingParent => Error::MissingParent { id, parent_id: related },
            IssueKind::Cycle => Error::Cycle { id },
            IssueKind::KeptEntryNotOnPath => Error::KeptEntryNotOnPath { id, first_kept_entry_id: related },
            IssueKind::OrphanToolResult => Error::OrphanToolResult { id, tool_call_id: related },
            IssueKind::UnansweredToolCall => Error::UnansweredToolCall { id, tool_call_id: related },
            IssueKind::LabelTargetNotFound => Error::NotFound { id: related },
            IssueKind::NotAnObject => {
                Error::UnknownEntry { location: format!("entries[{index}]"), entry_type: "(not an object)".into() }
            }
            IssueKind::MissingField => Error::MissingField {
                location: match self.line {
                    Some(line) => format!("line {line}"),
                    None => format!("entries[{index}]"),
                },
                field: self.field.clone().unwrap_or_else(|| "type".into()),
            },
            // Built with their error ([`header_issue`]).
            IssueKind::UnsupportedVersion | IssueKind::InvalidVersion => Error::Header { reason: self.message.clone() },
        }
    }
}

/// Everything [`validate`] found, ordered by entry index (then by kind).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct ValidationReport {
    /// The issues.
    pub issues: Vec<ValidationIssue>,
}

impl ValidationReport {
    /// True when nothing was found.
    pub fn is_valid(&self) -> bool {
        self.issues.is_empty()
    }

    /// The issues of one kind.
    pub fn of_kind(&self, kind: IssueKind) -> impl Iterator<Item = &ValidationIssue> {
        self.issues.iter().filter(move |i| i.code == kind)
    }

    /// The first issue as an error, if any.
    pub fn first_error(&self) -> Option<Error> {
        self.issues.first().map(ValidationIssue::to_error)
    }
}

struct Validator<'a> {
    entries: &'a dyn EntrySource,
    index: TreeIndex,
    lines: Option<&'a [usize]>,
    /// The current leaf of a handle, checked like a root-to-leaf path.
    leaf: Option<usize>,
    issues: Vec<ValidationIssue>,
}

impl Validator<'_> {
    fn line(&self, i: usize) -> Option<usize> {
        self.lines.and_then(|l| l.get(i).copied()).filter(|&l| l > 0)
    }

    fn issue(
        &mut self,
        code: IssueKind,
        i: usize,
        related_id: Option<String>,
        related_index: Option<usize>,
        message: String,
    ) {
        let id = self.entries.meta(i).id.clone();
        let related_line = related_index.and_then(|r| self.line(r));
        let line = self.line(i);
        self.issues.push(ValidationIssue {
            code,
            message,
            index: Some(i),
            id,
            line,
            related_id,
            related_index,
            related_line,
            field: None,
            error: None,
        });
    }

    fn name(&self, i: usize) -> String {
        self.entries.meta(i).id.clone().unwrap_or_else(|| format!("#{i}"))
    }

    fn skip(&self, i: usize) -> bool {
        self.entries.meta(i).kind == EntryKind::SessionHeader
    }

    /// Duplicate ids, and entries that are not JSON objects (SPEC §13.9).
    fn duplicates(&mut self) {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for i in 0..self.entries.len() {
            if let Some(t) = self.entries.meta(i).not_object {
                let msg = not_an_object_message(i, t.name());
                self.issue(IssueKind::NotAnObject, i, None, None, msg);
                continue;
            }
            if self.skip(i) {
                continue;
            }
            if let Some(field) = self.entries.meta(i).missing_field() {
                let at = match self.line(i) {
                    Some(l) => format!("entries[{i}] (line {l})"),
                    None => format!("entries[{i}]"),
                };
                let msg = match field {
                    "type" => format!("{at} has no `type` (expected a string)"),
                    _ => format!("{at} has no `id` (expected a string)"),
                };
                self.issue(IssueKind::MissingField, i, None, None, msg);
                if let Some(last) = self.issues.last_mut() {
                    last.field = Some(field.to_string());
                }
            }
            let Some(id) = self.entries.meta(i).id.clone() else { continue };
            if let Some(prev) = seen.insert(id.clone(), i) {
                let msg = match (self.line(prev), self.line(i)) {
                    (Some(a), Some(b)) => format!("entry {id}: duplicate id (lines {a} and {b}); the later entry wins"),
                    _ => format!("entry {id}: duplicate id (entries {prev} and {i}); the later entry wins"),
                };
                self.issue(IssueKind::DuplicateId, i, Some(id), Some(prev), msg);
            }
        }
    }

    fn missing_parents(&mut self) {
        for i in 0..self.entries.len() {
            if self.skip(i) {
                continue;
            }
            if let Some(p) = parent_link(self.entries.meta(i)) {
                if self.index.get(p).is_none() {
                    let p = p.to_string();
                    let msg = format!("entry {}: parent {p} not found", self.name(i));
                    self.issue(IssueKind::MissingParent, i, Some(p), None, msg);
                }
            }
        }
    }

    fn cycles(&mut self) {
        let n = self.entries.len();
        // 0: not seen, 1: on the current walk, 2: done.
        let mut state = vec![0u8; n];
        let mut walk = Vec::new();
        for start in 0..n {
            if state[start] != 0 || self.skip(start) {
                continue;
            }
            walk.clear();
            let mut cur = Some(start);
            while let Some(c) = cur {
                match state[c] {
                    2 => break,
                    1 => {
                        let from = walk.iter().position(|&w| w == c).unwrap_or(0);
                        let members: Vec<usize> = walk[from..].to_vec();
                        let first = members.iter().copied().min().unwrap_or(c);
                        let ids: Vec<String> = members.iter().map(|&m| self.name(m)).collect();
                        let related = parent_link(self.entries.meta(first)).map(str::to_owned);
                        let msg =
                            format!("entry {}: parent chain contains a cycle ({})", self.name(first), ids.join(" -> "));
                        self.issue(IssueKind::Cycle, first, related, None, msg);
                        break;
                    }
                    _ => {
                        state[c] = 1;
                        walk.push(c);
                        cur = self.index.parent(self.entries, c);
                    }
                }
            }
            for &w in &walk {
                state[w] = 2;
            }
        }
    }

    fn compactions(&mut self) {
        for i in 0..self.entries.len() {
            let meta = self.entries.meta(i);
            if meta.kind != EntryKind::Compaction {
                continue;
            }
            let kept = meta.first_kept_entry_id.clone();
            let parent = self.index.parent(self.entries, i).filter(|&p| p != i);
            let on_path = self.index.on_path(self.entries, parent, kept.as_deref());
            if !on_path {
                let msg = match &kept {
                    Some(k) => format!("entry {}: firstKeptEntryId {k} is not on the compaction's path", self.name(i)),
                    None => format!("entry {}: compaction without firstKeptEntryId", self.name(i)),
                };
                let related_index = kept.as_deref().and_then(|k| self.index.get(k));
                self.issue(IssueKind::KeptEntryNotOnPath, i, kept, related_index, msg);
            }
        }
    }

    /// Tool calls and results, path by path (SPEC §13.1): the rules of the provider-valid
    /// context ([`crate::context::repair`]) applied to every root-to-leaf path (and to the path
    /// of `self.leaf`, the handle's current leaf). A result is an orphan when it answers no call
    /// of the nearest assistant message above it on its path, or answers a call a result above
    /// it already answered; a call is unanswered when some path through it reaches the next
    /// assistant message, or its end, without a result for it. Each finding is reported once.
    fn tool_calls(&mut self) {
        let entries = self.entries;
        let n = entries.len();
        /// The nearest assistant message with tool calls above, and which of its calls are answered.
        #[derive(Clone, Default)]
        struct Open {
            assistant: Option<usize>,
            answered: Vec<bool>,
        }
        let mut unanswered: Vec<(usize, usize)> = Vec::new();
        let mut seen_unanswered: HashSet<(usize, usize)> = HashSet::new();
        let mut orphans: Vec<(usize, Option<String>, bool)> = Vec::new();
        let mut visited = vec![false; n];
        let mut close = |open: &Open, out: &mut Vec<(usize, usize)>| {
            if let Some(a) = open.assistant {
                for (k, done) in open.answered.iter().enumerate() {
                    if !done && seen_unanswered.insert((a, k)) {
                        out.push((a, k));
                    }
                }
            }
        };
        let mut stack: Vec<(usize, Open)> =
            self.index.roots(entries).into_iter().rev().map(|r| (r, Open::default())).collect();
        while let Some((i, mut open)) = stack.pop() {
            if visited[i] {
                continue;
            }
            visited[i] = true;
            if let Some(m) = entries.meta(i).message.as_ref().filter(|_| entries.meta(i).kind == EntryKind::Message) {
                match m.role {
                    Role::Assistant => {
                        close(&open, &mut unanswered);
                        open = Open {
                            assistant: Some(i),
                            answered: m.tool_calls.iter().map(|c| c.id.is_none()).collect(),
                        };
                    }
                    Role::ToolResult => {
                        let t = m.tool_call_id.as_deref();
                        let calls = open
                            .assistant
                            .and_then(|a| entries.meta(a).message.as_ref())
                            .map_or(&[][..], |m| &m.tool_calls[..]);
                        let find = |answered: bool| {
                            calls
                                .iter()
                                .zip(&open.answered)
                                .position(|(c, &done)| done == answered && t.is_some() && c.id.as_deref() == t)
                        };
                        match (find(false), find(true)) {
                            (Some(k), _) => open.answered[k] = true,
                            (None, again) => orphans.push((i, m.tool_call_id.clone(), again.is_some())),
                        }
                    }
                    _ => {}
                }
            }
            let children = self.index.children(entries, i);
            if children.is_empty() || self.leaf == Some(i) {
                close(&open, &mut unanswered);
            }
            for &c in children.iter().rev() {
                stack.push((c, open.clone()));
            }
        }
        // Entries not reachable from a root (on or below a cycle, already reported as such):
        // a result is checked against the nearest assistant message above it.
        for i in (0..n).filter(|&i| !visited[i] && !self.skip(i)) {
            let Some(m) = entries.meta(i).message.as_ref().filter(|m| m.role == Role::ToolResult) else { continue };
            let t = m.tool_call_id.as_deref();
            let answered = self.index.walk_up(entries, i).into_iter().skip(1).find_map(|a| {
                let am = entries.meta(a).message.as_ref().filter(|am| am.role == Role::Assistant)?;
                Some(t.is_some() && am.tool_calls.iter().any(|c| c.id.as_deref() == t))
            });
            if answered != Some(true) {
                orphans.push((i, m.tool_call_id.clone(), false));
            }
        }
        for (i, t, again) in orphans {
            let msg = match (&t, again) {
                (Some(t), true) => {
                    format!("entry {}: tool result {t} answers a tool call already answered on its path", self.name(i))
                }
                (Some(t), false) => format!(
                    "entry {}: tool result {t} answers no tool call of the assistant message before it on its path",
                    self.name(i)
                ),
                (None, _) => format!("entry {}: tool result without toolCallId", self.name(i)),
            };
            self.issue(IssueKind::OrphanToolResult, i, t, None, msg);
        }
        unanswered.sort_unstable();
        for (i, k) in unanswered {
            let t = entries.meta(i).message.as_ref().and_then(|m| m.tool_calls.get(k)).and_then(|c| c.id.clone());
            let msg = format!(
                "entry {}: tool call {} has no result on a path through it (before the next assistant message)",
                self.name(i),
                t.as_deref().unwrap_or("?")
            );
            self.issue(IssueKind::UnansweredToolCall, i, t, None, msg);
        }
    }

    /// `label` entries whose `targetId` names no entry.
    fn labels(&mut self) {
        for i in 0..self.entries.len() {
            let meta = self.entries.meta(i);
            if meta.kind != EntryKind::Label {
                continue;
            }
            let target = meta.target_id.clone();
            if target.as_deref().is_some_and(|t| self.index.get(t).is_some()) {
                continue;
            }
            let msg = match &target {
                Some(t) => format!("entry {}: label target {t} not found", self.name(i)),
                None => format!("entry {}: label without targetId", self.name(i)),
            };
            self.issue(IssueKind::LabelTargetNotFound, i, target, None, msg);
        }
    }
}

/// The message of an [`IssueKind::NotAnObject`] issue for entry `i` of JSON type `type_name`
/// (`entries[3] is not an object (null)`, SPEC §13.9). A binding whose list held a value JSON
/// has no type for (a JavaScript function or `undefined`, read as `null`) names it so:
/// `type_name` = `"function, read as null"`.
pub fn not_an_object_message(i: usize, type_name: &str) -> String {
    format!("entries[{i}] is not an object ({type_name})")
}

/// Checks a session's structure without changing it: duplicate ids (with both line numbers),
/// `parentId`s naming no entry, parent cycles, compactions whose `firstKeptEntryId` is absent or
/// not on their own path before them, tool results and calls the provider-valid context would
/// have to repair on some root-to-leaf path (an orphan or repeated result, a call without a
/// result before the next assistant message; SPEC §13.1), `label` entries whose `targetId`
/// names no entry, and entries that are not JSON objects (SPEC §13.9). `lines`: the 1-based source line of each entry (for example
/// [`crate::io::ParsedSession::lines`]), used in the report. O(n) apart from one path walk per
/// compaction. SPEC §1, §5, §10, §13.1.
pub fn validate<S: EntrySource + ?Sized>(entries: &S, lines: Option<&[usize]>) -> ValidationReport {
    validate_at(entries, lines, None)
}

/// [`validate`], with the path ending at entry `leaf` (a handle's current leaf, which may be
/// an inner entry after a navigation) checked like a root-to-leaf path.
pub fn validate_at<S: EntrySource + ?Sized>(
    entries: &S,
    lines: Option<&[usize]>,
    leaf: Option<usize>,
) -> ValidationReport {
    // Read through `dyn`: the validator is compiled once for every source (it is not on the
    // per-turn path).
    let entries: &dyn EntrySource = &entries;
    let mut v = Validator { entries, index: TreeIndex::new(entries), lines, leaf, issues: Vec::new() };
    v.duplicates();
    v.missing_parents();
    v.cycles();
    v.compactions();
    v.tool_calls();
    v.labels();
    let mut issues = v.issues;
    // A header first in the list is read as the loaders read it (its version, SPEC §13.11).
    if !entries.is_empty() && entries.meta(0).kind == EntryKind::SessionHeader {
        let line = lines.and_then(|l| l.first().copied()).filter(|&l| l > 0);
        issues.extend(header_issue(&entries.entry(0), Some(0), line));
    }
    // An issue without an index (none here) would come first.
    crate::js::sort_by_key_stable(&mut issues, |i| i.index.map_or(0, |n| n + 1));
    ValidationReport { issues }
}

/// The validation issue of a session header whose `version` is not one this engine reads, by
/// the loaders' rule ([`crate::io::HeaderVersion`]): `E_UNSUPPORTED_VERSION` for a newer one,
/// `E_MISSING_FIELD` with `field: "version"` for one that is no version; `None` for a valid one.
/// `index`: the header's place in a list (`None` for a handle's header, which is no entry);
/// `line`: its source line. The message is the load error's, naming the header instead of the
/// line: `the session header (line 1): session format version 99 is newer than …`. SPEC §13.11.
pub fn header_issue(header: &Value, index: Option<usize>, line: Option<usize>) -> Option<ValidationIssue> {
    let version = crate::io::HeaderVersion::of(header);
    let error = version.problem(line.unwrap_or(0))?;
    let rest = version.problem_text()?;
    let code = match version {
        crate::io::HeaderVersion::Newer(_) => IssueKind::UnsupportedVersion,
        _ => IssueKind::InvalidVersion,
    };
    let mut place = match index {
        Some(i) => format!("entries[{i}], the session header"),
        None => "the session header".to_string(),
    };
    if let Some(l) = line {
        place = format!("{place} (line {l})");
    }
    Some(ValidationIssue {
        code,
        message: format!("{place}: {rest}"),
        index,
        id: header.get("id").and_then(Value::as_str).map(str::to_owned),
        line,
        related_id: None,
        related_index: None,
        related_line: None,
        field: (code == IssueKind::InvalidVersion).then(|| "version".to_string()),
        error: Some(error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryList;
    use serde_json::{json, Value};

    fn e(id: &str, parent: Option<&str>) -> Value {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "t", "message": {"role": "user", "content": "x"}})
    }

    fn ids(entries: &[Value], idx: &[usize]) -> Vec<String> {
        idx.iter().map(|&i| entries[i]["id"].as_str().unwrap_or("?").to_string()).collect()
    }

    #[test]
    fn branch_children_and_ancestor() {
        let v = vec![e("a", None), e("b", Some("a")), e("c", Some("b")), e("d", Some("a")), e("x", Some("gone"))];
        let list = EntryList::new(&v);
        let t = TreeIndex::new(&list);
        assert_eq!(ids(&v, &t.branch(&list, "c")), ["a", "b", "c"]);
        assert!(t.branch(&list, "zz").is_empty());
        assert!(t.branch(&list, "").is_empty());
        assert_eq!(ids(&v, &t.branch(&list, "x")), ["x"]);
        assert_eq!(t.children(&list, 0), &[1, 3]);
        assert_eq!(t.roots(&list), vec![0, 4]);
        assert_eq!(t.common_ancestor(&list, 2, 3), Some(0));
        assert_eq!(t.common_ancestor(&list, 2, 4), None);
    }

    #[test]
    fn cycles_terminate() {
        let v = vec![e("a", Some("c")), e("b", Some("a")), e("c", Some("b")), e("s", Some("s"))];
        let list = EntryList::new(&v);
        assert_eq!(ids(&v, &get_branch(&list, "c")), ["a", "b", "c"]);
        assert_eq!(ids(&v, &get_branch(&list, "s")), ["s"]);
        let (got, common) = collect_entries_for_branch_summary(&list, Some("c"), "nope");
        assert_eq!(ids(&v, &got), ["a", "b", "c"]);
        assert_eq!(common, None);
        let r = validate(&list, None);
        assert_eq!(r.of_kind(IssueKind::Cycle).count(), 2);
    }

    fn m(id: &str, parent: Option<&str>, message: Value) -> Value {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "t", "message": message})
    }
    fn call(id: &str, parent: Option<&str>, c: &str) -> Value {
        m(
            id,
            parent,
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": c, "name": "bash", "arguments": {}}]}),
        )
    }
    fn result(id: &str, parent: Option<&str>, c: &str) -> Value {
        m(id, parent, json!({"role": "toolResult", "toolCallId": c, "toolName": "bash", "content": []}))
    }
    fn found(r: &ValidationReport) -> Vec<(IssueKind, Option<&str>, Option<&str>)> {
        r.issues.iter().map(|i| (i.code, i.id.as_deref(), i.related_id.as_deref())).collect()
    }

    #[test]
    fn tool_call_answered_only_on_another_branch_is_unanswered() {
        // a1's call is answered below it on one branch (t2); the other branch (u3, typed after
        // navigating to a1) never answers it.
        let v = vec![e("u0", None), call("a1", Some("u0"), "c1"), result("t2", Some("a1"), "c1"), e("u3", Some("a1"))];
        let list = EntryList::new(&v);
        assert_eq!(found(&validate(&list, None)), vec![(IssueKind::UnansweredToolCall, Some("a1"), Some("c1"))]);
        // Without the second branch the call is answered on every path.
        let list = EntryList::new(&v[..3]);
        assert!(validate(&list, None).is_valid());
        // The current leaf at a1 itself (a navigation) is a path without the result.
        assert_eq!(
            found(&validate_at(&list, None, Some(1))),
            vec![(IssueKind::UnansweredToolCall, Some("a1"), Some("c1"))]
        );
    }

    #[test]
    fn result_after_a_later_assistant_message_is_an_orphan_and_the_call_unanswered() {
        let v = vec![
            call("a0", None, "c0"),
            m("a1", Some("a0"), json!({"role": "assistant", "content": [{"type": "text", "text": "hm"}]})),
            result("t2", Some("a1"), "c0"),
            result("t3", Some("t2"), "c0"),
        ];
        let list = EntryList::new(&v);
        assert_eq!(
            found(&validate(&list, None)),
            vec![
                (IssueKind::UnansweredToolCall, Some("a0"), Some("c0")),
                (IssueKind::OrphanToolResult, Some("t2"), Some("c0")),
                (IssueKind::OrphanToolResult, Some("t3"), Some("c0")),
            ]
        );
    }

    #[test]
    fn repeated_result_is_an_orphan() {
        let v = vec![call("a0", None, "c0"), result("t1", Some("a0"), "c0"), result("t2", Some("t1"), "c0")];
        let list = EntryList::new(&v);
        let r = validate(&list, None);
        assert_eq!(found(&r), vec![(IssueKind::OrphanToolResult, Some("t2"), Some("c0"))]);
        assert!(r.issues[0].message.contains("already answered"), "{}", r.issues[0].message);
    }

    #[test]
    fn label_on_an_unknown_target_is_reported() {
        let v = vec![
            e("u0", None),
            json!({"type": "label", "id": "l1", "parentId": "u0", "timestamp": "t", "targetId": "u0", "label": "ok"}),
            json!({"type": "label", "id": "l2", "parentId": "l1", "timestamp": "t", "targetId": "gone", "label": "x"}),
        ];
        let list = EntryList::new(&v);
        let r = validate(&list, Some(&[2, 3, 4]));
        assert_eq!(found(&r), vec![(IssueKind::LabelTargetNotFound, Some("l2"), Some("gone"))]);
        assert_eq!(r.issues[0].line, Some(4));
        assert_eq!(r.issues[0].to_error().code(), "E_NOT_FOUND");
        assert_eq!(serde_json::to_value(&r.issues[0]).unwrap()["code"], json!("E_NOT_FOUND"));
    }
}
