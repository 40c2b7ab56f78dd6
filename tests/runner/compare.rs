//! JSON comparison with the conventions of the conformance README: key order ignored, numbers
//! as doubles, `$entryMessage` and `$digest` compact forms, informative `debug` keys skipped.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Compares `expected` with `actual`; on mismatch returns the JSON path and both values.
pub fn check(expected: &Value, actual: &Value, entries: Option<&[Value]>, op: &str) -> Result<(), String> {
    let mut expected = expected.clone();
    if let Value::Object(o) = &mut expected {
        o.remove("debug");
    }
    let mut actual = actual.clone();
    if let Value::Object(o) = &mut actual {
        o.remove("debug");
    }
    let file_ops_at = match op {
        "prepareCompaction" => Some("/preparation/fileOps"),
        "prepareBranchEntries" => Some("/fileOps"),
        _ => None,
    };
    if let Some(ptr) = file_ops_at {
        // fileOps are sets: compared ignoring order (README "prepareCompaction")
        for v in [&mut expected, &mut actual] {
            if let Some(ops) = v.pointer_mut(ptr).and_then(Value::as_object_mut) {
                for (_, list) in ops.iter_mut() {
                    if let Value::Array(a) = list {
                        a.sort_by(|x, y| x.as_str().cmp(&y.as_str()));
                    }
                }
            }
        }
    }
    eq(&expected, &actual, entries, "$")
}

fn utf16_slice(s: &str, from: usize, to: usize) -> String {
    let u: Vec<u16> = s.encode_utf16().collect();
    String::from_utf16_lossy(&u[from.min(u.len())..to.min(u.len())])
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        let mut cut = 300;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}…", &s[..cut])
    } else {
        s
    }
}

fn eq(exp: &Value, act: &Value, entries: Option<&[Value]>, path: &str) -> Result<(), String> {
    if let Value::Object(o) = exp {
        if let Some(i) = o.get("$entryMessage").and_then(Value::as_u64) {
            let Some(e) = entries.and_then(|es| es.get(i as usize)) else {
                return Err(format!("{path}: $entryMessage {i} without file entries"));
            };
            return eq(&e["message"], act, entries, path);
        }
        if o.get("$digest").is_some() {
            let Some(s) = act.as_str() else {
                return Err(format!("{path}: expected digest of a string, got {}", show(act)));
            };
            let hash = format!("{:x}", Sha256::digest(s.as_bytes()));
            if Some(hash.as_str()) != o.get("sha256").and_then(Value::as_str) {
                let n = s.encode_utf16().count();
                return Err(format!(
                    "{path}: digest mismatch (len {n} vs {}); head {:?} vs {:?}",
                    o["utf16Length"],
                    utf16_slice(s, 0, 200),
                    o["head"].as_str().map(|h| utf16_slice(h, 0, 200))
                ));
            }
            return Ok(());
        }
    }
    match (exp, act) {
        (Value::Number(a), Value::Number(b)) => {
            if a.as_f64() == b.as_f64() {
                Ok(())
            } else {
                Err(format!("{path}: expected {a}, got {b}"))
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!(
                    "{path}: expected {} items, got {}: expected {} got {}",
                    a.len(),
                    b.len(),
                    show(exp),
                    show(act)
                ));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                eq(x, y, entries, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => eq(v, w, entries, &format!("{path}.{k}"))?,
                    None => return Err(format!("{path}: missing key {k} (expected {})", show(v))),
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    return Err(format!("{path}: unexpected key {k} = {}", show(&b[k])));
                }
            }
            Ok(())
        }
        _ if exp == act => Ok(()),
        _ => Err(format!("{path}: expected {}, got {}", show(exp), show(act))),
    }
}
