// Handles fail safely: every argument is read defensively (a revoked or throwing Proxy is
// E_INVALID_ARGUMENT, the handle stays usable and freeable, async methods reject), and a handle
// used after free() fails with E_FREED.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as sc from '../../pkg/index.node.mjs';

const TEXT = [
  { type: 'session', version: 3, id: 's1', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/w' },
  {
    type: 'message',
    id: 'a',
    parentId: null,
    timestamp: '2025-01-01T00:00:01.000Z',
    message: { role: 'user', content: 'hi', timestamp: 1 },
  },
]
  .map((r) => `${JSON.stringify(r)}\n`)
  .join('');

/** A revoked Proxy: every operation on it throws a TypeError. */
function revoked() {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** A Proxy whose every trap throws. */
function throwing() {
  const boom = () => {
    throw new Error('boom');
  };
  return new Proxy([], {
    get: boom,
    has: boom,
    ownKeys: boom,
    getPrototypeOf: boom,
    getOwnPropertyDescriptor: boom,
  });
}

/** @param {unknown} e */
const invalid = (e) => {
  assert.ok(e instanceof Error);
  assert.equal(/** @type {any} */ (e).code, 'E_INVALID_ARGUMENT', String(/** @type {any} */ (e).message));
  return true;
};

/** Every call that takes an argument, with the bad value in each argument position. */
function calls(/** @type {any} */ tree, /** @type {any} */ bad) {
  return /** @type {[string, () => unknown][]} */ ([
    ['appendEntry', () => tree.appendEntry(bad)],
    ['getEntry', () => tree.getEntry(bad)],
    ['setLeaf', () => tree.setLeaf(bad)],
    ['getBranch', () => tree.getBranch(bad)],
    ['getChildren', () => tree.getChildren(bad)],
    ['getLabel', () => tree.getLabel(bad)],
    ['prepareCompaction', () => tree.prepareCompaction(bad)],
    ['planCompaction', () => tree.planCompaction(bad)],
    ['planPrune', () => tree.planPrune(bad)],
    ['pruneToolOutputs', () => tree.pruneToolOutputs(bad)],
    ['pruneToolOutputs(now)', () => tree.pruneToolOutputs(undefined, bad)],
    ['SessionTree.fromJsonl', () => sc.SessionTree.fromJsonl(bad)],
    ['SessionTree.fromJsonl(options)', () => sc.SessionTree.fromJsonl(TEXT, bad)],
    ['SessionTree.fromBytes', () => sc.SessionTree.fromBytes(bad)],
    ['SessionTree.fromEntries', () => sc.SessionTree.fromEntries(bad)],
    ['parseSession', () => sc.parseSession(bad)],
    ['parseSession(options)', () => sc.parseSession(TEXT, bad)],
    ['serializeSession', () => sc.serializeSession(bad)],
    ['formatFileOperations', () => sc.formatFileOperations(bad, [])],
    ['parseSessionWithIds', () => sc.parseSessionWithIds(TEXT, bad)],
    ['estimateTokens', () => sc.estimateTokens(bad)],
    ['buildSessionContext', () => sc.buildSessionContext(bad)],
    ['findCutPoint', () => sc.findCutPoint(bad, 0, 0, 0)],
  ]);
}

describe('handles fail safely', () => {
  for (const [kind, make] of /** @type {const} */ ([
    ['revoked Proxy', revoked],
    ['throwing Proxy', throwing],
  ])) {
    test(`a ${kind} argument is E_INVALID_ARGUMENT and the handle stays usable and freeable`, () => {
      const tree = sc.SessionTree.fromJsonl(TEXT);
      for (const [name, call] of calls(tree, make())) {
        assert.throws(call, invalid, name);
        // the handle is not left borrowed: it still answers
        assert.equal(tree.entryCount, 1, `after ${name}`);
      }
      tree.appendEntry({
        type: 'message',
        id: 'b',
        parentId: 'a',
        timestamp: '2025-01-01T00:00:02.000Z',
        message: { role: 'user', content: 'again', timestamp: 2 },
      });
      assert.equal(tree.leafId, 'b');
      tree.free();
    });

    test(`async methods reject (never throw, never hang) on a ${kind}`, async () => {
      /** @type {any} */
      const tree = sc.SessionTree.fromJsonl(TEXT);
      for (const [name, call] of /** @type {[string, () => Promise<unknown>][]} */ ([
        ['compact', () => tree.compact(make())],
        ['navigateTree(options)', () => tree.navigateTree('a', make())],
        ['navigateTree(target)', () => tree.navigateTree(make(), {})],
        ['checkCompaction', () => tree.checkCompaction(make(), {})],
      ])) {
        /** @type {Promise<unknown> | undefined} */
        let promise;
        assert.doesNotThrow(() => {
          promise = call();
        }, name);
        assert.ok(promise instanceof Promise, name);
        await assert.rejects(promise, invalid, name);
        assert.equal(tree.entryCount, 1, `after ${name}`);
      }
      tree.free();
    });
  }

  test('use after free() is E_FREED; free() twice is harmless', async () => {
    const tree = sc.SessionTree.fromJsonl(TEXT);
    tree.free();
    tree.free();
    /** @param {unknown} e */
    const freed = (e) => {
      assert.equal(/** @type {any} */ (e).code, 'E_FREED');
      assert.equal(/** @type {any} */ (e).name, 'SessionCompactionError');
      assert.match(/** @type {any} */ (e).message, /freed/);
      return true;
    };
    assert.throws(() => tree.entryCount, freed);
    assert.throws(() => tree.header, freed);
    assert.throws(() => tree.toJsonl(), freed);
    assert.throws(() => tree.getEntry('a'), freed);
    assert.throws(() => tree.appendEntry(/** @type {any} */ ({})), freed);
    await assert.rejects(tree.compact({ complete: async () => 'x' }), freed);
    await assert.rejects(tree.navigateTree('a', {}), freed);
    // every other method and getter too
    const proto = Object.getPrototypeOf(tree);
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key === 'constructor' || key === 'free' || key.startsWith('__')) continue;
      const d = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(proto, key));
      if (d.get) assert.throws(() => d.get?.call(tree), freed, key);
      else if (typeof d.value === 'function') {
        /** @type {unknown} */
        let r;
        try {
          r = d.value.call(tree);
        } catch (e) {
          freed(e);
          continue;
        }
        await assert.rejects(/** @type {Promise<unknown>} */ (r), freed, key);
      }
    }
    // and `using` disposal after free() is harmless
    tree[Symbol.dispose]?.();
  });

  test('members called on something that is not a handle are E_INVALID_ARGUMENT', async () => {
    const proto = sc.SessionTree.prototype;
    /** @type {[string, unknown][]} */
    const receivers = [
      ['new SessionTree()', new /** @type {any} */ (sc.SessionTree)()],
      ['{}', {}],
      ['null', null],
      ['undefined', undefined],
      ['a number', 5],
      ['an object with a string __wbg_ptr', { __wbg_ptr: '8' }],
    ];
    /** @param {unknown} e */
    const notAHandle = (e) => {
      invalid(e);
      assert.match(/** @type {any} */ (e).message, /is not a session handle/);
      return true;
    };
    for (const [what, self] of receivers) {
      let checked = 0;
      for (const key of Object.getOwnPropertyNames(proto)) {
        if (key === 'constructor' || key.startsWith('__')) continue;
        const d = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(proto, key));
        if (d.get) assert.throws(() => d.get?.call(self), notAHandle, `${key} on ${what}`);
        else if (typeof d.value === 'function') {
          /** @type {unknown} */
          let r;
          try {
            r = d.value.call(self, 'a');
          } catch (e) {
            notAHandle(e);
            checked++;
            continue;
          }
          await assert.rejects(/** @type {Promise<unknown>} */ (r), notAHandle, `${key} on ${what}`);
        }
        checked++;
      }
      assert.ok(checked > 20, `${checked} members checked on ${what}`);
    }
    // a real handle still works afterwards
    const tree = sc.SessionTree.fromJsonl(TEXT);
    assert.equal(tree.entryCount, 1);
    tree.free();
  });
});

describe('pure functions fail safely on lists they cannot read', () => {
  /** @param {unknown} list */
  const pureCalls = (list) =>
    /** @type {[string, () => unknown][]} */ ([
      [
        'prepareCompaction',
        () =>
          sc.prepareCompaction(/** @type {any} */ (list), { enabled: true, reserveTokens: 10, keepRecentTokens: 10 }),
      ],
      ['buildSessionContext', () => sc.buildSessionContext(/** @type {any} */ (list))],
      ['estimateContextTokens', () => sc.estimateContextTokens(/** @type {any} */ (list))],
      ['findCutPoint', () => sc.findCutPoint(/** @type {any} */ (list), 0, 1, 10)],
      ['previewCompaction', () => sc.previewCompaction(/** @type {any} */ (list))],
    ]);

  test('an array whose length is more entries than the memory holds is E_INVALID_ARGUMENT, not a panic', () => {
    for (const length of [2 ** 31, 2 ** 32 - 1, 2 ** 28]) {
      const list = /** @type {unknown[]} */ ([]);
      list.length = length;
      for (const [name, call] of pureCalls(list)) {
        assert.throws(
          call,
          (/** @type {any} */ e) => invalid(e) && /more than the memory has room for/.test(e.message),
          `${name}, length ${length}`,
        );
      }
    }
    // the functions that convert a whole list (JSON text) check its length before converting
    for (const length of [10_000_001, 2 ** 31]) {
      const list = /** @type {any} */ (new Array(length));
      for (const [name, call] of /** @type {[string, () => unknown][]} */ ([
        ['validateSession', () => sc.validateSession(list)],
        ['prepareBranchEntries', () => sc.prepareBranchEntries(list, 1000)],
        ['SessionTree.fromEntries', () => sc.SessionTree.fromEntries(list)],
        ['serializeConversation', () => sc.serializeConversation(list)],
      ])) {
        assert.throws(
          call,
          (/** @type {any} */ e) => invalid(e) && /more than the memory has room for/.test(e.message),
          `${name}, length ${length}`,
        );
      }
    }
    // the module is alive and reads real lists as before
    const entries = sc.parseSession(TEXT).entries;
    assert.equal(sc.buildSessionContext(entries).messages.length, 1);
    assert.equal(sc.estimateContextTokens(entries), 1);
  });

  test('a revoked Proxy list is E_INVALID_ARGUMENT, also after a call on a real list', () => {
    const entries = sc.parseSession(TEXT).entries;
    for (const [name, call] of pureCalls(entries)) assert.doesNotThrow(call, name);
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    for (const make of [() => proxy, throwing]) {
      for (const [name, call] of pureCalls(make())) assert.throws(call, invalid, name);
    }
    assert.equal(sc.buildSessionContext(entries).messages.length, 1);
  });
});

test('the leaf of a loaded session is its last entry with an id: a trailing null, id-less entry or second header is not (SPEC §13.12)', () => {
  const lines = [
    '{"type":"session","id":"s1","timestamp":"t","version":3}',
    '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hello"}}',
    '{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"again"}}',
  ];
  for (const last of [
    'null',
    '{"type":"custom","parentId":"b","timestamp":"t"}',
    '{"type":"session","id":"s2","timestamp":"t","version":3}',
  ]) {
    const text = `${[...lines, last].join('\n')}\n`;
    for (const tree of [
      sc.SessionTree.fromJsonl(text),
      sc.SessionTree.fromBytes(new TextEncoder().encode(text)),
      sc.SessionTree.fromEntries(sc.parseSession(text).entries),
    ]) {
      assert.equal(tree.leafId, 'b', last);
      assert.equal(tree.buildLlmMessages().length, 2, last);
      // Before: an empty context, a new root, or E_NOT_FOUND "entry s2: not found".
      assert.equal(tree.appendMessage({ role: 'user', content: 'next', timestamp: 1 }).parentId, 'b', last);
      assert.ok(tree.toJsonl().includes(`\n${last}\n`), 'the record is saved in its place');
      tree.free();
    }
  }
  const tree = sc.SessionTree.fromJsonl(`${lines.join('\n')}\n`);
  assert.throws(
    () => tree.appendEntry(/** @type {any} */ ({ type: 'session', id: 'h2', timestamp: 't', version: 3 })),
    (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /entry h2: .*session header/.test(e.message),
  );
  assert.equal(tree.leafId, 'b');
  assert.equal(tree.entryCount, 2);
  tree.free();
});
