//! Planning: what a compaction, a prune or a branch summary would do, decided from entry
//! metadata alone (no model call). Token estimates per entry come from [`crate::entry`].
//!
//! - [`cut_point`] — valid cut points, the cut that keeps `keepRecentTokens`, split turns (SPEC §4);
//! - [`prepare`] — `prepareCompaction` and its settings (SPEC §5, §12.1–§12.3); [`prepare_cache`] — the
//!   same on a branch that grows between calls, in O(new entries);
//! - [`prune`] — tool-output pruning, superseded outputs first (SPEC §7, §13.6);
//! - [`preview`] — the figures of a compaction preview (context size before and after);
//! - [`overflow`] — context-overflow detection and context-size estimates (SPEC §11, §12.3);
//! - [`file_ops`] — files read, written and edited (SPEC §8);
//! - [`branch`] — what a branch summary covers within its budget (SPEC §10);
//! - [`tokens`] — the text each estimate counts, the host's [`tokens::TokenCounter`], calibration by
//!   provider usage (SPEC §3).

pub mod branch;
pub mod cut_point;
pub mod file_ops;
pub mod overflow;
pub mod prepare;
pub mod prepare_cache;
pub mod preview;
pub mod prune;
pub mod tokens;
