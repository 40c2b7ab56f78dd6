// The JavaScript API of the built package (pkg/, Node entry): error codes, the SessionTree
// handle, the pure functions' contracts, the frozen defaults and disposal. Uses the real
// sessions in examples/sessions/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import * as sc from '../../pkg/index.node.mjs';

/** @typedef {import('../../pkg/index.node.mjs').SessionEntry} SessionEntry */
/** @typedef {import('../../pkg/index.node.mjs').MessageEntry} MessageEntry */
/** @typedef {import('../../pkg/index.node.mjs').ErrorCode} ErrorCode */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSIONS = join(ROOT, 'examples', 'sessions');
const WITH_COMPACTIONS = join(SESSIONS, 'pi-session-with-compactions.jsonl');
const LARGE = join(SESSIONS, 'pi-session-large.jsonl');
const V1 = join(SESSIONS, 'pi-session-v1-format.jsonl');
/** The real sessions: [file, format version]. */
const REAL = /** @type {const} */ ([
  [WITH_COMPACTIONS, 3],
  [LARGE, 3],
  [V1, 1],
]);

/** Every member of the `ErrorCode` union, read from the generated declarations. */
const ERROR_CODES = (() => {
  const dts = readFileSync(join(ROOT, 'pkg', 'node', 'session_compaction.d.ts'), 'utf8');
  const union = dts.match(/export type ErrorCode\s*=([^;]*);/);
  assert.ok(union, 'pkg/node/session_compaction.d.ts declares ErrorCode');
  return new Set([...union[1].matchAll(/"([A-Z_]+)"/g)].map((m) => m[1]));
})();

/**
 * An assert.throws validator: an Error with this code (a member of the ErrorCode union) whose
 * message matches `message`.
 * @param {ErrorCode} code
 * @param {RegExp} [message]
 */
function failsWith(code, message) {
  return (/** @type {unknown} */ error) => {
    assert.ok(error instanceof Error, `expected an Error, got ${error}`);
    const e = /** @type {import('../../pkg/index.node.mjs').SessionCompactionError} */ (error);
    assert.equal(e.code, code, `code of: ${e.message}`);
    assert.ok(ERROR_CODES.has(e.code), `${e.code} is in the ErrorCode union`);
    assert.equal(e.name, 'SessionCompactionError');
    if (message) assert.match(e.message, message);
    return true;
  };
}

const HEADER = { type: 'session', version: 3, id: 'sess-1', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/work' };

/**
 * A message entry.
 * @param {string} id
 * @param {string | null} parentId
 * @param {'user' | 'assistant'} role
 * @param {string} text
 * @returns {MessageEntry}
 */
function message(id, parentId, role, text) {
  const timestamp = '2025-01-01T00:00:01.000Z';
  if (role === 'user') {
    return { type: 'message', id, parentId, timestamp, message: { role, content: text, timestamp: 1735689601000 } };
  }
  return {
    type: 'message',
    id,
    parentId,
    timestamp,
    message: {
      role,
      content: [{ type: 'text', text }],
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: 'claude',
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
      stopReason: 'stop',
      timestamp: 1735689601000,
    },
  };
}

/** @param {unknown[]} values */
const jsonl = (values) => values.map((v) => `${JSON.stringify(v)}\n`).join('');

const SMALL = jsonl([HEADER, message('a', null, 'user', 'hello'), message('b', 'a', 'assistant', 'hi there')]);

/** @param {string} path */
const text = (path) => readFileSync(path, 'utf8');

/**
 * Deep-freezes a JSON-like value.
 * @template T
 * @param {T} value
 * @returns {T}
 */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------

describe('error codes', () => {
  const badLine3 = `${SMALL.replace(/\n$/, '')}\n{"type":"message", oops}\n`;

  test('E_PARSE: strict parseSession names the line', () => {
    assert.throws(() => sc.parseSession(badLine3, { strict: true }), failsWith('E_PARSE', /\bline 4\b/));
    assert.throws(() => sc.SessionTree.fromJsonl(badLine3, { strict: true }), failsWith('E_PARSE', /\bline 4\b/));
    assert.throws(
      () => sc.SessionTree.fromBytes(new TextEncoder().encode(badLine3), { strict: true }),
      failsWith('E_PARSE', /\bline 4\b/),
    );
  });

  test('E_PARSE: lenient parsing keeps the good lines and reports the bad one', () => {
    const r = sc.parseSession(badLine3);
    assert.equal(r.entries.length, 2);
    assert.deepEqual(
      r.errors.map((e) => [e.line, e.code]),
      [[4, 'E_PARSE']],
    );
    const tree = sc.SessionTree.fromJsonl(badLine3);
    assert.equal(tree.entryCount, 2);
    assert.deepEqual(
      tree.loadErrors.map((e) => [e.line, e.code]),
      [[4, 'E_PARSE']],
    );
    tree.free();
  });

  test('E_HEADER: the first record is not a session header', () => {
    const noHeader = jsonl([message('a', null, 'user', 'hello')]);
    assert.throws(() => sc.parseSession(noHeader, { strict: true }), failsWith('E_HEADER', /\bline 1\b/));
    const lenient = sc.parseSession(noHeader);
    assert.equal(lenient.header, null);
    assert.deepEqual(lenient.entries, []);
    assert.equal(lenient.errors[0]?.code, 'E_HEADER');
  });

  test('E_MISSING_FIELD: an entry without id (strict load, appendEntry)', () => {
    const noId = jsonl([
      HEADER,
      { type: 'message', parentId: null, timestamp: 'x', message: { role: 'user', content: 'x', timestamp: 1 } },
    ]);
    assert.throws(() => sc.parseSession(noId, { strict: true }), failsWith('E_MISSING_FIELD', /\bline 2\b.*\bid\b/));
    const tree = sc.SessionTree.fromJsonl(SMALL);
    const { id: _drop, ...withoutId } = message('c', 'b', 'user', 'x');
    assert.throws(
      () => tree.appendEntry(/** @type {SessionEntry} */ (withoutId)),
      failsWith('E_MISSING_FIELD', /\bid\b/),
    );
    const { type: _dropType, ...withoutType } = message('c', 'b', 'user', 'x');
    assert.throws(
      () => tree.appendEntry(/** @type {SessionEntry} */ (withoutType)),
      failsWith('E_MISSING_FIELD', /\bc\b.*\btype\b/),
    );
    assert.equal(tree.entryCount, 2, 'a refused entry is not stored');
    tree.free();
  });

  test('E_KEPT_NOT_ON_PATH: appendEntry refuses a compaction that keeps nothing of its own branch (SPEC §13.2)', () => {
    const tree = sc.SessionTree.fromJsonl(SMALL);
    tree.appendEntry(message('side', 'a', 'user', 'aside'));
    tree.setLeaf('b');
    const compaction = (/** @type {Record<string, unknown>} */ kept) =>
      /** @type {SessionEntry} */ ({
        type: 'compaction',
        id: 'k',
        timestamp: 'x',
        summary: 's',
        tokensBefore: 9,
        ...kept,
      });
    for (const kept of [{ firstKeptEntryId: 'side' }, { firstKeptEntryId: 'gone' }, {}]) {
      assert.throws(
        () => tree.appendEntry(compaction(kept)),
        failsWith('E_KEPT_NOT_ON_PATH', /\bk\b.*firstKeptEntryId/),
        JSON.stringify(kept),
      );
    }
    assert.deepEqual([tree.entryCount, tree.leafId], [3, 'b'], 'nothing appended, the leaf unmoved');
    // One that keeps an entry of its branch is appended, and validates.
    assert.equal(tree.appendEntry(compaction({ firstKeptEntryId: 'b' })), 'k');
    assert.deepEqual(tree.validate().issues, []);
    tree.free();
  });

  test('E_NOT_FOUND: unknown ids in the handle name the id', () => {
    const tree = sc.SessionTree.fromJsonl(SMALL);
    assert.throws(() => tree.setLeaf('nope'), failsWith('E_NOT_FOUND', /\bnope\b/));
    assert.throws(() => tree.getChildren('nope'), failsWith('E_NOT_FOUND', /\bnope\b/));
    assert.throws(() => tree.getBranch('nope'), failsWith('E_NOT_FOUND', /\bnope\b/));
    assert.throws(() => tree.appendEntry(message('c', 'ghost', 'user', 'x')), failsWith('E_NOT_FOUND', /\bghost\b/));
    assert.equal(tree.getEntry('nope'), undefined);
    assert.equal(tree.leafId, 'b', 'a failed setLeaf leaves the leaf alone');
    tree.free();
  });

  test('E_DUPLICATE_ID: appending an id that exists', () => {
    const tree = sc.SessionTree.fromJsonl(SMALL);
    assert.throws(() => tree.appendEntry(message('a', 'b', 'user', 'again')), failsWith('E_DUPLICATE_ID', /\ba\b/));
    assert.equal(tree.entryCount, 2);
    tree.free();
  });

  test("isSessionCompactionError: true for the engine's errors (E_PARSE, E_DUPLICATE_ID, E_FREED), false for others", () => {
    const caught = (/** @type {() => unknown} */ fn) => {
      try {
        fn();
      } catch (error) {
        return error;
      }
      return assert.fail('did not throw');
    };
    const tree = sc.SessionTree.fromJsonl(SMALL);
    const duplicate = caught(() => tree.appendEntry(message('a', 'b', 'user', 'again')));
    tree.free();
    const engineErrors = [
      caught(() => sc.parseSession('{', { strict: true })),
      duplicate,
      caught(() => tree.leafId),
      caught(() => sc.prepareCompaction(/** @type {any} */ ('not entries'))),
    ];
    assert.deepEqual(
      engineErrors.map((e) => [sc.isSessionCompactionError(e), /** @type {any} */ (e).code]),
      [
        [true, 'E_PARSE'],
        [true, 'E_DUPLICATE_ID'],
        [true, 'E_FREED'],
        [true, 'E_INVALID_ARGUMENT'],
      ],
    );
    const lookalike = Object.assign(new Error('x'), { name: 'SessionCompactionError', code: 'not a code' });
    const others = [
      new Error('E_PARSE'),
      new TypeError('x'),
      lookalike,
      { name: 'SessionCompactionError', code: 'E_PARSE' },
    ];
    assert.deepEqual(
      [...others, null, undefined, 'E_PARSE'].map((e) => sc.isSessionCompactionError(e)),
      [false, false, false, false, false, false, false],
    );
  });

  test('E_INVALID_ARGUMENT: malformed arguments name the parameter', () => {
    assert.throws(
      // @ts-expect-error: not an array on purpose
      () => sc.prepareCompaction('not entries'),
      failsWith('E_INVALID_ARGUMENT', /pathEntries/),
    );
    assert.throws(
      // @ts-expect-error: a number is not a leaf id
      () => sc.buildSessionContext([], 5),
      failsWith('E_INVALID_ARGUMENT', /leafId/),
    );
    assert.throws(
      // @ts-expect-error: reserveTokens must be a number
      () => sc.prepareCompaction([], { reserveTokens: 'many' }),
      failsWith('E_INVALID_ARGUMENT', /settings/),
    );
    const tree = sc.SessionTree.fromJsonl(SMALL);
    // @ts-expect-error: an entry must be an object
    assert.throws(() => tree.appendEntry('text'), failsWith('E_INVALID_ARGUMENT'));
    tree.free();
  });

  test('E_TEMPLATE: unknown template names and templates that do not parse', () => {
    assert.throws(() => sc.setPromptTemplate('no-such-template.md', 'x'), failsWith('E_TEMPLATE', /no-such-template/));
    assert.throws(
      () => sc.setPromptTemplate('file-operations.md', '{{#if readFiles.length}}never closed'),
      failsWith('E_TEMPLATE', /file-operations\.md/),
    );
    sc.resetPromptTemplates();
    assert.ok(sc.promptTemplateNames().includes('file-operations.md'));
  });

  test('a template with non-ASCII text after "<" is installed and used (no panic; the module keeps working)', async () => {
    try {
      for (const text of ['Summarize. <ü', 'Résumé ‹é <注意> {{#xml "notes"}}x{{/xml}} ü{{#xml "b"}}y{{/xml}}']) {
        sc.setPromptTemplate('branch-summary.md', text);
        assert.equal(sc.getPromptTemplate('branch-summary.md'), text);
      }
      const tree = sc.SessionTree.fromJsonl(SMALL);
      const first = /** @type {string} */ (tree.getBranch()[0].id);
      /** @type {string[]} */
      const prompts = [];
      const done = await tree.navigateTree(first, {
        summarize: true,
        complete: async (/** @type {any} */ r) => {
          prompts.push(r.prompt);
          return 'branch summary';
        },
      });
      assert.equal(prompts.length, 1);
      assert.ok(prompts[0].startsWith('<conversation>\n[Assistant]: hi there\n</conversation>'), prompts[0]);
      assert.ok(prompts[0].includes('Résumé ‹é'), prompts[0]);
      assert.match(/** @type {any} */ (done.summaryEntry).summary, /branch summary$/);
      tree.free();
    } finally {
      sc.resetPromptTemplates();
    }
    assert.ok(sc.promptTemplateNames().includes('branch-summary.md'));
  });
});

// ---------------------------------------------------------------------------------------------

describe('SessionTree', () => {
  test('fromJsonl, fromBytes and fromEntries agree on a real session', () => {
    const source = text(WITH_COMPACTIONS);
    const parsed = sc.parseSession(source);
    const trees = [
      sc.SessionTree.fromJsonl(source),
      sc.SessionTree.fromBytes(readFileSync(WITH_COMPACTIONS)),
      sc.SessionTree.fromEntries(parsed.entries, parsed.header),
    ];
    const [first, ...rest] = trees.map((t) => ({
      header: t.header,
      entryCount: t.entryCount,
      leafId: t.leafId,
      branch: t.getBranch(),
      tree: t.getTree().map(({ line: _line, ...node }) => node),
      context: t.buildSessionContext(),
      preparation: t.prepareCompaction(),
    }));
    assert.equal(first.entryCount, parsed.entries.length);
    assert.equal(first.leafId, parsed.entries.at(-1)?.id);
    for (const other of rest) assert.ok(isDeepStrictEqual(other, first), 'the three handles differ');
    // Saved: the two loaders byte for byte; fromEntries (re-serialized values) line by line
    // JSON-equal (number spelling may differ, e.g. 0.000005 vs 5e-6).
    const [jsonlA, jsonlB, jsonlC] = trees.map((t) => t.toJsonl());
    assert.ok(jsonlA === source && jsonlB === source, 'fromJsonl/fromBytes save the file unchanged');
    const linesC = jsonlC.trimEnd().split('\n');
    const linesA = jsonlA.trimEnd().split('\n');
    assert.equal(linesC.length, linesA.length);
    for (const [i, line] of linesA.entries()) {
      assert.ok(isDeepStrictEqual(JSON.parse(linesC[i]), JSON.parse(line)), `line ${i + 1}`);
    }
    // and the handle agrees with the pure functions on the same branch (its preparation adds
    // the preview that previewCompaction gives)
    const { preview, ...preparation } = /** @type {NonNullable<typeof first.preparation>} */ (first.preparation);
    assert.deepEqual(preparation, sc.prepareCompaction(first.branch));
    assert.deepEqual(preview, sc.previewCompaction(first.branch));
    assert.deepEqual(first.context, sc.buildSessionContext(parsed.entries));
    for (const t of trees) t.free();
  });

  test('appendEntry moves the leaf and updates branch, context and plan', () => {
    const tree = sc.SessionTree.fromBytes(readFileSync(WITH_COMPACTIONS));
    const before = tree.entryCount;
    const oldLeaf = tree.leafId;
    assert.ok(oldLeaf);
    const planBefore = tree.prepareCompaction();

    const user = message('new-user-1', oldLeaf, 'user', 'one more question');
    assert.equal(tree.appendEntry(user), 'new-user-1');
    // parentId left out: the current leaf becomes the parent
    const { parentId: _none, ...reply } = message('new-asst-1', null, 'assistant', 'the answer '.repeat(50));
    assert.equal(tree.appendEntry(/** @type {SessionEntry} */ (reply)), 'new-asst-1');

    assert.equal(tree.entryCount, before + 2);
    assert.equal(tree.leafId, 'new-asst-1');
    assert.equal(tree.getEntry('new-asst-1')?.parentId, 'new-user-1');
    assert.deepEqual(tree.getChildren('new-user-1'), ['new-asst-1']);
    const branch = tree.getBranch();
    assert.deepEqual(
      branch.slice(-2).map((e) => e.id),
      ['new-user-1', 'new-asst-1'],
    );
    assert.deepEqual(branch.at(-2), user);
    const context = tree.buildSessionContext();
    assert.deepEqual(context.messages.at(-2), user.message);
    assert.deepEqual(context.messages.at(-1), /** @type {MessageEntry} */ (reply).message);

    // the re-plan is the pure function's plan on the new branch, and it changed
    const planAfter = tree.prepareCompaction();
    assert.deepEqual({ ...planAfter, preview: undefined }, { ...sc.prepareCompaction(branch), preview: undefined });
    assert.deepEqual(planAfter?.preview, sc.previewCompaction(branch));
    assert.notDeepEqual(planAfter, planBefore);
    assert.deepEqual(tree.buildSessionContext(), sc.buildSessionContext(branch));

    // the appended entries are saved at the end
    const lines = tree.toJsonl().trimEnd().split('\n');
    assert.deepEqual(JSON.parse(/** @type {string} */ (lines.at(-2))), user);
    assert.equal(JSON.parse(/** @type {string} */ (lines.at(-1))).id, 'new-asst-1');
    tree.free();
  });

  test('appendMessage fills id, parentId and timestamp; appendEntry without parentId hangs under the leaf', () => {
    const tree = sc.SessionTree.fromBytes(readFileSync(LARGE));
    try {
      const leaf = tree.leafId;
      const count = tree.entryCount;
      const before = Date.now();
      const reply = { role: 'user', content: [{ type: 'text', text: 'next step' }], timestamp: before };
      const entry = tree.appendMessage(/** @type {any} */ (reply));
      const after = Date.now();
      assert.match(entry.id, /^[0-9a-f]{8}$/);
      assert.deepEqual(
        { ...entry, id: '', timestamp: '' },
        { type: 'message', id: '', parentId: leaf, timestamp: '', message: reply },
      );
      const at = Date.parse(entry.timestamp);
      assert.equal(new Date(at).toISOString(), entry.timestamp, 'an ISO 8601 UTC timestamp');
      assert.ok(at >= before && at <= after, `${entry.timestamp} is now`);
      assert.equal(tree.leafId, entry.id);
      assert.equal(tree.entryCount, count + 1);
      assert.deepEqual(tree.getEntry(entry.id), entry);
      assert.deepEqual(tree.buildSessionContext().messages.at(-1), reply);
      assert.deepEqual(JSON.parse(/** @type {string} */ (tree.toJsonl().trimEnd().split('\n').at(-1))), entry);

      // parentId left out: the entry hangs under the current leaf.
      tree.appendEntry({
        type: 'message',
        id: 'no-parent',
        timestamp: '2026-01-01T00:00:00.000Z',
        message: { role: 'user', content: 'more', timestamp: 1767225600000 },
      });
      assert.equal(tree.getEntry('no-parent')?.parentId, entry.id);
      assert.equal(tree.leafId, 'no-parent');

      const ids = Array.from(
        { length: 300 },
        (_, k) => tree.appendMessage({ role: 'user', content: `m${k}`, timestamp: k }).id,
      );
      assert.equal(new Set(ids).size, 300, 'the ids are unique');
      assert.equal(tree.getEntry(/** @type {string} */ (ids.at(-1)))?.parentId, ids.at(-2));

      const total = tree.entryCount;
      assert.throws(() => tree.appendMessage(/** @type {any} */ (42)), failsWith('E_INVALID_ARGUMENT', /object/));
      assert.throws(
        () => tree.appendMessage(/** @type {any} */ ({ content: 'x' })),
        failsWith('E_MISSING_FIELD', /role/),
      );
      assert.equal(tree.entryCount, total, 'a refused message appends nothing');
    } finally {
      tree.free();
    }
  });

  test('setLeaf: an earlier entry, then null (empty context)', () => {
    const tree = sc.SessionTree.fromBytes(readFileSync(LARGE));
    const all = sc.parseSession(text(LARGE)).entries;
    const target = /** @type {string} */ (all[Math.floor(all.length / 2)].id);
    tree.setLeaf(target);
    assert.equal(tree.leafId, target);
    assert.equal(tree.getBranch().at(-1)?.id, target);
    assert.deepEqual(tree.buildSessionContext(), sc.buildSessionContext(all, target));

    tree.setLeaf(null);
    assert.equal(tree.leafId, undefined);
    assert.deepEqual(tree.getBranch(), []);
    const empty = tree.buildSessionContext();
    assert.deepEqual(empty.messages, []);
    assert.deepEqual(empty, sc.buildSessionContext(all, null));
    assert.equal(tree.buildSessionContextJson(), '[]');
    assert.equal(tree.prepareCompaction(), undefined);
    tree.free();
  });

  test('getTree, getChildren and getLabel (label entries set and clear labels)', () => {
    const tree = sc.SessionTree.fromJsonl(SMALL);
    tree.appendEntry(message('c', 'a', 'assistant', 'another branch'));
    let nodes = tree.getTree();
    assert.deepEqual(
      nodes.map((n) => [n.id, n.parentId, n.type, n.role, n.children]),
      [
        ['a', null, 'message', 'user', ['b', 'c']],
        ['b', 'a', 'message', 'assistant', []],
        ['c', 'a', 'message', 'assistant', []],
      ],
    );
    assert.deepEqual(
      nodes.map((n) => n.line),
      [2, 3, 0],
      'lines of the loaded file; 0 for appended entries',
    );
    assert.ok(nodes.every((n) => n.tokens > 0));
    for (const n of nodes) assert.deepEqual(tree.getChildren(/** @type {string} */ (n.id)), n.children);

    assert.equal(tree.getLabel('b'), undefined);
    const ts = '2025-01-01T00:00:02.000Z';
    tree.appendEntry({ type: 'label', id: 'l1', parentId: 'c', timestamp: ts, targetId: 'b', label: 'first try' });
    assert.equal(tree.getLabel('b'), 'first try');
    nodes = tree.getTree();
    assert.equal(nodes.find((n) => n.id === 'b')?.label, 'first try');
    assert.equal(nodes.find((n) => n.id === 'l1')?.type, 'label');
    tree.appendEntry({ type: 'label', id: 'l2', parentId: 'l1', timestamp: ts, targetId: 'b', label: 'renamed' });
    assert.equal(tree.getLabel('b'), 'renamed', 'the last label entry wins');
    tree.appendEntry({ type: 'label', id: 'l3', parentId: 'l2', timestamp: ts, targetId: 'b' });
    assert.equal(tree.getLabel('b'), undefined, 'a label entry without label clears it');
    tree.free();
  });

  test('pruneToolOutputs in the handle applies the change; a second call prunes nothing', () => {
    const tree = sc.SessionTree.fromBytes(readFileSync(LARGE));
    const config = { protectTokens: 2000, minimumSavings: 1000, protectedTools: [] };
    const now = 1767225600000;
    const branch = tree.getBranch();
    const pure = sc.pruneToolOutputs(branch, config, now);
    assert.ok(pure.prunedCount > 0, 'the large session has tool outputs to prune');

    const before = tree.planPrune(config);
    const first = tree.pruneToolOutputs(config, now);
    assert.ok(first instanceof sc.PruneOutcome);
    assert.deepEqual(
      [...first.entryIndices],
      before.candidates.map((c) => c.entryIndex),
    );
    assert.equal(first.prunedCount, pure.prunedCount);
    assert.equal(first.tokensSaved, pure.tokensSaved);
    assert.deepEqual(first.prunedEntries, pure.prunedEntries, 'the handle prunes what the pure function prunes');
    assert.equal(first.prunedEntries.length, first.prunedCount);
    // the report without objects: ids, entry indices, the changed lines
    assert.deepEqual(
      first.prunedIds,
      pure.prunedEntries.map((e) => e.id),
    );
    const nodes = tree.getTree();
    assert.deepEqual(
      [...first.entryIndices].map((i) => nodes[i].id),
      first.prunedIds,
    );
    const lines = first.jsonl.split('\n');
    assert.equal(lines.pop(), '', 'every line ends with a newline');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      pure.prunedEntries,
    );
    assert.deepEqual(first.entry(0), pure.prunedEntries[0]);
    assert.equal(first.entry(first.prunedCount), undefined);
    assert.deepEqual(JSON.parse(JSON.stringify(first)), {
      prunedCount: first.prunedCount,
      tokensSaved: first.tokensSaved,
      prunedIds: first.prunedIds,
      entryIndices: [...first.entryIndices],
    });
    const plan = tree.planPrune(config);
    assert.equal(plan.candidates.length, 0, 'planned after the prune: nothing left');
    for (const pruned of first.prunedEntries) {
      const stored = /** @type {any} */ (tree.getEntry(/** @type {string} */ (pruned.id)));
      assert.ok(isDeepStrictEqual(stored, pruned), 'the stored entry is the pruned one');
      assert.equal(stored.message.prunedAt, now);
      assert.match(stored.message.content[0].text, /^\[Output truncated - \d+ tokens(; superseded by .+)?\]$/);
    }
    // superseded outputs first (SPEC §13.6), then old ones; each group newest first
    const isStale = (/** @type {any} */ e) => e.message.content[0].text.includes('; superseded by ');
    const stale = first.prunedEntries.filter(isStale);
    const aged = first.prunedEntries.filter((e) => !isStale(e));
    assert.ok(stale.length > 0 && aged.length > 0, 'the large session repeats calls and has old outputs');
    assert.deepEqual(first.prunedEntries, [...stale, ...aged]);
    for (const group of [stale, aged]) {
      const order = group.map((e) => branch.findIndex((b) => b.id === e.id));
      assert.deepEqual(
        order,
        [...order].sort((x, y) => y - x),
      );
    }

    const second = tree.pruneToolOutputs(config, now);
    assert.equal(second.prunedCount, 0);
    assert.equal(second.tokensSaved, 0);
    assert.deepEqual(second.prunedEntries, []);
    assert.equal(second.jsonl, '');
    assert.deepEqual(second.prunedIds, []);
    assert.equal(second.entryIndices.length, 0);
    // the saved file carries the change
    const reloaded = sc.SessionTree.fromJsonl(tree.toJsonl());
    assert.deepEqual(reloaded.getBranch(), tree.getBranch());
    reloaded.free();
    tree.free();
  });

  test('toJsonl round-trips the real sessions (v3 byte-equal, every line JSON-equal)', () => {
    for (const [path, version] of REAL) {
      const source = text(path);
      const tree = sc.SessionTree.fromJsonl(source);
      assert.deepEqual(tree.loadErrors, [], path);
      const out = tree.toJsonl();
      const inLines = source
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      const outLines = out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(outLines.length, inLines.length, path);
      if (version === 3) {
        assert.equal(out, source, `${path}: a v3 file is saved byte for byte`);
        assert.deepEqual(outLines, inLines);
      } else {
        // v1: saved migrated (ids, parentIds, version 3); otherwise every line is unchanged.
        assert.equal(outLines[0].version, 3);
        const { version: _v, ...header } = outLines[0];
        assert.deepEqual(header, inLines[0]);
        for (let i = 1; i < inLines.length; i++) {
          const { id, parentId, firstKeptEntryId, ...rest } = outLines[i];
          assert.match(id, /^[0-9a-f]{8}$/);
          assert.equal(parentId, i === 1 ? null : outLines[i - 1].id);
          const { firstKeptEntryIndex, ...original } = inLines[i];
          if (firstKeptEntryIndex !== undefined) assert.equal(firstKeptEntryId, outLines[firstKeptEntryIndex].id);
          assert.deepEqual(rest, original, `${path} line ${i + 1}`);
        }
        // the migrated text is stable: loading it again saves the same bytes
        const again = sc.SessionTree.fromJsonl(out);
        assert.equal(again.toJsonl(), out);
        again.free();
      }
      // and the pure parser + serializer write the same lines (v1: the same up to the random ids)
      const parsed = sc.parseSession(source);
      assert.equal(parsed.migrated, version !== 3);
      const pureLines = sc
        .serializeSession(parsed)
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      /** @param {any} v */
      const withoutIds = ({ id: _i, parentId: _p, firstKeptEntryId: _f, ...rest }) => rest;
      const [pure, ours] =
        version === 3 ? [pureLines, outLines] : [pureLines.slice(1).map(withoutIds), outLines.slice(1).map(withoutIds)];
      assert.ok(isDeepStrictEqual(pure, ours), `${path}: serializeSession(parseSession(text)) differs from toJsonl()`);
      tree.free();
    }
  });

  test('buildSessionContextJson is the JSON of buildSessionContext().messages with its repairs applied', () => {
    for (const [path] of REAL) {
      const tree = sc.SessionTree.fromBytes(readFileSync(path));
      const json = tree.buildSessionContextJson();
      assert.equal(typeof json, 'string');
      const { messages, repairs } = tree.buildSessionContext();
      assert.ok(messages.length > 0);
      const added = repairs.filter((r) => r.kind === 'missingToolResult').length;
      const dropped = repairs.filter((r) => r.kind === 'orphanToolResult' || r.kind === 'duplicateToolResult').length;
      const parsed = JSON.parse(json);
      assert.equal(parsed.length, messages.length + added - dropped);
      // Without the synthetic results, the stored messages in their order (no message was moved).
      assert.ok(repairs.every((r) => r.kind === 'missingToolResult'));
      const stored = parsed.filter(
        (/** @type {any} */ m) =>
          !(m.role === 'toolResult' && m.content?.[0]?.text === 'No result was recorded for this tool call'),
      );
      assert.deepEqual(stored, JSON.parse(JSON.stringify(messages)));
      tree.free();
    }
  });

  test('validate() reports without changing anything', () => {
    const source = text(WITH_COMPACTIONS);
    const tree = sc.SessionTree.fromJsonl(source);
    const report = tree.validate();
    assert.ok(Array.isArray(report.issues));
    for (const issue of report.issues)
      assert.ok(ERROR_CODES.has(issue.code) || issue.code.startsWith('E_'), issue.code);
    const withoutLines = report.issues.map(({ line: _line, ...issue }) => issue);
    assert.deepEqual(withoutLines, sc.validateSession(sc.parseSession(source).entries).issues, 'pure and handle agree');
    assert.ok(
      report.issues.every((i) => typeof i.line === 'number' && i.line > 1),
      'the handle adds file lines',
    );
    assert.equal(tree.toJsonl(), source);
    tree.free();

    const broken = sc.validateSession([message('a', 'b', 'user', 'x'), message('b', 'a', 'user', 'y')]);
    assert.ok(broken.issues.some((i) => i.code === 'E_CYCLE'));
  });

  test('validateSession and validate() report every entry that is not an object (SPEC §13.9)', () => {
    const a = message('a', null, 'user', 'x');
    const list = /** @type {any[]} */ ([null, 1, 'x', a, [1], true, undefined]);
    const { issues } = sc.validateSession(list);
    // `undefined` reads as null and is named as given (SPEC §13.11).
    const kinds = ['null', 'number', 'string', null, 'array', 'boolean', 'undefined, read as null'];
    assert.deepEqual(
      issues,
      kinds.flatMap((t, index) =>
        t === null ? [] : [{ code: 'E_UNKNOWN_ENTRY', message: `entries[${index}] is not an object (${t})`, index }],
      ),
    );
    // The other functions read them as entries of no known type.
    assert.equal(sc.buildSessionContext(list, 'a').messages.length, 1);
    // A loaded file: a line that is valid JSON but not an object, on every load path.
    const header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}';
    const source = [header, JSON.stringify(a), '5', '[1]', 'null', '"s"'].join('\n');
    const expected = [
      [1, 3, 'number'],
      [2, 4, 'array'],
      [3, 5, 'null'],
      [4, 6, 'string'],
    ].map(([index, line, t]) => ({
      code: 'E_UNKNOWN_ENTRY',
      message: `entries[${index}] is not an object (${t})`,
      index,
      line,
    }));
    for (const tree of [sc.SessionTree.fromJsonl(source), sc.SessionTree.fromBytes(new TextEncoder().encode(source))]) {
      assert.deepEqual(tree.validate().issues, expected);
      assert.equal(tree.toJsonl(), `${source}\n`, 'kept as written');
      tree.free();
    }
    assert.deepEqual(
      sc.validateSession(sc.parseSession(source).entries).issues.map((i) => [i.code, i.index, i.message]),
      expected.map((i) => [i.code, i.index, i.message]),
      'parseSession keeps them as entries, validateSession reports them',
    );
  });

  test('Symbol.dispose frees the handle (with `using` where the runtime has it)', async () => {
    assert.equal(typeof sc.SessionTree.prototype[Symbol.dispose], 'function');
    /** @type {import('../../pkg/index.node.mjs').SessionTree | undefined} */
    let escaped;
    let usingSupported = true;
    try {
      // Compiled at run time: `using` is a syntax error in runtimes without it (Node 20).
      const body = 'using tree = SessionTree.fromJsonl(text); grab(tree); return tree.entryCount;';
      const withUsing =
        /** @type {(s: typeof sc.SessionTree, t: string, g: (t: import('../../pkg/index.node.mjs').SessionTree) => void) => number} */ (
          new Function('SessionTree', 'text', 'grab', body)
        );
      assert.equal(
        withUsing(sc.SessionTree, SMALL, (t) => (escaped = t)),
        2,
      );
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      usingSupported = false;
      escaped = sc.SessionTree.fromJsonl(SMALL);
      assert.equal(escaped.entryCount, 2);
      escaped[Symbol.dispose]();
    }
    assert.ok(escaped);
    const freed = escaped;
    assert.throws(() => freed.entryCount, /null pointer|destroyed|freed/i, `disposed (using: ${usingSupported})`);
  });
});

// ---------------------------------------------------------------------------------------------

describe('pure functions', () => {
  test('pruneToolOutputs never mutates its argument (deep-frozen input)', () => {
    const entries = deepFreeze(sc.SessionTree.fromBytes(readFileSync(LARGE)).getBranch());
    const snapshot = structuredClone(entries);
    const config = { protectTokens: 2000, minimumSavings: 1000, protectedTools: [] };
    const r = sc.pruneToolOutputs(entries, config, 1767225600000);
    assert.ok(r.prunedCount > 0);
    assert.deepEqual(entries, snapshot);
    // the pruned entries are new objects, whole entries with ids, newest first
    for (const pruned of r.prunedEntries) {
      const original = entries.find((e) => e.id === pruned.id);
      assert.ok(original);
      assert.notEqual(pruned, original);
      assert.equal(pruned.type, 'message');
      assert.notDeepEqual(pruned, original);
    }
    // default config: the frozen DEFAULT_PRUNE_CONFIG
    assert.deepEqual(
      sc.pruneToolOutputs(entries, undefined, 1),
      sc.pruneToolOutputs(entries, sc.DEFAULT_PRUNE_CONFIG, 1),
    );
  });

  test('DEFAULT_COMPACTION_SETTINGS and DEFAULT_PRUNE_CONFIG are the deeply frozen defaults', () => {
    assert.deepEqual(sc.DEFAULT_COMPACTION_SETTINGS, sc.defaultCompactionSettings());
    assert.deepEqual(sc.DEFAULT_PRUNE_CONFIG, sc.defaultPruneConfig());
    assert.deepEqual(sc.DEFAULT_COMPACTION_SETTINGS, { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 });
    assert.deepEqual(sc.DEFAULT_PRUNE_CONFIG, {
      protectTokens: 40000,
      minimumSavings: 20000,
      protectedTools: ['skill', 'read'],
      staleness: true,
    });
    assert.ok(Object.isFrozen(sc.DEFAULT_COMPACTION_SETTINGS));
    assert.ok(Object.isFrozen(sc.DEFAULT_PRUNE_CONFIG));
    assert.ok(Object.isFrozen(sc.DEFAULT_PRUNE_CONFIG.protectedTools));
    assert.throws(() => {
      /** @type {any} */ (sc.DEFAULT_PRUNE_CONFIG).protectTokens = 1;
    }, TypeError);
    const entries = sc.parseSession(text(WITH_COMPACTIONS)).entries;
    assert.deepEqual(sc.prepareCompaction(entries), sc.prepareCompaction(entries, sc.DEFAULT_COMPACTION_SETTINGS));
    assert.equal(sc.shouldCompact(90000, 100000), sc.shouldCompact(90000, 100000, sc.DEFAULT_COMPACTION_SETTINGS));
  });

  test('CommonJS and ESM entries share the constants', async () => {
    const { createRequire } = await import('node:module');
    const cjs = createRequire(import.meta.url)('../../pkg/index.node.cjs');
    assert.equal(cjs.DEFAULT_PRUNE_CONFIG, sc.DEFAULT_PRUNE_CONFIG);
    assert.equal(cjs.SessionTree, sc.SessionTree);
  });

  test('web entry: the constants are guarded until init(), then frozen', async () => {
    // A separate module instance (its own wasm); nothing has initialized it in this process.
    const web = await import('../../pkg/index.web.mjs');
    const early = web.DEFAULT_COMPACTION_SETTINGS;
    for (const read of [
      () => web.DEFAULT_COMPACTION_SETTINGS.reserveTokens,
      () => web.DEFAULT_PRUNE_CONFIG.protectedTools,
      () => Object.keys(early),
    ]) {
      assert.throws(
        read,
        (/** @type {any} */ error) => error?.code === 'E_NOT_INITIALIZED' && /DEFAULT_/.test(error.message),
      );
    }
    await web.init();
    assert.deepEqual(web.DEFAULT_COMPACTION_SETTINGS, sc.DEFAULT_COMPACTION_SETTINGS);
    assert.deepEqual(web.DEFAULT_PRUNE_CONFIG, sc.DEFAULT_PRUNE_CONFIG);
    assert.ok(Object.isFrozen(web.DEFAULT_PRUNE_CONFIG) && Object.isFrozen(web.DEFAULT_PRUNE_CONFIG.protectedTools));
    // a reference taken before init() reads the same values afterwards
    assert.equal(early.keepRecentTokens, 20000);
    assert.ok(Object.isFrozen(early));
    assert.equal(typeof web.SessionTree.prototype[Symbol.dispose], 'function');
  });

  test('estimateTokens, estimateContextTokens, findCutPoint on a real branch', () => {
    const branch = sc.parseSession(text(LARGE)).entries;
    const first = /** @type {MessageEntry} */ (branch.find((e) => e.type === 'message'));
    const tokens = sc.estimateTokens(first.message);
    assert.ok(Number.isInteger(tokens) && tokens > 0);
    assert.ok(sc.estimateContextTokens(branch) > 0);
    const cut = sc.findCutPoint(branch, 0, branch.length, 20000);
    assert.deepEqual(Object.keys(cut).sort(), ['firstKeptEntryIndex', 'isSplitTurn', 'turnStartIndex']);
    assert.ok(cut.firstKeptEntryIndex > 0 && cut.firstKeptEntryIndex < branch.length);
    const prep = sc.prepareCompaction(branch);
    assert.ok(prep);
    // (prepareCompaction adapts the kept budget to the prompt size, so its cut may differ)
    assert.ok(branch.some((e) => e.id === prep.firstKeptEntryId));
    assert.ok(prep.messagesToSummarize.length > 0 && prep.recentMessages.length > 0);
    for (const key of /** @type {const} */ (['read', 'written', 'edited'])) assert.ok(Array.isArray(prep.fileOps[key]));
  });
});

describe('arguments of the wrong type are E_INVALID_ARGUMENT errors, never a crash', () => {
  const session = readFileSync(new URL('../../examples/sessions/pi-session-large.jsonl', import.meta.url), 'utf8');
  const tree = sc.SessionTree.fromJsonl(session);
  const branch = tree.getBranch();
  /** @type {[string, () => unknown][]} */
  const calls = [
    ['parseSession(5)', () => sc.parseSession(/** @type {any} */ (5))],
    ['parseSession({})', () => sc.parseSession(/** @type {any} */ ({}))],
    ['parseSession()', () => /** @type {any} */ (sc.parseSession)()],
    ['SessionTree.fromJsonl(5)', () => sc.SessionTree.fromJsonl(/** @type {any} */ (5))],
    ['SessionTree.fromJsonl(undefined)', () => sc.SessionTree.fromJsonl(/** @type {any} */ (undefined))],
    ['SessionTree.fromBytes("abc")', () => sc.SessionTree.fromBytes(/** @type {any} */ ('abc'))],
    ['SessionTree.fromBytes(5)', () => sc.SessionTree.fromBytes(/** @type {any} */ (5))],
    ['tree.getEntry(5)', () => tree.getEntry(/** @type {any} */ (5))],
    ['tree.getEntry()', () => /** @type {any} */ (tree).getEntry()],
    ['tree.getChildren({})', () => tree.getChildren(/** @type {any} */ ({}))],
    ['tree.setLeaf(5)', () => tree.setLeaf(/** @type {any} */ (5))],
    ['tree.setLeaf(undefined)', () => tree.setLeaf(/** @type {any} */ (undefined))],
    ['tree.getBranch(5)', () => tree.getBranch(/** @type {any} */ (5))],
    ['tree.getLabel(null)', () => tree.getLabel(/** @type {any} */ (null))],
    ['tree.pruneToolOutputs({}, "now")', () => tree.pruneToolOutputs({}, /** @type {any} */ ('now'))],
    ['getPromptTemplate(5)', () => sc.getPromptTemplate(/** @type {any} */ (5))],
    [
      'setPromptTemplate("branch-summary.md", 5)',
      () => sc.setPromptTemplate('branch-summary.md', /** @type {any} */ (5)),
    ],
    [
      'collectEntriesForBranchSummary(branch, 5, "x")',
      () => sc.collectEntriesForBranchSummary(branch, /** @type {any} */ (5), 'x'),
    ],
    [
      'collectEntriesForBranchSummary(undefined)',
      () => /** @type {any} */ (sc.collectEntriesForBranchSummary)(undefined),
    ],
    [
      'formatFileOperations(undefined, undefined)',
      () => sc.formatFileOperations(/** @type {any} */ (undefined), /** @type {any} */ (undefined)),
    ],
    ['formatFileOperations([1, 2], [])', () => sc.formatFileOperations(/** @type {any} */ ([1, 2]), [])],
    ['findCutPoint(branch, -1, 10, 100)', () => sc.findCutPoint(branch, -1, 10, 100)],
    ['findCutPoint(branch, 0, 10, NaN)', () => sc.findCutPoint(branch, 0, 10, NaN)],
    ['findCutPoint([], 10n, 0, 0)', () => sc.findCutPoint([], /** @type {any} */ (10n), 0, 0)],
    ['shouldCompact("abc", "x")', () => sc.shouldCompact(/** @type {any} */ ('abc'), /** @type {any} */ ('x'))],
    ['pruneToolOutputs([], {}, 10n)', () => sc.pruneToolOutputs([], {}, /** @type {any} */ (10n))],
    ['parseSessionWithIds("", [1])', () => sc.parseSessionWithIds('', /** @type {any} */ ([1]))],
  ];
  for (const [name, call] of calls) {
    test(name, () => {
      assert.throws(call, (/** @type {any} */ e) => {
        assert.equal(e.code, 'E_INVALID_ARGUMENT', `${name}: ${e}`);
        assert.match(e.message, /invalid argument `\w+`/);
        return true;
      });
    });
  }
  test('the module still works after all of them', () => {
    assert.equal(sc.SessionTree.fromJsonl(session).entryCount, tree.entryCount);
  });
});

describe('the rules the CLI and the demo read from the handle (one source of truth)', () => {
  const load = (/** @type {string} */ file) => sc.SessionTree.fromBytes(readFileSync(file));

  test('branchIndices(): the entry indices of getBranch(), root first', () => {
    for (const [file] of REAL) {
      const tree = load(file);
      const nodes = tree.getTree();
      const ids = Array.from(tree.branchIndices(), (i) => nodes[i].id);
      assert.deepEqual(
        ids,
        tree.getBranch().map((e) => /** @type {any} */ (e).id),
      );
      tree.free();
    }
  });

  test('sourceVersion and migrated: the format of the file before the migration', () => {
    for (const [file, version] of REAL) {
      const tree = load(file);
      assert.equal(tree.sourceVersion, version, file);
      assert.equal(tree.migrated, version < 3, file);
      assert.equal(/** @type {any} */ (tree.header).version, 3, 'the handle holds the migrated form');
      tree.free();
    }
    assert.equal(sc.SessionTree.fromEntries([]).sourceVersion, undefined);
  });

  test('planPrune candidates name their entryIndex and branchPosition', () => {
    const tree = load(LARGE);
    const nodes = tree.getTree();
    const branch = tree.branchIndices();
    const plan = tree.planPrune({ protectTokens: 1000, minimumSavings: 0 });
    assert.ok(plan.candidates.length > 0);
    for (const c of plan.candidates) {
      assert.equal(c.entryIndex, c.index);
      assert.equal(nodes[/** @type {number} */ (c.entryIndex)].id, c.id);
      assert.equal(branch[/** @type {number} */ (c.branchPosition)], c.entryIndex);
    }
    tree.free();
  });

  test('nothingToCompact(): undefined when prepareCompaction has a result, else the reason', () => {
    const tree = load(WITH_COMPACTIONS);
    assert.ok(tree.prepareCompaction());
    assert.equal(tree.nothingToCompact(), undefined);
    const compaction = [...tree.getBranch()].reverse().find((e) => e.type === 'compaction');
    tree.setLeaf(/** @type {any} */ (compaction).id);
    assert.equal(tree.prepareCompaction(), undefined);
    assert.deepEqual(tree.nothingToCompact(), {
      reason: 'alreadyCompacted',
      message: 'the branch ends in a compaction: it is already compacted',
    });
    tree.setLeaf(null);
    assert.equal(tree.nothingToCompact({})?.reason, 'emptyBranch');
    tree.free();
  });

  test('previousCompaction(): the latest compaction and where its kept region starts', () => {
    const tree = load(WITH_COMPACTIONS);
    const branch = tree.getBranch();
    const p = branch.map((e) => e.type).lastIndexOf('compaction');
    const entry = /** @type {any} */ (branch[p]);
    const kept = branch.findIndex((e) => /** @type {any} */ (e).id === entry.firstKeptEntryId);
    assert.deepEqual(tree.previousCompaction(), {
      branchPosition: p,
      entryId: entry.id,
      firstKeptEntryId: entry.firstKeptEntryId,
      keptStart: kept,
    });
    assert.equal(tree.planCompaction()?.boundaryStart, kept, 'the next boundary starts there');
    tree.free();
  });

  test('contentText and compactionThreshold', () => {
    assert.equal(sc.contentText('plain'), 'plain');
    assert.equal(
      sc.contentText([
        { type: 'text', text: 'a' },
        { type: 'image', data: 'x', mimeType: 'image/png' },
        { type: 'text', text: 'b' },
      ]),
      'ab',
    );
    assert.equal(sc.contentText(undefined), '');
    assert.equal(sc.compactionThreshold(200_000), 200_000 - sc.DEFAULT_COMPACTION_SETTINGS.reserveTokens);
    assert.equal(sc.compactionThreshold(100_000, { reserveTokens: 1000 }), 99_000);
  });

  test('overflow texts are matched case-insensitively by Unicode lowercasing (the host toLowerCase)', () => {
    /** @param {string} errorMessage */
    const failed = (errorMessage) =>
      /** @type {any} */ ({ role: 'assistant', content: [], stopReason: 'error', errorMessage });
    assert.equal(sc.isContextOverflow(failed('PROMPT IS TOO LONG'), 1000), true, 'ASCII');
    assert.equal(sc.isContextOverflow(failed('Ошибка: PROMPT IS TOO LONG'), 1000), true, 'beside Cyrillic');
    // KELVIN SIGN (U+212A) lowercases to an ASCII `k`: only a Unicode lowercasing finds "tokens".
    assert.equal(sc.isContextOverflow(failed('maximum context length is 10 TO\u212AENS'), 1000), true);
    assert.equal(sc.isContextOverflow(failed('maximum context length is 10 TO\u212BENS'), 1000), false);
    assert.equal(sc.isContextOverflow(failed('Überlastet (overloaded)'), 1000), false);
  });
});

describe('newcomer findings: missing fields, thresholds, versions, argument messages', () => {
  const noTypeOrId = /** @type {any[]} */ ([{}, { type: 'message' }, { id: 'x', parentId: null }]);

  test('validateSession, fromEntries().validate() and a loaded file report an entry without type or id', () => {
    const want = [
      { code: 'E_MISSING_FIELD', message: 'entries[0] has no `type` (expected a string)', index: 0, field: 'type' },
      { code: 'E_MISSING_FIELD', message: 'entries[1] has no `id` (expected a string)', index: 1, field: 'id' },
      {
        code: 'E_MISSING_FIELD',
        message: 'entries[2] has no `type` (expected a string)',
        index: 2,
        id: 'x',
        field: 'type',
      },
    ];
    assert.deepEqual(sc.validateSession(noTypeOrId).issues, want);
    // fromEntries keeps them, as a lenient load keeps such lines, and its validate() reports them.
    const tree = sc.SessionTree.fromEntries(noTypeOrId);
    try {
      assert.equal(tree.entryCount, 3);
      assert.deepEqual(tree.validate().issues, want);
    } finally {
      tree.free();
    }
    // The same records as a file: the load errors and validation name the line.
    const jsonl = [HEADER, ...noTypeOrId].map((e) => JSON.stringify(e)).join('\n');
    for (const loaded of [sc.SessionTree.fromJsonl(jsonl), sc.SessionTree.fromBytes(new TextEncoder().encode(jsonl))]) {
      try {
        assert.deepEqual(
          loaded.loadErrors.map((e) => [e.line, e.code, e.message]),
          [
            [2, 'E_MISSING_FIELD', 'line 2: missing or invalid field `type`'],
            [3, 'E_MISSING_FIELD', 'line 3: missing or invalid field `id`'],
            [4, 'E_MISSING_FIELD', 'line 4: missing or invalid field `type`'],
          ],
        );
        assert.deepEqual(
          loaded.validate().issues.map((i) => [i.line, i.code, i.field, i.message]),
          [
            [2, 'E_MISSING_FIELD', 'type', 'entries[0] (line 2) has no `type` (expected a string)'],
            [3, 'E_MISSING_FIELD', 'id', 'entries[1] (line 3) has no `id` (expected a string)'],
            [4, 'E_MISSING_FIELD', 'type', 'entries[2] (line 4) has no `type` (expected a string)'],
          ],
        );
      } finally {
        loaded.free();
      }
    }
  });

  test('shouldCompact and compactionThreshold refuse a reserve not below the window', () => {
    assert.equal(sc.shouldCompact(183_617, 200_000, { reserveTokens: 16_384 }), true);
    assert.throws(
      () => sc.shouldCompact(1, 200_000, { reserveTokens: 300_000 }),
      failsWith(
        'E_INVALID_ARGUMENT',
        /^invalid argument `reserveTokens`: expected less than contextWindow \(200000\), got 300000: the compaction threshold contextWindow - reserveTokens must be above 0$/,
      ),
    );
    assert.throws(() => sc.compactionThreshold(1), failsWith('E_INVALID_ARGUMENT', /contextWindow \(1\), got 16384/));
    assert.throws(() => sc.compactionThreshold(1000, { reserveTokens: 1000 }), failsWith('E_INVALID_ARGUMENT'));
  });

  test('with compaction disabled, a reserve not below the window is no error: nothing is due', () => {
    const off = { enabled: false, reserveTokens: 300_000 };
    assert.equal(sc.shouldCompact(1, 200_000, off), false);
    assert.equal(sc.shouldCompact(500_000, 200_000, off), false);
    assert.equal(sc.compactionThreshold(200_000, off), -100_000);
    assert.equal(sc.compactionThreshold(1000, { enabled: false, reserveTokens: 1000 }), 0);
  });

  test('shouldCompact refuses a context size that is no whole number of tokens, naming contextTokens', () => {
    assert.equal(sc.shouldCompact(0, 200_000), false);
    for (const [tokens, shown] of /** @type {const} */ ([
      [-5, '-5'],
      [1.5, '1.5'],
      [Infinity, 'Infinity'],
      [2 ** 53, '9007199254740992'],
    ])) {
      assert.throws(
        () => sc.shouldCompact(tokens, 200_000),
        failsWith(
          'E_INVALID_ARGUMENT',
          new RegExp(
            `^invalid argument \`contextTokens\`: expected a whole number of tokens from 0 to 2\\^53 - 1, got ${shown}$`,
          ),
        ),
      );
    }
    assert.throws(
      () => sc.shouldCompact(NaN, 200_000),
      failsWith('E_INVALID_ARGUMENT', /^invalid argument `contextTokens`: expected a number, got NaN$/),
    );
  });

  test('shouldCompact, compactionThreshold and checkCompaction refuse a window that is no whole number of tokens', async () => {
    for (const [window, shown] of /** @type {const} */ ([
      [-5, '-5'],
      [200_000.5, '200000.5'],
      [Infinity, 'Infinity'],
    ])) {
      const fails = failsWith(
        'E_INVALID_ARGUMENT',
        new RegExp(
          `^invalid argument \`contextWindow\`: expected a whole number of tokens from 0 to 2\\^53 - 1, got ${shown}$`,
        ),
      );
      assert.throws(() => sc.shouldCompact(1, window), fails);
      // Also with compaction disabled: the window is still an argument given.
      assert.throws(() => sc.compactionThreshold(window, { enabled: false }), fails);
      const tree = sc.SessionTree.fromEntries([message('a', null, 'user', 'hi')]);
      const assistant = { role: 'assistant', content: [{ type: 'text', text: 'ok' }], stopReason: 'stop' };
      await assert.rejects(
        tree.checkCompaction(/** @type {any} */ (assistant), { contextWindow: window, complete: async () => 'x' }),
        // An infinity is refused earlier, as every option that is not finite.
        Number.isFinite(window)
          ? fails
          : failsWith('E_INVALID_ARGUMENT', /`options\.contextWindow`: expected a finite number, got Infinity$/),
      );
      tree.free();
    }
    assert.equal(sc.compactionThreshold(200_000), 183_616);
  });

  test('a header of a newer version is a load error on line 1; the file still loads and saves unchanged', () => {
    const jsonl = `${JSON.stringify({ ...HEADER, version: 99 })}\n${JSON.stringify(message('a', null, 'user', 'hi'))}\n`;
    const tree = sc.SessionTree.fromJsonl(jsonl);
    try {
      assert.deepEqual(tree.loadErrors, [
        {
          line: 1,
          code: 'E_UNSUPPORTED_VERSION',
          message:
            'line 1: session format version 99 is newer than this engine reads (3); the file is read as version 3 and what this engine does not know is kept unchanged',
        },
      ]);
      assert.equal(tree.entryCount, 1);
      assert.equal(tree.sourceVersion, 99);
      assert.equal(tree.toJsonl(), jsonl);
    } finally {
      tree.free();
    }
    assert.deepEqual(
      sc.parseSession(jsonl).errors.map((e) => e.code),
      ['E_UNSUPPORTED_VERSION'],
    );
    assert.throws(() => sc.parseSession(jsonl, { strict: true }), failsWith('E_UNSUPPORTED_VERSION', /^line 1: /));
  });

  test('argument messages name the argument and say what was expected and what was given', () => {
    assert.throws(
      () => sc.shouldCompact(1, 200_000, { reserveTokens: NaN }),
      failsWith(
        'E_INVALID_ARGUMENT',
        /^invalid argument `settings\.reserveTokens`: expected a finite number, got NaN$/,
      ),
    );
    assert.throws(
      () => sc.prepareCompaction([], /** @type {any} */ ({ keepRecentTokens: '20k' })),
      failsWith(
        'E_INVALID_ARGUMENT',
        /^invalid argument `settings\.keepRecentTokens`: expected a non-negative integer, got string "20k"$/,
      ),
    );
    assert.throws(
      () => sc.prepareBranchEntries([], NaN),
      failsWith('E_INVALID_ARGUMENT', /^invalid argument `tokenBudget`: expected a number, got NaN$/),
    );
    assert.throws(
      () => sc.estimateTokens(/** @type {any} */ (null)),
      failsWith('E_INVALID_ARGUMENT', /^invalid argument `message`: expected a message object .*, got null$/),
    );
    assert.throws(() => sc.estimateTokens(/** @type {any} */ ([1])), failsWith('E_INVALID_ARGUMENT', /got an array$/));
    assert.equal(sc.estimateTokens({ role: 'user', content: 'abcd', timestamp: 1 }), 1);
    assert.deepEqual(
      sc.validateSession(/** @type {any} */ ([() => 1, undefined, null])).issues.map((i) => i.message),
      [
        'entries[0] is not an object (a function, read as null)',
        'entries[1] is not an object (undefined, read as null)',
        'entries[2] is not an object (null)',
      ],
    );
  });

  test('compact(null) says a preparation object was expected', async () => {
    await assert.rejects(
      sc.compact(/** @type {any} */ (null), { complete: async () => 'x' }),
      failsWith(
        'E_INVALID_ARGUMENT',
        /^invalid argument `preparation`: expected a preparation object \(the result of prepareCompaction\), got null$/,
      ),
    );
  });

  test('prepareBranchEntries refuses a negative, fractional, NaN or unsafe budget; undefined and 0 mean no limit', () => {
    const entries = [message('a', null, 'user', 'hello there')];
    const none = sc.prepareBranchEntries(entries);
    assert.deepEqual(sc.prepareBranchEntries(entries, 0), none);
    assert.equal(none.messages.length, 1);
    for (const [budget, shown] of /** @type {const} */ ([
      [-1, '-1'],
      [1.5, '1.5'],
      [2 ** 53, '9007199254740992'],
      [Infinity, 'Infinity'],
    ])) {
      assert.throws(
        () => sc.prepareBranchEntries(entries, budget),
        failsWith(
          'E_INVALID_ARGUMENT',
          new RegExp(
            `^invalid argument \`tokenBudget\`: expected a whole number of tokens from 0 to 2\\^53 - 1, got ${shown}$`,
          ),
        ),
      );
    }
  });
});
