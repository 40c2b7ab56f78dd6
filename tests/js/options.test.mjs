// Issue 11, "Settings honoured everywhere" (built package, Node entry): an unknown setting or
// option name is an E_INVALID_ARGUMENT error naming it, in every options object (settings,
// prune config, parse options, the async calls' options with their callbacks, hooks, candidates,
// the adapters' options); a model id without its `provider/` prefix is matched; the remote
// endpoint of `settings.remoteEndpoint` is used by compact() and checkCompaction() (HTTP server
// on 127.0.0.1).
// Run: node --test tests/js/options.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { aiSdkComplete, toModelMessages } from '../../pkg/ai-sdk.mjs';
import { anthropicComplete, fromAnthropicMessages } from '../../pkg/anthropic.mjs';
import * as sc from '../../pkg/index.node.mjs';
import { fromChatMessages, openaiComplete, toChatMessages } from '../../pkg/openai.mjs';

/** @typedef {import('../../pkg/index.node.mjs').SessionEntry} SessionEntry */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSION = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
const T = { timeout: 10_000 };

/** @param {string} name @returns {(error: unknown) => boolean} */
function refuses(name) {
  return (error) => {
    const e = /** @type {any} */ (error);
    assert.equal(e?.code, 'E_INVALID_ARGUMENT', `code of: ${e?.message}`);
    assert.equal(e.name, 'SessionCompactionError');
    assert.ok(e.message.includes(`\`${name}\``), `"${e.message}" names ${name}`);
    return true;
  };
}

/** A small session: user/assistant turns of 400 chars each (100 tokens), an assistant usage. */
function session(turns = 6) {
  /** @type {any[]} */
  const entries = [];
  /** @type {string | null} */
  let parentId = null;
  let n = 0;
  const add = (/** @type {any} */ message) => {
    const id = `m${n++}`;
    entries.push({
      type: 'message',
      id,
      parentId,
      timestamp: new Date(1_735_689_600_000 + n * 1000).toISOString(),
      message,
    });
    parentId = id;
  };
  for (let i = 0; i < turns; i++) {
    add({ role: 'user', content: `question ${i} ${'q'.repeat(390)}`, timestamp: 1 });
    add({
      role: 'assistant',
      content: [{ type: 'text', text: `answer ${i} ${'a'.repeat(390)}` }],
      provider: 'openai',
      model: 'gpt-test',
      stopReason: 'stop',
      usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20 },
      timestamp: 2,
    });
  }
  return /** @type {SessionEntry[]} */ (entries);
}

const SETTINGS = { reserveTokens: 100, keepRecentTokens: 250 };
const complete = async () => 'summary';

describe('unknown option names are refused, naming them', () => {
  test('pure functions: settings, prune config, parse options, convert options', () => {
    const entries = session();
    assert.throws(() => sc.prepareCompaction(entries, /** @type {any} */ ({ keepRecent: 5 })), refuses('keepRecent'));
    assert.throws(
      () =>
        sc.prepareCompaction(
          entries,
          /** @type {any} */ ({ ...SETTINGS, tokenizer: (/** @type {string} */ t) => t.length }),
        ),
      refuses('tokenizer'),
    );
    assert.throws(
      () => sc.previewCompaction(entries, SETTINGS, /** @type {any} */ ({ protect: 1 })),
      refuses('protect'),
    );
    assert.throws(() => sc.pruneToolOutputs(entries, /** @type {any} */ ({ minSavings: 1 })), refuses('minSavings'));
    assert.throws(() => sc.shouldCompact(10, 100, /** @type {any} */ ({ reserve: 1 })), refuses('reserve'));
    assert.throws(() => sc.compactionThreshold(100, /** @type {any} */ ({ enable: false })), refuses('enable'));
    const text = readFileSync(SESSION, 'utf8');
    assert.throws(() => sc.parseSession(text, /** @type {any} */ ({ stict: true })), refuses('stict'));
    assert.throws(() => sc.SessionTree.fromJsonl(text, /** @type {any} */ ({ lenient: true })), refuses('lenient'));
    assert.throws(() => sc.convertToLlm([], /** @type {any} */ ({ repairs: true })), refuses('repairs'));
    // Known names still work, and `undefined` values are no options at all.
    assert.ok(sc.prepareCompaction(entries, { ...SETTINGS, remoteEndpoint: undefined }));
    assert.equal(sc.parseSession(text, { strict: false }).errors.length, 0);
  });

  test('SessionTree methods: settings and prune config', () => {
    const tree = sc.SessionTree.fromEntries(session());
    try {
      assert.throws(
        () => tree.prepareCompaction(/** @type {any} */ ({ keepRecentToken: 1 })),
        refuses('keepRecentToken'),
      );
      assert.throws(() => tree.planPrune(/** @type {any} */ ({ protectedTool: [] })), refuses('protectedTool'));
      assert.throws(() => tree.pruneToolOutputs(/** @type {any} */ ({ staleness: true, stale: 1 })), refuses('stale'));
    } finally {
      tree.free();
    }
  });

  test('async calls: data options, callbacks, hooks, candidates, nested settings', T, async () => {
    const entries = session();
    const prep = /** @type {any} */ (sc.prepareCompaction(entries, SETTINGS));
    await assert.rejects(
      sc.compact(prep, /** @type {any} */ ({ complete, extraContexts: [] })),
      refuses('extraContexts'),
    );
    await assert.rejects(sc.compact(prep, /** @type {any} */ ({ complet: complete })), refuses('complet'));
    await assert.rejects(
      sc.generateBranchSummary(entries, /** @type {any} */ ({ complete, reserve: 1 })),
      refuses('reserve'),
    );
    const tree = sc.SessionTree.fromEntries(entries);
    try {
      await assert.rejects(
        tree.compact(/** @type {any} */ ({ complete, customInstruction: 'x' })),
        refuses('customInstruction'),
      );
      await assert.rejects(
        tree.compact(/** @type {any} */ ({ complete, settings: { ...SETTINGS, keepRecent: 1 } })),
        refuses('keepRecent'),
      );
      await assert.rejects(
        tree.compact(/** @type {any} */ ({ complete, hooks: { session_before_compaction: () => undefined } })),
        refuses('session_before_compaction'),
      );
      await assert.rejects(tree.navigateTree('m1', /** @type {any} */ ({ summarise: true })), refuses('summarise'));
      const last = /** @type {any} */ (entries.at(-1)).message;
      await assert.rejects(
        tree.checkCompaction(last, /** @type {any} */ ({ contextWindow: 1000, complete, onEvents: () => undefined })),
        refuses('onEvents'),
      );
      await assert.rejects(
        tree.checkCompaction(
          last,
          /** @type {any} */ ({ contextWindow: 1000, candidates: [{ complete, modle: 'x' }] }),
        ),
        refuses('modle'),
      );
      await assert.rejects(
        tree.checkCompaction(last, /** @type {any} */ ({ contextWindow: 1000, complete, retry: { retries: 1 } })),
        refuses('retries'),
      );
      await assert.rejects(
        tree.checkCompaction(last, /** @type {any} */ ({ contextWindow: 1000, complete, remoteEndpoint: 5 })),
        (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /remoteEndpoint/.test(e.message),
      );
      assert.equal(tree.getBranch().length, entries.length, 'nothing was compacted');
    } finally {
      tree.free();
    }
  });

  test('a hook is read once; a throwing hook getter is E_INVALID_ARGUMENT naming the hook', T, async () => {
    const entries = session();
    /** @type {string[]} */
    const reads = [];
    /** @type {string[]} */
    const seen = [];
    const hooks = {};
    Object.defineProperty(hooks, 'session_compact', {
      enumerable: true,
      get() {
        reads.push('session_compact');
        return () => void seen.push('session_compact');
      },
    });
    const tree = sc.SessionTree.fromEntries(entries);
    try {
      await tree.compact(/** @type {any} */ ({ complete, settings: SETTINGS, hooks }));
      assert.deepEqual(reads, ['session_compact'], 'the getter ran once');
      assert.deepEqual(seen, ['session_compact'], 'the hook ran');
    } finally {
      tree.free();
    }
    const throwing = {};
    Object.defineProperty(throwing, 'session_before_compact', {
      enumerable: true,
      get() {
        throw new Error('getter broke');
      },
    });
    const again = sc.SessionTree.fromEntries(entries);
    try {
      await assert.rejects(
        again.compact(/** @type {any} */ ({ complete, settings: SETTINGS, hooks: throwing })),
        (/** @type {any} */ e) => {
          assert.equal(e.code, 'E_INVALID_ARGUMENT');
          assert.equal(
            e.message,
            'invalid argument `options.hooks.session_before_compact`: cannot be read: getter broke',
          );
          return true;
        },
      );
      await assert.rejects(
        again.navigateTree('m1', /** @type {any} */ ({ hooks: throwing })),
        (/** @type {any} */ e) =>
          e.code === 'E_INVALID_ARGUMENT' && /`options\.hooks\.session_before_compact`/.test(e.message),
      );
      assert.equal(again.getBranch().length, entries.length, 'nothing was compacted');
    } finally {
      again.free();
    }
  });

  test("the adapters' options", () => {
    assert.throws(
      () => openaiComplete(/** @type {any} */ ({ baseUrl: 'http://x', model: 'm', apikey: 'k' })),
      refuses('apikey'),
    );
    assert.throws(() => toChatMessages([], /** @type {any} */ ({ systemPrompt: 's' })), refuses('systemPrompt'));
    assert.throws(() => fromChatMessages([], /** @type {any} */ ({ modelId: 'm' })), refuses('modelId'));
    assert.throws(() => anthropicComplete(/** @type {any} */ ({ model: 'm', maxTokens: 5 })), refuses('maxTokens'));
    assert.throws(() => fromAnthropicMessages([], /** @type {any} */ ({ provider: 'x' })), refuses('provider'));
    assert.throws(
      () => aiSdkComplete(/** @type {any} */ ({ generateText: complete, model: 'm', system: 's' })),
      refuses('system'),
    );
    assert.throws(() => toModelMessages([], /** @type {any} */ ({ sytem: 's' })), refuses('sytem'));
    assert.deepEqual(toChatMessages([], { system: 's' }), [{ role: 'system', content: 's' }]);
  });
});

describe('model ids', () => {
  /** An overflow error of openai/gpt-test after the session. */
  const overflowTree = () => {
    const entries = session();
    const message = {
      role: 'assistant',
      content: [],
      provider: 'openai',
      model: 'gpt-test',
      stopReason: 'error',
      errorMessage: 'prompt is too long: 213462 tokens > 200000 maximum',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      timestamp: Date.parse('2026-01-01T00:00:00Z'),
    };
    const tree = sc.SessionTree.fromEntries(entries);
    tree.appendEntry(
      /** @type {any} */ ({
        type: 'message',
        id: 'err',
        parentId: entries.at(-1)?.id,
        timestamp: '2026-01-01T00:00:00.000Z',
        message,
      }),
    );
    return { tree, message };
  };

  test('a model id without its provider prefix is the same model (overflow recovery runs)', T, async () => {
    for (const [model, recovers] of /** @type {const} */ ([
      ['gpt-test', true],
      ['openai/gpt-test', true],
      ['gpt-other', false],
    ])) {
      const { tree, message } = overflowTree();
      try {
        const out = await tree.checkCompaction(/** @type {any} */ (message), {
          contextWindow: 200_000,
          model,
          complete,
          settings: SETTINGS,
        });
        assert.equal(out.reason, recovers ? 'overflow' : undefined, model);
        assert.equal(out.willRetry, recovers, model);
      } finally {
        tree.free();
      }
    }
  });

  test('an empty model id is refused', T, async () => {
    const { tree, message } = overflowTree();
    try {
      await assert.rejects(
        tree.checkCompaction(/** @type {any} */ (message), { contextWindow: 200_000, model: '', complete }),
        (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /`model` must name a model/.test(e.message),
      );
    } finally {
      tree.free();
    }
  });
});

/** A remote summarizer on 127.0.0.1 answering `{summary: "remote <purpose>"}`. */
async function serve() {
  /** @type {any[]} */
  const requests = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const body = JSON.parse(text);
      requests.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ summary: `remote ${body.purpose}` }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}/summarize`,
    requests,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  };
}

describe('settings.remoteEndpoint (HTTP on 127.0.0.1)', () => {
  test('compact(), SessionTree.compact() and checkCompaction() use it when no complete is given', T, async () => {
    const server = await serve();
    try {
      const settings = { ...SETTINGS, remoteEndpoint: server.url };
      const prep = /** @type {any} */ (sc.prepareCompaction(session(), settings));
      const result = await sc.compact(prep, {});
      assert.ok(result.summary.startsWith('remote history'), result.summary);
      assert.equal(result.shortSummary, 'remote short');
      const calls = server.requests.length;
      assert.ok(calls >= 2);

      const tree = sc.SessionTree.fromEntries(session());
      try {
        const done = await tree.compact({ settings });
        assert.equal(done.result.shortSummary, 'remote short');
        assert.ok(server.requests.length > calls);
      } finally {
        tree.free();
      }

      // Automatic compaction: the threshold (window 110 − reserve 100) is crossed by the last
      // usage (20 tokens).
      const auto = sc.SessionTree.fromEntries(session());
      try {
        const last = /** @type {any} */ (auto.getBranch().at(-1)).message;
        const before = server.requests.length;
        const out = await auto.checkCompaction(last, { contextWindow: 110, settings });
        assert.equal(out.reason, 'threshold');
        assert.equal(out.result?.summarizer, 'model');
        assert.ok(out.result?.summary.startsWith('remote history'), out.result?.summary);
        assert.ok(server.requests.length > before);
      } finally {
        auto.free();
      }
    } finally {
      await server.close();
    }
  });

  test('an explicit complete or remoteEndpoint wins over settings.remoteEndpoint', T, async () => {
    const server = await serve();
    try {
      const settings = { ...SETTINGS, remoteEndpoint: 'http://127.0.0.1:9/never' };
      const prep = /** @type {any} */ (sc.prepareCompaction(session(), settings));
      assert.ok((await sc.compact(prep, { complete })).summary.startsWith('summary'));
      assert.ok((await sc.compact(prep, { remoteEndpoint: server.url })).summary.startsWith('remote history'));
    } finally {
      await server.close();
    }
  });

  test('without complete, candidates or an endpoint, checkCompaction says what to pass', T, async () => {
    const tree = sc.SessionTree.fromEntries(session());
    try {
      const last = /** @type {any} */ (tree.getBranch().at(-1)).message;
      await assert.rejects(
        tree.checkCompaction(last, { contextWindow: 1000, settings: SETTINGS }),
        (/** @type {any} */ e) => e.code === 'E_INVALID_ARGUMENT' && /remoteEndpoint/.test(e.message),
      );
    } finally {
      tree.free();
    }
  });
});
