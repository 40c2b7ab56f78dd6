//! The prompt frame the engine assembles (SPEC §9): splits a prompt into its `<conversation>`,
//! `<previous-summary>` and `<additional-context>` blocks and the instructions, with the frame
//! texts of [`crate::prompt::frames`] (the assembler writes the same ones). In a prompt the engine
//! made, content holds no frame tag (SPEC §13.4: they are escaped as `&lt;…`), so each frame ends
//! at its own closing tag; the last-closing-tag rules below only matter for prompts a host
//! assembled itself without escaping.

use crate::prompt::frames::{
    ADDITIONAL_CONTEXT_CLOSE as CTX_CLOSE, ADDITIONAL_CONTEXT_OPEN as CTX_OPEN, CONVERSATION_CLOSE as CONV_CLOSE,
    CONVERSATION_OPEN as CONV_OPEN, PREVIOUS_SUMMARY_CLOSE as PREV_CLOSE, PREVIOUS_SUMMARY_OPEN as PREV_OPEN,
};

#[derive(Debug, Default)]
pub(super) struct PromptParts<'a> {
    pub(super) conversation: &'a str,
    pub(super) previous: Option<&'a str>,
    pub(super) context: Vec<String>,
    pub(super) instructions: &'a str,
}

/// Splits an assembled prompt into its blocks. The transcript may itself contain the closing
/// tags (sessions about this very format), so the conversation ends at the *last* closing tag
/// that is followed by the next expected block.
pub(super) fn split_prompt(prompt: &str) -> PromptParts<'_> {
    let Some(open) = prompt.find(CONV_OPEN) else {
        return PromptParts { conversation: prompt, ..Default::default() };
    };
    let body = &prompt[open + CONV_OPEN.len()..];
    let with_prev = format!("{CONV_CLOSE}{PREV_OPEN}");
    let with_ctx = format!("{CONV_CLOSE}{CTX_OPEN}");
    let end = body.rfind(&with_prev).or_else(|| body.rfind(&with_ctx)).or_else(|| body.rfind(CONV_CLOSE));
    let (conversation, mut rest) = match end {
        Some(e) => (&body[..e], &body[e + CONV_CLOSE.len()..]),
        None => match body.rfind("\n</conversation>") {
            Some(e) => (&body[..e], &body[e + "\n</conversation>".len()..]),
            None => (body, ""),
        },
    };
    rest = rest.trim_start_matches('\n');
    let mut previous = None;
    if let Some(r) = rest.strip_prefix(PREV_OPEN) {
        let end = r.find(&format!("{PREV_CLOSE}{CTX_OPEN}")).or_else(|| r.rfind(PREV_CLOSE));
        match end {
            Some(e) => {
                previous = Some(&r[..e]);
                rest = &r[e + PREV_CLOSE.len()..];
            }
            None => {
                previous = Some(r.strip_suffix("\n</previous-summary>").unwrap_or(r));
                rest = "";
            }
        }
    }
    let mut context: Vec<String> = Vec::new();
    if let Some(r) = rest.strip_prefix(CTX_OPEN) {
        let (block, after) = match r.find(CTX_CLOSE) {
            Some(e) => (&r[..e], &r[e + CTX_CLOSE.len()..]),
            None => (r, ""),
        };
        for line in block.lines() {
            match (line.strip_prefix("- "), context.last_mut()) {
                (Some(item), _) => context.push(item.to_string()),
                (None, Some(last)) => {
                    last.push('\n');
                    last.push_str(line);
                }
                (None, None) => context.push(line.to_string()),
            }
        }
        context.retain(|c| !c.trim().is_empty());
        rest = after;
    }
    PromptParts { conversation, previous, context, instructions: rest }
}
