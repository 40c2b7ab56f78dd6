//! Conformance runner: every vector under `$CONFORMANCE_DIR` (default `tests/conformance`)
//! through the Rust API. Prints each failure by name and a last line `N passed, M failed,
//! K skipped`. Vectors listed in `deviations.json` (SPEC §12, last paragraph) are compared
//! against their changed expected value and printed as `DEVIATION name [op] §item: pointer: old
//! → new`. See tests/conformance/README.md for the vector format.

mod runner;

#[test]
fn conformance() {
    let dir = std::env::var("CONFORMANCE_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conformance").to_string());
    let report = runner::run_all(std::path::Path::new(&dir));
    for d in &report.deviations {
        println!("DEVIATION {d}");
    }
    if !report.deviations.is_empty() {
        println!("{} changes of known deviations applied (deviations.json)", report.deviations.len());
    }
    for f in &report.failures {
        println!("FAIL {f}");
    }
    for (op, n) in &report.skipped_ops {
        println!("skipped op {op}: {n} vectors (belongs to the summarization pipeline)");
    }
    println!("{} passed, {} failed, {} skipped", report.passed, report.failures.len(), report.skipped);
    assert!(report.passed > 0, "no vectors found under {dir}");
    assert!(report.failures.is_empty(), "{} conformance vectors failed", report.failures.len());
}
