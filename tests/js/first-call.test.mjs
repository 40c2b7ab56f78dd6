// The first call of prepareCompaction and buildSessionContext on entries the engine has not seen
// reads only what the decision needs: the heads of every entry (type, ids, settings, a message's
// role and model; one JSON.stringify of those keys) and whole entries only for the context and
// the region since the latest compaction. An entry read whole that cannot be read is an error
// naming it; an entry never read whole is none. Results equal those of a fresh module instance
// given a JSON copy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as sc from '../../pkg/index.node.mjs';
import { fresh } from './support/fresh-engine.mjs';

const SETTINGS = { keepRecentTokens: 200 };

/**
 * 80 entries: user and assistant turns (with a model change at 5 and a label at 6), a
 * compaction at 50 that keeps from entry 40, and 29 turns after it. `content(k)` is the content
 * of message `k`'s message.
 * @param {(k: number) => any} content
 */
function session(content) {
  /** @type {any[]} */
  const out = [];
  let parent = null;
  for (let k = 0; k < 80; k++) {
    const id = `e${k}`;
    /** @type {any} */
    let e;
    if (k === 5) e = { type: 'model_change', provider: 'p', modelId: 'm2', model: 'p/m2' };
    else if (k === 6) e = { type: 'label', targetId: 'e3', label: 'start' };
    else if (k === 50)
      e = { type: 'compaction', summary: 'the first part', firstKeptEntryId: 'e40', tokensBefore: 900 };
    else if (k % 2 === 0) e = { type: 'message', message: { role: 'user', content: content(k) } };
    else {
      e = {
        type: 'message',
        message: {
          role: 'assistant',
          content: content(k),
          provider: 'p',
          model: `m${k}`,
          usage: { input: 10 * k, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 10 * k + 5 },
          stopReason: 'stop',
        },
      };
    }
    out.push({ ...e, id, parentId: parent, timestamp: '2025-01-01T00:00:00.000Z' });
    parent = id;
  }
  return out;
}

/** @param {number} k */
const text = (k) => [{ type: 'text', text: `message ${k} `.repeat(20) }];

/** The same session with the content of message `bad` a getter that throws. @param {number} bad */
function withBadContent(bad) {
  const list = session(text);
  const message = { ...list[bad].message };
  Object.defineProperty(message, 'content', {
    enumerable: true,
    get() {
      throw new Error('no');
    },
  });
  list[bad] = { ...list[bad], message };
  return list;
}

test('the first call equals a fresh instance on a JSON copy', () => {
  const list = session(text);
  const ctx = sc.buildSessionContext(list);
  assert.deepEqual(ctx, fresh.buildSessionContext(structuredClone(list)));
  assert.equal(ctx.messages[0].role, 'compactionSummary');
  assert.equal(ctx.messages[1], list[40].message);
  assert.equal(ctx.models.default, 'p/m79');
  const prep = sc.prepareCompaction(list, SETTINGS);
  assert.ok(prep);
  assert.deepEqual(prep, fresh.prepareCompaction(structuredClone(list), SETTINGS));
  assert.equal(prep.previousSummary, 'the first part');
  assert.equal(prep.messagesToSummarize[0], list[40].message);
});

test('an entry never read whole is no error; one read whole is, naming it', () => {
  // Entry 20 lies before the kept region (40…): only its head is read.
  const early = withBadContent(20);
  const good = session(text);
  assert.deepEqual(sc.buildSessionContext(early), fresh.buildSessionContext(structuredClone(good)));
  assert.deepEqual(sc.prepareCompaction(early, SETTINGS), fresh.prepareCompaction(structuredClone(good), SETTINGS));
  // Entry 60 is in the context and after the compaction: read whole, an error naming it.
  const late = withBadContent(60);
  assert.throws(
    () => sc.buildSessionContext(late),
    (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /entries\[60\]/.test(e.message),
  );
  assert.throws(
    () => sc.prepareCompaction(late, SETTINGS),
    (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /pathEntries\[60\]/.test(e.message),
  );
  // A head that cannot be read in one call (a throwing `type`) is read one entry at a time.
  const head = session(text);
  Object.defineProperty(head[10], 'type', {
    get() {
      throw new Error('no');
    },
  });
  assert.throws(
    () => sc.buildSessionContext(head),
    (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /entries\[10\]/.test(e.message),
  );
  // Nothing of the failed calls is kept.
  assert.deepEqual(sc.buildSessionContext(good), fresh.buildSessionContext(structuredClone(good)));
});
