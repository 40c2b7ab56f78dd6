// Issue 11, "Token counting the host controls" (built package, Node entry): `countTokens`
// (sync or async) in every function and handle method that estimates; a counter equal to chars/4
// gives exactly the default results; bad counts are E_INVALID_ARGUMENT naming countTokens; a
// real tokenizer (gpt-tokenizer) moves the cut point; calibration by provider usage; the
// example examples/tokenizer.mjs runs.
// Run: node --test tests/js/tokens.test.mjs
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { countTokens as o200k } from 'gpt-tokenizer';
import * as sc from '../../pkg/index.node.mjs';

/** @typedef {import('../../pkg/index.node.mjs').SessionEntry} SessionEntry */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSIONS = ['pi-session-with-compactions.jsonl', 'pi-session-large.jsonl'].map((f) =>
  join(ROOT, 'examples', 'sessions', f),
);
const T = { timeout: 60_000 };

/** chars/4 in UTF-16 units: the default estimate, as a host counter. @param {string} text */
const charsOver4 = (text) => Math.ceil(text.length / 4);

/** @param {string} file @returns {SessionEntry[]} */
const entriesOf = (file) => /** @type {SessionEntry[]} */ (sc.parseSession(readFileSync(file, 'utf8')).entries);

/** @param {unknown} error */
function namesCountTokens(error) {
  const e = /** @type {any} */ (error);
  assert.equal(e?.code, 'E_INVALID_ARGUMENT', String(e?.message));
  assert.match(e.message, /countTokens/);
  return true;
}

/**
 * A branch of `pairs` user/assistant pairs whose texts are `text(i)`; the last assistant has no
 * usage (the cut rests on the estimates alone).
 * @param {number} pairs @param {(i: number) => string} text @returns {SessionEntry[]}
 */
function branch(pairs, text) {
  /** @type {any[]} */
  const entries = [];
  /** @type {string | null} */
  let parentId = null;
  for (let i = 0; i < pairs * 2; i++) {
    const id = `e${i}`;
    const message =
      i % 2 === 0
        ? { role: 'user', content: text(i), timestamp: i }
        : { role: 'assistant', content: [{ type: 'text', text: text(i) }], stopReason: 'stop', timestamp: i };
    entries.push({ type: 'message', id, parentId, timestamp: new Date(1_735_689_600_000 + i).toISOString(), message });
    parentId = id;
  }
  return entries;
}

/**
 * A user/assistant pair, then six turns that each run `bash` once and get `outputChars` chars
 * of output back (old ones are what pruning takes, SPEC §7).
 * @param {number} outputChars @returns {any[]}
 */
function toolTurns(outputChars) {
  const entries = /** @type {any[]} */ (branch(1, (i) => `text ${i}`));
  let parentId = 'e1';
  for (let k = 0; k < 6; k++) {
    const call = { type: 'toolCall', id: `c${k}`, name: 'bash', arguments: { command: `cat f${k}.rs` } };
    const output = [{ type: 'text', text: 'y'.repeat(outputChars) }];
    const turn = [
      [`u${k}`, { role: 'user', content: `read f${k}.rs`, timestamp: 10 + k }],
      [`a${k}`, { role: 'assistant', content: [call], stopReason: 'toolUse', timestamp: 10 + k }],
      [
        `r${k}`,
        {
          role: 'toolResult',
          toolCallId: `c${k}`,
          toolName: 'bash',
          content: output,
          isError: false,
          timestamp: 10 + k,
        },
      ],
      [
        `d${k}`,
        { role: 'assistant', content: [{ type: 'text', text: 'done' }], stopReason: 'stop', timestamp: 10 + k },
      ],
    ];
    for (const [id, message] of turn) {
      entries.push({
        type: 'message',
        id,
        parentId,
        timestamp: new Date(1_735_689_700_000 + k).toISOString(),
        message,
      });
      parentId = /** @type {string} */ (id);
    }
  }
  return entries;
}

describe('countTokens equal to chars/4 gives the default results', () => {
  for (const file of SESSIONS) {
    test(file.split('/').at(-1) ?? file, T, () => {
      const entries = entriesOf(file);
      for (const e of entries) {
        if (e.type === 'message') {
          const m = /** @type {any} */ (e).message;
          assert.equal(sc.estimateTokens(m, { countTokens: charsOver4 }), sc.estimateTokens(m));
        }
      }
      const n = entries.length;
      assert.deepEqual(
        sc.findCutPoint(entries, 0, n, 5000, { countTokens: charsOver4 }),
        sc.findCutPoint(entries, 0, n, 5000),
      );
      const settings = { keepRecentTokens: 5000 };
      assert.deepEqual(
        sc.prepareCompaction(entries, { ...settings, countTokens: charsOver4 }),
        sc.prepareCompaction(entries, settings),
      );
      assert.deepEqual(
        sc.previewCompaction(entries, { ...settings, countTokens: charsOver4 }),
        sc.previewCompaction(entries, settings),
      );
      assert.equal(sc.estimateContextTokens(entries, { countTokens: charsOver4 }), sc.estimateContextTokens(entries));
      assert.deepEqual(
        sc.prepareBranchEntries(entries, 3000, { countTokens: charsOver4 }),
        sc.prepareBranchEntries(entries, 3000),
      );
      const tree = sc.SessionTree.fromEntries(entries);
      try {
        assert.deepEqual(tree.planCompaction({ ...settings, countTokens: charsOver4 }), tree.planCompaction(settings));
        assert.deepEqual(
          tree.prepareCompaction({ ...settings, countTokens: charsOver4 }),
          tree.prepareCompaction(settings),
        );
        assert.equal(tree.estimateContextTokens({ countTokens: charsOver4 }), tree.estimateContextTokens());
      } finally {
        tree.free();
      }
    });
  }
});

describe('countTokens', () => {
  test('an async counter makes the call return a Promise of the same result', T, async () => {
    const entries = entriesOf(SESSIONS[1]);
    const later = async (/** @type {string} */ t) => charsOver4(t);
    const settings = { keepRecentTokens: 5000 };
    const pending = sc.prepareCompaction(entries, { ...settings, countTokens: later });
    assert.ok(pending instanceof Promise);
    assert.deepEqual(await pending, sc.prepareCompaction(entries, settings));
    const m = /** @type {any} */ (entries.find((e) => e.type === 'message')).message;
    assert.equal(await sc.estimateTokens(m, { countTokens: later }), sc.estimateTokens(m));
    const tree = sc.SessionTree.fromEntries(entries);
    try {
      assert.deepEqual(await tree.planCompaction({ ...settings, countTokens: later }), tree.planCompaction(settings));
      assert.equal(await tree.estimateContextTokens({ countTokens: later }), tree.estimateContextTokens());
    } finally {
      tree.free();
    }
  });

  test('the counter sees the text the estimate counts, each text once per counter', () => {
    /** @type {string[]} */
    const seen = [];
    const counter = (/** @type {string} */ t) => {
      seen.push(t);
      return 1;
    };
    const message = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Hi' },
        { type: 'thinking', thinking: 'hmm' },
        { type: 'toolCall', id: 'c', name: 'read', arguments: { path: 'a.rs' } },
      ],
    };
    assert.equal(sc.estimateTokens(/** @type {any} */ (message), { countTokens: counter }), 1);
    assert.deepEqual(seen, ['Hihmmread{"path":"a.rs"}']);
    assert.equal(sc.estimateTokens(/** @type {any} */ (message), { countTokens: counter }), 1);
    assert.equal(seen.length, 1, 'the count of a text is reused');
    // Images are not text: 1200 tokens each, whatever the counter.
    const image = { role: 'user', content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }], timestamp: 0 };
    assert.equal(sc.estimateTokens(/** @type {any} */ (image), { countTokens: () => 7 }), 1200);
  });

  test('bad counts, throws and rejections are E_INVALID_ARGUMENT naming countTokens', T, async () => {
    const m = /** @type {any} */ ({ role: 'user', content: 'some text to count', timestamp: 0 });
    for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY, 'x', undefined, null]) {
      assert.throws(() => sc.estimateTokens(m, /** @type {any} */ ({ countTokens: () => bad })), namesCountTokens);
    }
    assert.throws(
      () =>
        sc.estimateTokens(m, {
          countTokens: () => {
            throw new Error('tokenizer broke');
          },
        }),
      (/** @type {any} */ e) => namesCountTokens(e) && /tokenizer broke/.test(e.message),
    );
    await assert.rejects(
      /** @type {Promise<number>} */ (
        sc.estimateTokens(m, { countTokens: async () => Promise.reject(new Error('no model file')) })
      ),
      (/** @type {any} */ e) => namesCountTokens(e) && /no model file/.test(e.message),
    );
    await assert.rejects(sc.estimateTokens(m, { countTokens: async () => -3 }), namesCountTokens);
    assert.throws(() => sc.estimateTokens(m, /** @type {any} */ ({ countTokens: 5 })), namesCountTokens);
    assert.throws(() => sc.estimateTokens(m, /** @type {any} */ ({ countToken: charsOver4 })), /countToken/);
  });

  test('countTokens is read where each call documents it, and refused anywhere else', T, async () => {
    const tree = sc.SessionTree.fromEntries(branch(3, (i) => `text ${i}`));
    try {
      const last = /** @type {any} */ (tree.getBranch().at(-1)).message;
      // checkCompaction and compact take it in `settings` (as prepareCompaction does).
      await assert.rejects(
        tree.checkCompaction(
          last,
          /** @type {any} */ ({ contextWindow: 1000, complete: async () => 's', countTokens: charsOver4 }),
        ),
        /unknown option `countTokens`/,
      );
      await assert.rejects(
        tree.compact(/** @type {any} */ ({ complete: async () => 's', countTokens: charsOver4 })),
        /unknown option `countTokens`/,
      );
      for (const bad of [5, 'chars/4', {}]) {
        await assert.rejects(
          tree.checkCompaction(
            last,
            /** @type {any} */ ({ contextWindow: 1000, complete: async () => 's', settings: { countTokens: bad } }),
          ),
          namesCountTokens,
        );
      }
    } finally {
      tree.free();
    }
  });
});

/** 400 chars (100 tokens by chars/4) tagged `m<i>`. @param {number} i */
const long = (i) => `m${i} `.padEnd(400, 'x');
/** Ten times chars/4. @param {string} text */
const tenfold = (text) => 10 * Math.ceil(text.length / 4);

describe('the engine operations count with countTokens (SPEC §3)', () => {
  test('checkCompaction: the threshold, the cut point and tokensBefore follow the counter', T, async () => {
    // 12 messages of 100 tokens by chars/4 (1,200, below the 8,000 threshold of a 10,000
    // window minus 2,000 reserved); 1,000 each by the counter (12,000: above it).
    const entries = branch(6, long);
    const settings = { reserveTokens: 2000, keepRecentTokens: 2500 };
    for (const countTokens of [tenfold, async (/** @type {string} */ t) => tenfold(t)]) {
      const plain = sc.SessionTree.fromEntries(entries);
      const counted = sc.SessionTree.fromEntries(entries);
      try {
        const last = /** @type {any} */ (entries.at(-1)).message;
        const options = { contextWindow: 10_000, complete: async () => '## Goal\nsummary' };
        const without = await plain.checkCompaction(last, { ...options, settings });
        assert.equal(without.contextTokens, 1200);
        assert.equal(without.reason, undefined);
        assert.equal(without.compactionEntry, undefined);

        const expected = /** @type {any} */ (
          await counted.prepareCompaction(/** @type {any} */ ({ ...settings, countTokens }))
        );
        const out = await counted.checkCompaction(last, { ...options, settings: { ...settings, countTokens } });
        assert.equal(out.contextTokens, 12_000);
        assert.equal(out.reason, 'threshold');
        const entry = /** @type {any} */ (out.compactionEntry);
        // Keep 2,500 counted tokens: the last 3 messages (e9 … e11), not 25 by chars/4 (all).
        assert.equal(entry.firstKeptEntryId, 'e9');
        assert.equal(entry.firstKeptEntryId, expected.firstKeptEntryId);
        assert.equal(entry.tokensBefore, expected.tokensBefore);
        assert.equal(out.result?.contextTokensBefore, 12_000);
        // After: the summary and the 3 kept messages, counted.
        const summary = counted.getBranch().at(-1);
        assert.equal(/** @type {any} */ (summary).type, 'compaction');
        assert.ok(/** @type {number} */ (out.result?.contextTokensAfter) < 12_000);
        assert.equal(out.result?.contextTokensAfter, counted.estimateContextTokens({ countTokens: tenfold }));
      } finally {
        plain.free();
        counted.free();
      }
    }
  });

  test('checkCompaction: the pruned tokens are counted by the same counter', T, async () => {
    // A session whose old tool results are pruned (SPEC §7): the saving subtracted from the
    // counted estimate is counted by the counter too.
    const entries = toolTurns(80_000);
    const twice = (/** @type {string} */ t) => 2 * Math.ceil(t.length / 4);
    const plain = sc.SessionTree.fromEntries(entries);
    const counted = sc.SessionTree.fromEntries(entries);
    try {
      const last = entries.at(-1).message;
      const options = { contextWindow: 10_000_000, complete: async () => 's' };
      const a = await plain.checkCompaction(last, { ...options, settings: {} });
      // Pruning decides by the counter too: what planPrune with it says.
      const planned = counted.planPrune({ countTokens: twice }).candidates.length;
      const b = await counted.checkCompaction(last, { ...options, settings: { countTokens: twice } });
      assert.ok(a.prunedCount > 0);
      assert.equal(b.prunedCount, planned);
      assert.ok(b.prunedCount >= a.prunedCount);
      // Each pruned result: 20,000 tokens by chars/4 → a short notice; twice that by the counter.
      const notice = /** @type {any} */ (plain.getBranch().find((e) => e.id === 'r0')).message.content[0].text;
      const perResult = (/** @type {(t: string) => number} */ f) => f('y'.repeat(80_000)) - f(notice);
      assert.equal(a.tokensSaved, a.prunedCount * perResult(charsOver4));
      assert.equal(b.tokensSaved, b.prunedCount * perResult(twice));
    } finally {
      plain.free();
      counted.free();
    }
  });

  test('SessionTree.compact: the cut point of the counter, sync or async', T, async () => {
    for (const countTokens of [tenfold, async (/** @type {string} */ t) => tenfold(t)]) {
      const tree = sc.SessionTree.fromEntries(branch(6, long));
      try {
        const settings = { keepRecentTokens: 2500 };
        // By chars/4 the 1,200 tokens all fit in the 2,500 kept: nothing to compact.
        assert.equal(tree.prepareCompaction(settings), undefined);
        const done = await tree.compact({ complete: async () => 'summary', settings: { ...settings, countTokens } });
        assert.equal(/** @type {any} */ (done.compactionEntry).firstKeptEntryId, 'e9');
        assert.equal(done.result.contextTokensBefore, 12_000);
      } finally {
        tree.free();
      }
    }
  });

  test('navigateTree and generateBranchSummary: the summary budget follows the counter', T, async () => {
    // Ten messages of 100 tokens by chars/4, 1,000 by the counter; a budget of 3,000 - 1,000.
    const entries = branch(5, long);
    /** @param {(request: any) => void} see */
    const model = (see) => async (/** @type {any} */ request) => {
      see(request);
      return 'summary';
    };
    const tagsIn = (/** @type {string} */ prompt) => (prompt.match(/m\d+ x/g) ?? []).length;
    const budget = { contextWindow: 3000, reserveTokens: 1000 };
    for (const countTokens of [undefined, tenfold, async (/** @type {string} */ t) => tenfold(t)]) {
      /** @type {string[]} */
      const prompts = [];
      const complete = model((r) => prompts.push(r.prompt));
      const tree = sc.SessionTree.fromEntries(entries);
      try {
        await tree.navigateTree('e0', {
          summarize: true,
          complete,
          ...budget,
          ...(countTokens ? { countTokens } : {}),
        });
      } finally {
        tree.free();
      }
      const pure = await sc.generateBranchSummary(entries.slice(1), {
        complete,
        ...budget,
        ...(countTokens ? { countTokens } : {}),
      });
      assert.equal(/** @type {any} */ (pure).summary.includes('summary'), true);
      // chars/4: the 9 messages after e0 fit; counted: the newest two (2,000 tokens).
      const want = countTokens ? 2 : 9;
      assert.deepEqual(prompts.map(tagsIn), [want, want]);
    }
  });
});

describe('countTokens in the handle methods that plan and prune, and its failures', () => {
  test('a rejecting async counter rejects the call once and leaves no unhandled rejection', T, async () => {
    /** @type {unknown[]} */
    const unhandled = [];
    const onUnhandled = (/** @type {unknown} */ reason) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const entries = branch(20, long);
      /** @type {string[]} */
      const asked = [];
      const failing = async (/** @type {string} */ t) => {
        asked.push(t);
        if (t.startsWith('m3 ')) throw new Error('tokenizer offline');
        return tenfold(t);
      };
      await assert.rejects(
        /** @type {Promise<unknown>} */ (sc.estimateContextTokens(entries, { countTokens: failing })),
        (/** @type {any} */ e) => namesCountTokens(e) && /tokenizer offline/.test(e.message),
      );
      const tree = sc.SessionTree.fromEntries(entries);
      try {
        const last = /** @type {any} */ (entries.at(-1)).message;
        const settings = { countTokens: failing };
        await assert.rejects(
          // A window above the default reserve (a reserve not below it is refused first, SPEC §13.11).
          tree.checkCompaction(last, { contextWindow: 100_000, complete: async () => 's', settings }),
          namesCountTokens,
        );
        await assert.rejects(tree.compact({ complete: async () => 's', settings }), namesCountTokens);
        await assert.rejects(tree.planPrune({ countTokens: failing }), namesCountTokens);
      } finally {
        tree.free();
      }
      // Give late rejections a chance to surface.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('a text repeated within one call is counted once', () => {
    /** @type {string[]} */
    const asked = [];
    const entries = branch(4, () => 'the same words');
    sc.estimateContextTokens(entries, {
      countTokens: (t) => {
        asked.push(t);
        return 3;
      },
    });
    assert.deepEqual(asked, ['the same words']);
  });

  test('nothingToCompact, planPrune and pruneToolOutputs follow the counter, sync or async', T, async () => {
    // By chars/4 everything fits the 2,500 kept; counted tenfold it does not.
    for (const countTokens of [tenfold, async (/** @type {string} */ t) => tenfold(t)]) {
      const tree = sc.SessionTree.fromEntries(branch(6, long));
      try {
        assert.equal(
          /** @type {any} */ (tree.nothingToCompact({ keepRecentTokens: 2500 }))?.reason !== undefined,
          true,
        );
        assert.equal(await tree.nothingToCompact({ keepRecentTokens: 2500, countTokens }), undefined);
      } finally {
        tree.free();
      }
    }
  });

  test('what checkCompaction prunes with a counter is what its preview predicted', T, async () => {
    const entries = toolTurns(20_000);
    // 5,000 tokens per output by chars/4: under the 40,000 protected, nothing is pruned; counted
    // fourfold (20,000 each) the older ones are.
    const fourfold = (/** @type {string} */ t) => 4 * Math.ceil(t.length / 4);
    const tree = sc.SessionTree.fromEntries(entries);
    try {
      assert.equal(tree.planPrune().candidates.length, 0);
      const planned = tree.planPrune({ countTokens: fourfold });
      assert.ok(planned.candidates.length > 0);
      const previews = sc.previewCompaction(tree.getBranch(), { countTokens: fourfold });
      assert.equal(previews.withPrune.prunedCount, planned.candidates.length);
      const last = entries.at(-1).message;
      const out = await tree.checkCompaction(last, {
        contextWindow: 10_000_000,
        complete: async () => 's',
        settings: { countTokens: fourfold },
      });
      assert.equal(out.prunedCount, planned.candidates.length);
    } finally {
      tree.free();
    }
  });

  test('the types take a CountTokens value wherever countTokens is accepted', T, async () => {
    /** @type {import('../../pkg/index.node.mjs').CountTokens} */
    const counter = charsOver4;
    const entries = branch(3, long);
    const tree = sc.SessionTree.fromEntries(entries);
    try {
      const results = [
        sc.estimateContextTokens(entries, { countTokens: counter }),
        sc.previewCompaction(entries, { countTokens: counter }),
        sc.prepareBranchEntries(entries, 1000, { countTokens: counter }),
        tree.estimateContextTokens({ countTokens: counter }),
        tree.planCompaction({ countTokens: counter }),
        tree.prepareCompaction({ countTokens: counter }),
        tree.nothingToCompact({ countTokens: counter }),
        tree.planPrune({ countTokens: counter }),
      ];
      assert.equal(results.length, 8);
      assert.equal(await results[0], sc.estimateContextTokens(entries));
    } finally {
      tree.free();
    }
  });
});

describe('a real tokenizer (gpt-tokenizer, o200k_base)', () => {
  // Digits separated by spaces: about one token per 2 chars, twice what chars/4 says.
  const digits = (/** @type {number} */ i) => Array.from({ length: 200 }, (_, k) => (i * 7 + k * 3) % 10).join(' ');

  test('the cut point follows the tokenizer', () => {
    const entries = branch(10, digits);
    const perMessage = entries.map((e) =>
      o200k(
        /** @type {any} */ (e).message.role === 'user'
          ? /** @type {any} */ (e).message.content
          : /** @type {any} */ (e).message.content[0].text,
      ),
    );
    const byChars = sc.estimateTokens(/** @type {any} */ (entries[0]).message);
    assert.ok(perMessage[0] > byChars * 1.5, `o200k ${perMessage[0]} vs chars/4 ${byChars}`);
    // Keep the tokens of the last 4 messages: the tokenizer keeps 4, chars/4 more than 6.
    const keep = perMessage.slice(-4).reduce((a, b) => a + b, 0);
    const n = entries.length;
    const counted = /** @type {any} */ (sc.findCutPoint(entries, 0, n, keep, { countTokens: o200k }));
    const plain = sc.findCutPoint(entries, 0, n, keep);
    assert.equal(counted.firstKeptEntryIndex, n - 4);
    assert.ok(plain.firstKeptEntryIndex < n - 6, `chars/4 cut at ${plain.firstKeptEntryIndex}`);
    const prep = /** @type {any} */ (sc.prepareCompaction(entries, { keepRecentTokens: keep, countTokens: o200k }));
    assert.equal(prep.firstKeptEntryId, `e${n - 4}`);
    assert.equal(prep.recentMessages.length, 4);
    assert.equal(
      sc.estimateContextTokens(entries, { countTokens: o200k }),
      perMessage.reduce((a, b) => a + b, 0),
    );
  });

  test('examples/tokenizer.mjs runs', T, async () => {
    const path = join(ROOT, 'examples', 'tokenizer.mjs');
    assert.ok(readFileSync(path, 'utf8').trimEnd().split('\n').length < 30, 'under 30 lines');
    const { stdout } = await promisify(execFile)(process.execPath, [path]);
    const tree = sc.SessionTree.fromBytes(readFileSync(SESSIONS[1]));
    try {
      const tokens = tree.estimateContextTokens({ countTokens: o200k });
      assert.match(stdout, new RegExp(`context tokens: chars/4 ${tree.estimateContextTokens()} \\| o200k ${tokens}`));
      assert.match(stdout, /first kept entry: chars\/4 \d+ \| o200k \d+/);
      assert.match(stdout, /calibrated by usage: factor [\d.]+ first kept \d+/);
    } finally {
      tree.free();
    }
  });
});

describe('tokenCalibration: "usage"', () => {
  /** 8 messages of 100 estimated tokens; the last assistant reports `input` prompt tokens. */
  const session = (/** @type {number} */ input) => {
    const entries = branch(4, (i) => (i % 2 ? 'a' : 'u').repeat(400));
    /** @type {any} */ (entries[7]).message.usage = {
      input,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: input,
    };
    return entries;
  };

  test('usage 1.5× the estimate: the estimates are scaled and the cut point moves', () => {
    const entries = session(1050); // the 7 messages before it: 700 estimated tokens
    const settings = { keepRecentTokens: 300, tokenCalibration: /** @type {const} */ ('usage') };
    const prep = /** @type {any} */ (sc.prepareCompaction(entries, settings));
    assert.equal(prep.tokenCalibrationFactor, 1.5);
    // 300 provider tokens = 200 estimated ones: the last two messages.
    assert.equal(prep.firstKeptEntryId, 'e6');
    assert.equal(sc.findCutPoint(entries, 0, 8, 200).firstKeptEntryIndex, 6);
    const plain = /** @type {any} */ (sc.prepareCompaction(entries, { keepRecentTokens: 300 }));
    assert.equal(plain.tokenCalibrationFactor, undefined);
    assert.equal(plain.firstKeptEntryId, 'e5', 'the adaptive keep (1050 / 800) keeps 228');
    const tree = sc.SessionTree.fromEntries(entries);
    try {
      const plan = /** @type {any} */ (tree.planCompaction(settings));
      assert.equal(plan.tokenCalibrationFactor, 1.5);
      assert.equal(plan.effectiveKeepRecentTokens, 200);
      assert.equal(/** @type {any} */ (tree.prepareCompaction(settings)).tokenCalibrationFactor, 1.5);
    } finally {
      tree.free();
    }
  });

  test('usage half the estimate: calibration keeps more', () => {
    const entries = session(350);
    const prep = /** @type {any} */ (
      sc.prepareCompaction(entries, { keepRecentTokens: 300, tokenCalibration: 'usage' })
    );
    assert.equal(prep.tokenCalibrationFactor, 0.5);
    assert.equal(prep.firstKeptEntryId, 'e2');
    assert.throws(
      () => sc.prepareCompaction(entries, /** @type {any} */ ({ tokenCalibration: 'provider' })),
      /tokenCalibration|provider/,
    );
  });
});
