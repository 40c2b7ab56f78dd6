// The core of the async suite (tests/js/async.test.mjs) under Deno, on the web entry of the built
// package (pkg/index.web.mjs):
//   deno run --allow-read --allow-net=127.0.0.1 tests/deno/async.mjs     (or -A)
// Checks: the `compact` and `generateBranchSummary` conformance vectors through the JS API
// ($CONFORMANCE_DIR honoured); compact() with a recording fake complete (purposes, maxTokens,
// the prompt frame, parallel history + turn prefix); SessionTree.compact with hooks (order,
// effects, E_HOOK, E_CANCELLED), abort at every await point (AbortSignal and abortCompaction()),
// E_BUSY; navigateTree; generateBranchSummary; checkCompaction (threshold, retries with 1 ms
// delays and a server-given wait, candidate order, failure messages); and the remote endpoint
// served by Deno.serve on 127.0.0.1: success, 500, 429, malformed replies, connection refused.
import {
  compact,
  extractiveSummarizer,
  generateBranchSummary,
  init,
  prepareCompaction,
  resetPromptTemplates,
  SessionTree,
  setPromptTemplate,
} from '../../pkg/index.web.mjs';

await init();

const root = new URL('../../', import.meta.url);
/** $CONFORMANCE_DIR when it is set and readable (needs --allow-env; without it, the default). */
function envDir() {
  try {
    return Deno.env.get('CONFORMANCE_DIR') || undefined;
  } catch {
    return undefined;
  }
}
const conformanceDir = envDir()
  ? new URL(`file://${encodeURI(Deno.realPathSync(envDir()))}/`)
  : new URL('tests/conformance/', root);
const SEPARATOR = '\n\n---\n\n**Turn Context (split turn):**\n\n';
const SETTINGS = { reserveTokens: 2000, keepRecentTokens: 1500 };
const SMALL_WINDOW = 2100;
let passed = 0;
let failed = 0;

async function check(name, fn) {
  try {
    await fn();
    passed++;
  } catch (error) {
    failed++;
    console.error(`FAIL ${name}: ${error?.stack ?? error}`);
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

async function rejectsCode(promise, code, pattern) {
  let caught;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert(caught instanceof Error, `expected a rejection with ${code}, got ${caught}`);
  assert(caught.code === code, `expected code ${code}, got ${caught.code}: ${caught.message}`);
  if (pattern) assert(pattern.test(caught.message), `message "${caught.message}" does not match ${pattern}`);
  return caught;
}

const never = () => new Promise(() => {});

async function waitFor(condition, what) {
  const end = Date.now() + 2000;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 0));
  }
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

function recorder(answer = (r) => `${r.purpose} summary`) {
  const calls = [];
  return {
    calls,
    complete: async (request) => {
      calls.push(request);
      return answer(request);
    },
  };
}

/** The synthetic session of tests/js/async.test.mjs (same shape, same ids). */
function makeSession({ turns = 3, pairs = 4, size = 2000 } = {}) {
  const entries = [];
  let parent = null;
  let n = 0;
  let t = Date.parse('2025-01-01T00:00:00Z');
  const add = (e) => {
    const id = `e${String(n++).padStart(7, '0')}`;
    const entry = { ...e, id, parentId: parent, timestamp: new Date((t += 1000)).toISOString() };
    entries.push(entry);
    parent = id;
    return entry;
  };
  const msg = (message) => add({ type: 'message', message: { ...message, timestamp: t + 1000 } });
  const usage = {
    input: 100,
    output: 50,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 150,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  const assistant = (content) =>
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
  }
  return entries;
}

const treeOf = () => SessionTree.fromEntries(makeSession());
const lastAssistant = (tree) =>
  [...tree.getBranch()].reverse().find((e) => e.type === 'message' && e.message.role === 'assistant').message;

// ---- conformance vectors (compact, generateBranchSummary) ----

const fileCache = new Map();
async function fileLines(rel) {
  if (!fileCache.has(rel)) {
    const text = await Deno.readTextFile(new URL(rel, conformanceDir));
    fileCache.set(
      rel,
      text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l)),
    );
  }
  return fileCache.get(rel);
}

async function resolveEntries(spec) {
  if (Array.isArray(spec)) return structuredClone(spec);
  const entries = (await fileLines(spec.file)).slice(1);
  if (!Array.isArray(spec.ids)) return structuredClone(entries);
  const byId = new Map(entries.map((e) => [e.id, e]));
  return spec.ids.map((id) => structuredClone(byId.get(id)));
}

async function sha256(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The first difference (README "Comparing results"), or null. */
async function diff(exp, act, path) {
  if (isObject(exp) && '$digest' in exp) {
    if (typeof act !== 'string') return `${path}: expected a string`;
    return (await sha256(act)) === exp.sha256 ? null : `${path}: digest mismatch`;
  }
  if (Array.isArray(exp)) {
    if (!Array.isArray(act) || act.length !== exp.length)
      return `${path}: expected ${exp.length} items, got ${JSON.stringify(act)?.slice(0, 200)}`;
    for (let i = 0; i < exp.length; i++) {
      const d = await diff(exp[i], act[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (isObject(exp)) {
    if (!isObject(act)) return `${path}: expected an object`;
    for (const [k, v] of Object.entries(exp)) {
      if (act[k] === undefined) return `${path}: missing key ${k}`;
      const d = await diff(v, act[k], `${path}.${k}`);
      if (d) return d;
    }
    for (const k of Object.keys(act)) if (!(k in exp) && act[k] !== undefined) return `${path}: unexpected key ${k}`;
    return null;
  }
  return exp === act
    ? null
    : `${path}: expected ${JSON.stringify(exp)?.slice(0, 200)}, got ${JSON.stringify(act)?.slice(0, 200)}`;
}

function canned(replies, now, branch) {
  const requests = [];
  const complete = async (request) => {
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

async function runVector(op, input) {
  if (op === 'compact') {
    const prep = input.preparation ?? prepareCompaction(await resolveEntries(input.entries), input.settings);
    if (prep === undefined) return { preparation: null };
    const { requests, complete } = canned(input.llmResponses, input.now, false);
    try {
      const result = await compact(prep, {
        complete,
        customInstructions: input.customInstructions,
        promptOverride: input.options?.promptOverride,
        extraContext: input.options?.extraContext,
      });
      return { requests, result };
    } catch (error) {
      return { requests, error: error.message };
    }
  }
  const { requests, complete } = canned(input.llmResponse, input.now, true);
  const result = await generateBranchSummary(await resolveEntries(input.entries), {
    complete,
    contextWindow: input.model?.contextWindow,
    reserveTokens: input.reserveTokens,
    customInstructions: input.customInstructions,
  });
  return { requests, result: result.summary === 'No content to summarize' ? { summary: result.summary } : result };
}

for await (const entry of Deno.readDir(new URL('templates/', conformanceDir))) {
  if (entry.name.endsWith('.md'))
    setPromptTemplate(entry.name, await Deno.readTextFile(new URL(`templates/${entry.name}`, conformanceDir)));
}
for (const op of ['compact', 'generateBranchSummary']) {
  await check(`conformance: ${op}`, async () => {
    const dir = new URL(`cases/${op}/`, conformanceDir);
    const names = [];
    for await (const e of Deno.readDir(dir)) if (e.name.endsWith('.json')) names.push(e.name);
    assert(names.length > 0, `no ${op} vectors`);
    const failures = [];
    for (const name of names.sort()) {
      const vector = JSON.parse(await Deno.readTextFile(new URL(name, dir)));
      const d = await diff(vector.expected, await runVector(op, vector.input), '$');
      if (d) failures.push(`${vector.name}: ${d}`);
    }
    assert(failures.length === 0, `${failures.length} of ${names.length} failed:\n  ${failures.join('\n  ')}`);
  });
}
resetPromptTemplates();

// ---- compact() with a recording complete ----

await check('compact(): purposes, maxTokens, reasoning, signal, composition, frame order', async () => {
  const prep = prepareCompaction(makeSession(), SETTINGS);
  const { calls, complete } = recorder();
  const result = await compact(
    { ...prep, previousSummary: 'PREV' },
    { complete, extraContext: ['ctx'], customInstructions: 'focus' },
  );
  equal(
    calls.map((c) => [c.purpose, c.maxTokens, c.reasoning]),
    [
      ['update', 1600, 'high'],
      ['turnPrefix', 1000, 'high'],
      ['short', 400, 'high'],
    ],
    'requests',
  );
  assert(
    calls.every((c) => c.signal instanceof AbortSignal),
    'signals',
  );
  const p = calls[0].prompt;
  const order = [
    '<conversation>\n',
    '<previous-summary>\nPREV\n</previous-summary>',
    '<additional-context>\n- ctx\n</additional-context>',
    '\n\nAdditional focus: focus',
  ].map((s) => p.indexOf(s));
  assert(
    order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])),
    `frame order ${order}`,
  );
  assert(result.summary.startsWith(`update summary${SEPARATOR}turnPrefix summary`), result.summary.slice(0, 80));
  equal(result.shortSummary, 'short summary', 'short');
});

await check('compact(): history and turn prefix are both requested before either is answered', async () => {
  const prep = prepareCompaction(makeSession(), SETTINGS);
  const pending = new Map();
  const running = compact(prep, {
    complete: (r) => {
      if (r.purpose === 'short') return Promise.resolve('short');
      const d = deferred();
      pending.set(r.purpose, d);
      return d.promise;
    },
  });
  await waitFor(() => pending.size === 2, 'both requests');
  pending.get('turnPrefix').resolve('PREFIX');
  pending.get('history').resolve('HISTORY');
  assert((await running).summary.startsWith(`HISTORY${SEPARATOR}PREFIX`), 'composition');
});

await check('extractiveSummarizer works as complete', async () => {
  const result = await compact(prepareCompaction(makeSession(), SETTINGS), { complete: extractiveSummarizer });
  assert(/extractive/i.test(result.summary.split('\n')[0]), result.summary.slice(0, 80));
});

// ---- SessionTree.compact: hooks, cancel, abort, busy ----

await check('SessionTree.compact: hooks in order and their effects', async () => {
  const tree = treeOf();
  const count = tree.entryCount;
  const log = [];
  const { calls, complete } = recorder((r) => (log.push(r.purpose), `${r.purpose} summary`));
  const done = await tree.compact({
    complete,
    settings: SETTINGS,
    hooks: {
      session_before_compact: async (e) => (
        log.push(e.type), assert(e.signal instanceof AbortSignal, 'hook signal'), undefined
      ),
      'session.compacting': async (e) => (
        log.push(e.type), { prompt: 'HOOK PROMPT', context: ['hook line'], preserveData: { a: 1 } }
      ),
      session_compact: (e) => (log.push(e.type), assert(e.compactionEntry.id === tree.leafId, 'the entry is in')),
    },
  });
  equal(
    log,
    ['session_before_compact', 'session.compacting', 'history', 'turnPrefix', 'short', 'session_compact'],
    'order',
  );
  assert(calls[0].prompt.includes('- hook line') && calls[0].prompt.endsWith('HOOK PROMPT'), 'hook prompt');
  equal(done.compactionEntry.preserveData, { a: 1 }, 'preserveData');
  equal(tree.entryCount, count + 1, 'appended');
  equal(done.context.messages[0].role, 'compactionSummary', 'context');
});

await check(
  'SessionTree.compact: cancel → E_CANCELLED; a hook that throws or rejects → E_HOOK; nothing appended',
  async () => {
    const tree = treeOf();
    const count = tree.entryCount;
    const { complete } = recorder();
    await rejectsCode(
      tree.compact({ complete, settings: SETTINGS, hooks: { session_before_compact: () => ({ cancel: true }) } }),
      'E_CANCELLED',
      /^Compaction cancelled$/,
    );
    await rejectsCode(
      tree.compact({
        complete,
        settings: SETTINGS,
        hooks: {
          session_before_compact: () => {
            throw new Error('sync no');
          },
        },
      }),
      'E_HOOK',
      /sync no/,
    );
    await rejectsCode(
      tree.compact({
        complete,
        settings: SETTINGS,
        hooks: { 'session.compacting': () => Promise.reject(new Error('async no')) },
      }),
      'E_HOOK',
      /async no/,
    );
    equal(tree.entryCount, count, 'nothing appended');
  },
);

for (const how of ['AbortSignal', 'abortCompaction()']) {
  for (const point of ['session_before_compact', 'session.compacting', 'history', 'turnPrefix', 'short']) {
    await check(`abort at ${point} via ${how}`, async () => {
      const tree = treeOf();
      const count = tree.entryCount;
      const controller = new AbortController();
      const hang = () => (how === 'AbortSignal' ? controller.abort() : tree.abortCompaction(), never());
      await rejectsCode(
        tree.compact({
          settings: SETTINGS,
          ...(how === 'AbortSignal' ? { signal: controller.signal } : {}),
          hooks: {
            session_before_compact: () => (point === 'session_before_compact' ? hang() : undefined),
            'session.compacting': () => (point === 'session.compacting' ? hang() : undefined),
          },
          complete: (r) => (r.purpose === point ? hang() : Promise.resolve('ok')),
        }),
        'E_ABORTED',
        /^Compaction aborted$/,
      );
      equal(tree.entryCount, count, 'nothing appended');
      equal(tree.isCompacting, false, 'not busy');
    });
  }
}

await check('E_BUSY while a compaction runs', async () => {
  const tree = treeOf();
  const gate = deferred();
  let started = false;
  const first = tree.compact({
    settings: SETTINGS,
    complete: async (r) => ((started = true), await gate.promise, r.purpose),
  });
  await waitFor(() => started, 'the first compaction');
  assert(tree.isCompacting, 'isCompacting');
  await rejectsCode(tree.compact({ complete: recorder().complete }), 'E_BUSY');
  gate.resolve();
  await first;
  assert(!tree.isCompacting, 'released');
  await rejectsCode(tree.compact({ complete: recorder().complete }), 'E_ALREADY_COMPACTED');
});

// ---- navigateTree, generateBranchSummary ----

await check('navigateTree: summarize under the parent of a user target; abort leaves everything', async () => {
  const tree = treeOf();
  const oldLeaf = tree.leafId;
  const target = tree.getBranch().filter((e) => e.type === 'message' && e.message.role === 'user')[1];
  const controller = new AbortController();
  const aborted = await tree.navigateTree(target.id, {
    summarize: true,
    signal: controller.signal,
    complete: () => (controller.abort(), never()),
  });
  equal(
    [aborted.cancelled, aborted.aborted, aborted.newLeafId, tree.leafId],
    [true, true, oldLeaf, oldLeaf],
    'aborted',
  );
  const log = [];
  const out = await tree.navigateTree(target.id, {
    summarize: true,
    complete: async (r) => (log.push(`${r.purpose}:${r.maxTokens}`), 'BRANCH'),
    hooks: { session_before_tree: (e) => void log.push(e.type), session_tree: (e) => void log.push(e.type) },
  });
  equal(log, ['session_before_tree', 'branch:2048', 'session_tree'], 'order');
  assert(out.editorText.startsWith('Task 1'), 'editor text');
  equal(
    [out.summaryEntry.parentId, out.summaryEntry.fromId, out.newLeafId],
    [target.parentId, oldLeaf, out.summaryEntry.id],
    'summary entry',
  );
});

await check('generateBranchSummary: summary, {error}, {aborted: true}', async () => {
  const entries = makeSession({ turns: 1 });
  const ok = await generateBranchSummary(entries, { complete: async () => 'B' });
  assert(ok.summary.includes('B') && ok.modifiedFiles.length === 2, JSON.stringify(ok).slice(0, 200));
  equal(
    await generateBranchSummary(entries, { complete: () => Promise.reject(new Error('down')) }),
    { error: 'down' },
    'error',
  );
  const c = new AbortController();
  equal(
    await generateBranchSummary(entries, { signal: c.signal, complete: () => (c.abort(), never()) }),
    { aborted: true },
    'aborted',
  );
});

// ---- checkCompaction ----

async function checkRun(options) {
  const tree = treeOf();
  const count = tree.entryCount;
  const events = [];
  const result = await tree.checkCompaction(lastAssistant(tree), {
    contextWindow: SMALL_WINDOW,
    settings: SETTINGS,
    retry: { baseDelayMs: 1 },
    onEvent: (e) => events.push(e),
    ...options,
  });
  return { tree, count, events, result };
}

await check('checkCompaction: threshold → continue prompt, events', async () => {
  const { result, events } = await checkRun({ complete: recorder().complete });
  equal(
    [result.reason, result.willRetry, result.continuePrompt],
    ['threshold', false, 'Continue if you have next steps.'],
    'result',
  );
  // The synthetic threshold (100 tokens) is below any summary: reported as no progress (SPEC §13.5).
  equal(
    events.map((e) => e.type),
    ['auto_compaction_start', 'auto_compaction_end', 'auto_compaction_no_progress'],
    'events',
  );
  equal(result.result.noProgress, true, 'noProgress');
});

await check(
  'checkCompaction: retries (1 ms backoff, a 30 ms server wait), candidates in order, failure message',
  async () => {
    let failures = 0;
    const times = [];
    const retried = await checkRun({
      complete: async (r) => {
        if (r.purpose !== 'history') return 'ok';
        times.push(performance.now());
        if (failures++ === 0)
          throw Object.assign(new Error('rate limited'), {
            status: 429,
            headers: new Headers({ 'retry-after-ms': '30' }),
          });
        if (failures === 2) throw Object.assign(new Error('503'), { status: 503 });
        return 'history ok';
      },
    });
    equal(failures, 3, 'attempts');
    assert(times[1] - times[0] >= 25, `waited ${times[1] - times[0]} ms for retry-after-ms 30`);
    assert(retried.result.result.summary.startsWith('history ok'), 'succeeded after retries');

    const log = [];
    const order = await checkRun({
      candidates: [
        {
          complete: async (r) => (
            log.push(`A:${r.purpose}`), Promise.reject(Object.assign(new Error('invalid api key'), { status: 401 }))
          ),
        },
        { complete: async (r) => (log.push(`B:${r.purpose}`), `B ${r.purpose}`) },
      ],
    });
    equal(
      log.filter((l) => l.endsWith(':history')),
      ['A:history', 'B:history'],
      'candidate order',
    );
    assert(order.result.result.summary.startsWith('B history'), 'B answered');

    // No extractive fallback (`fallback: "none"`): the failure is reported as it is.
    const failing = await checkRun({
      candidates: [
        { complete: () => Promise.reject(new Error('A down')) },
        { complete: () => Promise.reject(new Error('B down')) },
      ],
      settings: { ...SETTINGS, fallback: 'none' },
    });
    equal(failing.result.errorMessage, 'Auto-compaction failed: B down', 'failure message');
    equal(failing.tree.entryCount, failing.count, 'nothing appended');
  },
);

// ---- remote endpoint (Deno.serve on 127.0.0.1) ----

function serve(handler) {
  const requests = [];
  const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen() {} }, async (request) => {
    const body = await request.json().catch(() => null);
    requests.push({ method: request.method, headers: Object.fromEntries(request.headers), body });
    return handler(body, request);
  });
  return { url: `http://127.0.0.1:${server.addr.port}/summarize`, requests, close: () => server.shutdown() };
}

await check('remote endpoint: success through compact() and SessionTree.compact', async () => {
  const server = serve((body) => Response.json({ summary: `remote ${body.purpose}` }));
  try {
    const result = await compact(prepareCompaction(makeSession(), SETTINGS), { remoteEndpoint: server.url });
    assert(result.summary.startsWith(`remote history${SEPARATOR}remote turnPrefix`), result.summary.slice(0, 80));
    equal(
      server.requests.map((r) => [r.method, typeof r.body.systemPrompt, typeof r.body.prompt]),
      Array(3).fill(['POST', 'string', 'string']),
      'requests',
    );
    assert(/^application\/json/.test(server.requests[0].headers['content-type']), 'content-type');
    const tree = treeOf();
    equal(
      (await tree.compact({ remoteEndpoint: server.url, settings: SETTINGS })).result.shortSummary,
      'remote short',
      'session',
    );
  } finally {
    await server.close();
  }
});

await check(
  'remote endpoint: settings.remoteEndpoint used by compact(), SessionTree.compact and checkCompaction',
  async () => {
    const server = serve((body) => Response.json({ summary: `remote ${body.purpose}` }));
    try {
      const settings = { ...SETTINGS, remoteEndpoint: server.url };
      const result = await compact(prepareCompaction(makeSession(), settings), {});
      assert(result.summary.startsWith(`remote history${SEPARATOR}remote turnPrefix`), result.summary.slice(0, 80));
      equal((await treeOf().compact({ settings })).result.shortSummary, 'remote short', 'session');
      const before = server.requests.length;
      const { result: auto } = await checkRun({ settings });
      equal([auto.reason, auto.result.summarizer], ['threshold', 'model'], 'automatic compaction');
      assert(auto.result.summary.startsWith('remote history'), auto.result.summary.slice(0, 80));
      assert(server.requests.length > before, 'checkCompaction posted to the endpoint');
    } finally {
      await server.close();
    }
  },
);

for (const [name, respond, pattern, status] of [
  ['500', () => new Response('{"error":"x"}', { status: 500 }), /HTTP 500/, 500],
  [
    '429 with retry-after',
    () => new Response('slow', { status: 429, headers: { 'retry-after': '3' } }),
    /HTTP 429/,
    429,
  ],
  ['not JSON', () => new Response('hello'), /not JSON/, 200],
  ['no summary', () => Response.json({ text: 'x' }), /no string `summary`/, 200],
]) {
  await check(`remote endpoint: ${name} → E_REMOTE`, async () => {
    const server = serve(respond);
    try {
      const tree = treeOf();
      const count = tree.entryCount;
      const error = await rejectsCode(
        tree.compact({ remoteEndpoint: server.url, settings: SETTINGS }),
        'E_REMOTE',
        pattern,
      );
      equal(error.status, status, 'status');
      for (const [k, v] of Object.entries(server.requests[0].headers)) {
        // `host` is the endpoint's own address, which the message names on purpose.
        if (k === 'host') continue;
        assert(
          !error.message.includes(`${k}:`) && (v.length <= 4 || !error.message.includes(v)),
          `header ${k} echoed in "${error.message}"`,
        );
      }
      equal(tree.entryCount, count, 'nothing appended');
    } finally {
      await server.close();
    }
  });
}

await check('remote endpoint: an abort cancels the HTTP requests in flight', async () => {
  // Observed on the client side: Deno.serve does not always report a client that gave up on a
  // request with a large body, so the check is that the signal of each fetch is aborted.
  const pending = [];
  const server = serve(() => new Promise((resolve) => pending.push(resolve)));
  const realFetch = globalThis.fetch;
  const signals = [];
  globalThis.fetch = (input, init) => {
    signals.push(init?.signal ?? input?.signal);
    return realFetch(input, init);
  };
  try {
    for (const how of ['signal', 'abortCompaction']) {
      signals.length = 0;
      const tree = treeOf();
      const controller = new AbortController();
      const running = tree.compact({
        remoteEndpoint: server.url,
        settings: SETTINGS,
        ...(how === 'signal' ? { signal: controller.signal } : {}),
      });
      await waitFor(() => signals.length === 2, 'the two requests');
      assert(
        signals.every((s) => s instanceof AbortSignal && !s.aborted),
        `${how}: each fetch has a live signal`,
      );
      if (how === 'signal') controller.abort();
      else tree.abortCompaction();
      await rejectsCode(running, 'E_ABORTED', /^Compaction aborted$/);
      assert(
        signals.every((s) => s.aborted),
        `${how}: the requests in flight are aborted`,
      );
    }
  } finally {
    globalThis.fetch = realFetch;
    for (const resolve of pending) resolve(new Response('{}'));
    await server.close();
  }
});

await check('remote endpoint: connection refused → E_REMOTE', async () => {
  const server = serve(() => new Response('{}'));
  const url = server.url;
  await server.close();
  const error = await rejectsCode(
    compact(prepareCompaction(makeSession(), SETTINGS), { remoteEndpoint: url }),
    'E_REMOTE',
    /no answer from http:\/\/127\.0\.0\.1/,
  );
  equal(error.status, undefined, 'no status');
});

console.log(`deno ${Deno.version.deno} async suite: ${passed} passed, ${failed} failed`);
if (failed > 0) Deno.exit(1);
