// The smoke test of the web entry (pkg/index.web.mjs), shared by the Deno and Bun runners
// (tests/deno/smoke.mjs, tests/bun/smoke.mjs), which only supply file reading.
// mode "bytes": init(<the .wasm bytes>); "auto": init() finds and reads the file itself.
// Checks: the E_NOT_INITIALIZED guard (functions, the class, the constants) before init(); then
// parseSession, SessionTree.fromJsonl and fromFile on a real session, prepareCompaction, buildSessionContext,
// the frozen defaults, error codes, `using` disposal and E_FREED after free().
import * as web from '../../pkg/index.web.mjs';

/**
 * Runs every check; returns the counts.
 * `sessionFile`: the session's file (a `file:` URL), for `SessionTree.fromFile`.
 * @param {{ mode: string, expected: string, session: string, sessionFile: URL, readWasm: () => Promise<Uint8Array> }} io
 */
export async function smoke({ mode, expected, session, sessionFile, readWasm }) {
  let passed = 0;
  let failed = 0;

  function check(name, fn) {
    try {
      fn();
      passed++;
    } catch (error) {
      failed++;
      console.error(`FAIL ${name}: ${error?.stack ?? error}`);
    }
  }

  function assert(condition, message) {
    if (!condition) throw new Error(message);
  }

  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  function throwsCode(code, fn) {
    let caught;
    try {
      fn();
    } catch (error) {
      caught = error;
    }
    if (!(caught instanceof Error) || caught.code !== code) {
      throw new Error(`expected an Error with code ${code}, got ${caught}`);
    }
  }

  // ---- before init() ----
  check('version() before init() throws E_NOT_INITIALIZED', () => throwsCode('E_NOT_INITIALIZED', () => web.version()));
  check('parseSession before init() throws E_NOT_INITIALIZED', () =>
    throwsCode('E_NOT_INITIALIZED', () => web.parseSession(session)),
  );
  check('SessionTree.fromJsonl before init() throws E_NOT_INITIALIZED', () =>
    throwsCode('E_NOT_INITIALIZED', () => web.SessionTree.fromJsonl(session)),
  );
  check('DEFAULT_COMPACTION_SETTINGS before init() throws E_NOT_INITIALIZED', () =>
    throwsCode('E_NOT_INITIALIZED', () => web.DEFAULT_COMPACTION_SETTINGS.reserveTokens),
  );

  // ---- init ----
  const input = mode === 'auto' ? undefined : await readWasm();
  await Promise.all([web.init(input), web.init(input)]);
  await web.init();

  check(`version() after init (${mode}) is ${expected}`, () => {
    const got = web.version();
    assert(got === expected, `got ${got}`);
  });

  check('parseSession reads the real session', () => {
    const parsed = web.parseSession(session, { strict: true });
    assert(parsed.header?.type === 'session', 'header');
    assert(parsed.entries.length === 1002, `entries: ${parsed.entries.length}`);
    assert(parsed.errors.length === 0, 'errors');
  });

  check('SessionTree.fromJsonl: prepareCompaction and buildSessionContext on the real session', () => {
    using tree = web.SessionTree.fromJsonl(session);
    assert(tree.entryCount === 1002, `entryCount ${tree.entryCount}`);
    const branch = tree.getBranch();
    assert(branch.at(-1).id === tree.leafId, 'leaf');
    const prep = tree.prepareCompaction();
    assert(prep && branch.some((e) => e.id === prep.firstKeptEntryId), 'firstKeptEntryId on the branch');
    assert(prep.messagesToSummarize.length > 0 && prep.recentMessages.length > 0, 'preparation has both parts');
    assert(typeof prep.previousSummary === 'string', 'the session has earlier compactions');
    // The handle's preparation adds the preview that previewCompaction gives.
    const { preview, ...preparation } = prep;
    assert(same(preparation, web.prepareCompaction(branch)), 'handle and pure prepareCompaction agree');
    assert(same(preview, web.previewCompaction(branch)), 'the preview is previewCompaction');
    const ctx = tree.buildSessionContext();
    assert(ctx.messages[0].role === 'compactionSummary', `first context message: ${ctx.messages[0].role}`);
    assert(same(ctx, web.buildSessionContext(web.parseSession(session).entries)), 'handle and pure context agree');
    // The model-bound JSON is the context with its repairs applied (SPEC §13.1): here synthetic
    // results for the session's interrupted turns, the stored messages otherwise unchanged.
    assert(ctx.repairs.length > 0 && ctx.repairs.every((r) => r.kind === 'missingToolResult'), 'repairs');
    const json = JSON.parse(tree.buildSessionContextJson());
    const synthetic = (m) =>
      m.role === 'toolResult' &&
      m.isError === true &&
      m.content?.[0]?.text === 'No result was recorded for this tool call';
    assert(json.filter(synthetic).length === ctx.repairs.length, 'one synthetic result per repair');
    assert(
      same(
        json.filter((m) => !synthetic(m)),
        ctx.messages,
      ),
      'buildSessionContextJson',
    );
    assert(tree.toJsonl() === session, 'toJsonl is byte-equal');
  });

  check('`using` frees the handle at the end of the block', () => {
    let escaped;
    {
      using tree = web.SessionTree.fromJsonl(session);
      escaped = tree;
    }
    let threw = false;
    try {
      escaped.entryCount;
    } catch {
      threw = true;
    }
    assert(threw, 'a disposed handle refuses calls');
  });

  check('DEFAULT_* constants are filled and frozen', () => {
    assert(web.DEFAULT_COMPACTION_SETTINGS.reserveTokens === 16384, 'reserveTokens');
    assert(Object.isFrozen(web.DEFAULT_COMPACTION_SETTINGS), 'frozen settings');
    assert(Object.isFrozen(web.DEFAULT_PRUNE_CONFIG.protectedTools), 'frozen protectedTools');
  });

  check('SessionTree.fromFile reads the file into wasm memory and loads what fromJsonl loads', () => {
    using a = web.SessionTree.fromFile(sessionFile);
    using b = web.SessionTree.fromJsonl(session);
    assert(a.entryCount === 1002 && a.toJsonl() === b.toJsonl(), `entries: ${a.entryCount}`);
    assert(a.buildSessionContextJson() === b.buildSessionContextJson(), 'context');
    throwsCode('E_FILE', () => web.SessionTree.fromFile(new URL('no-such-file.jsonl', sessionFile)));
  });

  check('errors carry codes', () => {
    throwsCode('E_PARSE', () => web.parseSession('{"type":"session","id":"s","version":3}\n{oops\n', { strict: true }));
    using tree = web.SessionTree.fromJsonl(session);
    throwsCode('E_NOT_FOUND', () => tree.setLeaf('no-such-id'));
  });

  check('a freed handle throws E_FREED (free() twice is a no-op)', () => {
    const tree = web.SessionTree.fromJsonl(session);
    tree.free();
    tree.free();
    throwsCode('E_FREED', () => tree.entryCount);
    throwsCode('E_FREED', () => tree.buildSessionContext());
  });

  let rejected;
  const freed = web.SessionTree.fromJsonl(session);
  freed.free();
  await freed.compact({ complete: async () => 'x' }).catch((error) => {
    rejected = error;
  });
  check('an async method of a freed handle rejects with E_FREED', () =>
    assert(rejected?.code === 'E_FREED', `got ${rejected?.code}`),
  );

  return { passed, failed };
}
