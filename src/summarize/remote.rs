//! The remote summarizer protocol (SPEC §9): a host POSTs [`request_body`] as JSON to the
//! summarizer's URL and reads the summary from the reply with [`summary_of_reply`]. The HTTP
//! transport itself belongs to the host.

use super::SummaryRequest;
use crate::error::{Error, Result};
use serde_json::Value;

/// The JSON body of a request: `{systemPrompt, prompt, purpose, maxTokens}`.
pub fn request_body(request: &SummaryRequest) -> String {
    serde_json::json!({
        "systemPrompt": request.system_prompt,
        "prompt": request.prompt,
        "purpose": request.purpose,
        "maxTokens": request.max_tokens,
    })
    .to_string()
}

/// The summary of a reply with HTTP `status` and body `text`: the string `summary` of a JSON
/// object.
///
/// # Errors
/// [`Error::Remote`] for a non-2xx status, a body that is not JSON, or no string `summary`.
pub fn summary_of_reply(status: u16, status_text: &str, text: &str) -> Result<String> {
    if !(200..300).contains(&status) {
        return Err(Error::Remote { status, message: format!("the summarizer answered HTTP {status} {status_text}") });
    }
    let v: Value = serde_json::from_slice(text.as_bytes())
        .map_err(|_| Error::Remote { status, message: "the reply is not JSON".into() })?;
    v.get("summary")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::Remote { status, message: "the reply has no string `summary`".into() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize::Purpose;

    #[test]
    fn body_and_replies() {
        let req = SummaryRequest {
            purpose: Purpose::Short,
            system_prompt: "sys".into(),
            prompt: "p".into(),
            max_tokens: 7,
            reasoning: None,
        };
        assert_eq!(request_body(&req), r#"{"systemPrompt":"sys","prompt":"p","purpose":"short","maxTokens":7}"#);
        assert_eq!(summary_of_reply(200, "OK", r#"{"summary":"s"}"#), Ok("s".to_string()));
        assert_eq!(summary_of_reply(503, "Service Unavailable", "").unwrap_err().code(), "E_REMOTE");
        let e = summary_of_reply(200, "OK", "nope").unwrap_err();
        assert_eq!(e.to_string(), "remote summarizer: the reply is not JSON");
        let e = summary_of_reply(201, "Created", r#"{"summary":1}"#).unwrap_err();
        assert_eq!(e, Error::Remote { status: 201, message: "the reply has no string `summary`".into() });
    }
}
