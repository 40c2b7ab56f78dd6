//! The WebAssembly binding layer: converts values and errors, holds no compaction logic.
//! Every export names the core function and SPEC section it forwards to.

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

/// The crate version, for diagnostics.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
