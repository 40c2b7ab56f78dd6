//! The context of an entry list that grows at its end between calls, decided again in
//! O(new entries) plus the size of the context: what a host that calls `buildSessionContext`
//! after every turn on the same (or an extended) list needs. The decision is
//! [`super::session_context_plan`]'s; only the work is kept from call to call. The tree and
//! the fold over the branch read only the entries' heads ([`EntrySource::head`]); the messages
//! of the context alone are read whole (for its repairs). SPEC §6.

use super::{resolve_leaf, ContextFold, ContextPlan, LeafSelector, SessionContext};
use crate::entry::{EntrySource, Heads};
use crate::tree::TreeIndex;

/// Position of an entry that is not on the cached branch.
const NOT_ON_PATH: u32 = u32::MAX;

/// The work of [`super::session_context_plan`] kept between calls on one entry list: the tree
/// index of the entries seen, the last branch and the [`ContextFold`] over it.
///
/// Use: [`ContextCache::sync`] with the number of leading entries that are unchanged since the
/// last call (the caller knows: the same objects, or the same stored entries), then
/// [`ContextCache::plan`]. The result always equals [`super::session_context_plan`] of the same
/// entries and leaf (tested by `tests/pure.rs`); a call after appending entries under the leaf
/// costs O(appended entries + context messages); a call on another branch rebuilds the fold.
#[derive(Debug, Default)]
pub struct ContextCache {
    index: TreeIndex,
    /// The last branch, root first (entry indices).
    path: Vec<usize>,
    /// Per entry index: its position on `path`, or [`NOT_ON_PATH`].
    on_path: Vec<u32>,
    /// `path` may be extended: it ends at a root (a branch cut out of a parent cycle is not
    /// reused) and no entry since has taken an id the index knew (which may give an entry on
    /// it another parent).
    path_valid: bool,
    /// The fold over `path`.
    fold: ContextFold,
}

impl ContextCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries indexed so far.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when no entry is indexed.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Brings the cache to `entries`, of which the first `unchanged` are the entries of the
    /// last call (same positions, same content): a longer cached list than that is dropped and
    /// rebuilt, then the entries after it are indexed.
    pub fn sync<S: EntrySource + ?Sized>(&mut self, entries: &S, unchanged: usize) {
        if unchanged < self.index.len() || entries.len() < self.index.len() {
            *self = Self::default();
        }
        for i in self.index.len()..entries.len() {
            if self.index.push(entries.head(i)) {
                self.forget_path();
            }
        }
    }

    fn forget_path(&mut self) {
        self.path.clear();
        self.on_path.clear();
        self.path_valid = false;
        self.fold = ContextFold::default();
    }

    /// The context plan of the branch ending at `leaf` ([`super::session_context_plan`]) of
    /// `entries`, which must be the entries of the last [`ContextCache::sync`].
    pub fn plan<S: EntrySource + ?Sized>(&mut self, entries: &S, leaf: &LeafSelector) -> ContextPlan {
        if self.index.len() != entries.len() {
            *self = Self::default();
            self.sync(entries, 0);
        }
        let Some(leaf_index) = resolve_leaf(entries, &self.index, leaf) else {
            return ContextPlan { items: Vec::new(), settings: SessionContext::empty() };
        };
        // The tree and the fold read only heads: no message outside the context is read.
        // (As `dyn`: the one instance of the fold and the walks that every source uses.)
        let heads = Heads(entries);
        let heads: &dyn EntrySource = &heads;
        let (keep, tail) = self.branch_change(heads, leaf_index);
        let extends = keep == self.path.len() && self.fold.len() == self.path.len();
        for &i in &self.path[keep..] {
            self.on_path[i] = NOT_ON_PATH;
        }
        self.path.truncate(keep);
        self.path.extend(tail);
        self.on_path.resize(entries.len(), NOT_ON_PATH);
        for (pos, &i) in self.path.iter().enumerate().skip(keep) {
            self.on_path[i] = pos as u32;
        }
        self.path_valid = self.path.first().is_some_and(|&root| self.index.parent(heads, root).is_none());
        if !extends {
            self.fold = ContextFold::default();
        }
        self.fold.extend(heads, &self.path);
        let mut plan = self.fold.plan();
        plan.settings.repairs = plan.repair_plan(entries).repairs;
        plan
    }

    /// How the branch ending at `leaf` differs from `self.path`: how many of its first entries
    /// it keeps, and the entries after those (root first).
    fn branch_change<S: EntrySource + ?Sized>(&self, entries: &S, leaf: usize) -> (usize, Vec<usize>) {
        if self.path_valid {
            let mut walked = Vec::new();
            let mut cur = Some(leaf);
            while let Some(c) = cur {
                if let Some(&pos) = self.on_path.get(c).filter(|&&p| p != NOT_ON_PATH) {
                    walked.reverse();
                    return (pos as usize + 1, walked);
                }
                if walked.len() > entries.len() {
                    // Around a cycle: the full walk cuts it where the reference does.
                    break;
                }
                walked.push(c);
                cur = self.index.parent(entries, c);
            }
            if cur.is_none() {
                walked.reverse();
                return (0, walked);
            }
        }
        (0, self.index.branch_to(entries, leaf))
    }
}
