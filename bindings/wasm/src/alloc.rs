//! The module's allocator: the standard one (dlmalloc over the wasm memory) with its memory
//! grown ahead in large steps. dlmalloc grows the memory by what one allocation needs (64 KiB
//! granules), and each `memory.grow` costs 0.15–0.6 ms in V8 on the machines measured
//! (docs/BENCHMARKS.md, "Memory growth"), whatever the step: a call that allocates 200 MB in
//! small pieces (the pure functions' first call on a long session, a `fromJsonl`) grew it
//! ~3,000 times. Here, whenever an allocation has grown the memory, a block of a quarter of the
//! memory's new size (at least 1 MiB) is allocated and freed at once: dlmalloc keeps it as free
//! space at the top of its heap (on wasm it never returns memory) and serves the next
//! allocations from it, so the memory grows a bounded number of times per doubling. Pages of
//! that block that nothing writes are never touched, so they cost no resident memory; when the
//! memory cannot grow that far (its 4 GiB limit), nothing is reserved and the allocation that
//! grew it is unaffected.

use std::alloc::{GlobalAlloc, Layout, System};
use std::arch::wasm32::memory_size;

/// Bytes of one wasm page.
const PAGE: usize = 65536;

/// [`System`] with the memory grown ahead (see the module doc).
pub struct GrowAhead;

impl GrowAhead {
    /// After an allocation that grew the memory from `before` pages: reserves a quarter of the
    /// new size (at least 1 MiB) by one allocation freed at once.
    fn reserve_if_grown(before: usize) {
        let now = memory_size(0);
        if now == before {
            return;
        }
        let bytes = (now.saturating_mul(PAGE) / 4).max(1 << 20);
        if let Ok(layout) = Layout::from_size_align(bytes, 1) {
            // SAFETY: `layout` has a non-zero size; the block is freed with the same layout at
            // once and never read or written.
            unsafe {
                let block = System.alloc(layout);
                if !block.is_null() {
                    System.dealloc(block, layout);
                }
            }
        }
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged and returns
// what it returned; the reservation in between allocates and frees a block of its own through
// `System` (not through this allocator), so it neither re-enters this allocator nor touches
// the caller's block. wasm32 here is single-threaded.
unsafe impl GlobalAlloc for GrowAhead {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let before = memory_size(0);
        // SAFETY: forwarded as received (the caller upholds `GlobalAlloc::alloc`'s contract).
        let p = unsafe { System.alloc(layout) };
        Self::reserve_if_grown(before);
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let before = memory_size(0);
        // SAFETY: as in `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        Self::reserve_if_grown(before);
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let before = memory_size(0);
        // SAFETY: forwarded as received.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        Self::reserve_if_grown(before);
        p
    }
}

/// The allocator of the module.
#[global_allocator]
static ALLOCATOR: GrowAhead = GrowAhead;
