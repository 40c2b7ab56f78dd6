//! `compact` and `generateBranchSummary` vectors: canned model answers per purpose, recorded
//! requests.

use super::Ctx;
use serde_json::{json, Value};
use session_compaction::entry::EntryList;
use session_compaction::error::{Error, Result};
use session_compaction::plan::prepare::{prepare_compaction, CompactionPreparation, CompactionSettings};
use session_compaction::summarize::{
    compact, generate_branch_summary, BranchSummaryOptions, CompactOptions, Complete, Purpose, SummaryRequest,
};
use std::sync::Mutex;

/// Answers from `llmResponses` (by purpose; `update` falls back to `history`) and records every
/// request in the order it was issued.
struct Canned {
    responses: Value,
    now: Value,
    requests: Mutex<Vec<Value>>,
}

fn answer(r: &Value) -> Result<String> {
    match r.get("stopReason").and_then(Value::as_str) {
        Some("error") => Err(Error::Summarization {
            message: r.get("errorMessage").and_then(Value::as_str).unwrap_or("Summarization failed").to_string(),
        }),
        Some("aborted") => Err(Error::Aborted { what: "Summarization".into() }),
        _ => Ok(match r.get("texts").and_then(Value::as_array) {
            Some(texts) => texts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n"),
            None => r.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
        }),
    }
}

impl Complete for Canned {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        let purpose = serde_json::to_value(request.purpose).unwrap_or(Value::Null);
        let name = purpose.as_str().unwrap_or_default();
        let mut rec = json!({
            "purpose": name, "systemPrompt": request.system_prompt, "prompt": request.prompt,
            "messageTimestamp": self.now, "maxTokens": request.max_tokens,
        });
        if let Some(r) = &request.reasoning {
            rec["reasoning"] = json!(r);
        }
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).push(rec);
        let r = if request.purpose == Purpose::Branch {
            self.responses.clone()
        } else {
            self.responses
                .get(name)
                .or_else(|| (name == "update").then(|| self.responses.get("history")).flatten())
                .cloned()
                .unwrap_or(Value::Null)
        };
        answer(&r)
    }
}

pub fn run(ctx: &Ctx, op: &str, input: &Value) -> Result<Value, String> {
    let templates = &ctx.templates;
    match op {
        "compact" => {
            let prep: Option<CompactionPreparation> = match input.get("preparation") {
                Some(p) => Some(serde_json::from_value(p.clone()).map_err(|e| e.to_string())?),
                None => {
                    let entries = ctx.entries(&input["entries"]);
                    let settings: CompactionSettings =
                        serde_json::from_value(input["settings"].clone()).map_err(|e| e.to_string())?;
                    prepare_compaction(&EntryList::new(&entries), &settings)
                }
            };
            let Some(prep) = prep else { return Ok(json!({ "preparation": null })) };
            let options = CompactOptions {
                custom_instructions: input.get("customInstructions").and_then(Value::as_str).map(str::to_owned),
                prompt_override: input.pointer("/options/promptOverride").and_then(Value::as_str).map(str::to_owned),
                extra_context: input
                    .pointer("/options/extraContext")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                    .unwrap_or_default(),
            };
            let model = Canned {
                responses: input["llmResponses"].clone(),
                now: input["now"].clone(),
                requests: Mutex::new(Vec::new()),
            };
            let result = futures_executor::block_on(compact(&prep, &model, &options, templates));
            let requests = model.requests.into_inner().unwrap_or_else(|e| e.into_inner());
            Ok(match result {
                Ok(r) => json!({"requests": requests, "result": r}),
                Err(e) => json!({"requests": requests, "error": e.to_string()}),
            })
        }
        "generateBranchSummary" => {
            let entries = ctx.entries(&input["entries"]);
            let options = BranchSummaryOptions {
                context_window: input.pointer("/model/contextWindow").and_then(Value::as_u64),
                reserve_tokens: input.get("reserveTokens").and_then(Value::as_u64),
                custom_instructions: input.get("customInstructions").and_then(Value::as_str).map(str::to_owned),
            };
            let model = Canned {
                responses: input["llmResponse"].clone(),
                now: input["now"].clone(),
                requests: Mutex::new(Vec::new()),
            };
            let result = futures_executor::block_on(generate_branch_summary(
                &EntryList::new(&entries),
                &model,
                &options,
                templates,
            ));
            let requests = model.requests.into_inner().unwrap_or_else(|e| e.into_inner());
            let result = match result {
                Ok(s) if s.summary == session_compaction::summarize::NO_CONTENT => json!({"summary": s.summary}),
                Ok(s) => serde_json::to_value(s).unwrap(),
                Err(Error::Summarization { message }) => json!({ "error": message }),
                Err(Error::Aborted { .. }) => json!({"aborted": true}),
                Err(e) => json!({"error": e.to_string()}),
            };
            Ok(json!({ "requests": requests, "result": result }))
        }
        _ => Err(format!("op {op} not implemented")),
    }
}
