// Tests of the CLI (pkg/bin/session-compaction.mjs) on input that is not a session and on
// failing summarizers: a binary file is refused with one message (exit 2, no per-line flood);
// a text file that is not a session lists at most --max-errors of its lines and says how many
// more there are; warnings and `validate` findings are capped the same way; --endpoint and
// --openai failures name the cause and the URL with its credentials redacted (user:password@,
// key= / token= query values, the API key never printed). Run: node --test tests/js/cli-input.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { runCli, tempFolder } from './support/cli.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
const SAMPLE_LINES = readFileSync(SAMPLE, 'utf8').split('\n');
/** Secrets of the summarizer tests: none may ever be printed. */
const KEY = `sk-input-${Math.random().toString(36).slice(2)}-never-print`;
const QUERY_SECRET = `q${Math.random().toString(36).slice(2)}secret`;

const { file: tmpFile } = tempFolder('session-compaction-cli-input-');

/** @param {string[]} args @param {Record<string, string | undefined>} [env] */
const cli = (args, env = {}) => runCli(args, env);

/** Non-empty lines of a text. @param {string} text */
const linesOf = (text) => text.split('\n').filter((l) => l.trim() !== '');

describe('binary and non-session files', () => {
  test('a binary file is refused with one message naming what it is: exit 2, nothing on stdout', async () => {
    const elf = Buffer.alloc(4096, 0);
    Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]).copy(elf);
    const noMagic = Buffer.concat([Buffer.from('garbage\u0000more'), Buffer.alloc(20000, 7), Buffer.from('\n{}\n')]);
    for (const [name, data, what] of /** @type {[string, Buffer, RegExp][]} */ ([
      ['session.jsonl.gz', gzipSync(readFileSync(SAMPLE)), /gzip-compressed data \(decompress it first/],
      ['program', elf, /an executable \(ELF\)/],
      ['blob.jsonl', noMagic, /binary data \(a NUL byte at offset 7\)/],
      // Random bytes with an early line break: the first line is no JSON object, a NUL follows.
      [
        'random.bin',
        Buffer.concat([Buffer.from('x\u0001\n'), Buffer.alloc(64, 0x41), Buffer.from([0]), Buffer.alloc(4000, 0x99)]),
        /binary data \(a NUL byte at offset 67\)/,
      ],
      ['utf16.jsonl', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SAMPLE_LINES[0], 'utf16le')]), /UTF-16/],
    ])) {
      const file = tmpFile(name, data);
      for (const command of ['plan', 'validate']) {
        const r = await cli([command, file]);
        assert.equal(r.status, 2, `${command} ${name}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.equal(linesOf(r.stderr).length, 1, `one line, no flood: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`${name.replace(/\./g, '\\.')} is not a pi session: it holds `));
        assert.match(r.stderr, what);
        assert.match(r.stderr, /a session is a text file of JSON lines/);
      }
    }
  });

  test('NUL bytes after the header (a damaged tail) do not make a session binary', async () => {
    const text = `${SAMPLE_LINES.slice(0, 40).join('\n')}\n`;
    const file = tmpFile('nul-tail.jsonl', Buffer.concat([Buffer.from(text), Buffer.alloc(300, 0)]));
    const r = await cli(['plan', file, '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /nul-tail\.jsonl: line 41: malformed JSON/);
  });

  test('a text file that is not a session: the reason, at most --max-errors lines, how many more', async () => {
    // A pretty-printed JSON file: every line is malformed JSON on its own.
    const json = `${JSON.stringify({ name: 'x', list: Array.from({ length: 60 }, (_, i) => i) }, null, 2)}\n`;
    const file = tmpFile('package.json', json);
    const total = linesOf(json).length;
    assert.ok(total > 40);

    const r = await cli(['plan', file]);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    const lines = linesOf(r.stderr);
    assert.match(lines[0], /package\.json is not a usable pi session \(line 1: invalid session header/);
    // The code closes the sentence, before the list (not after "in all:").
    assert.match(lines[0], new RegExp(`; ${total + 1} line errors in all \\(E_HEADER\\):$`));
    // The first line plus 20 listed errors (the default) plus the "more" line.
    const isListed = (/** @type {string} */ l) => l.startsWith(`  ${file}: line `);
    const listed = lines.filter(isListed);
    assert.equal(listed.length, 20);
    // The engine reports line 1 twice (malformed JSON, invalid header): total + 1 errors.
    assert.match(
      String(lines.at(-1)),
      new RegExp(`… ${total + 1 - 20} more errors not shown \\(--max-errors 20; 0 = all\\)`),
    );
    assert.equal(lines.length, 22);

    const three = await cli(['validate', file, '--max-errors', '3']);
    assert.equal(three.status, 2);
    assert.equal(linesOf(three.stderr).filter(isListed).length, 3);
    assert.match(three.stderr, new RegExp(`… ${total + 1 - 3} more errors not shown \\(--max-errors 3;`));

    const all = await cli(['plan', file, '--max-errors', '0']);
    assert.equal(all.status, 2);
    assert.equal(linesOf(all.stderr).filter(isListed).length, total + 1);
    assert.doesNotMatch(all.stderr, /more errors not shown/);

    const bad = await cli(['plan', file, '--max-errors', 'many']);
    assert.equal(bad.status, 2);
    assert.match(
      bad.stderr,
      /--max-errors "many" is not accepted: expected a whole number >= 0 .*\(E_INVALID_ARGUMENT\)/,
    );
  });

  test('malformed lines of a session: warnings and validate findings are capped, the counts are not', async () => {
    const lines = [...SAMPLE_LINES.slice(0, 200)];
    for (let k = 0; k < 30; k++) lines.splice(10 + k * 5, 0, `{"broken": ${k}`);
    const file = tmpFile('thirty-bad.jsonl', `${lines.join('\n')}\n`);

    const plan = await cli(['plan', file]);
    assert.equal(plan.status, 0, plan.stderr);
    const warnings = linesOf(plan.stderr);
    assert.equal(warnings.filter((l) => /malformed JSON.*\(line skipped\)/.test(l)).length, 20);
    assert.match(
      String(warnings.at(-1)),
      /10 more load errors not listed \(10 E_PARSE \(lines skipped\); --max-errors 20; 0 = all/,
    );
    const five = await cli(['plan', file, '--max-errors', '5']);
    assert.equal(linesOf(five.stderr).filter((l) => /\(line skipped\)/.test(l)).length, 5);
    assert.match(five.stderr, /25 more load errors not listed \(25 E_PARSE \(lines skipped\);/);

    const validate = await cli(['validate', file, '--max-errors', '4']);
    assert.equal(validate.status, 1, validate.stderr);
    const rows = linesOf(validate.stdout).filter((l) => /^\s+error\s+E_/.test(l));
    assert.equal(rows.length, 4);
    assert.match(validate.stdout, /… 26 more findings not listed \(--max-errors 4; 0 = all; --json has every one\)/);
    assert.match(validate.stdout, /INVALID: 30 errors/);
    const json = await cli(['validate', file, '--json', '--max-errors', '4']);
    assert.equal(JSON.parse(json.stdout).findings.filter((/** @type {any} */ f) => f.severity === 'error').length, 30);
  });
});

describe('summarizer failures name the cause and the URL, credentials redacted', () => {
  /** A port nothing listens on (a server opened and closed). */
  async function closedPort() {
    const server = createServer();
    await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
    await new Promise((r) => server.close(() => r(undefined)));
    return port;
  }

  /** Every output of the runs is free of the secrets. @param {{ stdout: string, stderr: string }[]} runs */
  function assertNoSecrets(runs) {
    for (const run of runs)
      for (const text of [run.stdout, run.stderr]) {
        for (const secret of [KEY, QUERY_SECRET, 'hunter2pw'])
          assert.ok(!text.includes(secret), `${secret} was printed: ${text}`);
        assert.doesNotMatch(text, /authorization|bearer/i);
      }
  }

  test('--endpoint unreachable, answering 500, and with user:password@: exit codes, cause, redacted URL', async () => {
    const port = await closedPort();
    const unreachable = await cli([
      'compact',
      SAMPLE,
      '--endpoint',
      `http://127.0.0.1:${port}/sum?key=${QUERY_SECRET}`,
    ]);
    assert.equal(unreachable.status, 3, unreachable.stderr);
    assert.match(unreachable.stderr, /the summarizer failed: .*fetch failed: ECONNREFUSED/);
    // The engine's message names the endpoint (credentials redacted); the CLI does not repeat it.
    assert.match(
      unreachable.stderr,
      new RegExp(
        `no answer from http://127\\.0\\.0\\.1:${port}/sum\\?key=\\[redacted\\]: .*ECONNREFUSED.* \\(E_REMOTE\\); nothing was written`,
      ),
    );
    assert.doesNotMatch(unreachable.stderr, new RegExp(QUERY_SECRET));

    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":"down"}');
      });
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
    const { port: live } = /** @type {import('node:net').AddressInfo} */ (server.address());
    let failing;
    try {
      failing = await cli(['compact', SAMPLE, '--endpoint', `http://127.0.0.1:${live}/sum?token=${QUERY_SECRET}&x=1`]);
    } finally {
      await new Promise((r) => server.close(() => r(undefined)));
    }
    assert.equal(failing.status, 3, failing.stderr);
    assert.match(failing.stderr, /HTTP 500/);
    // The engine's message names the endpoint (secrets redacted); the CLI does not repeat it.
    assert.match(
      failing.stderr,
      new RegExp(`the summarizer at http://127\\.0\\.0\\.1:${live}/sum\\?token=\\[redacted\\]&x=1 answered HTTP 500`),
    );

    const userinfo = await cli(['compact', SAMPLE, '--endpoint', `http://alice:hunter2pw@127.0.0.1:${port}/sum`]);
    assert.equal(userinfo.status, 2, userinfo.stderr);
    assert.match(
      userinfo.stderr,
      /--endpoint: the URL carries credentials \(user:password@\), which fetch refuses to send/,
    );
    assert.match(userinfo.stderr, /http:\/\/\[redacted\]@127\.0\.0\.1/);
    assertNoSecrets([unreachable, failing, userinfo]);
  });

  test('--openai unreachable and with credentials in the URL: the key and the credentials never printed', async () => {
    const port = await closedPort();
    const env = { OPENAI_API_KEY: KEY };
    const unreachable = await cli(
      ['compact', SAMPLE, '--openai', `http://127.0.0.1:${port}/v1?api_key=${QUERY_SECRET}`, '--model', 'm'],
      env,
    );
    assert.equal(unreachable.status, 3, unreachable.stderr);
    assert.match(
      unreachable.stderr,
      /cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\?api_key=\[redacted\]/,
    );
    assert.match(unreachable.stderr, /ECONNREFUSED/);
    assert.match(unreachable.stderr, /\(E_MODEL\); nothing was written/);
    const userinfo = await cli(
      ['compact', SAMPLE, '--openai', `http://alice:hunter2pw@127.0.0.1:${port}/v1`, '--model', 'm'],
      env,
    );
    assert.equal(userinfo.status, 2);
    assert.match(
      userinfo.stderr,
      /--openai: the URL carries credentials .* \(the API key comes from \$OPENAI_API_KEY\)/,
    );
    assertNoSecrets([unreachable, userinfo]);
  });
});
