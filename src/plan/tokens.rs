//! Token counting the host controls (SPEC §3): which text of a message its estimate counts
//! ([`counted_text`], the chars of the chars/4 rule), a [`TokenCounter`] that maps that text to
//! tokens (the default [`CharsPerFour`] is the chars/4 rule), an [`EntrySource`] whose token
//! numbers come from a counter's counts ([`Recounted`]), and the calibration of estimates by the
//! provider's usage ([`calibration_factor`], `tokenCalibration: "usage"`).
//!
//! The rule of *which* text is counted stays here; a host only maps text to tokens. A counter
//! equal to `ceil(text.length / 4)` (UTF-16 units) gives exactly the default estimate.

use crate::entry::{EntryKind, EntryMeta, EntrySource, Role, IMAGE_CHARS};
use crate::error::Result;
use crate::host::{MaybeSend, MaybeSync};
use crate::js::{json_stringify, utf16_len};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Tokens of one image block: its 4800 chars over 4 (SPEC §3, §12.4). A counter never sees
/// images: they count this many tokens whatever the counter.
pub const IMAGE_TOKENS: u64 = IMAGE_CHARS / 4;

/// Maps a text to its number of tokens (a tokenizer). Used for thresholds, cut points and
/// budgets in place of chars/4 (SPEC §3).
pub trait TokenCounter {
    /// Tokens of `text`.
    fn count_tokens(&self, text: &str) -> u64;
}

impl<F: Fn(&str) -> u64> TokenCounter for F {
    fn count_tokens(&self, text: &str) -> u64 {
        self(text)
    }
}

/// The default counter: `ceil(chars / 4)` with chars in UTF-16 code units (SPEC §3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CharsPerFour;

impl TokenCounter for CharsPerFour {
    fn count_tokens(&self, text: &str) -> u64 {
        utf16_len(text).div_ceil(4)
    }
}

/// The future of [`CountTokens::count_texts`]: `Send` natively, any future on `wasm32`.
#[cfg(not(target_arch = "wasm32"))]
pub type CountFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<u64>>> + Send + 'a>>;
/// The future of [`CountTokens::count_texts`]: `Send` natively, any future on `wasm32`.
#[cfg(target_arch = "wasm32")]
pub type CountFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<u64>>> + 'a>>;

/// A tokenizer the engine may await (SPEC §3): the tokens of many texts at once, e.g. a host's
/// `countTokens` that returns a Promise. The engine's operations (`compact`, `check_compaction`,
/// `navigate_tree`) use one given in their options ([`HostCounter`]) for thresholds, cut points,
/// budgets and the progress check. Every [`TokenCounter`] is one (answering at once).
pub trait CountTokens: MaybeSend + MaybeSync {
    /// The tokens of each text, in order: its `text` counted, plus [`IMAGE_TOKENS`] per image
    /// ([`CountedText::tokens_from`]). Errors: the counter failed (for a host's counter,
    /// [`crate::error::Error::Argument`] naming `countTokens`).
    fn count_texts<'a>(&'a self, texts: &'a [CountedText]) -> CountFuture<'a>;
}

impl<T: TokenCounter + MaybeSend + MaybeSync> CountTokens for T {
    fn count_texts<'a>(&'a self, texts: &'a [CountedText]) -> CountFuture<'a> {
        let tokens = texts.iter().map(|t| t.tokens(self)).collect();
        Box::pin(std::future::ready(Ok(tokens)))
    }
}

/// The tokenizer of one engine operation, when the host gives one (see [`CountTokens`]); the
/// default is none: chars/4. Shared (`Arc`), compared by identity; not part of the options'
/// JSON (the binding fills it from `settings.countTokens` / `countTokens`).
#[derive(Clone, Default)]
pub struct HostCounter(Option<Arc<dyn CountTokens>>);

impl HostCounter {
    /// The counter `counter`.
    pub fn new(counter: impl CountTokens + 'static) -> Self {
        Self(Some(Arc::new(counter)))
    }

    /// The counter, if one was given.
    pub fn get(&self) -> Option<&dyn CountTokens> {
        self.0.as_deref()
    }

    /// The token numbers of every entry of `source` (by index) counted by this counter, or
    /// `None` without one (the default estimates stay). See [`Recounted::new`].
    pub async fn count_entries<S: EntrySource + ?Sized>(&self, source: &S) -> Result<Option<Vec<u64>>> {
        let Some(counter) = self.get() else { return Ok(None) };
        let texts = entry_texts(source);
        counter.count_texts(&texts).await.map(Some)
    }
}

impl std::fmt::Debug for HostCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "HostCounter(countTokens)" } else { "HostCounter(chars/4)" })
    }
}

impl PartialEq for HostCounter {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

/// What the token estimate of a message (or of an entry's `messageOf`) counts: the counted
/// texts joined without separator, and the number of image blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CountedText {
    /// The texts the estimate counts, in order, joined without separator.
    pub text: String,
    /// Image blocks ([`IMAGE_TOKENS`] each).
    pub images: u64,
}

impl CountedText {
    /// Tokens of this text with `counter` (plus [`IMAGE_TOKENS`] per image).
    pub fn tokens(&self, counter: &(impl TokenCounter + ?Sized)) -> u64 {
        self.tokens_from(if self.text.is_empty() { 0 } else { counter.count_tokens(&self.text) })
    }

    /// The tokens of this text when its `text` counts `text_tokens` (plus the images).
    pub fn tokens_from(&self, text_tokens: u64) -> u64 {
        text_tokens.saturating_add(self.images.saturating_mul(IMAGE_TOKENS))
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The text the estimate of `message` counts (SPEC §3 with §12.4 and §12.5), by role: user,
/// toolResult and hookMessage: a string content, or the text blocks (and the image blocks);
/// assistant: text, thinking, and for each toolCall its name and `JSON.stringify(arguments)`;
/// bashExecution: command and output unless excluded from the context; branchSummary and
/// compactionSummary: the summary; any other role: nothing.
pub fn counted_text(message: &Value) -> CountedText {
    let mut out = CountedText::default();
    let role = message.get("role").and_then(Value::as_str).map_or(Role::Other, Role::from_name);
    let content = message.get("content");
    let blocks = || content.and_then(Value::as_array).into_iter().flatten().filter(|b| b.is_object());
    match role {
        Role::User | Role::ToolResult | Role::HookMessage => match content {
            Some(Value::String(s)) => out.text.push_str(s),
            _ => {
                for b in blocks() {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => out.text.push_str(str_of(b, "text")),
                        Some("image") => out.images += 1,
                        _ => {}
                    }
                }
            }
        },
        Role::Assistant => {
            for b in blocks() {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => out.text.push_str(str_of(b, "text")),
                    Some("thinking") => out.text.push_str(str_of(b, "thinking")),
                    Some("toolCall") => {
                        out.text.push_str(str_of(b, "name"));
                        if let Some(args) = b.get("arguments").filter(|a| !a.is_null()) {
                            out.text.push_str(&json_stringify(args));
                        }
                    }
                    _ => {}
                }
            }
        }
        Role::BashExecution if message.get("excludeFromContext") != Some(&Value::Bool(true)) => {
            out.text.push_str(str_of(message, "command"));
            out.text.push_str(str_of(message, "output"));
        }
        Role::BranchSummary | Role::CompactionSummary => out.text.push_str(str_of(message, "summary")),
        _ => {}
    }
    out
}

/// The text an entry's token numbers count: its message for a `message` entry, its summary for a
/// `branch_summary` or `compaction` entry (the summary message it stands for), nothing else.
pub fn entry_counted_text(entry: &Value, kind: EntryKind) -> CountedText {
    match kind {
        EntryKind::Message => entry.get("message").map(counted_text).unwrap_or_default(),
        EntryKind::BranchSummary | EntryKind::Compaction => {
            CountedText { text: str_of(entry, "summary").to_owned(), images: 0 }
        }
        _ => CountedText::default(),
    }
}

/// The texts to count of every entry of `source` ([`entry_counted_text`]), by index.
pub fn entry_texts<S: EntrySource + ?Sized>(source: &S) -> Vec<CountedText> {
    (0..source.len()).map(|i| texts_of(source, i)).collect()
}

fn texts_of<S: EntrySource + ?Sized>(source: &S, i: usize) -> CountedText {
    let kind = source.meta(i).kind;
    match kind {
        EntryKind::Message | EntryKind::BranchSummary | EntryKind::Compaction => {
            entry_counted_text(&source.entry(i), kind)
        }
        _ => CountedText::default(),
    }
}

/// `source` with its token numbers taken from given counts: the estimate of each `message`
/// entry and the summary tokens of `branch_summary` / `compaction` entries
/// ([`EntrySource::summary_tokens`]). Everything else is `source`'s.
pub struct Recounted<'a, S: EntrySource + ?Sized> {
    source: &'a S,
    metas: Vec<EntryMeta>,
    summaries: Vec<u64>,
}

impl<'a, S: EntrySource + ?Sized> Recounted<'a, S> {
    /// `source` recounted: entry `i` counts `tokens[i]` (a message's estimate, or a summary's
    /// tokens; ignored for other entries). `tokens` shorter than `source`: the rest keep the
    /// default estimate.
    pub fn new(source: &'a S, tokens: &[u64]) -> Self {
        let mut metas = Vec::with_capacity(source.len());
        let mut summaries = Vec::with_capacity(source.len());
        for i in 0..source.len() {
            let mut meta = source.meta(i).clone();
            let t = tokens.get(i).copied();
            if let (Some(m), Some(t)) = (meta.message.as_mut(), t) {
                m.tokens = t;
            }
            summaries.push(t.unwrap_or_else(|| source.summary_tokens(i)));
            metas.push(meta);
        }
        Self { source, metas, summaries }
    }

    /// `source` recounted with `counter` ([`entry_texts`] of each entry, counted).
    pub fn with_counter(source: &'a S, counter: &(impl TokenCounter + ?Sized)) -> Self {
        let tokens: Vec<u64> = (0..source.len()).map(|i| texts_of(source, i).tokens(counter)).collect();
        Self::new(source, &tokens)
    }
}

impl<S: EntrySource + ?Sized> EntrySource for Recounted<'_, S> {
    fn len(&self) -> usize {
        self.metas.len()
    }
    fn meta(&self, i: usize) -> &EntryMeta {
        &self.metas[i]
    }
    fn entry(&self, i: usize) -> Cow<'_, Value> {
        self.source.entry(i)
    }
    fn summary_tokens(&self, i: usize) -> u64 {
        self.summaries[i]
    }
    fn has_message(&self, i: usize) -> bool {
        self.source.has_message(i)
    }
}

/// `compaction.tokenCalibration`: how estimates are scaled to the provider's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum TokenCalibration {
    /// Scale every estimate by the ratio of the last fresh provider usage (its prompt tokens) to
    /// the estimate of the context it was reported for ([`calibration_factor`]).
    Usage,
}

/// The measured ratio of provider tokens to estimated tokens on `path` (root first): the prompt
/// tokens of the last fresh assistant usage after the latest compaction (SPEC §5, §12.3)
/// divided by the estimate of the context that usage counted — the previous compaction's summary
/// and the messages from the kept region up to (not including) that assistant message. `None`
/// without such a usage, or when either number is 0 or the ratio is not finite.
pub fn calibration_factor<S: EntrySource + ?Sized>(path: &S) -> Option<f64> {
    let prev = crate::plan::prepare::last_compaction_index(path);
    let (u, usage) = crate::plan::prepare::last_assistant_usage(path, prev.map_or(0, |p| p + 1))?;
    let start = prev.map_or(0, |p| crate::plan::prepare::kept_start(path, p));
    let summary = prev.map_or(0, |p| path.summary_tokens(p));
    let estimate = summary + (start..u).map(|i| path.message_of_tokens(i)).sum::<u64>();
    let factor = usage.prompt_tokens() / estimate as f64;
    (estimate > 0 && factor.is_finite() && factor > 0.0).then_some(factor)
}

/// `tokens` scaled by `factor` (rounded up; `None`: unchanged).
pub fn calibrated(tokens: u64, factor: Option<f64>) -> u64 {
    match factor {
        Some(f) => (tokens as f64 * f).ceil().min(u64::MAX as f64) as u64,
        None => tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{estimate_tokens, EntryList};
    use serde_json::json;

    #[test]
    fn the_counted_text_is_what_chars_over_four_counts() {
        let messages = [
            json!({"role": "user", "content": "hello world"}),
            json!({"role": "user", "content": [{"type": "text", "text": "ab"}, {"type": "image", "data": "AAAA"}, {"type": "text", "text": "cd"}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "Hi"}, {"type": "thinking", "thinking": "hmm"},
                {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "a.rs", "2": 1.0}}]}),
            json!({"role": "toolResult", "content": [{"type": "text", "text": "out"}, {"type": "image"}]}),
            json!({"role": "bashExecution", "command": "ls", "output": "a b"}),
            json!({"role": "bashExecution", "command": "ls", "output": "a b", "excludeFromContext": true}),
            json!({"role": "compactionSummary", "summary": "sum"}),
            json!({"role": "custom", "content": "not counted"}),
            json!({"role": "assistant", "content": [{"type": "toolCall", "name": "x", "arguments": null}]}),
        ];
        for m in &messages {
            assert_eq!(counted_text(m).tokens(&CharsPerFour), estimate_tokens(m), "{m}");
        }
        let call = counted_text(&messages[2]);
        assert_eq!(call.text, r#"Hihmmread{"2":1,"path":"a.rs"}"#);
        assert_eq!(counted_text(&messages[1]), CountedText { text: "abcd".into(), images: 1 });
        assert_eq!(counted_text(&messages[7]).text, "");
    }

    #[test]
    fn a_recounted_source_uses_the_counts() {
        let entries = vec![
            json!({"type": "message", "id": "a", "message": {"role": "user", "content": "x".repeat(40)}}),
            json!({"type": "branch_summary", "id": "b", "parentId": "a", "summary": "y".repeat(8)}),
        ];
        let list = EntryList::new(&entries);
        let words = |t: &str| t.split(' ').count() as u64 * 100;
        let r = Recounted::with_counter(&list, &words);
        assert_eq!(r.meta(0).message_tokens(), 100);
        assert_eq!(r.summary_tokens(1), 100);
        assert_eq!(r.message_of_tokens(1), 100);
        assert_eq!(list.message_of_tokens(1), 2);
        let same = Recounted::with_counter(&list, &CharsPerFour);
        assert_eq!((same.meta(0).message_tokens(), same.summary_tokens(1)), (10, 2));
    }

    /// Eight messages of 100 estimated tokens; the last assistant reports `input` prompt tokens.
    fn usage_session(input: u64) -> Vec<Value> {
        (0..8)
            .map(|i| {
                let mut message = if i % 2 == 0 {
                    json!({"role": "user", "content": "u".repeat(400)})
                } else {
                    json!({"role": "assistant", "content": [{"type": "text", "text": "a".repeat(400)}], "stopReason": "stop"})
                };
                if i == 7 {
                    message["usage"] =
                        json!({"input": input, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input});
                }
                let parent = if i == 0 { Value::Null } else { json!(format!("e{}", i - 1)) };
                json!({"type": "message", "id": format!("e{i}"), "parentId": parent, "message": message})
            })
            .collect()
    }

    #[test]
    fn calibration_by_usage_moves_the_cut() {
        use crate::plan::prepare::{plan_compaction, CompactionSettings};
        let calibrated = CompactionSettings {
            keep_recent_tokens: 300,
            token_calibration: Some(TokenCalibration::Usage),
            ..CompactionSettings::default()
        };
        let plain = CompactionSettings { token_calibration: None, ..calibrated.clone() };
        // Usage 1.5× the estimate of the 7 messages before it (700): keep 300 / 1.5 = 200
        // estimated tokens, the last two messages; the adaptive ratio (1050 / 800) keeps 228.
        let entries = usage_session(1050);
        let list = EntryList::new(&entries);
        assert_eq!(calibration_factor(&list), Some(1.5));
        let plan = plan_compaction(&list, &calibrated).unwrap();
        assert_eq!((plan.token_calibration_factor, plan.effective_keep_recent_tokens), (Some(1.5), 200));
        assert_eq!(plan.cut_point.first_kept_entry_index, 6);
        let adaptive = plan_compaction(&list, &plain).unwrap();
        assert_eq!((adaptive.token_calibration_factor, adaptive.effective_keep_recent_tokens), (None, 228));
        assert_eq!(adaptive.cut_point.first_kept_entry_index, 5);
        // Usage half the estimate: calibration keeps more (600 estimated tokens); the adaptive
        // keep applies only ratios above 1.
        let entries = usage_session(350);
        let list = EntryList::new(&entries);
        let plan = plan_compaction(&list, &calibrated).unwrap();
        assert_eq!((plan.token_calibration_factor, plan.effective_keep_recent_tokens), (Some(0.5), 600));
        assert_eq!(plan.cut_point.first_kept_entry_index, 2);
        assert_eq!(plan_compaction(&list, &plain).unwrap().cut_point.first_kept_entry_index, 5);
        // The threshold estimate: the usage's own count, nothing after it to scale.
        let before = crate::plan::overflow::estimate_context_tokens_with(&list, &calibrated);
        assert_eq!(before, 350.0);
    }
}
