// The asynchronous API of the built package (pkg/, Node entry), SPEC §9–§11:
//   - the `compact` and `generateBranchSummary` conformance vectors through `compact()` and
//     `generateBranchSummary()` (canned replies per purpose, the requests recorded and compared,
//     the conformance templates installed with setPromptTemplate; $CONFORMANCE_DIR honoured);
//   - with a recording fake `complete`: purposes, maxTokens, reasoning, the prompt frame order,
//     parallel history + turn-prefix calls, hooks (order, effects, failures → E_HOOK), cancel at
//     every await point (AbortSignal and abortCompaction()), E_BUSY, callbacks re-entering the
//     handle, navigateTree, generateBranchSummary, and checkCompaction (threshold and overflow
//     paths, retries with 1 ms delays and server-given waits of a few ms, candidate order, the
//     failure messages, events);
//   - the remote endpoint against real HTTP servers on 127.0.0.1 (ephemeral ports): success,
//     500, 429 with retry-after, malformed replies, connection refused; no request header is
//     ever echoed in an error.
// Run: node --test tests/js/async.test.mjs
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as sc from '../../pkg/index.node.mjs';
import { applyDeviation, collect, diff, entrySource, isObject, loadDeviations } from './support/vectors.mjs';

/** @typedef {import('../../pkg/index.node.mjs').CompleteRequest} CompleteRequest */
/** @typedef {import('../../pkg/index.node.mjs').SessionEntry} SessionEntry */
/** @typedef {import('../../pkg/index.node.mjs').AgentMessage} AgentMessage */
/** @typedef {import('../../pkg/index.node.mjs').SessionTree} SessionTree */
/** @typedef {(request: CompleteRequest) => Promise<string>} Complete */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIR = resolve(process.env.CONFORMANCE_DIR || join(ROOT, 'tests', 'conformance'));
const REAL_SESSION = join(ROOT, 'examples', 'sessions', 'pi-session-large.jsonl');
const CONTINUE_PROMPT = 'Continue if you have next steps.';
const SEPARATOR = '\n\n---\n\n**Turn Context (split turn):**\n\n';
/** Every test must end quickly: a missed abort or a sequential await shows up as a timeout. */
const T = { timeout: 10_000 };

// ---------------------------------------------------------------------------------------------
// Helpers

/** @param {unknown} error */
const codeOf = (error) => /** @type {any} */ (error)?.code;

/**
 * Asserts that `promise` rejects with an Error carrying `code` (and a message matching `message`).
 * @param {Promise<unknown>} promise @param {string} code @param {RegExp | string} [message]
 * @returns {Promise<any>} the error
 */
async function rejectsCode(promise, code, message) {
  /** @type {any} */
  let caught;
  await assert.rejects(promise, (/** @type {any} */ error) => {
    caught = error;
    return true;
  });
  assert.ok(caught instanceof Error, `expected an Error, got ${caught}`);
  assert.equal(codeOf(caught), code, `code of "${caught.message}"`);
  if (typeof message === 'string') assert.equal(caught.message, message);
  else if (message) assert.match(caught.message, message);
  return caught;
}

/** @template T @returns {{ promise: Promise<T>, resolve: (v: T) => void, reject: (e: unknown) => void }} */
function deferred() {
  /** @type {any} */
  let res;
  /** @type {any} */
  let rej;
  const promise = /** @type {Promise<T>} */ (new Promise((a, b) => ((res = a), (rej = b))));
  return { promise, resolve: res, reject: rej };
}

/** A promise that never settles (a model or hook that hangs until the operation is aborted). */
const never = () => new Promise(() => {});

/** Waits (macrotask by macrotask, at most ~2 s) until `condition()` holds. @param {() => boolean} condition @param {string} what */
async function waitFor(condition, what) {
  const end = Date.now() + 2000;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** Lets queued microtasks and one macrotask run. */
const settle = () => new Promise((r) => setTimeout(r, 5));

/**
 * A synthetic session: `turns` turns of a user request, `pairs` tool calls (read/edit of
 * src/m<turn>/f<pair>.ts) with `size`-character results, and a closing assistant text; with
 * `previousCompaction`, a compaction entry after the first turn. Assistant messages report
 * a small usage (150 tokens) from provider `p`, model `m`.
 */
function makeSession({ turns = 3, pairs = 4, size = 2000, previousCompaction = false } = {}) {
  /** @type {any[]} */
  const entries = [];
  /** @type {string | null} */
  let parent = null;
  let n = 0;
  let t = Date.parse('2025-01-01T00:00:00Z');
  const add = (/** @type {any} */ e) => {
    const id = `e${String(n++).padStart(7, '0')}`;
    const entry = { ...e, id, parentId: parent, timestamp: new Date((t += 1000)).toISOString() };
    entries.push(entry);
    parent = id;
    return entry;
  };
  const msg = (/** @type {any} */ message) => add({ type: 'message', message: { ...message, timestamp: t + 1000 } });
  const usage = {
    input: 100,
    output: 50,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 150,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  const assistant = (/** @type {any[]} */ content) =>
    msg({
      role: 'assistant',
      content,
      api: 'x',
      provider: 'p',
      model: 'm',
      usage,
      stopReason: content.some((b) => b.type === 'toolCall') ? 'toolUse' : 'stop',
    });
  for (let turn = 0; turn < turns; turn++) {
    msg({
      role: 'user',
      content: [{ type: 'text', text: `Task ${turn}: please work on module ${turn}. ${'u'.repeat(size / 4)}` }],
    });
    for (let p = 0; p < pairs; p++) {
      const callId = `call-${turn}-${p}`;
      const tool = p % 2 ? 'edit' : 'read';
      assistant([
        { type: 'text', text: `Step ${p} of task ${turn}` },
        {
          type: 'toolCall',
          id: callId,
          name: tool,
          arguments: { path: `src/m${turn}/f${p}.ts`, ...(p % 2 ? { oldText: 'a', newText: 'b' } : {}) },
        },
      ]);
      msg({
        role: 'toolResult',
        toolCallId: callId,
        toolName: tool,
        content: [{ type: 'text', text: `result ${turn}.${p} ${'r'.repeat(size)}` }],
        isError: false,
      });
    }
    assistant([{ type: 'text', text: `Done with task ${turn}.` }]);
    if (previousCompaction && turn === 0) {
      add({
        type: 'compaction',
        summary: 'PREVIOUS SUMMARY TEXT',
        firstKeptEntryId: entries[entries.length - 2].id,
        tokensBefore: 1234,
      });
    }
  }
  return /** @type {SessionEntry[]} */ (entries);
}

/** Settings that make the synthetic session a split turn: 20 messages of history, 5 of turn prefix, 5 kept. */
const SETTINGS = { reserveTokens: 2000, keepRecentTokens: 1500 };
/** A context window whose threshold (window − reserve = 100) the synthetic session (150 tokens) crosses. */
const SMALL_WINDOW = 2100;

/** @param {SessionEntry[]} [entries] @returns {SessionTree} */
const treeOf = (entries = makeSession()) => sc.SessionTree.fromEntries(entries);

/** The last assistant message on the branch. @param {SessionTree} tree @returns {AgentMessage} */
function lastAssistant(tree) {
  const entry = /** @type {any} */ (
    [...tree.getBranch()]
      .reverse()
      .find((e) => e.type === 'message' && /** @type {any} */ (e).message.role === 'assistant')
  );
  return entry.message;
}

/**
 * A fake `complete` that records every request and answers `answer(request)` (default
 * "<purpose> summary").
 * @param {(request: CompleteRequest) => string | Promise<string>} [answer]
 */
function recorder(answer = (r) => `${r.purpose} summary`) {
  /** @type {CompleteRequest[]} */
  const calls = [];
  /** @type {Complete} */
  const complete = async (request) => {
    calls.push(request);
    return answer(request);
  };
  return { calls, complete };
}

/** An Error as a provider SDK throws it. @param {string} message @param {Record<string, unknown>} [fields] */
const apiError = (message, fields = {}) => Object.assign(new Error(message), fields);

// ---------------------------------------------------------------------------------------------
// Conformance vectors (compact, generateBranchSummary)

const { resolveEntries } = entrySource(DIR);
const DEVIATIONS = loadDeviations(DIR);

/**
 * A canned `complete` for a vector (as tests/runner/summary_ops.rs does natively): the reply of
 * the request's purpose (`update` falls back to `history`; a branch summary has one reply), and
 * every request recorded as the vectors write it.
 * @param {any} replies `llmResponses` (by purpose) or `llmResponse` (branch)
 * @param {number} now
 * @param {boolean} branch
 */
function canned(replies, now, branch) {
  /** @type {any[]} */
  const requests = [];
  /** @type {Complete} */
  const complete = async (request) => {
    /** @type {Record<string, unknown>} */
    const rec = {
      purpose: request.purpose,
      systemPrompt: request.systemPrompt,
      prompt: request.prompt,
      messageTimestamp: now,
      maxTokens: request.maxTokens,
    };
    if (request.reasoning !== undefined) rec.reasoning = request.reasoning;
    requests.push(rec);
    const reply = branch
      ? replies
      : (replies?.[request.purpose] ?? (request.purpose === 'update' ? replies?.history : undefined));
    if (reply?.stopReason === 'error') throw new Error(reply.errorMessage ?? 'Summarization failed');
    if (reply?.stopReason === 'aborted') throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    return Array.isArray(reply?.texts) ? reply.texts.join('\n') : (reply?.text ?? '');
  };
  return { requests, complete };
}

/** Runs one `compact` vector through the JS API. @param {any} input */
async function runCompact(input) {
  const prep = input.preparation ?? sc.prepareCompaction(resolveEntries(input.entries), input.settings);
  if (prep === undefined) return { preparation: null };
  const { requests, complete } = canned(input.llmResponses, input.now, false);
  try {
    const result = await sc.compact(prep, {
      complete,
      customInstructions: input.customInstructions,
      promptOverride: input.options?.promptOverride,
      extraContext: input.options?.extraContext,
    });
    return { requests, result };
  } catch (error) {
    return { requests, error: /** @type {Error} */ (error).message };
  }
}

/** Runs one `generateBranchSummary` vector through the JS API. @param {any} input */
async function runBranch(input) {
  const { requests, complete } = canned(input.llmResponse, input.now, true);
  /** @type {any} */
  const result = await sc.generateBranchSummary(resolveEntries(input.entries), {
    complete,
    contextWindow: input.model?.contextWindow,
    reserveTokens: input.reserveTokens,
    customInstructions: input.customInstructions,
  });
  // The vectors write an empty selection as the summary alone.
  if (result.summary === 'No content to summarize') return { requests, result: { summary: result.summary } };
  return { requests, result };
}

describe('conformance vectors through the JS API', () => {
  const templates = join(DIR, 'templates');
  before(() => {
    for (const name of readdirSync(templates)
      .filter((n) => n.endsWith('.md'))
      .sort()) {
      sc.setPromptTemplate(name, readFileSync(join(templates, name), 'utf8'));
    }
  });
  after(() => sc.resetPromptTemplates());

  const vectors = collect(join(DIR, 'cases')).map((path) => ({ path, vector: JSON.parse(readFileSync(path, 'utf8')) }));
  for (const [op, run] of /** @type {const} */ ([
    ['compact', runCompact],
    ['generateBranchSummary', runBranch],
  ])) {
    test(`conformance: ${op}`, async () => {
      const mine = vectors.filter((v) => v.vector.op === op);
      assert.ok(mine.length > 0, `no ${op} vectors under ${DIR}/cases`);
      /** @type {string[]} */
      const failures = [];
      for (const { vector } of mine) {
        try {
          let expected = vector.expected;
          const deviation = DEVIATIONS.get(vector.name);
          if (deviation) {
            const applied = applyDeviation(expected, deviation);
            expected = applied.expected;
            for (const line of applied.shown)
              console.log(`DEVIATION ${vector.name} [${op}] §${deviation.item}: ${line}`);
          }
          const actual = await run(vector.input);
          const spec = vector.input?.entries;
          const d = diff(expected, actual, isObject(spec) ? resolveEntries(spec) : null, '$');
          if (d) failures.push(`${vector.name}: ${d}`);
        } catch (error) {
          failures.push(
            `${vector.name}: threw ${codeOf(error) ?? ''} ${/** @type {Error} */ (error)?.message ?? error}`,
          );
        }
      }
      assert.deepEqual(failures, [], `${failures.length} of ${mine.length} ${op} vectors failed`);
    });
  }

  test('the templates are installed for the vectors and restored afterwards', () => {
    const system = readFileSync(join(templates, 'summarization-system.md'), 'utf8');
    assert.ok(sc.getPromptTemplate('summarization-system.md').length > 0);
    assert.ok(sc.promptTemplateNames().includes('summarization-system.md'));
    assert.equal(sc.getPromptTemplate('summarization-system.md').trim().slice(0, 20), system.trim().slice(0, 20));
  });
});

test('resetPromptTemplates restores the defaults', () => {
  const name = 'summarization-system.md';
  const original = sc.getPromptTemplate(name);
  sc.setPromptTemplate(name, 'CUSTOM SYSTEM');
  assert.equal(sc.getPromptTemplate(name), 'CUSTOM SYSTEM');
  sc.resetPromptTemplates();
  assert.equal(sc.getPromptTemplate(name), original);
});

// ---------------------------------------------------------------------------------------------
// compact() with a recording fake

describe('compact() with a recording complete', () => {
  test('purposes, maxTokens, reasoning, the signal, and the composed result', T, async () => {
    const prep = /** @type {NonNullable<ReturnType<typeof sc.prepareCompaction>>} */ (
      sc.prepareCompaction(makeSession(), SETTINGS)
    );
    assert.ok(prep.isSplitTurn && prep.turnPrefixMessages.length > 0 && prep.messagesToSummarize.length > 0);
    const { calls, complete } = recorder();
    const result = await sc.compact(prep, { complete });
    assert.deepEqual(
      calls.map((c) => c.purpose),
      ['history', 'turnPrefix', 'short'],
    );
    // floor(0.8·2000), floor(0.5·2000), min(512, floor(0.2·2000))
    assert.deepEqual(
      calls.map((c) => c.maxTokens),
      [1600, 1000, 400],
    );
    assert.deepEqual(
      calls.map((c) => c.reasoning),
      ['high', 'high', 'high'],
    );
    for (const c of calls) {
      assert.ok(c.signal instanceof AbortSignal, 'each request carries an AbortSignal');
      assert.equal(c.signal.aborted, false);
      assert.equal(c.systemPrompt, calls[0].systemPrompt);
      assert.ok(c.systemPrompt.length > 0);
    }
    assert.ok(result.summary.startsWith(`history summary${SEPARATOR}turnPrefix summary`), result.summary.slice(0, 120));
    assert.equal(result.shortSummary, 'short summary');
    assert.equal(result.firstKeptEntryId, prep.firstKeptEntryId);
    assert.equal(result.tokensBefore, prep.tokensBefore);
    assert.ok(result.details.readFiles.includes('src/m2/f0.ts'), JSON.stringify(result.details));
    assert.ok(result.details.modifiedFiles.includes('src/m2/f1.ts'), JSON.stringify(result.details));
    // The file blocks follow the summary after a blank line (SPEC §12.10), and the short request sees the
    // composed summary.
    assert.ok(result.summary.includes('turnPrefix summary\n\n<read-files>\n'), 'file blocks after a blank line');
    assert.match(
      calls[2].prompt,
      /<previous-summary>\nhistory summary\n\n---\n\n\*\*Turn Context \(split turn\):\*\*\n\nturnPrefix summary\n<\/previous-summary>/,
    );
  });

  test(
    'the prompt frame: conversation, previous-summary, additional-context, instructions (in that order)',
    T,
    async () => {
      const prep = /** @type {any} */ (sc.prepareCompaction(makeSession({ previousCompaction: true }), SETTINGS));
      assert.equal(prep.previousSummary, 'PREVIOUS SUMMARY TEXT');
      const { calls, complete } = recorder();
      await sc.compact(prep, {
        complete,
        promptOverride: 'OVERRIDDEN INSTRUCTIONS',
        extraContext: ['first context line', 'second context line'],
        customInstructions: 'focus on the tests',
      });
      assert.deepEqual(
        calls.map((c) => c.purpose),
        ['update', 'turnPrefix', 'short'],
      );
      const p = calls[0].prompt;
      const at = (/** @type {string} */ s) => {
        const i = p.indexOf(s);
        assert.ok(i >= 0, `the update prompt contains ${JSON.stringify(s)}`);
        return i;
      };
      assert.equal(at('<conversation>\n'), 0);
      const order = [
        at('\n</conversation>\n\n'),
        at('<previous-summary>\nPREVIOUS SUMMARY TEXT\n</previous-summary>\n\n'),
        at('<additional-context>\n- first context line\n- second context line\n</additional-context>\n\n'),
        at('OVERRIDDEN INSTRUCTIONS'),
        at('\n\nAdditional focus: focus on the tests'),
      ];
      assert.deepEqual(
        [...order].sort((a, b) => a - b),
        order,
        'frame order',
      );
      assert.ok(p.endsWith('OVERRIDDEN INSTRUCTIONS\n\nAdditional focus: focus on the tests'), p.slice(-120));
      // The turn prefix has its own instructions: no previous summary, context, override or focus.
      const prefix = calls[1].prompt;
      for (const s of ['<previous-summary>', '<additional-context>', 'OVERRIDDEN', 'Additional focus'])
        assert.ok(!prefix.includes(s), `turn prefix without ${s}`);
      // The short summary: the composed summary as previous summary, the context lines, its own instructions.
      const short = calls[2].prompt;
      assert.ok(short.indexOf('<previous-summary>\nupdate summary') > short.indexOf('</conversation>'));
      assert.ok(short.indexOf('<additional-context>') > short.indexOf('</previous-summary>'));
      assert.ok(!short.includes('OVERRIDDEN') && !short.includes('Additional focus'));
    },
  );

  test('history and turn prefix are both requested before either is answered', T, async () => {
    const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
    /** @type {Map<string, ReturnType<typeof deferred<string>>>} */
    const pending = new Map();
    /** @type {string[]} */
    const order = [];
    /** @type {Complete} */
    const complete = (request) => {
      order.push(request.purpose);
      if (request.purpose === 'short') return Promise.resolve('short');
      const d = deferred();
      pending.set(request.purpose, /** @type {any} */ (d));
      return /** @type {Promise<string>} */ (d.promise);
    };
    const running = sc.compact(prep, { complete });
    await waitFor(() => pending.size === 2, 'both history and turnPrefix to be requested');
    assert.deepEqual(order, ['history', 'turnPrefix']);
    // Answer in the other order: the composition does not depend on it.
    pending.get('turnPrefix')?.resolve('PREFIX');
    await settle();
    assert.deepEqual(order, ['history', 'turnPrefix'], 'no short request before both answers');
    pending.get('history')?.resolve('HISTORY');
    const result = await running;
    assert.deepEqual(order, ['history', 'turnPrefix', 'short']);
    assert.ok(result.summary.startsWith(`HISTORY${SEPARATOR}PREFIX`));
  });

  test(
    '"No prior history." when only the turn prefix is summarized; the previous summary when nothing is',
    T,
    async () => {
      const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
      const { calls, complete } = recorder();
      const onlyPrefix = await sc.compact({ ...prep, messagesToSummarize: [] }, { complete });
      assert.deepEqual(
        calls.map((c) => c.purpose),
        ['turnPrefix', 'short'],
      );
      assert.ok(onlyPrefix.summary.startsWith(`No prior history.${SEPARATOR}turnPrefix summary`));
      const nothing = await sc.compact(
        { ...prep, messagesToSummarize: [], turnPrefixMessages: [], isSplitTurn: false, previousSummary: 'OLD' },
        { complete: recorder().complete },
      );
      assert.ok(nothing.summary.startsWith('OLD'));
    },
  );

  test('a failing model rejects with E_MODEL and its message and status; a non-string answer too', T, async () => {
    const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
    const error = await rejectsCode(
      sc.compact(prep, { complete: async () => Promise.reject(apiError('upstream exploded', { status: 502 })) }),
      'E_MODEL',
      'upstream exploded',
    );
    assert.equal(error.status, 502);
    await rejectsCode(
      sc.compact(prep, { complete: /** @type {any} */ (async () => 42) }),
      'E_MODEL',
      /must resolve to a string/,
    );
    await rejectsCode(sc.compact(prep, /** @type {any} */ ({})), 'E_INVALID_ARGUMENT');
  });

  test('an empty or blank answer is E_MODEL, never an empty summary (SPEC §13.5)', T, async () => {
    const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
    for (const blank of ['', '  \n\t ']) {
      await rejectsCode(sc.compact(prep, { complete: async () => blank }), 'E_MODEL', /history request is empty/);
      const tree = treeOf();
      const count = tree.entryCount;
      await rejectsCode(tree.compact({ complete: async () => blank, settings: SETTINGS }), 'E_MODEL', /is empty/);
      assert.equal(tree.entryCount, count, 'nothing appended');
      const fallback = await tree.compact({
        complete: async () => blank,
        settings: { ...SETTINGS, fallback: 'extractive' },
      });
      assert.equal(fallback.result.summarizer, 'extractive');
      assert.ok(String(fallback.compactionEntry.summary).trim().length > 0);
    }
    // only the short summary empty: the history summary stays, the short one is a failure
    const short = await sc.compact(prep, {
      complete: async (/** @type {any} */ r) => (r.purpose === 'short' ? '' : `answer for ${r.purpose}`),
    });
    assert.ok(short.summary.startsWith('answer for'), short.summary);
    assert.equal(short.shortSummaryError, "the model's answer to the short summary request is empty");
  });

  test('an AbortSignal stops compact() at once; an aborted one before any call', T, async () => {
    const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
    const controller = new AbortController();
    /** @type {CompleteRequest[]} */
    const seen = [];
    const running = sc.compact(prep, {
      signal: controller.signal,
      complete: (request) => {
        seen.push(request);
        if (seen.length === 2) controller.abort();
        return /** @type {Promise<string>} */ (never());
      },
    });
    await rejectsCode(running, 'E_ABORTED', 'Compaction aborted');
    assert.equal(seen[0].signal, controller.signal, "the caller's signal is handed to complete");
    const calls = recorder();
    await rejectsCode(sc.compact(prep, { complete: calls.complete, signal: AbortSignal.abort() }), 'E_ABORTED');
    assert.equal(calls.calls.length, 0);
  });

  test('extractiveSummarizer is a ready-made complete: marked as extractive, deterministic', T, async () => {
    const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
    const a = await sc.compact(prep, { complete: sc.extractiveSummarizer });
    const b = await sc.compact(prep, { complete: sc.extractiveSummarizer });
    assert.deepEqual(a, b);
    assert.match(a.summary.split('\n')[0], /extractive/i);
    assert.match(a.summary, /Task 0: please work on module 0/);
    assert.ok(a.shortSummary.length > 0);
  });
});

// ---------------------------------------------------------------------------------------------
// SessionTree.compact: hooks, cancel, abort, busy

/** The compaction points where an abort can land, in pipeline order. */
const ABORT_POINTS = ['session_before_compact', 'session.compacting', 'history', 'turnPrefix', 'short'];

describe('SessionTree.compact', () => {
  test('hooks run in order with their events, and their answers shape the compaction', T, async () => {
    const tree = treeOf();
    const count = tree.entryCount;
    const leaf = tree.leafId;
    /** @type {string[]} */
    const log = [];
    /** @type {Record<string, any>} */
    const events = {};
    const { calls, complete } = recorder((r) => {
      log.push(`complete:${r.purpose}`);
      return `${r.purpose} summary`;
    });
    const done = await tree.compact({
      complete,
      settings: SETTINGS,
      customInstructions: 'keep the paths',
      hooks: {
        session_before_compact: async (event) => {
          log.push(event.type);
          events.before = event;
          return {};
        },
        'session.compacting': (event) => {
          log.push(event.type);
          events.compacting = event;
          return Promise.resolve({
            prompt: 'HOOK PROMPT',
            context: ['hook context line'],
            preserveData: { kept: [1, 2] },
          });
        },
        session_compact: (event) => {
          log.push(event.type);
          events.compact = event;
          // Callbacks may call back into the handle: the entry is already in.
          assert.equal(tree.getEntry(event.compactionEntry.id)?.type, 'compaction');
        },
      },
    });
    assert.deepEqual(log, [
      'session_before_compact',
      'session.compacting',
      'complete:history',
      'complete:turnPrefix',
      'complete:short',
      'session_compact',
    ]);
    // session_before_compact: the preparation, the branch, the instructions, a signal.
    assert.equal(events.before.type, 'session_before_compact');
    assert.deepEqual(events.before.preparation, sc.prepareCompaction(makeSession(), SETTINGS));
    assert.equal(events.before.branchEntries.length, count);
    assert.equal(events.before.customInstructions, 'keep the paths');
    assert.ok(events.before.signal instanceof AbortSignal);
    // session.compacting: the messages to summarize + the turn prefix.
    assert.equal(events.compacting.type, 'session.compacting');
    assert.equal(
      events.compacting.messages.length,
      events.before.preparation.messagesToSummarize.length + events.before.preparation.turnPrefixMessages.length,
    );
    assert.ok(calls[0].prompt.includes('<additional-context>\n- hook context line\n</additional-context>'));
    assert.ok(calls[0].prompt.endsWith('HOOK PROMPT\n\nAdditional focus: keep the paths'), calls[0].prompt.slice(-80));
    // The entry: appended under the old leaf, with preserveData; the context rebuilt.
    const entry = /** @type {any} */ (done.compactionEntry);
    assert.equal(done.fromExtension, false);
    assert.equal(tree.entryCount, count + 1);
    assert.equal(tree.leafId, entry.id);
    assert.equal(entry.type, 'compaction');
    assert.equal(entry.parentId, leaf);
    assert.deepEqual(entry.preserveData, { kept: [1, 2] });
    assert.equal(entry.summary, done.result.summary);
    assert.equal(entry.shortSummary, 'short summary');
    assert.deepEqual(entry.details, done.result.details);
    assert.deepEqual(events.compact, { type: 'session_compact', compactionEntry: entry, fromExtension: false });
    assert.deepEqual(done.context, tree.buildSessionContext());
    assert.equal(done.context.messages[0].role, 'compactionSummary');
    assert.equal(tree.isCompacting, false);
  });

  test('the saved compaction line writes whole numbers as integers, as JSON.stringify does', T, async () => {
    const lastLine = (/** @type {sc.SessionTree} */ tree) => tree.toJsonl().trimEnd().split('\n').at(-1) ?? '';
    const tree = treeOf();
    const done = await tree.compact({ complete: recorder().complete, settings: SETTINGS });
    const entry = /** @type {any} */ (done.compactionEntry);
    assert.ok(Number.isInteger(entry.tokensBefore) && entry.tokensBefore > 0, String(entry.tokensBefore));
    const line = lastLine(tree);
    assert.ok(line.includes(`"tokensBefore":${entry.tokensBefore},`), line.slice(0, 400));
    assert.doesNotMatch(line, /"tokensBefore":\d+\.0\b/);
    assert.equal(line, JSON.stringify(entry));
    // A hook's compaction: its tokensBefore and its details' numbers too.
    const other = treeOf();
    await other.compact({
      complete: recorder().complete,
      settings: SETTINGS,
      hooks: {
        session_before_compact: () => ({
          compaction: { summary: 'EXT', tokensBefore: 1234, details: { n: 5, ratio: 0.5 } },
        }),
      },
    });
    const ext = lastLine(other);
    assert.ok(ext.includes('"tokensBefore":1234,'), ext);
    assert.ok(ext.includes('"details":{"n":5,"ratio":0.5}'), ext);
  });

  test(
    'session_before_compact: cancel → E_CANCELLED "Compaction cancelled"; a supplied compaction is used as is',
    T,
    async () => {
      const tree = treeOf();
      const count = tree.entryCount;
      const { calls, complete } = recorder();
      await rejectsCode(
        tree.compact({ complete, settings: SETTINGS, hooks: { session_before_compact: () => ({ cancel: true }) } }),
        'E_CANCELLED',
        'Compaction cancelled',
      );
      assert.equal(tree.entryCount, count);
      assert.equal(calls.length, 0);

      let compacting = 0;
      /** @type {any} */
      let after;
      const done = await tree.compact({
        complete,
        settings: SETTINGS,
        hooks: {
          session_before_compact: async () => ({
            compaction: { summary: 'FROM THE EXTENSION', details: { custom: true } },
          }),
          'session.compacting': () => {
            compacting++;
          },
          session_compact: (event) => {
            after = event;
          },
        },
      });
      assert.equal(calls.length, 0, 'no model call');
      assert.equal(compacting, 0, 'session.compacting only runs when no hook supplied a compaction');
      const entry = /** @type {any} */ (done.compactionEntry);
      assert.equal(done.fromExtension, true);
      assert.equal(entry.fromExtension, true);
      assert.equal(entry.summary, 'FROM THE EXTENSION');
      assert.deepEqual(entry.details, { custom: true });
      assert.equal(
        entry.firstKeptEntryId,
        /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS)).firstKeptEntryId,
      );
      assert.equal(after.fromExtension, true);
      assert.equal(tree.entryCount, count + 1);
    },
  );

  for (const hook of ['session_before_compact', 'session.compacting']) {
    for (const how of ['throws', 'rejects']) {
      test(`a hook that ${how} (${hook}) fails with E_HOOK and its message; nothing is appended`, T, async () => {
        const tree = treeOf();
        const count = tree.entryCount;
        const { calls, complete } = recorder();
        const fail =
          how === 'throws'
            ? () => {
                throw new Error('hook said no');
              }
            : async () => {
                throw new Error('hook said no');
              };
        const error = await rejectsCode(
          tree.compact({ complete, settings: SETTINGS, hooks: { [hook]: fail } }),
          'E_HOOK',
          /hook said no/,
        );
        assert.match(error.message, new RegExp(hook.replace('.', '\\.')));
        assert.equal(tree.entryCount, count);
        assert.equal(calls.length, 0);
        assert.equal(tree.isCompacting, false);
      });
    }
  }

  test('a failing session_compact hook rejects with E_HOOK (after the entry was appended)', T, async () => {
    const tree = treeOf();
    await rejectsCode(
      tree.compact({
        complete: recorder().complete,
        settings: SETTINGS,
        hooks: { session_compact: () => Promise.reject(new Error('after-hook broke')) },
      }),
      'E_HOOK',
      /after-hook broke/,
    );
    assert.equal(tree.isCompacting, false);
  });

  for (const how of ['AbortSignal', 'abortCompaction()']) {
    for (const point of ABORT_POINTS) {
      test(`cancel at ${point} via ${how}: E_ABORTED, nothing appended, the handle usable again`, T, async () => {
        const tree = treeOf();
        const count = tree.entryCount;
        const controller = new AbortController();
        const abort = () => (how === 'AbortSignal' ? controller.abort() : tree.abortCompaction());
        /** @type {AbortSignal[]} */
        const signals = [];
        const hang = (/** @type {AbortSignal | undefined} */ signal) => {
          if (signal) signals.push(signal);
          abort();
          return never();
        };
        const hooks = {
          session_before_compact: (/** @type {any} */ e) =>
            point === 'session_before_compact' ? hang(e.signal) : undefined,
          'session.compacting': () => (point === 'session.compacting' ? hang(undefined) : undefined),
        };
        /** @type {Complete} */
        const complete = (request) =>
          request.purpose === point
            ? /** @type {Promise<string>} */ (hang(request.signal))
            : Promise.resolve(`${request.purpose} ok`);
        await rejectsCode(
          tree.compact({
            complete,
            hooks,
            settings: SETTINGS,
            ...(how === 'AbortSignal' ? { signal: controller.signal } : {}),
          }),
          'E_ABORTED',
          'Compaction aborted',
        );
        assert.equal(tree.entryCount, count, 'nothing appended');
        assert.equal(tree.isCompacting, false);
        for (const s of signals) assert.equal(s.aborted, true, 'the signal handed to the callback is aborted too');
        const again = await tree.compact({ complete: recorder().complete, settings: SETTINGS });
        assert.equal(again.compactionEntry.type, 'compaction');
      });
    }
  }

  test(
    'abortCompaction() in the same tick as the call reaches compact, navigateTree and checkCompaction',
    T,
    async () => {
      const tree = treeOf();
      const count = tree.entryCount;
      const leaf = tree.leafId;
      const { calls, complete } = recorder();
      // A Promise's work starts in a later microtask: the call is already "compacting".
      const compacting = tree.compact({ complete, settings: SETTINGS });
      assert.equal(tree.isCompacting, true);
      tree.abortCompaction();
      await rejectsCode(compacting, 'E_ABORTED', 'Compaction aborted');
      const target = /** @type {any} */ (
        tree.getBranch().find((e) => e.type === 'message' && e.message.role === 'user')
      );
      const navigating = tree.navigateTree(target.id, { summarize: true, complete });
      assert.equal(tree.isCompacting, true);
      tree.abortCompaction();
      const moved = await navigating;
      assert.deepEqual([moved.cancelled, moved.aborted, moved.newLeafId], [true, true, leaf]);
      const checking = tree.checkCompaction(lastAssistant(tree), {
        contextWindow: SMALL_WINDOW,
        settings: SETTINGS,
        complete,
      });
      tree.abortCompaction();
      // As with a signal aborted before the call: the check itself is aborted.
      await rejectsCode(checking, 'E_ABORTED', 'Compaction check aborted');
      assert.deepEqual([tree.entryCount, tree.leafId, calls.length, tree.isCompacting], [count, leaf, 0, false]);
      // The abort was for those calls only: the next one runs.
      const done = await tree.compact({ complete, settings: SETTINGS });
      assert.equal(done.compactionEntry.type, 'compaction');
      assert.equal(tree.isCompacting, false);
    },
  );

  test(
    'E_BUSY: one compaction at a time; isCompacting while it runs; callbacks may re-enter the handle',
    T,
    async () => {
      const tree = treeOf();
      const gate = deferred();
      let reentered = 0;
      /** @type {Complete} */
      const slow = async (request) => {
        // Re-entering the handle from a callback is fine (no borrow is held across an await).
        assert.equal(tree.isCompacting, true);
        assert.ok(tree.getBranch().length > 0);
        tree.buildSessionContext();
        reentered++;
        await gate.promise;
        return `${request.purpose} ok`;
      };
      const first = tree.compact({ complete: slow, settings: SETTINGS });
      await waitFor(() => reentered > 0, 'the first compaction to call the model');
      assert.equal(tree.isCompacting, true);
      await rejectsCode(tree.compact({ complete: recorder().complete, settings: SETTINGS }), 'E_BUSY');
      await rejectsCode(
        tree.checkCompaction(lastAssistant(tree), {
          contextWindow: SMALL_WINDOW,
          settings: SETTINGS,
          complete: recorder().complete,
        }),
        'E_BUSY',
      );
      await rejectsCode(tree.navigateTree(/** @type {string} */ (tree.getBranch()[0].id), {}), 'E_BUSY');
      gate.resolve(undefined);
      const done = await first;
      assert.equal(done.compactionEntry.type, 'compaction');
      assert.equal(tree.isCompacting, false);
      await rejectsCode(tree.compact({ complete: recorder().complete }), 'E_ALREADY_COMPACTED', 'Already compacted');
    },
  );

  test('E_NOTHING_TO_COMPACT and E_INVALID_ARGUMENT', T, async () => {
    const tiny = treeOf(makeSession({ turns: 1, pairs: 0, size: 8 }));
    await rejectsCode(tiny.compact({ complete: recorder().complete }), 'E_NOTHING_TO_COMPACT', 'Nothing to compact');
    await rejectsCode(treeOf().compact(/** @type {any} */ ({})), 'E_INVALID_ARGUMENT');
    await rejectsCode(treeOf().compact(/** @type {any} */ ({ complete: 'not a function' })), 'E_INVALID_ARGUMENT');
  });

  test('nothing to compact: session_before_compact still runs, marked, and may supply the compaction', T, async () => {
    const tiny = treeOf(makeSession({ turns: 1, pairs: 0, size: 8 }));
    const count = tiny.entryCount;
    /** @type {any[]} */
    const seen = [];
    const { calls, complete } = recorder();
    await rejectsCode(
      tiny.compact({ complete, hooks: { session_before_compact: (event) => void seen.push(event) } }),
      'E_NOTHING_TO_COMPACT',
    );
    assert.equal(seen.length, 1);
    const prep = seen[0].preparation;
    assert.equal(prep.nothingToCompact, true);
    assert.deepEqual([prep.messagesToSummarize, prep.turnPrefixMessages], [[], []]);
    assert.equal(prep.firstKeptEntryId, tiny.getBranch()[0].id);
    assert.equal(prep.recentMessages.length, tiny.getBranch().length);
    assert.equal(calls.length, 0, 'no model call');
    assert.equal(tiny.entryCount, count);

    const first = /** @type {string} */ (tiny.getBranch()[0].id);
    const done = await tiny.compact({
      complete,
      hooks: {
        session_before_compact: () => ({ compaction: { summary: 'EXTENSION SUMMARY', firstKeptEntryId: first } }),
      },
    });
    assert.equal(done.fromExtension, true);
    assert.equal(done.compactionEntry.summary, 'EXTENSION SUMMARY');
    assert.equal(done.compactionEntry.fromExtension, true);
    assert.equal(tiny.entryCount, count + 1);
    assert.equal(calls.length, 0);
  });

  test('the real session compacts with the extractive summarizer', T, async () => {
    const tree = sc.SessionTree.fromBytes(readFileSync(REAL_SESSION));
    const before = tree.estimateContextTokens();
    const done = await tree.compact({ complete: sc.extractiveSummarizer });
    assert.ok(tree.estimateContextTokens() < before / 2);
    assert.match(done.result.summary, /extractive/i);
    assert.ok(done.context.messages.length < tree.getBranch().length);
    // The package's own summarizer is named as the writer (it was `model`); a function of the
    // host's that calls it is the host's model.
    assert.equal(done.result.summarizer, 'extractive');
    assert.equal(done.result.fallbackReason, undefined);
    const again = sc.SessionTree.fromBytes(readFileSync(REAL_SESSION));
    const wrapped = await again.compact({ complete: (/** @type {any} */ r) => sc.extractiveSummarizer(r) });
    assert.equal(wrapped.result.summarizer, 'model');
    assert.equal(wrapped.result.summary, done.result.summary);
    // As checkCompaction's one candidate too.
    const checked = sc.SessionTree.fromBytes(readFileSync(REAL_SESSION));
    const last = checked.buildSessionContext().messages.findLast((m) => m.role === 'assistant');
    const check = await checked.checkCompaction(/** @type {any} */ (last), {
      contextWindow: 100000,
      candidates: [{ complete: sc.extractiveSummarizer }],
    });
    assert.equal(check.result?.summarizer, 'extractive');
    for (const t of [tree, again, checked]) t.free();
  });
});

// ---------------------------------------------------------------------------------------------
// navigateTree and generateBranchSummary

describe('navigateTree', () => {
  /** A session with the first user message as the navigation target. */
  const setup = () => {
    const tree = treeOf();
    const branch = tree.getBranch();
    const users = /** @type {any[]} */ (
      branch.filter((e) => e.type === 'message' && /** @type {any} */ (e).message.role === 'user')
    );
    return { tree, branch, target: users[1], count: tree.entryCount, oldLeaf: /** @type {string} */ (tree.leafId) };
  };

  test('summarize: hooks in order, the branch request, the branch_summary entry under the new leaf', T, async () => {
    const { tree, target, count, oldLeaf } = setup();
    /** @type {string[]} */
    const log = [];
    /** @type {Record<string, any>} */
    const events = {};
    const { calls, complete } = recorder((r) => {
      log.push(`complete:${r.purpose}`);
      return 'BRANCH TEXT';
    });
    const out = await tree.navigateTree(target.id, {
      summarize: true,
      customInstructions: 'mention the modules',
      complete,
      hooks: {
        session_before_tree: async (event) => {
          log.push(event.type);
          events.before = event;
        },
        session_tree: (event) => {
          log.push(event.type);
          events.after = event;
        },
      },
    });
    assert.deepEqual(log, ['session_before_tree', 'complete:branch', 'session_tree']);
    assert.equal(events.before.preparation.targetId, target.id);
    assert.equal(events.before.preparation.oldLeafId, oldLeaf);
    assert.equal(events.before.preparation.userWantsSummary, true);
    assert.ok(events.before.preparation.entriesToSummarize.length > 0);
    assert.ok(events.before.signal instanceof AbortSignal);
    assert.equal(calls[0].maxTokens, 2048);
    assert.equal(calls[0].reasoning, undefined);
    // The host's instructions replace the branch-summary template (SPEC §10).
    assert.ok(calls[0].prompt.endsWith('</conversation>\n\nmention the modules'), calls[0].prompt.slice(-200));
    assert.ok(!calls[0].prompt.includes('Additional focus'));
    // A user message goes back to the editor; its parent is the new leaf, the summary under it.
    assert.match(/** @type {string} */ (out.editorText), /^Task 1: please work on module 1/);
    assert.equal(out.cancelled, false);
    const entry = /** @type {any} */ (out.summaryEntry);
    assert.equal(entry.type, 'branch_summary');
    assert.equal(entry.parentId, target.parentId);
    assert.equal(entry.fromId, oldLeaf);
    assert.ok(entry.summary.includes('BRANCH TEXT'));
    assert.ok(Array.isArray(entry.details.readFiles) && Array.isArray(entry.details.modifiedFiles));
    assert.equal(out.newLeafId, entry.id);
    assert.equal(tree.leafId, entry.id);
    assert.equal(tree.entryCount, count + 1);
    assert.deepEqual(events.after, {
      type: 'session_tree',
      newLeafId: entry.id,
      oldLeafId: oldLeaf,
      summaryEntry: entry,
      fromExtension: false,
    });
  });

  test('without summarize: only the leaf moves; a non-user target becomes the leaf itself', T, async () => {
    const { tree, branch, count } = setup();
    const assistant = /** @type {any} */ (
      branch.find((e) => e.type === 'message' && /** @type {any} */ (e).message.role === 'assistant')
    );
    const out = await tree.navigateTree(assistant.id, {});
    assert.deepEqual(out, { cancelled: false, newLeafId: assistant.id });
    assert.equal(tree.leafId, assistant.id);
    assert.equal(tree.entryCount, count);
    await rejectsCode(tree.navigateTree('no-such-entry', {}), 'E_NOT_FOUND');
  });

  test('session_before_tree: cancel changes nothing; a supplied summary is used (fromExtension)', T, async () => {
    const { tree, target, count, oldLeaf } = setup();
    const { calls, complete } = recorder();
    const cancelled = await tree.navigateTree(target.id, {
      summarize: true,
      complete,
      hooks: { session_before_tree: () => ({ cancel: true }) },
    });
    assert.equal(cancelled.cancelled, true);
    assert.equal(cancelled.newLeafId, oldLeaf, 'the leaf stays where it was');
    assert.equal(tree.leafId, oldLeaf);
    assert.equal(tree.entryCount, count);
    const out = await tree.navigateTree(target.id, {
      summarize: true,
      complete,
      hooks: { session_before_tree: async () => ({ summary: { summary: 'HOOK SUMMARY', details: { x: 1 } } }) },
    });
    assert.equal(calls.length, 0);
    const entry = /** @type {any} */ (out.summaryEntry);
    assert.equal(entry.summary, 'HOOK SUMMARY');
    assert.equal(entry.fromExtension, true);
    assert.deepEqual(entry.details, { x: 1 });
  });

  test('abort (signal or abortCompaction) while summarizing: cancelled and aborted, nothing changed', T, async () => {
    for (const how of ['signal', 'abortCompaction']) {
      const { tree, target, count, oldLeaf } = setup();
      const controller = new AbortController();
      const out = await tree.navigateTree(target.id, {
        summarize: true,
        ...(how === 'signal' ? { signal: controller.signal } : {}),
        complete: () => {
          if (how === 'signal') controller.abort();
          else tree.abortCompaction();
          return /** @type {Promise<string>} */ (never());
        },
      });
      assert.equal(out.cancelled, true, how);
      assert.equal(out.aborted, true, how);
      assert.equal(out.newLeafId, oldLeaf, how);
      assert.equal(tree.leafId, oldLeaf, how);
      assert.equal(tree.entryCount, count, how);
      assert.equal(tree.isCompacting, false, how);
    }
  });

  test('a failing hook: E_HOOK, nothing changed', T, async () => {
    const { tree, target, count, oldLeaf } = setup();
    await rejectsCode(
      tree.navigateTree(target.id, {
        summarize: true,
        complete: recorder().complete,
        hooks: { session_before_tree: () => Promise.reject(new Error('tree hook failed')) },
      }),
      'E_HOOK',
      /tree hook failed/,
    );
    assert.equal(tree.leafId, oldLeaf);
    assert.equal(tree.entryCount, count);
  });
});

describe('generateBranchSummary', () => {
  const entries = makeSession({ turns: 2 });

  test('a summary with file lists; the request has purpose "branch" and 2048 tokens', T, async () => {
    const { calls, complete } = recorder(() => 'BRANCH');
    const out = /** @type {any} */ (
      await sc.generateBranchSummary(entries, { complete, customInstructions: 'be brief' })
    );
    assert.deepEqual(
      calls.map((c) => [c.purpose, c.maxTokens, c.reasoning]),
      [['branch', 2048, undefined]],
    );
    // The instructions replace the branch-summary template (SPEC §10).
    assert.ok(calls[0].prompt.endsWith('</conversation>\n\nbe brief'));
    // Preamble, model text and file blocks are joined by blank lines (SPEC §12.10).
    assert.match(out.summary, /^\[[^\n]+\]\n\nBRANCH\n\n<read-files>\n/);
    assert.deepEqual(out.readFiles, ['src/m0/f0.ts', 'src/m0/f2.ts', 'src/m1/f0.ts', 'src/m1/f2.ts']);
    assert.deepEqual(out.modifiedFiles, ['src/m0/f1.ts', 'src/m0/f3.ts', 'src/m1/f1.ts', 'src/m1/f3.ts']);
  });

  test('{error} for a failing model, {aborted: true} for an abort, never a rejection', T, async () => {
    assert.deepEqual(
      await sc.generateBranchSummary(entries, { complete: () => Promise.reject(new Error('model down')) }),
      { error: 'model down' },
    );
    const controller = new AbortController();
    const aborted = await sc.generateBranchSummary(entries, {
      signal: controller.signal,
      complete: () => {
        controller.abort();
        return /** @type {Promise<string>} */ (never());
      },
    });
    assert.deepEqual(aborted, { aborted: true });
    const empty = /** @type {any} */ (await sc.generateBranchSummary([], { complete: recorder().complete }));
    assert.equal(empty.summary, 'No content to summarize');
  });
});

// ---------------------------------------------------------------------------------------------
// checkCompaction

/**
 * checkCompaction on a fresh synthetic session whose threshold is crossed.
 * @param {Partial<import('../../pkg/index.node.mjs').CheckCompactionOptions>} options
 * @param {{ tree?: SessionTree, message?: AgentMessage }} [over]
 */
async function check(options, over = {}) {
  const tree = over.tree ?? treeOf();
  const count = tree.entryCount;
  /** @type {any[]} */
  const events = [];
  const result = await tree.checkCompaction(over.message ?? lastAssistant(tree), {
    contextWindow: SMALL_WINDOW,
    settings: SETTINGS,
    retry: { baseDelayMs: 1 },
    onEvent: (e) => events.push(e),
    ...options,
  });
  return { tree, count, events, result };
}

/** An overflow error reply of the same model, appended to the session, newer than any compaction. */
function overflowMessage(/** @type {SessionTree} */ tree) {
  const message = /** @type {AgentMessage} */ (
    /** @type {unknown} */ ({
      role: 'assistant',
      content: [],
      api: 'x',
      provider: 'p',
      model: 'm',
      usage: {
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: 'error',
      errorMessage: 'prompt is too long: 213462 tokens > 200000 maximum',
      timestamp: Date.parse('2025-06-01T00:00:00Z'),
    })
  );
  tree.appendEntry(
    /** @type {SessionEntry} */ (
      /** @type {unknown} */ ({
        type: 'message',
        id: 'overflow',
        parentId: tree.leafId,
        timestamp: '2025-06-01T00:00:00.000Z',
        message,
      })
    ),
  );
  return message;
}

describe('checkCompaction', () => {
  test('threshold: compact, then "Continue if you have next steps."; events start/end', T, async () => {
    const { calls, complete } = recorder();
    const { tree, count, events, result } = await check({ complete });
    assert.equal(result.reason, 'threshold');
    assert.equal(result.willRetry, false);
    assert.equal(result.aborted, false);
    assert.equal(result.continuePrompt, CONTINUE_PROMPT);
    assert.equal(result.errorMessage, undefined);
    assert.equal(/** @type {any} */ (result.compactionEntry).type, 'compaction');
    assert.equal(tree.entryCount, count + 1);
    assert.deepEqual(
      calls.map((c) => c.purpose),
      ['history', 'turnPrefix', 'short'],
    );
    assert.deepEqual(events, [
      { type: 'auto_compaction_start', reason: 'threshold' },
      { type: 'auto_compaction_end', result: result.result, aborted: false, willRetry: false },
      // The synthetic threshold (100 tokens) is below any summary: reported as no progress (SPEC §13.5).
      {
        type: 'auto_compaction_no_progress',
        reason: 'threshold',
        contextTokensBefore: result.result?.contextTokensBefore,
        contextTokensAfter: result.result?.contextTokensAfter,
      },
    ]);
    assert.equal(result.result?.noProgress, true);
    assert.ok(Number(result.result?.contextTokensAfter) < Number(result.result?.contextTokensBefore));
  });

  test('threshold with autoContinue: false: no continue prompt; below the threshold: nothing', T, async () => {
    const quiet = await check({ complete: recorder().complete, settings: { ...SETTINGS, autoContinue: false } });
    assert.equal(quiet.result.reason, 'threshold');
    assert.equal(quiet.result.continuePrompt, undefined);
    const { calls, complete } = recorder();
    const below = await check({ complete, contextWindow: 200_000 });
    assert.equal(below.result.reason, undefined);
    assert.equal(below.result.compactionEntry, undefined);
    assert.deepEqual(below.events, []);
    assert.equal(calls.length, 0);
  });

  test(
    'overflow whose compaction leaves a context that cannot fit: appended, but willRetry false and why',
    T,
    async () => {
      const tree = treeOf();
      const count = tree.entryCount;
      const message = overflowMessage(tree);
      // A 1,000-token window: the 1,500 tokens kept alone do not fit in it, so the retried turn
      // would overflow again (SPEC §13.5).
      const { result, events } = await check(
        {
          complete: recorder().complete,
          model: 'p/m',
          contextWindow: 1000,
          settings: { ...SETTINGS, reserveTokens: 100 },
        },
        { tree, message },
      );
      assert.equal(result.reason, 'overflow');
      assert.equal(result.result?.noProgress, true);
      assert.ok(Number(result.result?.contextTokensAfter) >= 1000, 'at the window or above');
      assert.equal(/** @type {any} */ (result.compactionEntry).type, 'compaction');
      assert.equal(tree.entryCount, count + 2, 'the overflow message and the compaction');
      assert.equal(result.willRetry, false);
      assert.equal(result.context, undefined);
      assert.equal(result.continuePrompt, undefined);
      const why =
        'Context overflow recovery failed: the compaction made no progress (context estimated at ' +
        `${result.result?.contextTokensAfter} tokens after it, ${result.result?.contextTokensBefore} before; ` +
        'context window 1000), so a retry would overflow again';
      assert.equal(result.errorMessage, why);
      assert.deepEqual(events, [
        { type: 'auto_compaction_start', reason: 'overflow' },
        { type: 'auto_compaction_end', result: result.result, aborted: false, willRetry: false, errorMessage: why },
        {
          type: 'auto_compaction_no_progress',
          reason: 'overflow',
          contextTokensBefore: result.result?.contextTokensBefore,
          contextTokensAfter: result.result?.contextTokensAfter,
        },
      ]);
    },
  );

  test(
    'overflow: compact, willRetry, the error message left out of the context but kept in the session',
    T,
    async () => {
      const tree = treeOf();
      const message = overflowMessage(tree);
      const { result, events } = await check(
        { complete: recorder().complete, contextWindow: 200_000, model: 'p/m' },
        { tree, message },
      );
      assert.equal(result.reason, 'overflow');
      assert.equal(result.willRetry, true);
      assert.equal(result.continuePrompt, undefined);
      const context = /** @type {any} */ (result.context);
      assert.ok(context.messages.length > 0);
      assert.ok(
        !context.messages.some((/** @type {any} */ m) => m.errorMessage === message.errorMessage),
        'the overflow error is not in the retry context',
      );
      assert.equal(tree.getEntry('overflow')?.type, 'message', 'it stays in the session as history');
      assert.ok(tree.getBranch().some((e) => e.id === 'overflow'));
      assert.deepEqual(
        events.map((e) => [e.type, e.reason ?? e.willRetry]),
        [
          ['auto_compaction_start', 'overflow'],
          ['auto_compaction_end', true],
        ],
      );
      // Another model's overflow is not recovered by this one.
      const other = treeOf();
      const otherResult = await check(
        { complete: recorder().complete, contextWindow: 200_000, model: 'q/other' },
        { tree: other, message: overflowMessage(other) },
      );
      assert.equal(otherResult.result.reason, undefined);
    },
  );

  test('transient failures are retried with baseDelayMs · 2^attempt', T, async () => {
    let failures = 0;
    const started = performance.now();
    const { result } = await check({
      candidates: [
        {
          complete: async (r) => {
            if (r.purpose === 'history' && failures < 2) {
              failures++;
              throw apiError('503 Service Unavailable', { status: 503 });
            }
            return `${r.purpose} ok`;
          },
        },
      ],
    });
    assert.equal(failures, 2);
    assert.equal(result.errorMessage, undefined);
    assert.ok(/** @type {any} */ (result.result).summary.startsWith('history ok'));
    assert.ok(performance.now() - started < 2000, 'waits of 1 and 2 ms');
  });

  for (const [name, fields] of /** @type {[string, Record<string, unknown>][]} */ ([
    ['retryAfterMs', { retryAfterMs: 40 }],
    ['headers retry-after-ms', { headers: { 'retry-after-ms': '40' } }],
    ['Headers retry-after (seconds)', { headers: new Headers({ 'Retry-After': '0.04' }) }],
    ['headers x-ratelimit-reset-ms', { headers: { 'x-ratelimit-reset-ms': '40' } }],
    ['response.headers', { response: { status: 429, headers: new Headers({ 'retry-after-ms': '40' }) } }],
  ])) {
    test(`the wait a server asks for is honoured (${name})`, T, async () => {
      /** @type {number[]} */
      const times = [];
      await check({
        complete: async (r) => {
          if (r.purpose !== 'history') return 'ok';
          times.push(performance.now());
          if (times.length === 1) throw apiError('429 Too Many Requests', { status: 429, ...fields });
          return 'ok';
        },
      });
      assert.equal(times.length, 2);
      const gap = times[1] - times[0];
      assert.ok(gap >= 35, `waited ${gap.toFixed(1)} ms, not the 40 ms the server asked for (baseDelayMs is 1)`);
      assert.ok(gap < 1000, `waited ${gap.toFixed(1)} ms`);
    });
  }

  test(
    'candidates in order: a non-transient error, an overflow error, or a wait over maxWaitMs moves to the next at once',
    T,
    async () => {
      for (const [label, error, attemptsOfA] of /** @type {[string, Error, number][]} */ ([
        ['non-transient', apiError('invalid api key', { status: 401 }), 1],
        ['overflow text', apiError('prompt is too long: 300000 tokens > 200000 maximum', { status: 429 }), 1],
        ['wait over maxWaitMs', apiError('rate limit', { status: 429, retryAfterMs: 60_000 }), 1],
        ['retries exhausted', apiError('overloaded', { status: 529 }), 3],
      ])) {
        /** @type {string[]} */
        const log = [];
        const started = performance.now();
        const { result } = await check({
          retry: { baseDelayMs: 1, maxRetries: 2 },
          candidates: [
            {
              complete: async (r) => {
                log.push(`A:${r.purpose}`);
                throw error;
              },
            },
            {
              complete: async (r) => {
                log.push(`B:${r.purpose}`);
                return `B ${r.purpose}`;
              },
            },
          ],
        });
        assert.equal(result.errorMessage, undefined, label);
        assert.ok(/** @type {any} */ (result.result).summary.startsWith('B history'), label);
        for (const purpose of ['history', 'turnPrefix', 'short']) {
          const mine = log.filter((l) => l.endsWith(`:${purpose}`));
          assert.deepEqual(mine, [...Array(attemptsOfA).fill(`A:${purpose}`), `B:${purpose}`], `${label}: ${purpose}`);
        }
        assert.ok(performance.now() - started < 2000, `${label}: no long wait`);
      }
    },
  );

  test(
    'failure messages: "Auto-compaction failed: …" and "Context overflow recovery failed: …"; nothing appended',
    T,
    async () => {
      const failing = [
        { complete: () => Promise.reject(new Error('A down')) },
        { complete: () => Promise.reject(new Error('B down')) },
      ];
      // No extractive fallback (`fallback: "none"`): the failure is reported as it is.
      const strict = { ...SETTINGS, fallback: /** @type {const} */ ('none') };
      const threshold = await check({ candidates: failing, settings: strict });
      assert.equal(threshold.result.errorMessage, 'Auto-compaction failed: B down');
      assert.equal(threshold.result.willRetry, false);
      assert.equal(threshold.result.aborted, false);
      assert.equal(threshold.tree.entryCount, threshold.count);
      assert.deepEqual(threshold.events.at(-1), {
        type: 'auto_compaction_end',
        aborted: false,
        willRetry: false,
        errorMessage: 'Auto-compaction failed: B down',
      });

      const tree = treeOf();
      const message = overflowMessage(tree);
      const overflow = await check(
        { candidates: failing, contextWindow: 200_000, settings: strict },
        { tree, message },
      );
      assert.equal(overflow.result.reason, 'overflow');
      assert.equal(overflow.result.errorMessage, 'Context overflow recovery failed: B down');
      assert.equal(overflow.result.willRetry, false);
      assert.equal(tree.entryCount, overflow.count);
      assert.deepEqual(overflow.events.at(-1), {
        type: 'auto_compaction_end',
        aborted: false,
        willRetry: false,
        errorMessage: 'Context overflow recovery failed: B down',
      });
    },
  );

  test('abort (signal or abortCompaction): aborted, no error message, nothing appended', T, async () => {
    for (const how of ['signal', 'abortCompaction']) {
      const tree = treeOf();
      const controller = new AbortController();
      const { result, events, count } = await check(
        {
          ...(how === 'signal' ? { signal: controller.signal } : {}),
          complete: (r) => {
            if (r.purpose !== 'history') return Promise.resolve('ok');
            if (how === 'signal') controller.abort();
            else tree.abortCompaction();
            return /** @type {Promise<string>} */ (never());
          },
        },
        { tree },
      );
      assert.equal(result.aborted, true, how);
      assert.equal(result.errorMessage, undefined, how);
      assert.equal(tree.entryCount, count, how);
      assert.deepEqual(events.at(-1), { type: 'auto_compaction_end', aborted: true, willRetry: false }, how);
    }
  });

  test('a retry wait is cut short by an abort', T, async () => {
    const tree = treeOf();
    const started = performance.now();
    const { result } = await check(
      {
        retry: { baseDelayMs: 20_000, maxWaitMs: 30_000 },
        complete: async (r) => {
          if (r.purpose === 'history') {
            setTimeout(() => tree.abortCompaction(), 10);
            throw apiError('overloaded', { status: 503 });
          }
          return 'ok';
        },
      },
      { tree },
    );
    assert.equal(result.aborted, true);
    assert.ok(performance.now() - started < 2000, 'the 20 s wait did not run out');
  });
});

// ---------------------------------------------------------------------------------------------
// The remote endpoint against real local HTTP servers

/**
 * Starts an HTTP server on 127.0.0.1 (ephemeral port) answering with `handler(body)` (`null`:
 * never answers); records every request's headers and JSON body, and counts the requests whose
 * connection the client closed before an answer.
 * @param {(body: any) => { status?: number, headers?: Record<string, string>, body: string } | null} handler
 */
async function serve(handler) {
  /** @type {{ headers: import('node:http').IncomingHttpHeaders, method: string | undefined, body: any }[]} */
  const requests = [];
  let dropped = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      requests.push({ headers: req.headers, method: req.method, body });
      const reply = handler(body);
      if (reply === null) {
        res.on('close', () => dropped++);
        return;
      }
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}/summarize`,
    requests,
    dropped: () => dropped,
    close: () =>
      new Promise((r) => {
        server.close(() => r(undefined));
        server.closeAllConnections(); // keep-alive connections of fetch would hold close() for seconds
      }),
  };
}

/** The error message echoes no request header (name: value) and no header value. @param {string} message @param {any[]} requests */
function assertNoHeaderEcho(message, requests) {
  for (const word of ['content-type', 'application/json', 'user-agent', 'authorization']) {
    assert.ok(!message.toLowerCase().includes(word), `"${message}" mentions ${word}`);
  }
  for (const r of requests) {
    for (const [name, value] of Object.entries(r.headers)) {
      // `host` is the endpoint's own address, which the message names on purpose.
      if (name === 'host') continue;
      const v = String(value);
      if (v.length > 4) assert.ok(!message.includes(v), `"${message}" echoes the ${name} header`);
    }
  }
}

describe('remote endpoint (HTTP on 127.0.0.1)', () => {
  test(
    'success: POST {systemPrompt, prompt} as JSON, {summary} read back, through compact() and SessionTree',
    T,
    async () => {
      const server = await serve((body) => ({ body: JSON.stringify({ summary: `remote ${body.purpose}` }) }));
      try {
        const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
        const result = await sc.compact(prep, { remoteEndpoint: server.url });
        assert.ok(result.summary.startsWith(`remote history${SEPARATOR}remote turnPrefix`));
        assert.equal(result.shortSummary, 'remote short');
        assert.equal(server.requests.length, 3);
        for (const r of server.requests) {
          assert.equal(r.method, 'POST');
          assert.match(String(r.headers['content-type']), /^application\/json/);
          assert.equal(typeof r.body.systemPrompt, 'string');
          assert.equal(typeof r.body.prompt, 'string');
          assert.ok(r.body.prompt.startsWith('<conversation>\n'));
        }
        const tree = treeOf();
        const done = await tree.compact({ remoteEndpoint: server.url, settings: SETTINGS });
        assert.equal(done.compactionEntry.type, 'compaction');
        assert.equal(done.result.shortSummary, 'remote short');
        const branch = tree.getBranch();
        const nav = await tree.navigateTree(/** @type {string} */ (branch[1].id), {
          summarize: true,
          remoteEndpoint: server.url,
        });
        assert.ok(/** @type {any} */ (nav.summaryEntry).summary.includes('remote branch'));
      } finally {
        await server.close();
      }
    },
  );

  for (const [
    name,
    reply,
    pattern,
    status,
  ] of /** @type {[string, { status?: number, headers?: Record<string, string>, body: string }, RegExp, number | undefined][]} */ ([
    ['500', { status: 500, body: '{"error":"internal"}' }, /HTTP 500/, 500],
    ['429 with retry-after', { status: 429, headers: { 'retry-after': '7' }, body: 'slow down' }, /HTTP 429/, 429],
    ['a reply that is not JSON', { body: 'this is not json' }, /not JSON/, 200],
    ['a reply without summary', { body: '{"text":"no summary field"}' }, /no string `summary`/, 200],
    ['a summary that is not a string', { body: '{"summary":42}' }, /no string `summary`/, 200],
    ['a 500 that echoes the request headers', { status: 500, body: 'ECHO' }, /HTTP 500/, 500],
  ])) {
    test(`${name} → E_REMOTE with the status, no request header echoed`, T, async () => {
      /** @type {any} */
      let server;
      server = await serve(() =>
        reply.body === 'ECHO' ? { ...reply, body: JSON.stringify(server.requests.at(-1).headers) } : reply,
      );
      try {
        const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
        const error = await rejectsCode(sc.compact(prep, { remoteEndpoint: server.url }), 'E_REMOTE', pattern);
        assert.equal(error.status, status);
        assertNoHeaderEcho(error.message, server.requests);
        const tree = treeOf();
        const count = tree.entryCount;
        await rejectsCode(tree.compact({ remoteEndpoint: server.url, settings: SETTINGS }), 'E_REMOTE', pattern);
        assert.equal(tree.entryCount, count, 'nothing appended');
        assert.equal(tree.isCompacting, false);
      } finally {
        await server.close();
      }
    });
  }

  test('an abort also cancels the HTTP requests in flight (signal and abortCompaction)', T, async () => {
    for (const how of ['signal', 'abortCompaction']) {
      const server = await serve(() => null);
      try {
        const tree = treeOf();
        const count = tree.entryCount;
        const controller = new AbortController();
        const running = tree.compact({
          remoteEndpoint: server.url,
          settings: SETTINGS,
          ...(how === 'signal' ? { signal: controller.signal } : {}),
        });
        await waitFor(() => server.requests.length === 2, 'the history and turn-prefix requests');
        if (how === 'signal') controller.abort();
        else tree.abortCompaction();
        await rejectsCode(running, 'E_ABORTED', 'Compaction aborted');
        await waitFor(() => server.dropped() === 2, `${how}: the client to close both requests`);
        assert.equal(tree.entryCount, count);
      } finally {
        await server.close();
      }
    }
  });

  test('connection refused → E_REMOTE without a status', T, async () => {
    const server = await serve(() => ({ body: '{}' }));
    const url = server.url;
    await server.close(); // the port is free now: nothing listens there
    const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
    const error = await rejectsCode(
      sc.compact(prep, { remoteEndpoint: url }),
      'E_REMOTE',
      /remote summarizer: no answer from http:\/\/127\.0\.0\.1:\d+/,
    );
    // The network cause is named (Node.js: the `cause` of fetch's TypeError).
    assert.match(error.message, /ECONNREFUSED/);
    assert.equal(error.status, undefined);
    assertNoHeaderEcho(error.message, []);
  });

  test('credentials in remoteEndpoint never reach the error message', T, async () => {
    const server = await serve(() => ({ body: '{"summary":"s"}' }));
    try {
      const url = server.url.replace('http://', 'http://agent:s3cr3t-pass@');
      const prep = /** @type {any} */ (sc.prepareCompaction(makeSession(), SETTINGS));
      // fetch refuses a URL with credentials, and its message quotes the URL.
      const error = await rejectsCode(sc.compact(prep, { remoteEndpoint: url }), 'E_REMOTE', /remote summarizer: /);
      assert.doesNotMatch(error.message, /s3cr3t|agent:/);
      assert.match(error.message, /http:\/\/\[redacted\]@127\.0\.0\.1:\d+/);
    } finally {
      await server.close();
    }
  });
});
