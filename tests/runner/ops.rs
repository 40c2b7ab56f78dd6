//! One function per conformance op: reads the vector input, calls the Rust API, and shapes the
//! result like the vector's `expected`.

use super::Ctx;
use serde_json::{json, Value};
use session_compaction::entry::{estimate_tokens, EntryMeta, MessageMeta};
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::plan::cut_point::{find_cut_point, find_turn_start_index, find_valid_cut_points};
use session_compaction::plan::file_ops::{extract_file_ops_from_message, FileOps};
use session_compaction::plan::prepare::{
    last_assistant_usage, plan_compaction, preparation_from_plan, should_compact, CompactionSettings, FileOpsLists,
};

type R = Result<Value, String>;

fn idx(v: &Value, key: &str) -> Result<usize, String> {
    v[key].as_u64().map(|n| n as usize).ok_or_else(|| format!("input.{key} is not an index"))
}

fn usage_of(input: &Value) -> session_compaction::entry::UsageMeta {
    let msg = json!({"role": "assistant", "usage": input["usage"]});
    MessageMeta::from_value(&msg).usage.expect("usage object")
}

fn num(v: f64) -> Value {
    session_compaction::js::ms_value(Some(v))
}

pub fn run(ctx: &Ctx, op: &str, input: &Value) -> R {
    match op {
        "estimateTokens" => Ok(json!({"tokens": estimate_tokens(&input["message"])})),
        "estimateTokensBatch" => {
            let entries = ctx.entries(&input["entries"]);
            let tokens: Vec<Value> = entries
                .iter()
                .map(|e| {
                    let m = EntryMeta::from_value(e);
                    m.message.map_or(Value::Null, |m| json!(m.tokens))
                })
                .collect();
            Ok(json!({ "tokens": tokens }))
        }
        "calculateContextTokens" => Ok(json!({"tokens": num(usage_of(input).context_tokens())})),
        "calculatePromptTokens" => Ok(json!({"tokens": num(usage_of(input).prompt_tokens())})),
        "shouldCompact" => {
            let settings: CompactionSettings =
                serde_json::from_value(input["settings"].clone()).map_err(|e| e.to_string())?;
            let r = should_compact(
                input["contextTokens"].as_f64().unwrap_or(f64::NAN),
                input["contextWindow"].as_f64().unwrap_or(f64::NAN),
                &settings,
            );
            Ok(json!({ "result": r }))
        }
        "getLastAssistantUsage" => {
            let entries = ctx.entries(&input["entries"]);
            let list = EntryList::new(&entries);
            let from = 0; // the op is the plain reference function; §12.3 applies inside prepareCompaction
            Ok(match last_assistant_usage(&list, from) {
                Some((i, _)) => json!({"usage": entries[i]["message"]["usage"]}),
                None => json!({ "usage": null }),
            })
        }
        "findValidCutPoints" => {
            let entries = ctx.entries(&input["entries"]);
            let list = EntryList::new(&entries);
            Ok(json!({"cutPoints": find_valid_cut_points(&list, idx(input, "startIndex")?, idx(input, "endIndex")?)}))
        }
        "findTurnStartIndex" => {
            let entries = ctx.entries(&input["entries"]);
            let list = EntryList::new(&entries);
            Ok(
                json!({"turnStartIndex": find_turn_start_index(&list, idx(input, "entryIndex")?, idx(input, "startIndex")?)}),
            )
        }
        "findCutPoint" => {
            let entries = ctx.entries(&input["entries"]);
            let list = EntryList::new(&entries);
            let keep = input["keepRecentTokens"].as_u64().ok_or("keepRecentTokens")?;
            let r = find_cut_point(&list, idx(input, "startIndex")?, idx(input, "endIndex")?, keep);
            serde_json::to_value(r).map_err(|e| e.to_string())
        }
        "prepareCompaction" => {
            let entries = ctx.entries(&input["entries"]);
            let list = EntryList::new(&entries);
            let settings: CompactionSettings =
                serde_json::from_value(input["settings"].clone()).map_err(|e| e.to_string())?;
            let plan = plan_compaction(&list, &settings);
            let prep = plan.as_ref().and_then(|p| preparation_from_plan(&list, &settings, p));
            let mut out = json!({ "preparation": prep });
            if let Some(p) = &prep {
                let lists = FileOps::from(&p.file_ops).file_lists();
                out["fileLists"] = serde_json::to_value(&lists).unwrap();
                out["fileOperationsText"] = json!(format_file_ops(ctx, &lists)?);
            }
            let _ = list.len();
            Ok(out)
        }
        "extractFileOpsFromMessage" => {
            let ops = extract_file_ops_from_message(&input["message"]);
            Ok(serde_json::to_value(FileOpsLists::from(&ops)).unwrap())
        }
        "computeFileLists" => {
            let lists: FileOpsLists = serde_json::from_value(input["fileOps"].clone()).map_err(|e| e.to_string())?;
            Ok(serde_json::to_value(FileOps::from(&lists).file_lists()).unwrap())
        }
        "buildSessionContext" => run_context(ctx, input),
        "pruneToolOutputs" => run_prune(ctx, input),
        "prepareBranchEntries" => run_branch_entries(ctx, input),
        "formatFileOperations" => {
            let lists: session_compaction::plan::file_ops::FileLists =
                serde_json::from_value(input.clone()).map_err(|e| e.to_string())?;
            Ok(json!({"text": format_file_ops(ctx, &lists)?}))
        }
        "parseJsonlLenient" | "loadSession" | "getBranch" | "collectEntriesForBranchSummary" => {
            super::load_ops::run(ctx, op, input)
        }
        "convertToLlm" | "serializeConversation" => super::convert_ops::run(ctx, op, input),
        "compact" | "generateBranchSummary" => super::summary_ops::run(ctx, op, input),
        _ => Err(format!("op {op} not implemented")),
    }
}

fn format_file_ops(ctx: &Ctx, lists: &session_compaction::plan::file_ops::FileLists) -> Result<String, String> {
    session_compaction::prompt::templates::format_file_operations(
        &ctx.templates,
        &lists.read_files,
        &lists.modified_files,
    )
    .map_err(|e| e.to_string())
}

pub fn run_context(ctx: &Ctx, input: &Value) -> R {
    use session_compaction::context::{build_session_context, LeafSelector};
    let entries = ctx.entries(&input["entries"]);
    let list = EntryList::new(&entries);
    let leaf = match input.get("leafId") {
        None => LeafSelector::Last,
        Some(Value::Null) => LeafSelector::BeforeFirst,
        Some(Value::String(s)) => LeafSelector::Id(s.clone()),
        Some(other) => return Err(format!("leafId {other}")),
    };
    let ctx = build_session_context(&list, &leaf);
    // `repairs` (SPEC §13.1) is ours, not the reference's: it is checked here — the repaired
    // messages are provider-valid and the pure repair of the messages reports the same — and
    // left out of the comparison with the vector.
    let (fixed, repairs) = session_compaction::context::repair::repair_messages(&ctx.messages);
    session_compaction::context::repair::check_provider_valid(&fixed).map_err(|e| format!("repaired context: {e}"))?;
    let strip = |r: &[session_compaction::context::repair::ContextRepair]| {
        r.iter().map(|r| (r.kind, r.tool_call_id.clone(), r.message_index)).collect::<Vec<_>>()
    };
    if strip(&repairs) != strip(&ctx.repairs) {
        return Err(format!("context repairs {:?} differ from the repairs of its messages {:?}", ctx.repairs, repairs));
    }
    let mut out = serde_json::to_value(&ctx).map_err(|e| e.to_string())?;
    if let Some(o) = out.as_object_mut() {
        o.shift_remove("repairs");
    }
    Ok(out)
}

pub fn run_prune(ctx: &Ctx, input: &Value) -> R {
    use session_compaction::plan::prune::{prune_tool_outputs, PruneConfig};
    let entries = ctx.entries(&input["entries"]);
    let list = EntryList::new(&entries);
    let mut config: PruneConfig = if input["usesDefaultConfig"] == json!(true) {
        PruneConfig::default()
    } else {
        serde_json::from_value(input["config"].clone()).map_err(|e| e.to_string())?
    };
    // The vectors pin SPEC §7; staleness-aware pruning (§13.6, on by default) is off for them.
    config.staleness = false;
    let now = input["prunedAt"].as_f64().ok_or("prunedAt")?;
    let r = prune_tool_outputs(&list, &config, now);
    let mut out = json!({
        "prunedCount": r.pruned_count,
        "tokensSaved": r.tokens_saved,
        "prunedEntries": r.pruned_entries.iter().map(|(i, e)| json!({
            "index": i, "id": e["id"], "text": e["message"]["content"][0]["text"]
        })).collect::<Vec<_>>(),
    });
    if input["entries"].is_array() {
        let mut all = entries.clone();
        for (i, e) in r.pruned_entries {
            all[i] = e;
        }
        out["entries"] = Value::Array(all);
    }
    Ok(out)
}

pub fn run_branch_entries(ctx: &Ctx, input: &Value) -> R {
    let entries = ctx.entries(&input["entries"]);
    let list = EntryList::new(&entries);
    let budget = input.get("tokenBudget").and_then(Value::as_u64).unwrap_or(0);
    let r = session_compaction::plan::branch::prepare_branch_entries(&list, budget);
    let lists = r.file_ops.file_lists();
    Ok(json!({
        "messages": r.messages,
        "fileOps": FileOpsLists::from(&r.file_ops),
        "totalTokens": r.total_tokens,
        "fileLists": lists,
        "fileOperationsText": format_file_ops(ctx, &lists)?,
    }))
}
