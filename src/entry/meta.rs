//! What the algorithms know about an entry ([`EntryMeta`], [`MessageMeta`], usage and tool
//! calls) and the one token-estimate rule both JSON readers share. SPEC §1–§3, §5.

use super::kind::{EntryKind, NotObject, Role};
use super::read::{read_entry, read_message};
use super::scan_entry;
use serde_json::Value;

/// Characters an image block counts for in the token estimate (1200 tokens). SPEC §3, §12.4.
pub const IMAGE_CHARS: u64 = 4800;

/// Token usage reported by the provider on an assistant message. Missing numbers are NaN,
/// as `undefined` arithmetic is in the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsageMeta {
    /// `usage.input`
    pub input: f64,
    /// `usage.output`
    pub output: f64,
    /// `usage.cacheRead`
    pub cache_read: f64,
    /// `usage.cacheWrite`
    pub cache_write: f64,
    /// `usage.totalTokens` (NaN when absent)
    pub total_tokens: f64,
}

fn or_js(a: f64, b: f64) -> f64 {
    if a == 0.0 || a.is_nan() {
        b
    } else {
        a
    }
}

impl UsageMeta {
    /// Context tokens of this usage: `totalTokens || input + output + cacheRead + cacheWrite`.
    /// SPEC §5.
    pub fn context_tokens(&self) -> f64 {
        or_js(self.total_tokens, self.input + self.output + self.cache_read + self.cache_write)
    }
    /// Prompt tokens: `input + cacheRead + cacheWrite`, or the context tokens when that is 0.
    /// SPEC §5 (adaptive keep).
    pub fn prompt_tokens(&self) -> f64 {
        or_js(self.input + self.cache_read + self.cache_write, self.context_tokens())
    }
}

/// A `toolCall` content block of an assistant message, reduced to what file tracking and
/// validation need.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCallMeta {
    /// The call id (`id`), if a string.
    pub id: Option<String>,
    /// The tool name (`name`), if a string.
    pub name: Option<String>,
    /// `arguments.path` when it is a non-empty string.
    pub path: Option<String>,
    /// Where `arguments` lies in the entry's JSON text, when the reader found it written as
    /// `JSON.stringify` writes it ([`ArgsText`]); `None`: not known (read from the text when
    /// needed). Only the byte scanner records it.
    pub args_text: Option<ArgsText>,
}

/// A byte range of an entry's JSON text, counted from the object's opening `{` (leading
/// whitespace of a line not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextSpan {
    /// First byte.
    pub start: u32,
    /// Just past the last byte.
    pub end: u32,
}

impl TextSpan {
    /// The text of the span in `text` (the bytes of an entry's JSON text, leading whitespace
    /// included); only these bytes are checked to be UTF-8. `None` when the span does not lie
    /// inside `text` or is not UTF-8.
    pub fn of<'a>(&self, text: &'a [u8]) -> Option<&'a str> {
        std::str::from_utf8(self.bytes_of(text)?).ok()
    }

    /// The bytes of the span in `text` (as [`TextSpan::of`], not checked to be UTF-8).
    pub fn bytes_of<'a>(&self, text: &'a [u8]) -> Option<&'a [u8]> {
        text.get(self.range_in(text)?)
    }

    /// Where the span lies in `text` (the bytes of an entry's JSON text, leading whitespace
    /// included), as a byte range of `text`; `None` when it does not lie inside it.
    pub fn range_in(&self, text: &[u8]) -> Option<std::ops::Range<usize>> {
        let lead = text.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n')).unwrap_or(text.len());
        let range = lead + self.start as usize..lead + self.end as usize;
        (range.start <= range.end && range.end <= text.len()).then_some(range)
    }
}

/// What the staleness rule (SPEC §13.6) reads of a toolCall block's `arguments`, found by the
/// byte scanner when the text of `arguments` is exactly what `JSON.stringify` of its value
/// writes (no whitespace, integers written plainly, only the escapes `JSON.stringify` writes,
/// no array-index keys), so that the text itself serves as `JSON.stringify(arguments)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgsText {
    /// The text of `arguments`; `None` when the block has no `arguments` (it reads as `null`).
    pub span: Option<TextSpan>,
    /// `arguments.offset` or `arguments.limit` is present and not `null`.
    pub ranged: bool,
}

/// What the algorithms know about a message (SPEC §1, §3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageMeta {
    /// The role.
    pub role: Role,
    /// `estimateTokens(message)` (SPEC §3, with the §12.4 and §12.5 deviations).
    pub tokens: u64,
    /// `bashExecution.excludeFromContext === true`.
    pub exclude_from_context: bool,
    /// `usage` of an assistant message, when it is an object.
    pub usage: Option<UsageMeta>,
    /// `stopReason`, when a string.
    pub stop_reason: Option<String>,
    /// Tool calls of an assistant message, in order.
    pub tool_calls: Vec<ToolCallMeta>,
    /// `toolCallId` of a tool result.
    pub tool_call_id: Option<String>,
    /// `toolName` of a tool result.
    pub tool_name: Option<String>,
    /// The tool result was already pruned (`prunedAt` present, even `null`). SPEC §7.
    pub pruned: bool,
    /// `errorMessage` of an assistant message, when a string.
    pub error_message: Option<String>,
    /// `` `${provider}/${model}` `` of an assistant message, JavaScript-stringified
    /// (missing fields print `undefined`). SPEC §6 (`models.default`).
    pub provider_model: Option<String>,
    /// Where the `content` value lies in the entry's JSON text, when the reader found it (the
    /// byte scanner does, for a message with a single `content` key): what pruning replaces
    /// (SPEC §7) without reading the output again. `None`: not known. Not part of what the entry
    /// says: see [`EntryMeta::without_text_spans`].
    pub content_span: Option<TextSpan>,
}

/// What the algorithms know about one entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntryMeta {
    /// The entry kind (from `type`).
    pub kind: EntryKind,
    /// `id`, when a string.
    pub id: Option<String>,
    /// `parentId`, when a string (`null`, absent or another type: a root).
    pub parent_id: Option<String>,
    /// The message of a `message` entry.
    pub message: Option<MessageMeta>,
    /// `firstKeptEntryId` of a compaction.
    pub first_kept_entry_id: Option<String>,
    /// `fromExtension === true` (compaction, branch summary).
    pub from_extension: bool,
    /// UTF-16 length of `summary` (compaction, branch summary); 0 when not a string.
    pub summary_len: u64,
    /// The whole entry, kept only for the small settings entries (`model_change`,
    /// `thinking_level_change`, `mode_change`, `ttsr_injection`) that context building reads.
    pub settings: Option<Box<Value>>,
    /// `targetId` of a label entry.
    pub target_id: Option<String>,
    /// `label` of a label entry (absent or not a string: the label is removed).
    pub label: Option<String>,
    /// Where the `message` value lies in the entry's JSON text, when the reader found it (the
    /// byte scanner does, for a single `message` key whose value is not `null`); `None`: not
    /// known, read from the text when needed. Not part of what the entry says: see
    /// [`EntryMeta::without_text_spans`].
    pub message_span: Option<TextSpan>,
    /// The entry is not a JSON object: its type (every other field is then its default).
    /// SPEC §13.9.
    pub not_object: Option<NotObject>,
    /// The entry (an object) has no string `type` (absent, or another JSON type; the last
    /// `type` key counts, as in `JSON.parse`): its kind is then [`EntryKind::Other`] like an
    /// unknown type's, and loading and validation report it (`E_MISSING_FIELD`). `false` for a
    /// value that is not an object ([`EntryMeta::not_object`] tells that). SPEC §1, §13.11.
    pub no_type: bool,
}

/// The required field an entry lacks, from whether it has a string `type` and a string `id`:
/// `"type"` first, then `"id"`. The one rule of `E_MISSING_FIELD` for metadata
/// ([`EntryMeta::missing_field`]) and for parsed values (the loaders). SPEC §1, §13.11.
pub fn missing_required_field(has_type: bool, has_id: bool) -> Option<&'static str> {
    if !has_type {
        Some("type")
    } else if !has_id {
        Some("id")
    } else {
        None
    }
}

impl EntryMeta {
    /// Extracts the metadata of an entry from its JSON text (one JSONL line).
    /// Errors only when the text is not valid JSON. Escapes of unpaired UTF-16 surrogates
    /// (which JavaScript writes) read as U+FFFD, like the loaders read them.
    ///
    /// One pass over the bytes that validates the JSON and extracts only the needed fields,
    /// counting UTF-16 units from the UTF-8 bytes without decoding the large texts; a few
    /// unusual texts (deep nesting, numbers near the double range, escaped keys, …) take a
    /// slower serde-based path with the same result.
    pub fn from_json(bytes: &[u8]) -> serde_json::Result<Self> {
        let mut a = 0;
        while a < bytes.len() && matches!(bytes[a], b' ' | b'\t' | b'\r' | b'\n') {
            a += 1;
        }
        if let Some((meta, end)) = scan_entry(bytes, a) {
            if bytes[end..].iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
                return Ok(meta);
            }
        }
        Self::from_json_serde(bytes)
    }

    /// [`EntryMeta::from_json`] through a parsed value (the reference implementation of the
    /// fast path, and its fallback): [`EntryMeta::from_value`] of the text's value. Duplicate
    /// keys are read like `JSON.parse` reads them (the last one wins).
    pub(crate) fn from_json_serde(bytes: &[u8]) -> serde_json::Result<Self> {
        let v: Value = serde_json::from_slice(bytes)?;
        Ok(Self::from_value(&v))
    }

    /// Extracts the metadata of an already parsed entry ([`super::read_entry`], the rule every
    /// reader shares). Never fails: a non-object is an entry of kind [`EntryKind::Other`]
    /// without id ([`EntryMeta::not_object`] tells its type).
    pub fn from_value(v: &Value) -> Self {
        let Ok(meta) = read_entry(&v);
        meta
    }

    /// The metadata of an entry that is not an object (of JSON type `t`): an entry of no known
    /// type without id, [`EntryMeta::not_object`] set.
    pub fn of_non_object(t: NotObject) -> Self {
        Self { not_object: Some(t), ..Self::default() }
    }

    /// The required field this entry lacks, if any: `"type"` when it has no string `type` (a
    /// value that is not an object included), else `"id"` when it has no string `id`; the rule
    /// of the loaders' `E_MISSING_FIELD` and of validation (SPEC §1, §13.11).
    pub fn missing_field(&self) -> Option<&'static str> {
        missing_required_field(!self.no_type && self.not_object.is_none(), self.id.is_some())
    }

    /// The metadata without what only some readers find (where parts of the text lie:
    /// [`EntryMeta::message_span`], [`MessageMeta::content_span`], [`ToolCallMeta::args_text`]):
    /// what every reader of the same
    /// entry agrees on.
    pub fn without_text_spans(&self) -> Self {
        let mut out = self.clone();
        out.clear_text_spans();
        out
    }

    /// Forgets where parts of the text lie (see [`EntryMeta::without_text_spans`]).
    pub fn clear_text_spans(&mut self) {
        self.message_span = None;
        if let Some(m) = self.message.as_mut() {
            m.content_span = None;
            for c in &mut m.tool_calls {
                c.args_text = None;
            }
        }
    }

    /// True for the kinds whose whole entry is kept in [`EntryMeta::settings`].
    pub fn is_settings(&self) -> bool {
        matches!(
            self.kind,
            EntryKind::ModelChange | EntryKind::ThinkingLevelChange | EntryKind::ModeChange | EntryKind::TtsrInjection
        )
    }

    /// Tokens of `messageOf(entry)` (SPEC §2): the message estimate for `message` entries, the
    /// summary estimate for `branch_summary` entries (a `branchSummary` message), 0 for a
    /// `custom_message` (a `custom` message counts 0) and for everything else.
    pub fn message_of_tokens(&self) -> u64 {
        match self.kind {
            EntryKind::Message => self.message_tokens(),
            EntryKind::BranchSummary => self.summary_len.div_ceil(4),
            _ => 0,
        }
    }

    /// The message role, if this is a `message` entry.
    pub fn role(&self) -> Option<Role> {
        self.message.as_ref().map(|m| m.role)
    }

    /// The token estimate of the message of a `message` entry, else 0 (SPEC §4 step 3).
    pub fn message_tokens(&self) -> u64 {
        self.message.as_ref().map_or(0, |m| m.tokens)
    }
}

impl MessageMeta {
    /// This message after pruning replaced its `content` by one text block of `notice_units`
    /// UTF-16 units and set `prunedAt` (SPEC §7), now at `content_span` of the entry's text:
    /// the estimate counted again by the one rule (SPEC §3) and `pruned` set, every other
    /// field as it was. Only for the roles whose estimate counts the content alone (user,
    /// toolResult, hookMessage): `false`, nothing changed, for any other role (read the new
    /// text instead).
    pub(crate) fn prune_content(&mut self, notice_units: u64, content_span: TextSpan) -> bool {
        if !matches!(self.role, Role::User | Role::ToolResult | Role::HookMessage) {
            return false;
        }
        let block = BlockLens { kind: BlockKind::Text, text: notice_units, thinking: 0, name: 0, args: 0 };
        let shape = MessageShape {
            role: self.role,
            content: ContentShape::Blocks([block]),
            command: 0,
            output: 0,
            summary: 0,
            exclude_from_context: false,
        };
        let Ok(Counted { tokens, .. }) = shape.count();
        self.tokens = tokens;
        self.pruned = true;
        self.content_span = Some(content_span);
        true
    }

    /// Extracts the metadata of a message object (any role).
    pub fn from_value(v: &Value) -> Self {
        let Ok(meta) = read_message(&v);
        meta
    }
}

/// `estimateTokens(message)`: `ceil(chars / 4)` with chars in UTF-16 code units, by role.
/// SPEC §3 (with §12.4 user images and §12.5 excluded shell output).
pub fn estimate_tokens(message: &Value) -> u64 {
    MessageMeta::from_value(message).tokens
}

// ---------------------------------------------------------------------------------------------
// The token estimate of a message (SPEC §3), once for every reader: each reader reduces a
// message to a `MessageShape` and `MessageShape::count` applies the rule.

/// The kind of a content block, from its `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// `text`
    Text,
    /// `image`
    Image,
    /// `thinking`
    Thinking,
    /// `toolCall`
    ToolCall,
    /// Any other `type` (or none): counts nothing.
    Other,
}

impl BlockKind {
    /// Maps a block's `type` to its kind.
    pub(crate) fn from_type(t: &str) -> Self {
        match t {
            "text" => Self::Text,
            "image" => Self::Image,
            "thinking" => Self::Thinking,
            "toolCall" => Self::ToolCall,
            _ => Self::Other,
        }
    }
}

/// The lengths of one content block that the estimate may count, in UTF-16 code units; 0 for
/// a field that is absent or not of the expected type. A reader need only fill the lengths its
/// block's kind counts: `text` (text), `thinking` (thinking), `name` and `args` (toolCall).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockLens {
    /// The block's kind.
    pub(crate) kind: BlockKind,
    /// Length of `text`, when a string.
    pub(crate) text: u64,
    /// Length of `thinking`, when a string.
    pub(crate) thinking: u64,
    /// Length of `name`, when a string.
    pub(crate) name: u64,
    /// `JSON.stringify(arguments).length`, when `arguments` is present and not null.
    pub(crate) args: u64,
}

/// A block given by its lengths (what pruning writes: [`MessageMeta::prune_content`]); it is
/// never a tool call of an assistant message.
impl ContentBlock for BlockLens {
    type Error = std::convert::Infallible;
    fn lens(&self) -> BlockLens {
        *self
    }
    fn tool_call(self) -> Result<ToolCallMeta, Self::Error> {
        Ok(ToolCallMeta::default())
    }
}

/// A content block as a reader holds it. The serde reader and the byte scanner implement it
/// over their own block shapes; any other source of messages can do the same.
pub(crate) trait ContentBlock {
    /// Why the reader cannot produce a tool call (the scanner gives up; serde never fails).
    type Error;
    /// The kind and lengths of the block.
    fn lens(&self) -> BlockLens;
    /// The tool call of a `toolCall` block of an assistant message (only called for those).
    fn tool_call(self) -> Result<ToolCallMeta, Self::Error>;
}

/// The `content` of a message, reduced.
pub(crate) enum ContentShape<I> {
    /// A string of this UTF-16 length.
    Text(u64),
    /// An array: these blocks (the elements that are objects), in order.
    Blocks(I),
    /// Anything else (absent, or another JSON type): counts nothing.
    None,
}

/// A message reduced to what its token estimate and its tool-call list read. Lengths are
/// UTF-16 code units, 0 when the field is absent or not a string.
pub(crate) struct MessageShape<I> {
    /// The role.
    pub(crate) role: Role,
    /// `content`.
    pub(crate) content: ContentShape<I>,
    /// Length of `command` (bashExecution).
    pub(crate) command: u64,
    /// Length of `output` (bashExecution).
    pub(crate) output: u64,
    /// Length of `summary` (branchSummary, compactionSummary).
    pub(crate) summary: u64,
    /// `excludeFromContext === true` (bashExecution).
    pub(crate) exclude_from_context: bool,
}

/// What [`MessageShape::count`] finds.
pub(crate) struct Counted {
    /// `estimateTokens(message)`: `ceil(chars / 4)`.
    pub(crate) tokens: u64,
    /// The tool calls of an assistant message, in order (empty for other roles).
    pub(crate) tool_calls: Vec<ToolCallMeta>,
}

impl<I, B> MessageShape<I>
where
    I: IntoIterator<Item = B>,
    B: ContentBlock,
{
    /// The token estimate (SPEC §3 with the §12.4 user images and §12.5 excluded shell
    /// output) and the tool calls. The chars counted, by role: user, toolResult and
    /// hookMessage: a string content, or text blocks plus [`IMAGE_CHARS`] per image block;
    /// assistant: text, thinking, and toolCall name plus `JSON.stringify(arguments)` of the
    /// blocks; bashExecution: command plus output unless excluded from the context;
    /// branchSummary and compactionSummary: the summary; any other role: nothing.
    pub(crate) fn count(self) -> Result<Counted, B::Error> {
        let mut chars: u64 = 0;
        let mut tool_calls = Vec::new();
        match self.role {
            Role::User | Role::ToolResult | Role::HookMessage => match self.content {
                ContentShape::Text(n) => chars = n,
                ContentShape::Blocks(blocks) => {
                    for b in blocks {
                        let l = b.lens();
                        match l.kind {
                            BlockKind::Text => chars += l.text,
                            BlockKind::Image => chars += IMAGE_CHARS,
                            _ => {}
                        }
                    }
                }
                ContentShape::None => {}
            },
            Role::Assistant => {
                if let ContentShape::Blocks(blocks) = self.content {
                    for b in blocks {
                        let l = b.lens();
                        match l.kind {
                            BlockKind::Text => chars += l.text,
                            BlockKind::Thinking => chars += l.thinking,
                            BlockKind::ToolCall => {
                                chars += l.name + l.args;
                                tool_calls.push(b.tool_call()?);
                            }
                            _ => {}
                        }
                    }
                }
            }
            Role::BashExecution if !self.exclude_from_context => chars = self.command + self.output,
            Role::BranchSummary | Role::CompactionSummary => chars = self.summary,
            _ => {}
        }
        Ok(Counted { tokens: chars.div_ceil(4), tool_calls })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_and_value_paths_agree() {
        let line = r#"{"type":"message","id":"a","parentId":"p","timestamp":"x","message":{"role":"assistant","content":[{"type":"text","text":"Hi"},{"type":"thinking","thinking":"hmm..."},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.rs"}}],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3},"stopReason":"toolUse"}}"#;
        let a = EntryMeta::from_json(line.as_bytes()).unwrap();
        let b = EntryMeta::from_value(&serde_json::from_str(line).unwrap());
        assert_eq!(a.without_text_spans(), b);
        assert_eq!(a.kind, EntryKind::Message);
        assert_eq!(a.parent_id.as_deref(), Some("p"));
        let m = a.message.unwrap();
        // 2 + 6 + 4 + len({"path":"a.rs"}) = 12 + 15 = 27 → 7
        assert_eq!(m.tokens, 7);
        assert_eq!(m.tool_calls[0].path.as_deref(), Some("a.rs"));
        assert_eq!(m.usage.unwrap().context_tokens(), 3.0);
    }

    /// The head of an entry has the entry's fields and the message's role and model of the
    /// whole metadata, and default message fields otherwise (every real session line).
    #[test]
    fn heads_are_the_whole_metadata_without_the_message_body() {
        use crate::entry::read_entry_head;
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions");
        let mut seen = [0usize; 2];
        for file in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
                let mut full = EntryMeta::from_value(&v);
                let Ok(head) = read_entry_head(&&v);
                if let (Some(m), Some(h)) = (full.message.as_mut(), head.message.as_ref()) {
                    assert_eq!((m.role, &m.provider_model), (h.role, &h.provider_model));
                    assert_eq!(
                        h,
                        &MessageMeta {
                            role: h.role,
                            provider_model: h.provider_model.clone(),
                            ..MessageMeta::default()
                        }
                    );
                    *m = h.clone();
                    seen[0] += 1;
                } else {
                    seen[1] += 1;
                }
                // Compared as printed: a missing usage number is NaN on both sides.
                assert_eq!(format!("{full:?}"), format!("{head:?}"), "{line}");
            }
        }
        assert!(seen[0] > 1000 && seen[1] > 10, "{seen:?}");
    }

    #[test]
    fn odd_shapes_do_not_fail() {
        for v in [
            json!(5),
            json!({"type": 3}),
            json!({"type":"message","message":"x"}),
            json!({"type":"message","message":{"role":"user","content":[1,null,{"type":"text","text":5}]}}),
        ] {
            let _ = EntryMeta::from_value(&v);
        }
        assert!(EntryMeta::from_json(b"{\"id\":\"a\",\"id\":\"b\"}").unwrap().id.as_deref() == Some("b"));
    }

    #[test]
    fn images_and_excluded_bash() {
        assert_eq!(estimate_tokens(&json!({"role":"user","content":[{"type":"image","data":"AAAA"}]})), 1200);
        assert_eq!(
            estimate_tokens(
                &json!({"role":"bashExecution","command":"ls","output":"abcdef","excludeFromContext":true})
            ),
            0
        );
        assert_eq!(estimate_tokens(&json!({"role":"bashExecution","command":"ls","output":"abcdef"})), 2);
        assert_eq!(estimate_tokens(&json!({"role":"custom","content":"abcdef"})), 0);
    }

    /// A third kind of reader: blocks given directly as lengths.
    struct Given(BlockLens, &'static str);

    impl ContentBlock for Given {
        type Error = ();
        fn lens(&self) -> BlockLens {
            self.0
        }
        fn tool_call(self) -> Result<ToolCallMeta, ()> {
            Ok(ToolCallMeta { id: Some(self.1.to_string()), name: None, path: None, args_text: None })
        }
    }

    fn lens(kind: BlockKind, n: u64) -> BlockLens {
        BlockLens { kind, text: n, thinking: n, name: n, args: n }
    }

    #[test]
    fn the_rule_counts_by_role() {
        let blocks = || {
            vec![
                Given(lens(BlockKind::Text, 3), "a"),
                Given(lens(BlockKind::Thinking, 5), "b"),
                Given(lens(BlockKind::ToolCall, 7), "c"),
                Given(lens(BlockKind::Image, 11), "d"),
            ]
        };
        let shape = |role, content| MessageShape {
            role,
            content,
            command: 2,
            output: 6,
            summary: 9,
            exclude_from_context: false,
        };
        // assistant: text 3 + thinking 5 + toolCall name 7 + args 7 = 22 → 6, one tool call
        let c = shape(Role::Assistant, ContentShape::Blocks(blocks())).count().unwrap();
        assert_eq!((c.tokens, c.tool_calls.len()), (6, 1));
        assert_eq!(c.tool_calls[0].id.as_deref(), Some("c"));
        // user: text 3 + one image 4800 = 4803 → 1201, no tool calls
        let c = shape(Role::User, ContentShape::Blocks(blocks())).count().unwrap();
        assert_eq!((c.tokens, c.tool_calls.len()), (1201, 0));
        assert_eq!(shape(Role::ToolResult, ContentShape::<Vec<Given>>::Text(9)).count().unwrap().tokens, 3);
        assert_eq!(shape(Role::Assistant, ContentShape::<Vec<Given>>::Text(9)).count().unwrap().tokens, 0);
        assert_eq!(shape(Role::BashExecution, ContentShape::<Vec<Given>>::None).count().unwrap().tokens, 2);
        let excluded = MessageShape { exclude_from_context: true, ..shape(Role::BashExecution, ContentShape::None) };
        assert_eq!(excluded.count().map(|c| c.tokens), Ok::<_, ()>(0));
        assert_eq!(shape(Role::CompactionSummary, ContentShape::<Vec<Given>>::None).count().unwrap().tokens, 3);
        assert_eq!(shape(Role::Other, ContentShape::Blocks(blocks())).count().unwrap().tokens, 0);
    }
}
