//! How many cases a property test runs: its own default for `npm test`, times
//! `SC_PROPTEST_SCALE` for a long run (`SC_PROPTEST_SCALE=40 cargo test --release`; see
//! docs/ARCHITECTURE.md, "Tests"). The unit tests use this file too (`crate::test_cases`, `src/lib.rs`).

/// `default` times `SC_PROPTEST_SCALE` (a whole number ≥ 1; absent or unreadable: 1).
pub fn cases(default: u32) -> u32 {
    let scale = std::env::var("SC_PROPTEST_SCALE").ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(1).max(1);
    default.saturating_mul(scale)
}
