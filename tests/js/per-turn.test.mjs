// The per-turn cache of prepareCompaction and buildSessionContext (pkg-template/shared/pure.js
// with the engine's kept metadata, tree index, branch and decisions): over random sequences of
// what a host does between two calls (append entries, replace an entry object, remove entries,
// pass a new array of the same objects, switch the leaf or the branch) every result equals the
// one of a second module instance that is given a fresh JSON copy every time (so it never
// reuses anything), and the messages handed back are the caller's own objects.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as sc from '../../pkg/index.node.mjs';
import { fresh } from './support/fresh-engine.mjs';
import { seededRandom } from './support/random.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** @param {string} name @returns {any[]} */
function entriesOf(name) {
  return readFileSync(join(ROOT, 'examples', 'sessions', name), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
    .filter((e) => e.type !== 'session');
}

/**
 * The branch ending at the entry with id `leaf` (the last entry for `undefined`), root first, by
 * `parentId` (the last entry of an id wins; a cycle ends the walk). Test-side, for the arrays a
 * host would pass to prepareCompaction.
 * @param {any[]} list @param {string | undefined} leaf
 */
function branchOf(list, leaf) {
  const byId = new Map();
  for (const e of list) if (typeof e?.id === 'string') byId.set(e.id, e);
  let cur = leaf === undefined ? list.at(-1) : (byId.get(leaf) ?? list.at(-1));
  const out = [];
  const seen = new Set();
  while (cur && !seen.has(cur)) {
    seen.add(cur);
    out.push(cur);
    cur = typeof cur.parentId === 'string' && cur.parentId !== '' ? byId.get(cur.parentId) : undefined;
  }
  return out.reverse();
}

/** Every message of `result` that is an entry's `message` is that very object. */
function assertOwnMessages(/** @type {any[]} */ messages, /** @type {any[]} */ list) {
  const own = new Set(list.map((e) => e?.message).filter((m) => m !== undefined));
  for (const m of messages) {
    if (!['compactionSummary', 'branchSummary', 'custom'].includes(m.role)) assert.ok(own.has(m), m.role);
  }
}

const SETTINGS = { keepRecentTokens: 3000 };

/** @type {[string, number][]} */
const CASES = [
  ['pi-session-with-compactions.jsonl', 7],
  ['pi-session-large.jsonl', 11],
];
for (const [name, seed] of CASES) {
  test(`${name}: per-turn results equal a fresh instance's over random host steps`, () => {
    const pool = entriesOf(name);
    const rnd = seededRandom(seed);
    const pick = (/** @type {number} */ n) => Math.floor(rnd() * n);
    let list = pool.slice(0, Math.floor(pool.length * 0.6));
    let next = list.length;
    /** @type {string | undefined} */
    let leaf;
    const steps = { append: 0, replace: 0, remove: 0, copy: 0, leaf: 0 };
    for (let step = 0; step < 60; step++) {
      const r = rnd();
      if (r < 0.55 && next < pool.length) {
        for (let k = 1 + pick(3); k > 0 && next < pool.length; k--) list.push(pool[next++]);
        leaf = undefined;
        steps.append++;
      } else if (r < 0.65) {
        const at = pick(list.length);
        list[at] = structuredClone(list[pick(list.length)]);
        steps.replace++;
      } else if (r < 0.75) {
        list.splice(list.length - 1 - pick(5), 1 + pick(3));
        steps.remove++;
      } else if (r < 0.85) {
        list = [...list];
        steps.copy++;
      } else {
        const e = list[pick(list.length)];
        leaf = typeof e?.id === 'string' ? e.id : undefined;
        steps.leaf++;
      }
      const context = sc.buildSessionContext(list, leaf);
      assert.deepEqual(context, fresh.buildSessionContext(structuredClone(list), leaf), `step ${step}`);
      assertOwnMessages(context.messages, list);
      const branch = branchOf(list, leaf);
      const prep = sc.prepareCompaction(branch, SETTINGS);
      assert.deepEqual(prep, fresh.prepareCompaction(structuredClone(branch), SETTINGS), `step ${step}`);
      if (prep) {
        assertOwnMessages([...prep.messagesToSummarize, ...prep.turnPrefixMessages, ...prep.recentMessages], branch);
      }
    }
    assert.ok(
      Object.values(steps).every((n) => n > 0),
      JSON.stringify(steps),
    );
  });
}

test('after an error the next call reads every entry again (nothing stale is kept)', () => {
  const list = entriesOf('pi-session-large.jsonl').slice(0, 200);
  const before = sc.buildSessionContext(list);
  const bad = [...list, { type: 'message', id: 'x', parentId: list.at(-1).id, message: { role: 'user', content: 1n } }];
  // A BigInt deep in an entry read through JSON.stringify: E_INVALID_ARGUMENT naming the entry.
  Object.defineProperty(bad[200], 'type', {
    get() {
      throw new Error('no');
    },
  });
  assert.throws(
    () => sc.buildSessionContext(bad),
    (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT',
  );
  assert.deepEqual(sc.buildSessionContext(list), before);
  assert.deepEqual(sc.prepareCompaction(list, SETTINGS), fresh.prepareCompaction(structuredClone(list), SETTINGS));
});

test('the package exports no glue-internal name', () => {
  assert.deepEqual(
    Object.keys(sc).filter((n) => n.startsWith('__')),
    [],
  );
  assert.deepEqual(
    Object.keys(fresh).filter((n) => n.startsWith('__')),
    [],
  );
  assert.equal(sc.prepareCompaction.length, 2);
  assert.equal(sc.buildSessionContext.length, 2);
});
