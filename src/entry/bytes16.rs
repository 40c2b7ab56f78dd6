//! Sixteen bytes of a JSON string literal at a time, for the scanner's string loop
//! (`Scanner::string` in `scan.rs`): which bytes end a run of plain content, which are not
//! ASCII, and how many UTF-16 units a run of UTF-8 bytes makes.
//!
//! One implementation per instruction set, the same answers everywhere: WebAssembly SIMD
//! (`simd128`, enabled for the wasm build in `.cargo/config.toml`), SSE2 on x86-64 (always
//! there), and a byte loop elsewhere. The tests below check each against the byte loop.

/// What one chunk holds: bit `k` of a mask describes byte `k` of the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Chunk {
    /// Bytes that end plain string content: `"`, `\`, and control characters (< 0x20).
    pub special: u32,
    /// Bytes that are not ASCII (≥ 0x80).
    pub high: u32,
}

/// The masks of the low `n` bits (`n` ≤ 16).
#[inline(always)]
pub(super) fn low_bits(n: usize) -> u32 {
    (1u32 << n) - 1
}

/// UTF-16 units of the first `n` bytes of `chunk` (`n` ≤ 16), read as UTF-8: one per byte that
/// is not a continuation byte (`10xxxxxx`), plus one per lead byte of a 4-byte sequence
/// (`11110xxx`, a surrogate pair). Validity is checked elsewhere.
#[inline(always)]
pub(super) fn utf16_units(chunk: &[u8; 16], n: usize) -> u64 {
    let (cont, lead4) = imp::utf8_masks(chunk);
    let m = low_bits(n);
    n as u64 - u64::from((cont & m).count_ones()) + u64::from((lead4 & m).count_ones())
}

pub(super) use imp::classify;

/// The chunks of `bytes` (sixteen bytes each) and the bytes left after them.
fn chunks16(bytes: &[u8]) -> (impl Iterator<Item = &[u8; 16]>, &[u8]) {
    let chunks = bytes.chunks_exact(16);
    let rest = chunks.remainder();
    (chunks.filter_map(|c| <&[u8; 16]>::try_from(c).ok()), rest)
}

/// Where the first byte of `bytes` lies that a JSON string literal cannot hold as it is (`"`,
/// `\`, a control character below 0x20), sixteen bytes at a time: what
/// [`crate::js::push_json_string`] escapes.
pub(crate) fn first_special(bytes: &[u8]) -> Option<usize> {
    let (chunks, rest) = chunks16(bytes);
    let mut at = 0;
    for chunk in chunks {
        let special = classify(chunk).special;
        if special != 0 {
            return Some(at + special.trailing_zeros() as usize);
        }
        at += 16;
    }
    rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).map(|k| at + k)
}

/// UTF-16 units of `bytes` read as UTF-8 (validity is checked elsewhere), sixteen bytes at a
/// time: [`crate::js::utf16_len`].
pub(crate) fn utf16_len(bytes: &[u8]) -> u64 {
    let (chunks, rest) = chunks16(bytes);
    let whole: u64 = chunks.map(|chunk| utf16_units(chunk, 16)).sum();
    whole + rest.iter().map(|&b| u64::from(b & 0xC0 != 0x80) + u64::from(b >= 0xF0)).sum::<u64>()
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod imp {
    use super::Chunk;
    use core::arch::wasm32::{
        i8x16_eq, i8x16_lt, i8x16_splat, u8x16_bitmask, u8x16_ge, u8x16_lt, u8x16_splat, v128, v128_load, v128_or,
    };

    #[inline(always)]
    fn load(chunk: &[u8; 16]) -> v128 {
        // SAFETY: `chunk` is 16 readable bytes; `v128.load` has no alignment requirement.
        unsafe { v128_load(chunk.as_ptr().cast()) }
    }

    /// See [`Chunk`].
    #[inline(always)]
    pub(in super::super) fn classify(chunk: &[u8; 16]) -> Chunk {
        let v = load(chunk);
        let quote = i8x16_eq(v, u8x16_splat(b'"'));
        let backslash = i8x16_eq(v, u8x16_splat(b'\\'));
        let control = u8x16_lt(v, u8x16_splat(0x20));
        Chunk {
            special: u32::from(u8x16_bitmask(v128_or(v128_or(quote, backslash), control))),
            high: u32::from(u8x16_bitmask(v)),
        }
    }

    /// (continuation bytes, lead bytes of 4-byte sequences).
    #[inline(always)]
    pub(super) fn utf8_masks(chunk: &[u8; 16]) -> (u32, u32) {
        let v = load(chunk);
        // 0x80..=0xBF are the signed bytes below -64 (0xC0).
        let cont = u32::from(u8x16_bitmask(i8x16_lt(v, i8x16_splat(-64))));
        let lead4 = u32::from(u8x16_bitmask(u8x16_ge(v, u8x16_splat(0xF0))));
        (cont, lead4)
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod imp {
    use super::Chunk;
    use core::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_min_epu8, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8,
    };

    // SAFETY (every `unsafe` block below): SSE2 is part of the x86-64 baseline (this module is
    // compiled only where `target_feature = "sse2"` holds), and each load reads the 16 bytes of
    // a `&[u8; 16]` (`loadu` has no alignment requirement).

    #[inline(always)]
    fn load(chunk: &[u8; 16]) -> __m128i {
        unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) }
    }

    /// The high bit of each byte as a 16-bit mask.
    #[inline(always)]
    fn bitmask(v: __m128i) -> u32 {
        (unsafe { _mm_movemask_epi8(v) } as u32) & 0xFFFF
    }

    /// See [`Chunk`].
    #[inline(always)]
    pub(in super::super) fn classify(chunk: &[u8; 16]) -> Chunk {
        let v = load(chunk);
        let special = unsafe {
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            // Unsigned `v <= 0x1F`: the unsigned minimum with 0x1F is `v` itself.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
            _mm_or_si128(_mm_or_si128(quote, backslash), control)
        };
        Chunk { special: bitmask(special), high: bitmask(v) }
    }

    /// (continuation bytes, lead bytes of 4-byte sequences).
    #[inline(always)]
    pub(super) fn utf8_masks(chunk: &[u8; 16]) -> (u32, u32) {
        let v = load(chunk);
        // 0x80..=0xBF are the signed bytes below -64 (0xC0).
        let cont = bitmask(unsafe { _mm_cmplt_epi8(v, _mm_set1_epi8(-64)) });
        // Unsigned `v >= 0xF0`: the unsigned maximum with 0xF0 is `v` itself.
        let lead4 = bitmask(unsafe { _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0xF0u8 as i8)), v) });
        (cont, lead4)
    }
}

#[cfg(not(any(
    all(target_arch = "wasm32", target_feature = "simd128"),
    all(target_arch = "x86_64", target_feature = "sse2")
)))]
mod imp {
    pub(in super::super) use super::portable::classify;
    pub(super) use super::portable::utf8_masks;
}

/// The byte loop: the reference the vector versions are tested against, and the version used
/// where there is none.
#[cfg_attr(
    any(all(target_arch = "wasm32", target_feature = "simd128"), all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code)
)]
mod portable {
    use super::Chunk;

    /// The mask of the bytes for which `f` holds.
    fn mask(chunk: &[u8; 16], f: impl Fn(u8) -> bool) -> u32 {
        chunk.iter().enumerate().fold(0, |m, (k, &c)| if f(c) { m | (1 << k) } else { m })
    }

    /// See [`Chunk`].
    pub(in super::super) fn classify(chunk: &[u8; 16]) -> Chunk {
        Chunk { special: mask(chunk, |c| c == b'"' || c == b'\\' || c < 0x20), high: mask(chunk, |c| c >= 0x80) }
    }

    /// (continuation bytes, lead bytes of 4-byte sequences).
    pub(super) fn utf8_masks(chunk: &[u8; 16]) -> (u32, u32) {
        (mask(chunk, |c| c & 0xC0 == 0x80), mask(chunk, |c| c >= 0xF0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bytes16() -> impl Strategy<Value = [u8; 16]> {
        // Mostly the bytes that matter, sometimes any byte.
        let byte = prop_oneof![
            Just(b'"'),
            Just(b'\\'),
            Just(0x00u8),
            Just(0x1F),
            Just(0x20),
            Just(b'a'),
            Just(0x7F),
            Just(0x80),
            Just(0xBF),
            Just(0xC0),
            Just(0xEF),
            Just(0xF0),
            Just(0xFF),
            any::<u8>(),
        ];
        proptest::collection::vec(byte, 16).prop_map(|v| <[u8; 16]>::try_from(v).unwrap())
    }

    proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::test_cases(256)))]
        #[test]
        fn vector_masks_match_the_byte_loop(chunk in bytes16(), n in 0usize..=16) {
            prop_assert_eq!(classify(&chunk), portable::classify(&chunk));
            prop_assert_eq!(imp::utf8_masks(&chunk), portable::utf8_masks(&chunk));
            let (cont, lead4) = portable::utf8_masks(&chunk);
            let m = low_bits(n);
            prop_assert_eq!(utf16_units(&chunk, n), n as u64 - u64::from((cont & m).count_ones()) + u64::from((lead4 & m).count_ones()));
        }
    }

    proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::test_cases(256)))]
        /// Over texts of any length (whole chunks and a rest): the first special byte is the
        /// byte loop's, and the UTF-16 length is what the text encodes to.
        #[test]
        fn whole_texts_match_the_byte_loop(s in "([\\x00-\\x20\"\\\\]|[a-z]{1,20}|\\PC){0,30}") {
            let b = s.as_bytes();
            prop_assert_eq!(first_special(b), b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20));
            prop_assert_eq!(utf16_len(b), s.encode_utf16().count() as u64);
        }
    }

    #[test]
    fn utf16_units_of_utf8_text() {
        for s in ["plain ascii text", "é and 設 and 😀 ok", "😀😀😀😀", "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}"]
        {
            let b = s.as_bytes();
            let mut chunk = [b' '; 16];
            let n = b.len().min(16);
            chunk[..n].copy_from_slice(&b[..n]);
            // Only whole characters in the first n bytes.
            let whole = (0..=n).rev().find(|&k| s.is_char_boundary(k)).unwrap();
            assert_eq!(utf16_units(&chunk, whole), s[..whole].encode_utf16().count() as u64, "{s:?}");
        }
    }
}
