// Tests of the CLI's fatal errors (pkg/bin/session-compaction.mjs): every one names the engine's
// error code (bad flags, unreadable files, a missing argument, a file that is not a session, a
// failing model, a failed write); with --json it is one JSON object on stdout,
// {"error":{"code","message","exitCode"}}, and the exit code stays non-zero; every numeric option
// refuses a negative, fractional or non-numeric value naming the option, the value and what it
// accepts (E_INVALID_ARGUMENT). Run: node --test tests/js/cli-errors.test.mjs
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli, tempFolder } from './support/cli.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LARGE = join(ROOT, 'examples', 'sessions', 'pi-session-large.jsonl');

const { dir: TMP, file: tmpFile } = tempFolder('session-compaction-cli-errors-');

/** A small valid session (header and two messages). */
const SMALL = tmpFile(
  'small.jsonl',
  `${[
    { type: 'session', version: 3, id: 'err-session', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/tmp' },
    {
      type: 'message',
      id: 'a1',
      parentId: null,
      timestamp: '2025-01-01T00:00:01.000Z',
      message: { role: 'user', content: 'hello', timestamp: 1 },
    },
    {
      type: 'message',
      id: 'b2',
      parentId: 'a1',
      timestamp: '2025-01-01T00:00:02.000Z',
      message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }], timestamp: 2 },
    },
  ]
    .map((e) => JSON.stringify(e))
    .join('\n')}\n`,
);

/** @param {string[]} args @param {Record<string, string | undefined>} [env] */
const cli = (args, env = {}) => runCli(args, env);

/** A server answering every request with HTTP 500. */
async function failingServer() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"the model is down"}}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    base: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  };
}

/**
 * Checks one failing run both ways: readable (stderr's first line ends with `(CODE)`, nothing on
 * stdout) and with --json (stdout is exactly one JSON object with that code and exit code).
 * @param {string[]} args @param {string} code @param {number} exitCode @param {RegExp} message
 * @param {Record<string, string | undefined>} [env] @param {() => void} [reset] run before each
 */
async function assertFails(args, code, exitCode, message, env = {}, reset = () => {}) {
  reset();
  const r = await cli(args, env);
  const what = args.join(' ');
  assert.equal(r.status, exitCode, `${what}: ${r.stderr}`);
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  const first = r.stderr.split('\n')[0];
  assert.match(first, /^session-compaction: (error|interrupted):/, what);
  assert.ok(first.includes(`(${code})`), `${what}: the code ${code} on the first line: ${r.stderr}`);
  assert.match(r.stderr, message, what);

  reset();
  const j = await cli([...args, '--json'], env);
  assert.equal(j.status, exitCode, `${what} --json: ${j.stderr}`);
  assert.doesNotMatch(j.stderr, /session-compaction: error/, `${what} --json: no readable error too`);
  const lines = j.stdout.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `${what} --json: one line on stdout: ${j.stdout}`);
  const parsed = JSON.parse(lines[0]);
  assert.deepEqual(Object.keys(parsed), ['error']);
  assert.equal(parsed.error.code, code, what);
  assert.equal(parsed.error.exitCode, exitCode, what);
  assert.match(parsed.error.message, message, what);
  // The code is its own field: the message does not repeat it.
  assert.ok(!parsed.error.message.includes(`(${code})`), `${what} --json: ${parsed.error.message}`);
  return parsed.error;
}

describe('every fatal error carries its code, readable and as JSON', () => {
  test('bad usage: unknown flag, unknown command, missing argument, conflicting options', async () => {
    await assertFails(['plan', SMALL, '--bogus'], 'E_INVALID_ARGUMENT', 2, /Unknown option '--bogus'/);
    await assertFails(['plan', SMALL, '--leaf'], 'E_INVALID_ARGUMENT', 2, /--leaf/);
    await assertFails(['frobnicate', SMALL], 'E_INVALID_ARGUMENT', 2, /unknown command "frobnicate"/);
    await assertFails(['navigate'], 'E_INVALID_ARGUMENT', 2, /`navigate` needs the id of the entry to go to/);
    await assertFails(['plan', SMALL, '--summarize'], 'E_INVALID_ARGUMENT', 2, /--summarize does not apply to `plan`/);
    await assertFails(
      ['compact', SMALL, '--model', 'm'],
      'E_INVALID_ARGUMENT',
      2,
      /--model names the model of --openai/,
    );
    await assertFails(['compact', SMALL, '--endpoint', 'not a url'], 'E_INVALID_ARGUMENT', 2, /not a URL/);
    // No command at all: the help (stderr) without --json, an error object with it.
    const none = await cli([]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /^Usage: session-compaction <command>/m);
    const noneJson = await cli(['--json']);
    assert.equal(noneJson.status, 2);
    assert.equal(JSON.parse(noneJson.stdout).error.code, 'E_INVALID_ARGUMENT');
  });

  test('unreadable input: missing file, directory, binary data, not a session, unknown ids', async () => {
    await assertFails(['plan', join(TMP, 'missing.jsonl')], 'E_FILE', 2, /cannot read .*missing\.jsonl: no such file/);
    mkdirSync(join(TMP, 'dir.jsonl'), { recursive: true });
    await assertFails(['plan', join(TMP, 'dir.jsonl')], 'E_FILE', 2, /it is a directory/);
    const binary = tmpFile('blob.jsonl', Buffer.concat([Buffer.from('x\u0000y'), Buffer.alloc(100, 1)]));
    await assertFails(['plan', binary], 'E_PARSE', 2, /is not a pi session: it holds binary data/);
    const text = tmpFile('notes.jsonl', 'just some notes\nmore notes\n');
    await assertFails(['validate', text], 'E_HEADER', 2, /is not a usable pi session/);
    await assertFails(['plan', SMALL, '--leaf', 'nope'], 'E_NOT_FOUND', 2, /--leaf nope/);
    await assertFails(['navigate', SMALL, 'nope'], 'E_NOT_FOUND', 2, /no entry with id nope/);
  });

  test('a failing model: E_REMOTE (--endpoint) and E_MODEL (--openai), exit 3', async () => {
    const server = await failingServer();
    try {
      await assertFails(
        ['compact', LARGE, '--endpoint', `${server.base}/sum`],
        'E_REMOTE',
        3,
        /the summarizer failed: .*HTTP 500/,
      );
      await assertFails(
        ['compact', LARGE, '--openai', `${server.base}/v1`, '--model', 'm'],
        'E_MODEL',
        3,
        /the summarizer failed: .*500/,
        { OPENAI_API_KEY: 'sk-test' },
      );
    } finally {
      await server.close();
    }
  });

  test('a failed write: E_FILE, the file unchanged', async () => {
    const file = join(TMP, 'write.jsonl');
    const original = readFileSync(LARGE);
    // The backup's name is taken by a folder: the backup cannot be written, so nothing is.
    mkdirSync(`${file}.bak`, { recursive: true });
    writeFileSync(join(`${file}.bak`, 'keep'), 'x');
    await assertFails(
      ['compact', file, '--write'],
      'E_FILE',
      2,
      /cannot write the backup .*write\.jsonl\.bak: .*nothing written/,
      {},
      () => writeFileSync(file, original),
    );
    assert.deepEqual(readFileSync(file), original);
  });
});

describe('numeric options name the option, the value and what is accepted', () => {
  /** [command, option, minimum] of every numeric option. */
  const OPTIONS = /** @type {[string, string, number][]} */ ([
    ['plan', 'keep-recent-tokens', 0],
    ['plan', 'reserve-tokens', 0],
    ['plan', 'context-window', 1],
    ['prune', 'protect-tokens', 0],
    ['prune', 'minimum-savings', 0],
    ['context', 'max-chars', 0],
    ['context', 'first', 0],
    ['context', 'last', 0],
    ['plan', 'max-errors', 0],
    ['compact', 'preview', 0],
    ['compact', 'keep-recent-tokens', 0],
  ]);

  test('negative (as a separate argument too), fractional and non-numeric values: E_INVALID_ARGUMENT', async () => {
    for (const [command, option, min] of OPTIONS) {
      for (const value of ['-5', '1.5', 'lots']) {
        for (const args of [
          [command, SMALL, `--${option}`, value],
          [command, SMALL, `--${option}=${value}`],
        ]) {
          const r = await cli(args);
          assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
          assert.equal(
            r.stderr,
            `session-compaction: error: --${option} "${value}" is not accepted: expected a whole number >= ${min} ` +
              '(digits, optionally with _ or , separators or a k suffix: 20000, 20_000, 20k) (E_INVALID_ARGUMENT)\n',
            args.join(' '),
          );
        }
      }
    }
    const zero = await cli(['plan', SMALL, '--context-window', '0']);
    assert.match(zero.stderr, /--context-window "0" is not accepted: expected a whole number >= 1 /);
    // Accepted forms still work.
    const ok = await cli(['plan', SMALL, '--keep-recent-tokens', '20k', '--reserve-tokens', '16_384', '--json']);
    assert.equal(ok.status, 0, ok.stderr);
  });

  test('--timeout: seconds >= 0', async () => {
    for (const value of ['-5', 'soon', '']) {
      const r = await cli(['compact', SMALL, '--timeout', value]);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(
        r.stderr,
        `session-compaction: error: --timeout "${value}" is not accepted: expected a number of seconds >= 0 (0 = never) (E_INVALID_ARGUMENT)\n`,
      );
    }
    // Above setTimeout's limit the timer would fire at once: refused, not a 1 ms timeout.
    for (const value of ['2147484', '1e9']) {
      const r = await cli(['compact', SMALL, '--timeout', value]);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(
        r.stderr,
        `session-compaction: error: --timeout "${value}" is not accepted: at most 2147483 seconds (about 24.8 days; 0 = never) (E_INVALID_ARGUMENT)\n`,
      );
    }
  });

  test('the help documents the codes and the JSON error object', async () => {
    const h = await cli(['--help']);
    assert.equal(h.status, 0);
    assert.match(h.stdout, /Every error names its code \(E_INVALID_ARGUMENT, E_FILE, E_PARSE, E_MODEL, …\)/);
    assert.ok(h.stdout.includes('{"error":{"code":"E_…","message":"…","exitCode":2}}'));
  });
});
