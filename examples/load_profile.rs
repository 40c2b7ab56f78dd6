//! Loads one session file through `SessionTree::from_bytes` `n` times and prints, per load, its
//! time and the allocations it made (counted by a wrapper around the system allocator: calls of
//! `alloc` and `realloc`, and the bytes asked by `alloc`; what a `realloc` grows by is not in the
//! bytes). Small enough to run under `valgrind --tool=callgrind`; for line numbers build with
//! `CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=true`.
//!
//! `cargo run --release --example load_profile -- <session.jsonl> [n]`
use session_compaction::io::ParseOptions;
use session_compaction::session::SessionTree;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: load_profile <session.jsonl> [n]");
        std::process::exit(2);
    };
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    });
    for _ in 0..n {
        let input = bytes.clone();
        BIG.store(0, std::sync::atomic::Ordering::Relaxed);
        let a0 = allocations();
        let t = Instant::now();
        let loaded = SessionTree::from_bytes(input, &ParseOptions::default());
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let a1 = allocations();
        let (calls, bytes) = (a1.0 - a0.0, a1.1 - a0.1);
        let big = BIG.load(std::sync::atomic::Ordering::Relaxed);
        match loaded {
            Ok((tree, errors)) => println!(
                "{ms:.1} ms, {} entries, {} errors, {calls} allocations, {bytes} bytes allocated ({big} in blocks of 64 KiB or more)",
                tree.entry_count(),
                errors.len()
            ),
            Err(e) => println!("{e}"),
        }
    }
}

/// Counts the allocations of the whole process: `alloc` and `realloc` calls, `alloc` bytes.
struct Counting;

static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static BIG: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        if layout.size() >= 65536 {
            BIG.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        }
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (allocation calls, bytes) so far.
fn allocations() -> (usize, usize) {
    (CALLS.load(std::sync::atomic::Ordering::Relaxed), BYTES.load(std::sync::atomic::Ordering::Relaxed))
}
