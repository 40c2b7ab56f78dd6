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

/// The remote summarizer over HTTP for native hosts (cargo feature `remote-reqwest`, off by
/// default, never on wasm32 where the binding uses `fetch`): POSTs [`request_body`] to the
/// endpoint and reads [`summary_of_reply`] (SPEC §9). Each request is bounded by the timeout
/// (default [`crate::session::engine::REMOTE_TIMEOUT_MS`]); dropping the future (an abort, a
/// timeout of the engine) cancels the request in flight. TLS is rustls.
///
/// Errors are [`Error::Remote`]: status 0 when no answer came (refused, timed out), else the
/// HTTP status; the message names the endpoint with any credentials in the URL removed.
#[cfg(all(feature = "remote-reqwest", not(target_arch = "wasm32")))]
#[derive(Debug, Clone)]
pub struct RemoteSummarizer {
    client: reqwest::Client,
    url: String,
    timeout: std::time::Duration,
}

#[cfg(all(feature = "remote-reqwest", not(target_arch = "wasm32")))]
impl RemoteSummarizer {
    /// A summarizer posting to `url` with the default timeout.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            client: reqwest::Client::new(),
            url: url.into(),
            timeout: std::time::Duration::from_secs_f64(crate::session::engine::REMOTE_TIMEOUT_MS / 1000.0),
        }
    }

    /// The summarizer of `settings.remote_endpoint` (`compaction.remoteEndpoint`), if set.
    pub fn from_settings(settings: &crate::plan::prepare::CompactionSettings) -> Option<Self> {
        settings.remote_endpoint.as_deref().map(Self::new)
    }

    /// Sets the timeout of one request, in ms (non-finite or non-positive: the default).
    pub fn with_timeout_ms(mut self, ms: f64) -> Self {
        if ms.is_finite() && ms > 0.0 {
            self.timeout = std::time::Duration::from_secs_f64(ms / 1000.0);
        }
        self
    }

    /// Uses this HTTP client (proxies, headers, connection pool of the host).
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// Query parameters whose name contains one of these (any case) carry a secret.
const SECRET_PARAMS: [&str; 7] = ["key", "token", "secret", "sig", "auth", "password", "credential"];

/// The credentials written into `url`: its `user:password` part and the values of its secret
/// query parameters ([`SECRET_PARAMS`]), as byte ranges of `url`.
fn credential_ranges(url: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let Some(scheme_end) = url.find("://") else { return out };
    let start = scheme_end + 3;
    let rest = &url[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some(at) = rest[..authority_end].rfind('@') {
        out.push(start..start + at);
    }
    if let Some(q) = url.find('?') {
        let end = url[q..].find('#').map_or(url.len(), |h| q + h);
        let mut pos = q + 1;
        for pair in url[q + 1..end].split('&') {
            if let Some(eq) = pair.find('=') {
                let name = pair[..eq].to_ascii_lowercase();
                if SECRET_PARAMS.iter().any(|s| name.contains(s)) && eq + 1 < pair.len() {
                    out.push(pos + eq + 1..pos + pair.len());
                }
            }
            pos += pair.len() + 1;
        }
    }
    out
}

/// `url` for messages: its `user:password` part and the values of query parameters that carry
/// a secret (`key`, `api_key`, `token`, `sig`, `auth`, … any name containing them) written
/// `[redacted]` (as the JS adapters' `redactUrl` writes them).
pub fn redact_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut last = 0;
    for r in credential_ranges(url) {
        out.push_str(&url[last..r.start]);
        out.push_str("[redacted]");
        last = r.end;
    }
    out.push_str(&url[last..]);
    out
}

/// `text` (e.g. a transport error that quotes its request) with the credentials of `url` gone:
/// `url` itself becomes [`redact_url`] of it, and each credential of it found elsewhere in
/// `text` (at least 4 bytes long) `[redacted]`.
pub fn redact_url_in(text: &str, url: &str) -> String {
    let mut out = text.replace(url, &redact_url(url));
    for r in credential_ranges(url) {
        let secret = &url[r];
        if secret.len() >= 4 {
            out = out.replace(secret, "[redacted]");
        }
    }
    out
}

#[cfg(all(feature = "remote-reqwest", not(target_arch = "wasm32")))]
impl super::Complete for RemoteSummarizer {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        let at = redact_url(&self.url);
        let failed = |e: reqwest::Error| {
            let why = if e.is_timeout() {
                format!(
                    "the summarizer at {at} did not answer within {} s",
                    crate::js::format_number(self.timeout.as_secs_f64())
                )
            } else {
                // The error's own text may repeat the URL: only its kind is kept.
                let kind = if e.is_connect() {
                    "cannot connect"
                } else if e.is_body() || e.is_decode() {
                    "cannot read the reply"
                } else {
                    "the request failed"
                };
                format!("request to the summarizer at {at} failed: {kind}")
            };
            Error::Remote { status: e.status().map_or(0, |s| s.as_u16()), message: why }
        };
        let resp = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .timeout(self.timeout)
            .body(request_body(&request))
            .send()
            .await
            .map_err(failed)?;
        let status = resp.status();
        let text = if status.is_success() { resp.text().await.map_err(failed)? } else { String::new() };
        summary_of_reply(status.as_u16(), status.canonical_reason().unwrap_or(""), &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize::Purpose;

    #[test]
    fn credentials_never_reach_messages() {
        assert_eq!(redact_url("http://127.0.0.1:8/sum"), "http://127.0.0.1:8/sum");
        assert_eq!(
            redact_url("https://u:p4ss@host/x?key=abcd&x=1#k"),
            "https://[redacted]@host/x?key=[redacted]&x=1#k"
        );
        assert_eq!(
            redact_url("https://host/?api_key=s3cr3t&Token=t0k3n&page=2"),
            "https://host/?api_key=[redacted]&Token=[redacted]&page=2"
        );
        let url = "http://agent:s3cr3t@127.0.0.1:9/s?sig=abcdef";
        let text =
            format!("Request cannot be constructed from a URL that includes credentials: {url} (agent:s3cr3t, abcdef)");
        let clean = redact_url_in(&text, url);
        assert!(!clean.contains("s3cr3t") && !clean.contains("abcdef"), "{clean}");
        assert!(clean.contains("http://[redacted]@127.0.0.1:9/s?sig=[redacted]"), "{clean}");
    }

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
