//! Conformance ops of loading and tree walks: `parseJsonlLenient`, `loadSession` (SPEC §1,
//! README "loadSession"), `getBranch` (SPEC §1) and `collectEntriesForBranchSummary` (SPEC §10).

use serde_json::{json, Value};
use session_compaction::entry::{EntryList, EntrySource};
use session_compaction::io::{parse_jsonl_lenient, parse_session_with_ids, ParseOptions};
use session_compaction::tree::{collect_entries_for_branch_summary, get_branch};

type R = Result<Value, String>;

fn ids_of<S: EntrySource + ?Sized>(entries: &S, indices: &[usize]) -> Vec<Value> {
    indices.iter().map(|&i| entries.meta(i).id.clone().map_or(Value::Null, Value::String)).collect()
}

fn read_text(ctx: &super::Ctx, rel: &str) -> Result<String, String> {
    std::fs::read_to_string(ctx.dir.join(rel)).map_err(|e| format!("{rel}: {e}"))
}

/// `loadSession`: lenient load with the recorded ids. `fileEntries` is the migrated file
/// (header first). When the vector names an `expectedFile`, the entries are compared with that
/// file's lines here and reported as `{"file": expectedFile}` when equal.
fn load_session(ctx: &super::Ctx, input: &Value) -> R {
    let text = match &input["jsonl"] {
        Value::String(s) => s.clone(),
        Value::Object(o) => read_text(ctx, o.get("file").and_then(Value::as_str).ok_or("jsonl.file")?)?,
        other => return Err(format!("input.jsonl: {other}")),
    };
    let recorded: Vec<String> = input["generatedIds"]
        .as_array()
        .ok_or("input.generatedIds")?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or("generatedIds item"))
        .collect::<Result<_, _>>()?;
    let mut used = 0usize;
    let mut next = || {
        let id = recorded.get(used).cloned().unwrap_or_else(|| format!("exhausted-{used}"));
        used += 1;
        id
    };
    let session =
        parse_session_with_ids(text.as_bytes(), &ParseOptions::default(), &mut next).map_err(|e| e.to_string())?;
    if used > recorded.len() {
        return Err(format!("used {used} ids, only {} recorded", recorded.len()));
    }
    // The reference migrates only a non-empty file (an empty one starts a new session).
    let migrated = session.header.is_some() && session.migrated;
    let file_entries = session.into_file_entries();
    let file_entries = match input.get("expectedFile").and_then(Value::as_str) {
        Some(rel) => {
            let lines = ctx.file_lines(rel);
            if lines.len() != file_entries.len() {
                return Err(format!("{rel}: {} lines expected, got {} entries", lines.len(), file_entries.len()));
            }
            for (i, (want, got)) in lines.iter().zip(&file_entries).enumerate() {
                if want != got {
                    return Err(format!("{rel}: line {} differs:\n  want {want}\n  got  {got}", i + 1));
                }
            }
            json!({ "file": rel })
        }
        None => Value::Array(file_entries),
    };
    Ok(json!({"migrated": migrated, "generatedIdsUsed": used, "fileEntries": file_entries}))
}

/// Runs one of the load/tree ops on a vector input and shapes the result like `expected`.
pub fn run(ctx: &super::Ctx, op: &str, input: &Value) -> R {
    match op {
        "parseJsonlLenient" => {
            let text = input["text"].as_str().ok_or("input.text")?;
            Ok(json!({ "values": parse_jsonl_lenient(text) }))
        }
        "loadSession" => load_session(ctx, input),
        "getBranch" => {
            let entries = ctx.entries(&input["entries"]);
            let list = EntryList::new(&entries);
            let from = input["fromId"].as_str().unwrap_or("");
            Ok(json!({ "entryIds": ids_of(&list, &get_branch(&list, from)) }))
        }
        "collectEntriesForBranchSummary" => {
            let entries = ctx.entries(&input["entries"]);
            let list = EntryList::new(&entries);
            let old = input["oldLeafId"].as_str();
            let target = input["targetId"].as_str().unwrap_or("");
            let (indices, common) = collect_entries_for_branch_summary(&list, old, target);
            Ok(json!({"entryIds": ids_of(&list, &indices), "commonAncestorId": common}))
        }
        _ => Err(format!("op {op} is not a load op")),
    }
}
