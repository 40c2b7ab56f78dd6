// Strings handed to the engine arrive as the same UTF-8 whatever their length and content: the
// glue's string passing (patched by scripts/build.mjs, nativeStringPassing: strings of more than
// 64 UTF-16 units go through TextEncoder.encodeInto into an allocation of their length, grown
// when they do not fit) against Node's own UTF-8 encoding (lone surrogates → U+FFFD), through
// SessionTree.fromJsonl → toJsonl and the message read back, on the Node and the web entries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as node from '../../pkg/index.node.mjs';
import * as web from '../../pkg/index.web.mjs';
import { seededRandom } from './support/random.mjs';

const HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}';

/** Pieces of 1, 2, 3 and 4 UTF-8 bytes, and lone surrogates (no quote, backslash or control). */
const PIECES = ['a', 'Z', ' ', 'é', 'ß', '中', '€', '😀', '𝄞', '\ud800', '\udfff'];

/** @param {string} content */
const line = (content) =>
  `{"type":"message","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"${content}","timestamp":1}}`;

/** What JavaScript's own UTF-8 encoding makes of `s` (a lone surrogate becomes U+FFFD). */
const utf8 = (/** @type {string} */ s) => Buffer.from(s, 'utf8').toString('utf8');

/** The cases: around the 64-unit threshold and the point where a text outgrows its length in bytes. */
function cases() {
  const out = [
    '',
    'a'.repeat(64),
    'é'.repeat(64),
    '😀'.repeat(40),
    `${'a'.repeat(200)}\ud800`,
    `\udc00${'a'.repeat(200)}`,
  ];
  const random = seededRandom(20261202);
  for (let k = 0; k < 400; k++) {
    const n = Math.floor(random() * (k < 300 ? 120 : 4000));
    // Mostly ASCII with some multi-byte pieces, or mostly multi-byte: both split points occur.
    const ascii = random() < 0.5 ? 0.97 : 0.3;
    let s = '';
    for (let i = 0; i < n; i++) {
      s += random() < ascii ? 'x' : PIECES[Math.floor(random() * PIECES.length)];
    }
    out.push(s);
  }
  out.push(`${'a'.repeat(300_000)}😀${'中'.repeat(100_000)}\ud800`);
  return out;
}

/**
 * @param {any} api
 * @param {string} label
 */
function check(api, label) {
  for (const [k, content] of cases().entries()) {
    const text = `${HEADER}\n${line(content)}\n`;
    const tree = api.SessionTree.fromJsonl(text);
    try {
      assert.equal(tree.toJsonl(), utf8(text), `${label}: case ${k} (${content.length} units) toJsonl`);
      const [message] = tree.buildSessionContext().messages;
      assert.equal(message.content, utf8(content), `${label}: case ${k} message content`);
    } finally {
      tree.free();
    }
  }
}

test('the Node entry receives every string as its UTF-8', () => {
  check(node, 'node');
});

test('the web entry receives every string as its UTF-8', async () => {
  await web.init();
  check(web, 'web');
});
