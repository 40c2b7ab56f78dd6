//! The WebAssembly binding layer: converts values and errors, holds no compaction logic.
//! Every export names the core function and SPEC section it forwards to.
//!
//! Off `wasm32` the crate is empty (the core crate is what native hosts use).

#![cfg(target_arch = "wasm32")]

mod alloc;
mod api;
mod convert;
mod host;
mod messages;
mod options;
mod reader;
mod safe;
mod session;
mod summarize;
mod tokens;

use wasm_bindgen::prelude::*;

/// Runs once when the module is instantiated (on `require`/`import` of the Node build, inside
/// `init()` of the web build): routes Rust panics to `console.error` with their message, so a
/// panic (always a bug) is diagnosable instead of an opaque `unreachable` trap.
#[wasm_bindgen(start, private)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The TypeScript declaration of `JsonObject` (the structs' flattened `extra` refers to it by
/// name, so each interface is declared as `interface X extends JsonObject { … }`).
#[wasm_bindgen(typescript_custom_section)]
const TS_JSON_OBJECT: &str = r#"
/**
 * A JSON object. Every entry, message and block type extends it: fields the model does not
 * know are allowed and are kept unchanged through a load and save.
 */
export type JsonObject = Record<string, unknown>;
"#;

/// The codes of the `ErrorCode` union: every [`session_compaction::Error::CODES`] entry, then
/// the four codes the package entries throw themselves: `E_NOT_INITIALIZED` (the web entry before
/// `init()`), `E_FREED` (a `SessionTree` used after `free()`), `E_WASM_NOT_FOUND` (the web
/// entry's `init()` could not get the `.wasm` file) and `E_FILE` (`SessionTree.fromFile` could
/// not read the file, or the runtime has no file system).
#[allow(dead_code)] // read by the custom section below, which rustc does not see
const ERROR_CODES: [&str; session_compaction::Error::CODES.len() + 4] = {
    let mut all = [""; session_compaction::Error::CODES.len() + 4];
    let mut i = 0;
    while i < session_compaction::Error::CODES.len() {
        all[i] = session_compaction::Error::CODES[i];
        i += 1;
    }
    all[i] = "E_NOT_INITIALIZED";
    all[i + 1] = "E_FREED";
    all[i + 2] = "E_WASM_NOT_FOUND";
    all[i + 3] = "E_FILE";
    all
};

#[allow(dead_code)] // read by the custom section below, which rustc does not see
const TS_ERROR_CODE_HEAD: &str = "\n/** Stable error codes carried by `Error.code` (generated from the Rust error codes). */\nexport type ErrorCode =";

/// Length of the `ErrorCode` declaration: the head, ` | "CODE"` per code, `;\n`.
#[allow(dead_code)] // read by the custom section below, which rustc does not see
const fn error_code_ts_len() -> usize {
    let mut n = TS_ERROR_CODE_HEAD.len() + 2;
    let mut i = 0;
    while i < ERROR_CODES.len() {
        n += ERROR_CODES[i].len() + 5;
        i += 1;
    }
    n
}

/// Copies `part` into `out` at `at`; returns the end.
#[allow(dead_code)] // read by the custom section below, which rustc does not see
const fn put(mut out: [u8; error_code_ts_len()], at: usize, part: &str) -> ([u8; error_code_ts_len()], usize) {
    let bytes = part.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        out[at + i] = bytes[i];
        i += 1;
    }
    (out, at + bytes.len())
}

/// The bytes of the `ErrorCode` declaration, built at compile time.
#[allow(dead_code)] // read by the custom section below, which rustc does not see
const ERROR_CODE_TS_BYTES: [u8; error_code_ts_len()] = {
    let (mut out, mut at) = put([0; error_code_ts_len()], 0, TS_ERROR_CODE_HEAD);
    let mut i = 0;
    while i < ERROR_CODES.len() {
        (out, at) = put(out, at, " | \"");
        (out, at) = put(out, at, ERROR_CODES[i]);
        (out, at) = put(out, at, "\"");
        i += 1;
    }
    (out, _) = put(out, at, ";\n");
    out
};

/// The TypeScript `ErrorCode` union, generated from the Rust codes.
#[wasm_bindgen(typescript_custom_section)]
const TS_ERROR_CODE: &str = match std::str::from_utf8(&ERROR_CODE_TS_BYTES) {
    Ok(text) => text,
    Err(_) => panic!("the ErrorCode declaration is not UTF-8"),
};

/// The crate version, for diagnostics.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
