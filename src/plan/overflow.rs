//! Context overflow detection and context-size estimates. SPEC §11 (overflow trigger) and
//! §12.3 (fresh usage only).

use crate::entry::EntrySource;
use crate::entry::{MessageMeta, Role};
use serde_json::Value;

/// Provider error texts that mean "the prompt did not fit", lower-cased. `#` stands for one or
/// more decimal digits; `…` for any text.
const OVERFLOW_PHRASES: &[&str] = &[
    "prompt is too long",
    "input is too long for requested model",
    "exceeds the context window",
    "input token count…exceeds the maximum",
    "maximum prompt length is #",
    "reduce the length of the messages",
    "maximum context length is # tokens",
    "exceeds the limit of #",
    "exceeds the available context size",
    "greater than the context length",
    "context window exceeds limit",
    "exceeded model token limit",
    "context_length_exceeded",
    "context length exceeded",
    "too many tokens",
    "token limit exceeded",
    "request_too_large",
];

/// Does `pattern` (with `#` = digits, `…` = anything) occur in `text` (both lower-case)?
fn contains_pattern(text: &str, pattern: &str) -> bool {
    if let Some((head, tail)) = pattern.split_once('…') {
        return text.match_indices(head).any(|(at, _)| text[at + head.len()..].contains(tail));
    }
    match pattern.split_once('#') {
        None => text.contains(pattern),
        Some((head, tail)) => text.match_indices(head).any(|(at, _)| {
            let rest = &text[at + head.len()..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0 && rest[digits..].starts_with(tail)
        }),
    }
}

/// `400`/`413` status with no body (`"413 status code (no body)"`, `"400 (no body)"`).
fn is_empty_status_error(text: &str) -> bool {
    let t = text.trim_start();
    let Some(rest) = t.strip_prefix("400").or_else(|| t.strip_prefix("413")) else { return false };
    let rest = rest.trim_start();
    let rest = rest.strip_prefix("status code").unwrap_or(rest).trim_start();
    rest.starts_with("(no body)")
}

/// True when an error text says the context overflowed.
pub fn is_overflow_error_text(text: &str) -> bool {
    let lower = crate::js::lowercase(text);
    OVERFLOW_PHRASES.iter().any(|p| contains_pattern(&lower, p)) || is_empty_status_error(&lower)
}

/// Whether the model of an assistant message, `provider_model` (`` `${provider}/${model}` ``,
/// [`MessageMeta::provider_model`]), is the model a host names as `want` (SPEC §11: overflow
/// recovery only for the same model). `want` matches when it is the whole `provider/id`, or
/// when it is the id without its provider: `"gpt-4o"` matches `"openai/gpt-4o"`, and
/// `"openai/gpt-4o"` matches `"openrouter/openai/gpt-4o"` (the id after the first `/`).
/// An empty `want` matches nothing.
pub fn same_model(want: &str, provider_model: &str) -> bool {
    !want.is_empty() && (want == provider_model || provider_model.split_once('/').is_some_and(|(_, id)| id == want))
}

/// Did this assistant message fail (or silently succeed) because the context overflowed?
/// True when `stopReason` is `"error"` and `errorMessage` is one of the provider overflow texts
/// (SPEC §11), or when a successful reply (`stopReason` `"stop"`) reports more prompt tokens
/// (`usage.input + usage.cacheRead`) than `context_window` (silent overflow; only when a
/// window is given).
pub fn is_context_overflow(assistant_message: &Value, context_window: Option<f64>) -> bool {
    let meta = MessageMeta::from_value(assistant_message);
    if meta.role != Role::Assistant {
        return false;
    }
    match meta.stop_reason.as_deref() {
        Some("error") => meta.error_message.as_deref().is_some_and(is_overflow_error_text),
        Some("stop") => match (context_window, meta.usage) {
            (Some(w), Some(u)) if w > 0.0 => {
                let input = if u.input.is_nan() { 0.0 } else { u.input };
                let cached = if u.cache_read.is_nan() { 0.0 } else { u.cache_read };
                input + cached > w
            }
            _ => false,
        },
        _ => false,
    }
}

/// Estimated context size of a branch (SPEC §12.3): the context tokens of the last fresh usage
/// (an assistant message after the latest compaction, not aborted or failed) plus the estimates
/// of the messages after it; with no fresh usage, the estimate of the whole built context.
/// `path` is root→leaf. Tokens are estimates except for the provider's own usage count.
pub fn estimate_context_tokens<S: EntrySource + ?Sized>(path: &S) -> f64 {
    let last_compaction = crate::plan::prepare::last_compaction_index(path);
    let from = last_compaction.map_or(0, |c| c + 1);
    if let Some((i, usage)) = crate::plan::prepare::last_assistant_usage(path, from) {
        let after: u64 = (i + 1..path.len()).map(|j| path.message_of_tokens(j)).sum();
        return usage.context_tokens() + after as f64;
    }
    estimate_built_context_tokens(path)
}

/// [`estimate_context_tokens`] with `settings.tokenCalibration`: the estimated part (the
/// messages after the last fresh usage, or the whole built context without one) scaled by the
/// calibration factor ([`crate::plan::prepare::calibration_of`]); the provider's own count is
/// used as it is. Without calibration, [`estimate_context_tokens`].
pub fn estimate_context_tokens_with<S: EntrySource + ?Sized>(
    path: &S,
    settings: &crate::plan::prepare::CompactionSettings,
) -> f64 {
    let Some(factor) = crate::plan::prepare::calibration_of(path, settings) else {
        return estimate_context_tokens(path);
    };
    let last_compaction = crate::plan::prepare::last_compaction_index(path);
    let from = last_compaction.map_or(0, |c| c + 1);
    if let Some((i, usage)) = crate::plan::prepare::last_assistant_usage(path, from) {
        let after: u64 = (i + 1..path.len()).map(|j| path.message_of_tokens(j)).sum();
        return usage.context_tokens() + crate::plan::tokens::calibrated(after, Some(factor)) as f64;
    }
    estimate_built_context_tokens(path) * factor
}

/// The estimate of the whole built context of a branch (SPEC §3 per message, no provider
/// usage): what [`estimate_context_tokens`] falls back to, and what the progress guard
/// compares before and after a compaction (SPEC §13.5). `path` is root→leaf.
pub fn estimate_built_context_tokens<S: EntrySource + ?Sized>(path: &S) -> f64 {
    let indices: Vec<usize> = (0..path.len()).collect();
    context_items_tokens(path, &crate::context::plan_context(path, &indices).items)
}

/// The estimated tokens of a built context's `items` (indices into `entries`): each message's
/// estimate, a summary's, 0 for a `custom` message (SPEC §3). The sum of
/// [`estimate_built_context_tokens`] for a context already decided.
pub fn context_items_tokens<S: EntrySource + ?Sized>(entries: &S, items: &[crate::context::ContextItem]) -> f64 {
    use crate::context::ContextItem;
    let tokens = |item: &ContextItem| match *item {
        ContextItem::Message(i) => entries.meta(i).message_tokens(),
        // A `custom` message counts 0 (SPEC §3).
        ContextItem::Custom(_) => 0,
        ContextItem::BranchSummary(i) | ContextItem::CompactionSummary(i) => entries.summary_tokens(i),
    };
    items.iter().map(tokens).sum::<u64>() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(text: &str) -> Value {
        json!({"role": "assistant", "content": [], "stopReason": "error", "errorMessage": text, "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
    }

    #[test]
    fn model_ids_with_or_without_provider() {
        assert!(same_model("openai/gpt-4o", "openai/gpt-4o"));
        assert!(same_model("gpt-4o", "openai/gpt-4o"));
        assert!(same_model("openai/gpt-4o", "openrouter/openai/gpt-4o"));
        assert!(!same_model("gpt-4o-mini", "openai/gpt-4o"));
        assert!(!same_model("anthropic/gpt-4o", "openai/gpt-4o"));
        assert!(!same_model("openai", "openai/gpt-4o"));
        assert!(!same_model("", "openai/gpt-4o"));
    }

    #[test]
    fn provider_texts() {
        for t in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            "Your input exceeds the context window of this model",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "Please reduce the length of the messages or completion",
            "This endpoint's maximum context length is 200000 tokens. However, you requested about 300000",
            "prompt token count of 30000 exceeds the limit of 12288",
            "the request exceeds the available context size, try increasing it",
            "tokens to keep from the initial prompt is greater than the context length",
            "invalid params, context window exceeds limit",
            "Your request exceeded model token limit: 262144",
            "Error code: context_length_exceeded",
            "Too many tokens in request",
            "token limit exceeded",
            "request_too_large",
            "413 status code (no body)",
            "400 (no body)",
        ] {
            assert!(is_context_overflow(&err(t), None), "{t}");
        }
        for t in ["rate limit exceeded", "overloaded_error", "maximum context length is unknown", "500 (no body)"] {
            assert!(!is_context_overflow(&err(t), None), "{t}");
        }
    }

    #[test]
    fn silent_overflow() {
        let m = json!({"role": "assistant", "stopReason": "stop", "usage": {"input": 1000, "output": 1, "cacheRead": 500, "cacheWrite": 0}});
        assert!(is_context_overflow(&m, Some(1200.0)));
        assert!(!is_context_overflow(&m, Some(2000.0)));
        assert!(!is_context_overflow(&m, None));
    }
}
