// Lossless storage through the real exports (SPEC §13.3): every line of a file survives
// parseSession → serializeSession and SessionTree.fromJsonl/fromBytes → toJsonl in its place,
// and the three load paths agree on a few hundred mutated inputs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as sc from '../../pkg/index.node.mjs';
import { seededRandom } from './support/random.mjs';

/** @type {any} */
const HEADER = { type: 'session', version: 3, id: 's1', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/w' };

/**
 * @param {string} id
 * @param {string | null} parentId
 * @param {string} text
 */
function message(id, parentId, text) {
  /** @type {any} */
  const entry = {
    type: 'message',
    id,
    parentId,
    timestamp: '2025-01-01T00:00:01.000Z',
    message: { role: 'user', content: text, timestamp: 1 },
  };
  return entry;
}

/** @param {unknown[]} records */
const jsonl = (records) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

/**
 * The text a lossless save writes: a BOM dropped, every line ended as the first line is (CRLF
 * or LF; a run of CRs before an LF is one line end). @param {string} text
 */
function normalized(text) {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const first = body.indexOf('\n');
  const end = first > 0 && body[first - 1] === '\r' ? '\r\n' : '\n';
  const parts = body.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts.map((p) => `${p.replace(/\r+$/, '')}${end}`).join('');
}

/** What a handle holds: ids, parents, types and lines of its entries, in file order. @param {any} tree */
const treeView = (tree) =>
  tree.getTree().map((/** @type {any} */ n) => ({ id: n.id, parentId: n.parentId, type: n.type }));

/** The same view of parseSession's entries. @param {any[]} entries */
const entriesView = (entries) =>
  entries.map((e) => ({
    id: typeof e?.id === 'string' ? e.id : null,
    parentId: typeof e?.parentId === 'string' ? e.parentId : null,
    type: typeof e?.type === 'string' ? e.type : '',
  }));

/**
 * Loads `bytes` through parseSession, fromJsonl and fromBytes; asserts they agree.
 * @param {Uint8Array} bytes
 * @param {string} label
 */
function agree(bytes, label) {
  const text = new TextDecoder().decode(bytes);
  const parsed = sc.parseSession(text);
  const fromText = sc.SessionTree.fromJsonl(text);
  const fromBytes = sc.SessionTree.fromBytes(bytes);
  try {
    assert.deepEqual(fromText.loadErrors, parsed.errors, `${label}: fromJsonl vs parseSession errors`);
    assert.deepEqual(fromBytes.loadErrors, parsed.errors, `${label}: fromBytes vs parseSession errors`);
    assert.deepEqual(fromText.header, parsed.header, `${label}: header`);
    assert.deepEqual(fromBytes.header, parsed.header, `${label}: header (bytes)`);
    if (!parsed.migrated) {
      // (a v1 migration draws random ids)
      assert.deepEqual(treeView(fromText), entriesView(parsed.entries), `${label}: entries`);
      assert.deepEqual(treeView(fromBytes), entriesView(parsed.entries), `${label}: entries (bytes)`);
      assert.equal(fromBytes.toJsonl(), fromText.toJsonl(), `${label}: saved text`);
      const saved = fromBytes.toBytes();
      assert.ok(saved instanceof Uint8Array, `${label}: toBytes gives a Uint8Array`);
      assert.deepEqual(saved, new TextEncoder().encode(fromBytes.toJsonl()), `${label}: toBytes is toJsonl's UTF-8`);
      const glued = parsed.errors.some((e) => /two or more/.test(e.message));
      if (!glued) assert.equal(fromText.toJsonl(), normalized(text), `${label}: nothing lost`);
      // the pure round trip keeps every opaque line and every record
      const again = sc.parseSession(sc.serializeSession(parsed));
      // (compared as JSON: `1e400` reads as Infinity, which JSON.stringify writes as null)
      assert.equal(JSON.stringify(again.entries), JSON.stringify(parsed.entries), `${label}: serializeSession entries`);
      assert.deepEqual(again.header, parsed.header, `${label}: serializeSession header`);
      assert.deepEqual(
        again.opaqueLines.map((o) => o.text),
        parsed.opaqueLines.map((o) => o.text),
        `${label}: serializeSession opaque lines`,
      );
    }
  } finally {
    fromText.free();
    fromBytes.free();
  }
  return parsed;
}

const BASE = new TextEncoder().encode(
  jsonl([
    HEADER,
    message('a', null, 'h\u00e9llo "q" \\ {x}'),
    message('b', 'a', 'second'),
    { type: 'custom', id: 'c', parentId: 'b', data: { deep: [[[1, 2], { k: null }]], n: -1.5e3 } },
    message('d', 'c', 'fourth \u{1F600}'),
  ]),
);
const NOISE = [0x0a, 0x7b, 0x7d, 0x22, 0x2c, 0x5c, 0x0d, 0x20, 0xff, 0xc3, 0x31, 0x5b];

/** @param {Uint8Array} input @param {() => number} rand */
function mutate(input, rand) {
  let bytes = Array.from(input);
  const at = (/** @type {number} */ n) => Math.floor(rand() * n);
  const steps = 1 + at(4);
  for (let s = 0; s < steps; s++) {
    const newlines = bytes.flatMap((b, i) => (b === 0x0a ? [i] : []));
    switch (at(5)) {
      case 0:
        if (bytes.length) bytes.splice(at(bytes.length), 1 + at(5));
        break;
      case 1:
        bytes.splice(at(bytes.length + 1), 0, ...Array.from({ length: 1 + at(3) }, () => NOISE[at(NOISE.length)]));
        break;
      case 2:
        if (newlines.length) bytes.splice(newlines[at(newlines.length)], 1);
        break;
      case 3: {
        if (!newlines.length) break;
        const k = at(newlines.length);
        const start = k === 0 ? 0 : newlines[k - 1] + 1;
        bytes.splice(start, 0, ...bytes.slice(start, newlines[k] + 1));
        break;
      }
      default:
        bytes = bytes.slice(0, at(bytes.length + 1));
    }
  }
  return new Uint8Array(bytes);
}

describe('lossless storage (SPEC §13.3)', () => {
  test('the three load paths agree on 300 mutated sessions and lose nothing', () => {
    const rand = seededRandom(20261201);
    let withErrors = 0;
    for (let i = 0; i < 300; i++) {
      const bytes = mutate(BASE, rand);
      if (agree(bytes, `case ${i}`).errors.length > 0) withErrors++;
    }
    assert.ok(withErrors > 100, `most mutations damage something (${withErrors} of 300)`);
  });

  test('fromBytes of a buffer larger than wasm memory can hold is E_INVALID_ARGUMENT, not a panic', () => {
    // 2 GiB + 16 bytes: more than one allocation of the module can be (Buffer.alloc maps zero
    // pages, so this takes no real memory; the engine refuses it before copying anything).
    // 4 GiB: more than a u32 length holds (it wrapped to 0, and the copy threw a RangeError).
    for (const size of [2 ** 31 + 16, 2 ** 32]) {
      const big = Buffer.alloc(size);
      assert.throws(
        () => sc.SessionTree.fromBytes(big),
        (/** @type {any} */ e) =>
          e.code === 'E_INVALID_ARGUMENT' &&
          e.message.startsWith(
            `invalid argument \`bytes\`: a buffer of ${size} bytes does not fit in WebAssembly memory`,
          ),
        String(size),
      );
    }
    // The module still works.
    const tree = sc.SessionTree.fromBytes(new TextEncoder().encode(''));
    assert.equal(tree.entryCount, 0);
    tree.free();
  });

  test('a truncated line survives parseSession → serializeSession and fromJsonl → toJsonl', () => {
    const truncated = JSON.stringify(message('x', 'a', 'cut here')).slice(0, 40);
    const text = `${jsonl([HEADER, message('a', null, 'one')])}${truncated}\n${jsonl([message('b', 'a', 'two')])}`;
    const parsed = sc.parseSession(text);
    assert.deepEqual(
      parsed.errors.map((e) => [e.line, e.code]),
      [[3, 'E_PARSE']],
    );
    assert.deepEqual(parsed.opaqueLines, [{ line: 3, position: 2, text: truncated }]);
    assert.equal(sc.serializeSession(parsed), text);
    const tree = sc.SessionTree.fromJsonl(text);
    assert.equal(tree.toJsonl(), text);
    // appended entries go after the kept line, which stays in its place
    tree.appendEntry(message('c', 'b', 'three'));
    assert.equal(tree.toJsonl(), `${text + JSON.stringify(message('c', 'b', 'three'))}\n`);
    assert.deepEqual(tree.toBytes(), new TextEncoder().encode(tree.toJsonl()));
    tree.free();
  });

  test('a CRLF file is saved with CRLF: unchanged lines byte for byte, appended and pruned lines too', () => {
    const big = 'line of output\n'.repeat(3000);
    const records = [
      HEADER,
      message('a', null, 'read it'),
      {
        type: 'message',
        id: 'b',
        parentId: 'a',
        timestamp: '2025-01-01T00:00:02.000Z',
        message: {
          role: 'assistant',
          content: [{ type: 'toolCall', id: 'c1', name: 'bash', arguments: { command: 'ls' } }],
        },
      },
      {
        type: 'message',
        id: 'c',
        parentId: 'b',
        timestamp: '2025-01-01T00:00:03.000Z',
        message: { role: 'toolResult', toolCallId: 'c1', toolName: 'bash', content: [{ type: 'text', text: big }] },
      },
    ];
    const lines = records.map((r) => JSON.stringify(r));
    const text = lines.map((l) => `${l}\r\n`).join('');
    const tree = sc.SessionTree.fromBytes(new TextEncoder().encode(text));
    assert.deepEqual(tree.loadErrors, []);
    assert.equal(tree.toJsonl(), text, 'saved as loaded, CRLF kept');
    const added = message('d', 'c', 'next');
    tree.appendEntry(added);
    const withAdded = `${text}${JSON.stringify(added)}\r\n`;
    assert.equal(tree.toJsonl(), withAdded, 'the appended line ends with CRLF');
    const pruned = tree.pruneToolOutputs({ protectTokens: 0, minimumSavings: 0 });
    assert.equal(pruned.prunedCount, 1);
    const saved = tree.toJsonl().split('\r\n');
    assert.deepEqual(saved.slice(0, 3), lines.slice(0, 3), 'lines before the pruned one are unchanged');
    assert.notEqual(saved[3], lines[3]);
    assert.equal(JSON.parse(saved[3]).id, 'c');
    assert.equal(saved[4], JSON.stringify(added));
    assert.equal(saved[5], '', 'every line ends with CRLF, none with a bare LF');
    assert.equal(saved.length, 6);
    assert.ok(!tree.toJsonl().replaceAll('\r\n', '').includes('\n'));
    tree.free();
    // A file whose first line ends with LF is saved with LF.
    const lf = sc.SessionTree.fromBytes(new TextEncoder().encode(`${lines[0]}\n${lines[1]}\r\n`));
    assert.equal(lf.toJsonl(), `${lines[0]}\n${lines[1]}\n`);
    lf.free();
  });

  test('glued records are split into their entries with a warning', () => {
    const text = `${JSON.stringify(HEADER)}\n${JSON.stringify(message('a', null, 'x'))}${JSON.stringify(message('b', 'a', 'y'))}\n`;
    const parsed = agree(new TextEncoder().encode(text), 'glued');
    assert.deepEqual(
      parsed.entries.map((e) => e.id),
      ['a', 'b'],
    );
    assert.equal(parsed.errors.length, 1);
    assert.match(parsed.errors[0].message, /line 2: two or more JSON records on one line: split into 2 entries/);
  });

  test('a truncated header keeps the entries after it', () => {
    const text = `${JSON.stringify(HEADER).slice(0, 25)}\n${jsonl([message('a', null, 'x'), message('b', 'a', 'y')])}`;
    const parsed = agree(new TextEncoder().encode(text), 'truncated header');
    assert.equal(parsed.header, null);
    assert.deepEqual(
      parsed.entries.map((e) => e.id),
      ['a', 'b'],
    );
    assert.deepEqual(
      parsed.errors.map((e) => [e.line, e.code]),
      [
        [1, 'E_PARSE'],
        [1, 'E_HEADER'],
      ],
    );
    const tree = sc.SessionTree.fromJsonl(text);
    assert.equal(tree.entryCount, 2);
    assert.equal(tree.leafId, 'b');
    assert.equal(tree.toJsonl(), text);
    tree.free();
  });

  test('deep nesting and numbers beyond the double range load on every path', () => {
    const deep = (/** @type {number} */ d, /** @type {string} */ id) =>
      `{"type":"custom","id":"${id}","parentId":null,"data":${'['.repeat(d)}0${']'.repeat(d)}}`;
    const big = '{"type":"custom","id":"big","parentId":null,"data":{"n":1e400}}';
    const text = `${JSON.stringify(HEADER)}\n${deep(128, 'd128')}\n${deep(1000, 'd1000')}\n${big}\n`;
    const parsed = agree(new TextEncoder().encode(text), 'deep');
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(
      parsed.entries.map((e) => e.id),
      ['d128', 'd1000', 'big'],
    );
    assert.deepEqual(parsed.entries[2], JSON.parse(big), 'read as JSON.parse reads it (Infinity)');
    const tree = sc.SessionTree.fromJsonl(text);
    assert.equal(tree.toJsonl(), text, 'kept as written');
    tree.free();
  });

  test('invalid UTF-8 is replaced by U+FFFD, as TextDecoder does', () => {
    const head = new TextEncoder().encode(
      `${JSON.stringify(HEADER)}\n{"type":"custom","id":"u","parentId":null,"t":"a`,
    );
    const tail = new TextEncoder().encode('b"}\n');
    const bytes = new Uint8Array([...head, 0xff, 0xc3, ...tail]);
    const parsed = agree(bytes, 'utf8');
    assert.deepEqual(parsed.errors, []);
    assert.equal(parsed.entries[0].t, 'a\uFFFD\uFFFDb');
    const tree = sc.SessionTree.fromBytes(bytes);
    assert.equal(tree.getEntry('u')?.t, 'a\uFFFD\uFFFDb');
    tree.free();
  });

  test('serializeSession refuses an opaque line with a line end', () => {
    assert.throws(
      () => sc.serializeSession({ header: HEADER, entries: [], opaqueLines: [{ line: 2, position: 1, text: 'a\nb' }] }),
      (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT',
    );
    assert.equal(
      sc.serializeSession({ header: HEADER, entries: [], opaqueLines: [{ line: 0, position: 0, text: 'before' }] }),
      `before\n${JSON.stringify(HEADER)}\n`,
    );
  });
});
