// Tests of the CLI commands that write summaries (pkg/bin/session-compaction.mjs, built by
// `npm run build`): `compact` and `navigate` on temp copies of the real sessions of
// examples/sessions/ with the extractive summarizer (numbers and summaries checked against the
// JavaScript API; `--write` keeps <file>.bak and the file then loads with one more entry of the
// right type), `--endpoint` against a local summarizer, and `--openai` against a local fake
// OpenAI-compatible server (the Authorization header arrives; the key never appears in stdout or
// stderr, not even on a 401 that quotes it). The servers listen on 127.0.0.1, ephemeral ports.
// Run: node --test tests/js/cli-compact.test.mjs
import assert from 'node:assert/strict';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { appendLine, openaiComplete, writeFileAtomic } from '../../pkg/bin/support.mjs';
import * as sc from '../../pkg/index.node.mjs';
import { runCli, startCli } from './support/cli.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSIONS_DIR = join(ROOT, 'examples', 'sessions');
const SESSIONS = readdirSync(SESSIONS_DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();
/** v1 files are rewritten in format v3 by `--write` (their ids are the same at every load). */
const isV1 = (/** @type {string} */ name) => name.includes('v1');
const LARGE = 'pi-session-large.jsonl';
/** The API key of the --openai tests: it must never be printed. */
const SECRET = `sk-test-${Math.random().toString(36).slice(2)}-do-not-print`;

const TMP = mkdtempSync(join(tmpdir(), 'session-compaction-cli-compact-'));
after(() => rmSync(TMP, { recursive: true, force: true }));

let copies = 0;
/** A fresh temp copy of a real session. @param {string} name */
function copyOf(name) {
  const path = join(TMP, `${copies++}-${name}`);
  copyFileSync(join(SESSIONS_DIR, name), path);
  return path;
}

/** @param {string[]} args @param {Record<string, string | undefined>} [env] */
const cli = (args, env = {}) => runCli(args, env);
const start = startCli;

/** @param {string[]} args @param {Record<string, string | undefined>} [env] @returns {Promise<any>} */
async function cliJson(args, env) {
  const r = await cli([...args, '--json'], env);
  assert.equal(r.status, 0, `${args.join(' ')} --json: exit ${r.status}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** @param {string} file */
const load = (file) => sc.SessionTree.fromBytes(readFileSync(file), {});

/** The messages the model sees and the estimated tokens, as the CLI reports them. @param {import('../../pkg/index.node.mjs').SessionTree} tree */
const size = (tree) => ({ messages: tree.buildLlmMessages().length, tokens: tree.estimateContextTokens() });

/**
 * An HTTP server on 127.0.0.1 (ephemeral port); `handler` answers each request (JSON body
 * parsed; `null`: never answers); every request is recorded.
 * @param {(req: { url: string | undefined, headers: import('node:http').IncomingHttpHeaders, body: any }) => { status?: number, headers?: Record<string, string>, body: string } | null} handler
 */
async function serve(handler) {
  /** @type {{ url: string | undefined, method: string | undefined, headers: import('node:http').IncomingHttpHeaders, body: any }[]} */
  const requests = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const record = { url: req.url, method: req.method, headers: req.headers, body };
      requests.push(record);
      const reply = handler(record);
      if (reply === null) return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.close(() => r(undefined));
        server.closeAllConnections();
      }),
  };
}

/** A fake OpenAI-compatible chat-completions reply. @param {string} content */
const chatReply = (content) =>
  JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  });

// ---------------------------------------------------------------------------------------------

describe('compact (extractive) on each real session', () => {
  for (const name of SESSIONS) {
    test(`${name}: --json matches the JS API; nothing written without --write`, async () => {
      const file = copyOf(name);
      const original = readFileSync(file);
      const out = await cliJson(['compact', file]);
      const tree = load(file);
      const before = size(tree);
      const done = await tree.compact({ complete: sc.extractiveSummarizer });
      assert.equal(out.file, file);
      assert.deepEqual(out.summarizer, { kind: 'extractive' });
      // Messages as the model sees them; tokens the engine's estimates on both sides (SPEC §13.5).
      assert.equal(out.before.messages, before.messages);
      assert.equal(out.after.messages, size(tree).messages);
      assert.equal(out.before.tokens, done.result.contextTokensBefore);
      assert.equal(out.after.tokens, done.result.contextTokensAfter);
      assert.ok(out.after.tokens < out.before.tokens, 'the context shrinks');
      // `plan`'s preview is on the same basis (the engine's, SPEC §13.7): its "before" is what
      // compact reports, never a provider usage count from which estimates are taken.
      const plan = await cliJson(['plan', file]);
      if (plan.preview?.compaction) {
        assert.equal(plan.preview.compaction.contextTokensBefore, done.result.contextTokensBefore);
        assert.ok(plan.preview.compaction.contextTokensAfter < plan.preview.compaction.contextTokensBefore);
      }
      assert.equal(out.compactionEntry.type, 'compaction');
      assert.equal(out.result.summary, done.result.summary, 'the extractive summary is deterministic');
      assert.equal(out.result.shortSummary, done.result.shortSummary);
      assert.equal(out.result.tokensBefore, done.result.tokensBefore);
      assert.equal(out.compactionEntry.firstKeptEntryId, done.result.firstKeptEntryId);
      assert.equal(out.compactionEntry.parentId, load(file).leafId);
      assert.equal(out.written, null);
      assert.deepEqual(readFileSync(file), original, 'the file is unchanged');
      assert.equal(existsSync(`${file}.bak`), false);
    });

    test(`${name}: --write appends the compaction entry, keeps .bak, and the file loads with one more entry`, async () => {
      const file = copyOf(name);
      const original = readFileSync(file);
      const count = load(file).entryCount;
      const r = await cli(['compact', file, '--write']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /written: .*compaction entry \w+ (appended|added); original kept as .*\.bak/);
      assert.deepEqual(readFileSync(`${file}.bak`), original, '.bak holds the original bytes');
      const tree = load(file);
      assert.equal(tree.loadErrors.length, 0);
      assert.equal(tree.entryCount, count + 1);
      const last = /** @type {any} */ (tree.getBranch().at(-1));
      assert.equal(last.type, 'compaction');
      assert.equal(tree.leafId, last.id, 'the appended entry is the leaf when the file is loaded again');
      assert.equal(tree.buildSessionContext().messages[0].role, 'compactionSummary');
      if (isV1(name)) {
        assert.match(r.stdout, /now written in format v3/);
      } else {
        const now = readFileSync(file);
        assert.deepEqual(now.subarray(0, original.length), original, 'the original bytes are kept as they were');
        assert.equal(
          now.subarray(original.length).toString('utf8').split('\n').filter(Boolean).length,
          1,
          'one line appended',
        );
      }
      // A second run has nothing to do: exit 0, the file unchanged.
      const bytes = readFileSync(file);
      const again = await cli(['compact', file, '--write']);
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, /nothing to compact: the branch ends in a compaction/);
      assert.deepEqual(readFileSync(file), bytes);
    });
  }
});

describe('compact: output and options', () => {
  test('the readable report: context before/after, the entry, the short summary and the summary', async () => {
    const file = copyOf(LARGE);
    const tree = load(file);
    const before = size(tree);
    const r = await cli([
      'compact',
      file,
      '--preview',
      '300',
      '--keep-recent-tokens',
      '10k',
      '--reserve-tokens',
      '8000',
      '--instructions',
      'note the theme files',
    ]);
    assert.equal(r.status, 0, r.stderr);
    const done = await tree.compact({
      complete: sc.extractiveSummarizer,
      settings: { keepRecentTokens: 10000, reserveTokens: 8000 },
      customInstructions: 'note the theme files',
    });
    const after = size(tree);
    const fmt = (/** @type {number} */ n) => n.toLocaleString('en-US');
    const tokens = [done.result.contextTokensBefore, done.result.contextTokensAfter].map((n) => fmt(n ?? NaN));
    assert.match(r.stdout, /summarizer: extractive/);
    assert.match(r.stdout, new RegExp(`before\\s+${fmt(before.messages)}\\s+${tokens[0]}`));
    assert.match(r.stdout, new RegExp(`after\\s+${fmt(after.messages)}\\s+${tokens[1]}`));
    assert.match(r.stdout, new RegExp(`first kept entry\\s+${done.result.firstKeptEntryId}`));
    assert.ok(r.stdout.includes(`Short summary\n  ${done.result.shortSummary.split('\n')[0]}`));
    assert.ok(r.stdout.includes(`Summary\n  ${done.result.summary.split('\n')[0]}`));
    assert.match(r.stdout, /more characters not shown \(--preview 300\)/);
    assert.match(r.stdout, /nothing written: run with --write/);
  });

  test('the bundled sample: compacted in memory, never written', async () => {
    const r = await cli(['compact', '--preview', '100']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /bundled sample session/);
    assert.match(r.stdout, /nothing written \(the bundled sample session is never modified/);
    const w = await cli(['compact', '--write']);
    assert.equal(w.status, 2);
    assert.match(w.stderr, /compact --write needs a file/);
  });

  test('usage errors exit 2', async () => {
    const file = copyOf(LARGE);
    for (const [args, pattern] of /** @type {[string[], RegExp][]} */ ([
      [['compact', file, '--openai', 'http://127.0.0.1:1/v1'], /--openai needs --model/],
      [['compact', file, '--model', 'gpt'], /--model names the model of --openai/],
      [
        ['compact', file, '--endpoint', 'http://127.0.0.1:1/', '--openai', 'http://127.0.0.1:1/v1', '--model', 'm'],
        /exclude each other/,
      ],
      [['compact', file, '--endpoint', 'ftp://example.com/x'], /expected an http/],
      [['compact', file, '--endpoint', 'not a url'], /not a URL/],
      [['compact', file, '--summarize'], /does not apply/],
      [['compact', file, '--preview', 'lots'], /--preview/],
      [['navigate', file], /needs the id of the entry to go to \(.* is a file: pass the entry id after it\)/],
      [['navigate'], /needs the id of the entry/],
      [['navigate', file, 'a', 'b'], /takes a file and an entry id/],
      [['navigate', file, 'no-such-entry'], /no entry with id no-such-entry/],
    ])) {
      const r = await cli(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, pattern, args.join(' '));
    }
  });

  test('--help of compact and navigate', async () => {
    const h = await cli(['--help']);
    assert.match(h.stdout, /^ {2}compact /m);
    assert.match(h.stdout, /^ {2}navigate /m);
    const c = await cli(['compact', '--help']);
    assert.equal(c.status, 0);
    for (const flag of [
      '--endpoint <url>',
      '--openai <base-url>',
      '--model <name>',
      '--instructions <text>',
      '--keep-recent-tokens <n>',
      '--reserve-tokens <n>',
      '--write',
    ]) {
      assert.ok(c.stdout.includes(flag), flag);
    }
    assert.match(c.stdout, /OPENAI_API_KEY/);
    const n = await cli(['navigate', '--help']);
    assert.equal(n.status, 0);
    assert.match(n.stdout, /navigate \[file\] <targetId>/);
    assert.match(n.stdout, /leaf itself is not stored in the JSONL file/);
    assert.match(n.stdout, /--write the appended branch_summary entry is what persists/);
  });
});

describe('--write keeps the lines another process appends meanwhile (pi appends as it goes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sc-race-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const marker = (/** @type {string} */ id) =>
    `{"type":"custom","customType":"marker","id":"${id}","parentId":null,"timestamp":"2025-12-09T10:00:00.000Z"}\n`;
  const expectOf = (/** @type {string} */ file) => {
    const { size, mtimeMs } = statSync(file);
    return { size, mtimeMs };
  };

  test('writeFileAtomic (prune --write, a migrated file): lines appended before the rename follow the new text', () => {
    const file = join(dir, 'rewrite.jsonl');
    writeFileSync(file, 'one\ntwo\n');
    // Before, the rename replaced the file with the text alone: the appended line was lost,
    // in the file and in the backup.
    writeFileAtomic(file, 'ONE\ntwo\n', {
      backup: `${file}.bak`,
      expect: expectOf(file),
      beforeRename: () => appendFileSync(file, marker('m1')),
    });
    assert.equal(readFileSync(file, 'utf8'), `ONE\ntwo\n${marker('m1')}`);
    assert.equal(readFileSync(`${file}.bak`, 'utf8'), 'one\ntwo\n');
  });

  test('writeFileAtomic: a file rewritten shorter before the rename is refused, left as the other process wrote it', () => {
    const file = join(dir, 'shrunk.jsonl');
    writeFileSync(file, 'one\ntwo\n');
    assert.throws(
      () =>
        writeFileAtomic(file, 'ONE\ntwo\n', {
          expect: expectOf(file),
          beforeRename: () => writeFileSync(file, 'x\n'),
        }),
      (/** @type {any} */ e) => e.code === 'E_FILE' && /rewritten on disk/.test(e.message),
    );
    assert.equal(readFileSync(file, 'utf8'), 'x\n');
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('shrunk') && f !== 'shrunk.jsonl'),
      [],
      'no temp file left',
    );
  });

  test("appendLine (compact --write): one append in place, after the file's bytes, in its line end", () => {
    const file = join(dir, 'append.jsonl');
    writeFileSync(file, 'one\r\ntwo');
    const expect = expectOf(file);
    appendLine(file, '{"id":"k"}', { backup: `${file}.bak`, expect });
    assert.equal(readFileSync(file, 'utf8'), 'one\r\ntwo\r\n{"id":"k"}\r\n');
    assert.equal(readFileSync(`${file}.bak`, 'utf8'), 'one\r\ntwo');
    // A line another process appends at the moment of the write stays, before ours.
    appendLine(file, '{"id":"k2"}', {
      expect: expectOf(file),
      beforeWrite: () => appendFileSync(file, marker('m1')),
    });
    assert.ok(readFileSync(file, 'utf8').endsWith(`{"id":"k"}\r\n${marker('m1')}{"id":"k2"}\r\n`));
    // A file that changed since it was read is refused, nothing written.
    appendFileSync(file, marker('m2'));
    assert.throws(
      () => appendLine(file, '{"id":"k2"}', { expect }),
      (/** @type {any} */ e) => e.code === 'E_FILE' && /changed on disk/.test(e.message),
    );
    assert.ok(readFileSync(file, 'utf8').endsWith(marker('m2')));
  });

  test('compact --write while another process appends every millisecond: no appended line is lost', async () => {
    const file = join(dir, 'busy.jsonl');
    const source = join(SESSIONS_DIR, 'pi-session-with-compactions.jsonl');
    // The markers continue the session's branch (as pi's next entries would), so that it stays
    // compactable whatever the CLI loads.
    const leaf = JSON.parse(readFileSync(source, 'utf8').trimEnd().split('\n').at(-1) ?? '{}').id;
    const next = (/** @type {string} */ id) => marker(id).replace('"parentId":null', `"parentId":"${leaf}"`);
    let lost = 0;
    /** @type {string[]} */
    const outcomes = [];
    for (let run = 0; run < 4; run++) {
      copyFileSync(source, file);
      /** @type {string[]} */
      const written = [];
      const child = startCli(['compact', file, '--write', '--json']);
      const start = Date.now();
      const timer = setInterval(() => {
        // From a different moment of the run each time (early ones make it refuse the write).
        if (Date.now() - start < 150 * run) return;
        const id = `m${run}_${written.length}`;
        appendFileSync(file, next(id));
        written.push(id);
      }, 1);
      const { status, stdout } = await child.done;
      clearInterval(timer);
      const text = readFileSync(file, 'utf8');
      lost += written.filter((id) => !text.includes(`"id":"${id}"`)).length;
      const out = JSON.parse(stdout);
      if (status === 0) {
        // Written: the compaction entry is in the file.
        assert.ok(text.includes(`"id":"${out.compactionEntry.id}"`), `run ${run}`);
        outcomes.push('written');
      } else {
        // Refused: the file changed since it was read (the appends began before the write).
        assert.equal(out.error?.code, 'E_FILE', `run ${run}: ${stdout}`);
        outcomes.push('refused');
      }
    }
    assert.equal(lost, 0, outcomes.join(' '));
  });
});

describe('navigate', () => {
  /** A real session and a user message well inside it (its parent becomes the leaf). */
  const setup = () => {
    const file = copyOf(LARGE);
    const tree = load(file);
    const users = /** @type {any[]} */ (
      tree.getBranch().filter((e) => e.type === 'message' && /** @type {any} */ (e).message.role === 'user')
    );
    const target = users[users.length - 3];
    return { file, tree, target };
  };

  test('without --summarize: the new leaf and the editor text; nothing to write', async () => {
    const { file, tree, target } = setup();
    const out = await cliJson(['navigate', file, target.id]);
    assert.equal(out.targetId, target.id);
    assert.equal(out.oldLeafId, tree.leafId);
    assert.equal(out.newLeafId, target.parentId);
    assert.equal(out.navigatedTo, target.parentId);
    const text = target.message.content
      .filter((/** @type {any} */ b) => b.type === 'text')
      .map((/** @type {any} */ b) => b.text)
      .join('');
    assert.equal(out.editorText, text);
    assert.equal(out.summaryEntry, null);
    const r = await cli(['navigate', file, target.id]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`new leaf\\s+${target.parentId}`));
    assert.match(r.stdout, /Editor text/);
    assert.match(r.stdout, /the leaf itself is not stored in the session file/);
    const w = await cli(['navigate', file, target.id, '--write']);
    assert.equal(w.status, 2);
    assert.match(w.stderr, /navigate --write needs --summarize: the leaf is not stored in the session file/);
    // A non-user target becomes the leaf itself.
    const assistant = /** @type {any} */ (tree.getEntry(target.parentId));
    assert.equal(assistant.type, 'message');
    const a = await cliJson(['navigate', file, assistant.id]);
    assert.equal(a.newLeafId, assistant.id);
    assert.equal(a.editorText, null);
  });

  test('--summarize --write: the branch_summary entry is appended under the new leaf, .bak kept', async () => {
    const { file, tree, target } = setup();
    const original = readFileSync(file);
    const count = tree.entryCount;
    const oldLeaf = tree.leafId;
    const out = await cliJson([
      'navigate',
      file,
      target.id,
      '--summarize',
      '--write',
      '--instructions',
      'what was tried',
    ]);
    const entry = out.summaryEntry;
    assert.equal(entry.type, 'branch_summary');
    assert.equal(entry.parentId, target.parentId);
    assert.equal(entry.fromId, oldLeaf);
    assert.match(entry.summary, /extractive/i);
    assert.equal(out.written.entryId, entry.id);
    assert.deepEqual(readFileSync(`${file}.bak`), original);
    const reloaded = load(file);
    assert.equal(reloaded.entryCount, count + 1);
    assert.deepEqual(reloaded.getEntry(entry.id), entry);
    assert.equal(reloaded.leafId, entry.id, 'the file reopens at the branch summary, under the new leaf');
    assert.equal(/** @type {any} */ (reloaded.getBranch().at(-2)).id, target.parentId);
    // The same through the JS API gives the same summary.
    const api = await tree.navigateTree(target.id, {
      summarize: true,
      customInstructions: 'what was tried',
      complete: sc.extractiveSummarizer,
    });
    assert.equal(/** @type {any} */ (api.summaryEntry).summary, entry.summary);
  });

  test('--summarize: the readable report shows the summary entry', async () => {
    const { file, target } = setup();
    const r = await cli(['navigate', file, target.id, '--summarize', '--preview', '200']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Branch summary entry/);
    assert.match(r.stdout, /fromId/);
    assert.match(r.stdout, /nothing written: run with --write to append the branch_summary entry/);
  });
});

describe('--endpoint (remote summarizer on 127.0.0.1)', () => {
  test('compact and navigate --summarize use it; a failure exits 3 with E_REMOTE', async () => {
    let fail = false;
    const server = await serve(({ body }) =>
      fail
        ? { status: 500, body: '{"error":"down"}' }
        : { body: JSON.stringify({ summary: `REMOTE ${body.purpose}` }) },
    );
    try {
      const file = copyOf(LARGE);
      const out = await cliJson(['compact', file, '--endpoint', `${server.base}/summarize`]);
      assert.deepEqual(out.summarizer, { kind: 'endpoint', endpoint: `${server.base}/summarize` });
      assert.ok(out.result.summary.startsWith('REMOTE history'));
      assert.equal(out.result.shortSummary, 'REMOTE short');
      assert.deepEqual(
        server.requests.map((r) => [r.method, r.url]),
        [
          ['POST', '/summarize'],
          ['POST', '/summarize'],
          ['POST', '/summarize'],
        ],
      );
      for (const r of server.requests) assert.deepEqual(Object.keys(r.body).slice(0, 2), ['systemPrompt', 'prompt']);

      const tree = load(file);
      const user = /** @type {any} */ (
        tree
          .getBranch()
          .filter((e) => e.type === 'message' && /** @type {any} */ (e).message.role === 'user')
          .at(-2)
      );
      const nav = await cliJson(['navigate', file, user.id, '--summarize', '--endpoint', `${server.base}/summarize`]);
      assert.ok(nav.summaryEntry.summary.includes('REMOTE branch'));

      fail = true;
      const original = readFileSync(file);
      const r = await cli(['compact', file, '--write', '--endpoint', `${server.base}/summarize`]);
      assert.equal(r.status, 3, r.stderr);
      assert.match(r.stderr, /the summarizer failed: .*HTTP 500.*\(E_REMOTE\); nothing was written/);
      assert.deepEqual(readFileSync(file), original);
      assert.equal(existsSync(`${file}.bak`), false);
    } finally {
      await server.close();
    }
  });
});

describe('Ctrl-C', () => {
  test('SIGINT aborts the compaction: exit 130 at once, nothing written', async () => {
    const server = await serve(() => null);
    try {
      const file = copyOf(LARGE);
      const original = readFileSync(file);
      const run = start(['compact', file, '--write', '--endpoint', `${server.base}/summarize`]);
      const until = Date.now() + 10_000;
      while (server.requests.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      assert.equal(server.requests.length, 2, 'the history and turn-prefix requests are in flight');
      const sent = Date.now();
      run.child.kill('SIGINT');
      const r = await run.done;
      assert.equal(r.status, 130, r.stderr);
      assert.ok(Date.now() - sent < 5000, 'the process ends without waiting for the server');
      assert.match(r.stderr, /interrupted: Compaction aborted; nothing was written/);
      assert.deepEqual(readFileSync(file), original);
      assert.equal(existsSync(`${file}.bak`), false);
    } finally {
      await server.close();
    }
  });
});

describe('--openai (fake OpenAI-compatible server on 127.0.0.1)', () => {
  test('POST <base>/chat/completions with the model, the two messages, max_completion_tokens and the Bearer key', async () => {
    const server = await serve(({ body }) => ({ body: chatReply(`MODEL SAYS (${body.max_completion_tokens})`) }));
    try {
      const file = copyOf(LARGE);
      const env = { OPENAI_API_KEY: SECRET };
      const r = await cli(
        ['compact', file, '--openai', `${server.base}/v1/`, '--model', 'test-model', '--preview', '2000'],
        env,
      );
      assert.equal(r.status, 0, r.stderr);
      assert.equal(server.requests.length, 3);
      for (const req of server.requests) {
        assert.equal(req.method, 'POST');
        assert.equal(req.url, '/v1/chat/completions');
        assert.equal(req.headers.authorization, `Bearer ${SECRET}`);
        assert.match(String(req.headers['content-type']), /application\/json/);
        assert.equal(req.body.model, 'test-model');
        assert.deepEqual(
          req.body.messages.map((/** @type {any} */ m) => m.role),
          ['system', 'user'],
        );
        assert.ok(req.body.messages[1].content.startsWith('<conversation>\n'));
        assert.equal(typeof req.body.max_completion_tokens, 'number');
        assert.equal(req.body.max_tokens, undefined);
      }
      assert.deepEqual(
        server.requests.map((q) => q.body.max_completion_tokens).sort((a, b) => a - b),
        [512, 8192, 13107],
      );
      assert.match(r.stdout, /test-model through the OpenAI-compatible API/);
      assert.match(r.stdout, /MODEL SAYS \(13107\)/);
      assert.match(r.stdout, /Short summary\n {2}MODEL SAYS \(512\)/);
      for (const text of [r.stdout, r.stderr]) assert.ok(!text.includes(SECRET), 'the key is never printed');
      const json = await cliJson(['compact', file, '--openai', `${server.base}/v1`, '--model', 'test-model'], env);
      assert.ok(!JSON.stringify(json).includes(SECRET));
      assert.deepEqual(json.summarizer, { kind: 'openai', baseUrl: `${server.base}/v1`, model: 'test-model' });
    } finally {
      await server.close();
    }
  });

  test('a 401 that quotes the key, a reply without content, an unreachable server: exit 3, the key never printed', async () => {
    /** @type {'401' | 'empty'} */
    let mode = '401';
    const server = await serve(({ headers }) =>
      mode === '401'
        ? {
            status: 401,
            body: JSON.stringify({
              error: {
                message: `Incorrect API key provided: ${String(headers.authorization).slice(7)}`,
                received: headers,
              },
            }),
          }
        : { body: JSON.stringify({ choices: [] }) },
    );
    try {
      const file = copyOf(LARGE);
      const env = { OPENAI_API_KEY: SECRET };
      const r = await cli(['compact', file, '--write', '--openai', `${server.base}/v1`, '--model', 'm'], env);
      assert.equal(r.status, 3, r.stderr);
      assert.match(
        r.stderr,
        /HTTP 401 Unauthorized: Incorrect API key provided: \[redacted\] \(E_MODEL\); nothing was written/,
      );
      assert.equal(server.requests[0].headers.authorization, `Bearer ${SECRET}`, 'the header did arrive');
      mode = 'empty';
      const e = await cli(['compact', file, '--openai', `${server.base}/v1`, '--model', 'm'], env);
      assert.equal(e.status, 3);
      assert.match(e.stderr, /no choices\[0\]\.message\.content/);
      const base = server.base;
      await server.close();
      const u = await cli(['compact', file, '--openai', `${base}/v1`, '--model', 'm'], env);
      assert.equal(u.status, 3);
      assert.match(u.stderr, /fetch failed: cannot reach/);
      for (const out of [r, e, u])
        for (const text of [out.stdout, out.stderr])
          assert.ok(!text.includes(SECRET), `the key is never printed: ${text}`);
      assert.equal(existsSync(`${file}.bak`), false, 'nothing written');
    } finally {
      await server.close();
    }
  });

  test('OPENAI_API_KEY unset: an error naming it and the extractive option; set empty: a warning, no Authorization header', async () => {
    const server = await serve(() => ({ body: chatReply('ok') }));
    try {
      const unset = await cli(['compact', copyOf(LARGE), '--openai', `${server.base}/v1`, '--model', 'local']);
      assert.equal(unset.status, 2, unset.stderr);
      assert.equal(unset.stdout, '');
      assert.match(
        unset.stderr,
        /--openai needs an API key in the environment variable OPENAI_API_KEY, which is not set: .*OPENAI_API_KEY=\);.*extractive summarizer \(no model, no API key\) \(E_INVALID_ARGUMENT\)/,
      );
      assert.equal(server.requests.length, 0, 'no request without a key');
      const json = await cli(['compact', copyOf(LARGE), '--json', '--openai', `${server.base}/v1`, '--model', 'local']);
      assert.equal(json.status, 2);
      assert.equal(JSON.parse(json.stdout).error.code, 'E_INVALID_ARGUMENT');
      assert.match(JSON.parse(json.stdout).error.message, /OPENAI_API_KEY/);
      const r = await cli(['compact', copyOf(LARGE), '--openai', `${server.base}/v1`, '--model', 'local'], {
        OPENAI_API_KEY: '',
      });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /OPENAI_API_KEY is empty: the requests carry no Authorization header/);
      assert.equal(server.requests[0].headers.authorization, undefined);
    } finally {
      await server.close();
    }
  });

  test('its errors carry status and headers, so checkCompaction retries a 429 after retry-after-ms', async () => {
    let calls = 0;
    const server = await serve(() =>
      ++calls === 1
        ? { status: 429, headers: { 'retry-after-ms': '30' }, body: '{"error":{"message":"rate limited"}}' }
        : { body: chatReply('after the retry') },
    );
    try {
      const complete = openaiComplete({ baseUrl: `${server.base}/v1`, model: 'm', apiKey: SECRET });
      const failing = await complete({ systemPrompt: 's', prompt: 'p', maxTokens: 10 }).then(
        () => null,
        (/** @type {any} */ error) => error,
      );
      assert.equal(failing.status, 429);
      assert.equal(failing.headers.get('retry-after-ms'), '30');
      assert.ok(!failing.message.includes(SECRET));
      calls = 0;
      const tree = load(copyOf(LARGE));
      const message = /** @type {any} */ (
        [...tree.getBranch()]
          .reverse()
          .find((e) => e.type === 'message' && /** @type {any} */ (e).message.role === 'assistant')
      ).message;
      const started = performance.now();
      const result = await tree.checkCompaction(message, {
        contextWindow: 100_000,
        complete,
        retry: { baseDelayMs: 1 },
      });
      assert.equal(result.errorMessage, undefined);
      assert.ok(/** @type {any} */ (result.result).summary.includes('after the retry'));
      assert.ok(performance.now() - started >= 25, 'waited for retry-after-ms');
      assert.ok(server.requests.length >= 4, 'the rate-limited request was retried');
    } finally {
      await server.close();
    }
  });
});
