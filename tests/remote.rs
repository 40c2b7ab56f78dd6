//! The native remote summarizer (cargo feature `remote-reqwest`) against a local HTTP server on
//! 127.0.0.1: the request it sends (SPEC §9 protocol), the replies it accepts, and how it fails
//! (HTTP status, a reply that is not a summary, no answer in time, a refused connection, with
//! the credentials of the URL never in a message). Run with
//! `cargo test --features remote-reqwest --test remote`.
#![cfg(feature = "remote-reqwest")]

use serde_json::{json, Value};
use session_compaction::io::ParseOptions;
use session_compaction::session::engine::{CompactRun, NoHooks, SessionEngine};
use session_compaction::session::SessionTree;
use session_compaction::summarize::remote::{redact_url, RemoteSummarizer};
use session_compaction::summarize::{Complete, Purpose, SummaryRequest};
use session_compaction::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    content_type: Option<String>,
    body: Value,
}

/// A server on 127.0.0.1 answering every request with `reply(body)` = (status, body, delay ms).
fn serve(reply: impl Fn(&Value) -> (u16, String, u64) + Send + Sync + 'static) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/summarize", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
            let (mut length, mut content_type) = (0usize, None);
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                    break;
                }
                let (name, value) = h.split_once(':').unwrap_or((&h, ""));
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "content-type" => content_type = Some(value.trim().to_string()),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (status, text, delay) = reply(&body);
            log.lock().unwrap().push(Seen { method, path, content_type, body });
            std::thread::sleep(std::time::Duration::from_millis(delay));
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                text.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(text.as_bytes());
        }
    });
    (url, seen)
}

fn request(purpose: Purpose) -> SummaryRequest {
    SummaryRequest {
        purpose,
        system_prompt: "You summarize.".into(),
        prompt: "<conversation>\n[User]: hi\n</conversation>".into(),
        max_tokens: 512,
        reasoning: Some("high".into()),
    }
}

#[tokio::test]
async fn posts_the_protocol_body_and_reads_the_summary() {
    let (url, seen) = serve(|body| (200, json!({"summary": format!("summary of {}", body["purpose"])}).to_string(), 0));
    let remote = RemoteSummarizer::new(&url);
    let text = remote.complete(request(Purpose::Short)).await.expect("answers");
    assert_eq!(text, "summary of \"short\"");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("POST", "/summarize"));
    assert_eq!(seen[0].content_type.as_deref(), Some("application/json"));
    assert_eq!(
        seen[0].body,
        json!({"systemPrompt": "You summarize.", "prompt": "<conversation>\n[User]: hi\n</conversation>",
            "purpose": "short", "maxTokens": 512})
    );
}

#[tokio::test]
async fn http_errors_and_bad_replies_are_e_remote() {
    let (url, _) = serve(|_| (503, String::new(), 0));
    let e = RemoteSummarizer::new(&url).complete(request(Purpose::History)).await.unwrap_err();
    assert_eq!((e.code(), e.http_status()), ("E_REMOTE", Some(503)));
    let (url, _) = serve(|_| (200, "not json".into(), 0));
    let e = RemoteSummarizer::new(&url).complete(request(Purpose::History)).await.unwrap_err();
    assert_eq!(e, Error::Remote { status: 200, message: "the reply is not JSON".into() });
    let (url, _) = serve(|_| (200, json!({"summary": 7}).to_string(), 0));
    let e = RemoteSummarizer::new(&url).complete(request(Purpose::History)).await.unwrap_err();
    assert_eq!(e, Error::Remote { status: 200, message: "the reply has no string `summary`".into() });
}

#[tokio::test]
async fn a_slow_server_times_out_and_a_refused_connection_names_the_redacted_url() {
    let (url, _) = serve(|_| (200, json!({"summary": "late"}).to_string(), 2_000));
    let e = RemoteSummarizer::new(&url).with_timeout_ms(200.0).complete(request(Purpose::Short)).await.unwrap_err();
    match &e {
        Error::Remote { status: 0, message } => assert!(message.contains("did not answer within 0.2 s"), "{message}"),
        other => panic!("{other:?}"),
    }
    // A port nothing listens on (bound, then closed).
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://alice:s3cret@127.0.0.1:{port}/summarize");
    let e = RemoteSummarizer::new(&url).complete(request(Purpose::Short)).await.unwrap_err();
    let text = e.to_string();
    assert_eq!(e.code(), "E_REMOTE");
    assert!(text.contains(&format!("http://[redacted]@127.0.0.1:{port}/summarize")), "{text}");
    assert!(!text.contains("s3cret") && !text.contains("alice"), "{text}");
    assert_eq!(redact_url("https://u:p@host:1/x?y=1"), "https://[redacted]@host:1/x?y=1");
    assert_eq!(redact_url("https://host/a@b"), "https://host/a@b");
}

#[tokio::test]
async fn the_settings_remote_endpoint_compacts_a_real_session() {
    let (url, seen) = serve(|body| (200, json!({"summary": format!("REMOTE {}", body["purpose"])}).to_string(), 0));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions/pi-session-large.jsonl");
    let (tree, _) = SessionTree::from_bytes(std::fs::read(path).unwrap(), &ParseOptions::lenient()).unwrap();
    let engine = Arc::new(SessionEngine::new(tree));
    let mut run = CompactRun::default();
    run.settings.remote_endpoint = Some(url);
    let model = RemoteSummarizer::from_settings(&run.settings).expect("an endpoint is set");
    let worker = engine.clone();
    let done = tokio::spawn(async move { worker.compact(&model, &NoHooks, &run, None, 0.0).await })
        .await
        .unwrap()
        .expect("compacts through the endpoint");
    assert!(done.result.summary.starts_with("REMOTE \"history\""), "{}", done.result.summary);
    assert_eq!(done.result.short_summary, "REMOTE \"short\"");
    let purposes: Vec<Value> = seen.lock().unwrap().iter().map(|s| s.body["purpose"].clone()).collect();
    assert!(purposes.contains(&json!("history")) && purposes.contains(&json!("short")), "{purposes:?}");
    assert!(RemoteSummarizer::from_settings(&Default::default()).is_none());
}
