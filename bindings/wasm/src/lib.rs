//! The WebAssembly binding layer: converts values and errors, holds no compaction logic.
//! Every export names the core function and SPEC section it forwards to.
//!
//! Off `wasm32` the crate is empty (the core crate is what native hosts use).

#![cfg(target_arch = "wasm32")]

mod api;
mod convert;
mod host;
mod session;
mod summarize;

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

/// The crate version, for diagnostics.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
