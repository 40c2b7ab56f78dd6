// Whether a file is binary data rather than the text of a pi session (JSON lines): the check the
// CLI (bin/report.mjs) runs before loading, and the web demo too (web-demo/js/engine-worker.js
// imports this file from the package), so both refuse the same files with the same words. No
// imports: it runs in Node.js and in a browser.

/** Magic numbers of binary formats people mistake for a session (compressed copies, archives…). */
const MAGIC = [
  { bytes: [0x1f, 0x8b], what: 'gzip-compressed data (decompress it first, e.g. `gunzip -k`)' },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], what: 'zstd-compressed data (decompress it first, e.g. `zstd -d`)' },
  { bytes: [0x42, 0x5a, 0x68], what: 'bzip2-compressed data (decompress it first, e.g. `bunzip2 -k`)' },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: 'xz-compressed data (decompress it first, e.g. `unxz -k`)' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: 'a zip archive (extract the .jsonl from it first)' },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], what: 'an executable (ELF)' },
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'a PNG image' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image' },
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], what: 'a PDF document' },
  { bytes: [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], what: 'an SQLite database' },
  { bytes: [0xff, 0xfe], what: 'UTF-16 text (save it as UTF-8)' },
  { bytes: [0xfe, 0xff], what: 'UTF-16 text (save it as UTF-8)' },
];
/** How many leading bytes {@link binaryKind} looks at. */
const SNIFF_BYTES = 8 * 1024;

/**
 * What a file is when it is not text at all: a known binary format by its magic number, or
 * "binary data" when its first line holds a NUL byte (the JSON text of a session header never
 * does), or when its first 8 KiB hold one and the first line is not a JSON object (`{`, the
 * start of every session line). `null` for text. Only the start is looked at: a session whose
 * later lines were damaged (a crash can leave NUL bytes at the end) still loads, its bad lines
 * kept as they are. A session is a text file of JSON lines: the CLI refuses binary input
 * with one message instead of one "malformed JSON" warning per line.
 * @param {Uint8Array} data
 * @returns {string | null}
 */
export function binaryKind(data) {
  for (const m of MAGIC) {
    if (data.length >= m.bytes.length && m.bytes.every((b, i) => data[i] === b)) return m.what;
  }
  const head = data.subarray(0, SNIFF_BYTES);
  const end = head.indexOf(0x0a);
  const firstLine = end < 0 ? head : head.subarray(0, end);
  let nul = firstLine.indexOf(0);
  if (nul < 0) {
    let start = 0;
    while (start < firstLine.length && [0x20, 0x09, 0x0d, 0xef, 0xbb, 0xbf].includes(firstLine[start])) start++;
    if (firstLine[start] !== 0x7b) nul = head.indexOf(0);
  }
  return nul >= 0 ? `binary data (a NUL byte at offset ${nul.toLocaleString('en-US')})` : null;
}
