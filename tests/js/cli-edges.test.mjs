// Tests of the CLI (pkg/bin/session-compaction.mjs, built by `npm run build`) at the edges a
// newcomer trial found: `prune --write` keeps every unpruned line byte for byte (a byte order
// mark, CRLF line ends, bytes that are not UTF-8); `compact --write` checks that the file can be
// written before any model call; `validate` lists errors before warnings; a file too large to load;
// a stdout that cannot be written (/dev/full, a closed pipe); a broken tree (a parentId pointing
// nowhere, a parent cycle) warns; help, a number too large, the examples without an API key.
// Run: node --test tests/js/cli-edges.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as sc from '../../pkg/index.node.mjs';
import { CLI, HEADER, messageLine, runCli, runCliWithStdout, tempFolder } from './support/cli.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
const { dir: TMP, file: tmpFile } = tempFolder('session-compaction-cli-edges-');
/** What prune needs to find candidates in the sample (its defaults find too little). */
const PRUNE_FLAGS = ['--minimum-savings', '0', '--protect-tokens', '10000'];

/** The lines of a file as Buffers, each with its line end. @param {Buffer} data */
function lineBuffers(data) {
  /** @type {Buffer[]} */
  const lines = [];
  let start = 0;
  while (start < data.length) {
    const nl = data.indexOf(0x0a, start);
    const end = nl < 0 ? data.length : nl + 1;
    lines.push(data.subarray(start, end));
    start = end;
  }
  return lines;
}

const text = (/** @type {string} */ t) => [{ type: 'text', text: t }];

describe('prune --write keeps the bytes of every line it does not prune', () => {
  test('a BOM, CRLF line ends and a line that is not UTF-8 stay byte for byte', async () => {
    const lines = readFileSync(SAMPLE, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => Buffer.from(l));
    // Line 3 (an assistant message, never pruned): two bytes that are not UTF-8 inside a string.
    const at = lines[2].indexOf('"path":"') + 8;
    assert.ok(at > 8);
    lines[2] = Buffer.concat([lines[2].subarray(0, at), Buffer.from([0xff, 0xfe]), lines[2].subarray(at)]);
    const data = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), ...lines.flatMap((l) => [l, Buffer.from('\r\n')])]);
    const file = tmpFile('bom-crlf.jsonl', data);

    const tree = sc.SessionTree.fromBytes(data, {});
    assert.equal(tree.loadErrors.length, 0);
    const nodes = tree.getTree();
    const expected = tree.planPrune({ minimumSavings: 0, protectTokens: 10000 });
    assert.ok(expected.candidates.length > 0);
    const prunedLines = new Set(expected.candidates.map((c) => nodes[/** @type {number} */ (c.entryIndex)].line));
    assert.ok(!prunedLines.has(3), 'the non-UTF-8 line is not pruned');

    const r = await runCli(['prune', file, '--write', ...PRUNE_FLAGS, '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).written.prunedCount, expected.candidates.length);
    const after = readFileSync(file);
    assert.ok(readFileSync(`${file}.bak`).equals(data), 'the .bak is the original');
    const before = lineBuffers(data);
    const now = lineBuffers(after);
    assert.equal(now.length, before.length);
    assert.deepEqual([...after.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'the BOM is kept');
    let changed = 0;
    now.forEach((line, k) => {
      if (prunedLines.has(k + 1)) {
        assert.ok(!line.equals(before[k]), `line ${k + 1} is pruned`);
        assert.equal(line.subarray(-2).toString('latin1'), '\r\n', `line ${k + 1} keeps its CRLF`);
        const pruned = JSON.parse(line.toString('utf8'));
        assert.equal(pruned.id, nodes.find((n) => n.line === k + 1)?.id, `line ${k + 1} holds the same entry`);
        assert.equal(typeof pruned.message.prunedAt, 'number');
        changed++;
      } else {
        assert.ok(line.equals(before[k]), `line ${k + 1} is byte for byte the same`);
      }
    });
    assert.equal(changed, expected.candidates.length);
    const reloaded = sc.SessionTree.fromBytes(after, {});
    assert.equal(reloaded.loadErrors.length, 0);
    assert.equal(reloaded.entryCount, tree.entryCount);
    assert.equal(reloaded.planPrune({ minimumSavings: 0, protectTokens: 10000 }).candidates.length, 0);
  });

  test('a pruned entry glued on one line with another record: no record is lost', async () => {
    // Each assistant call and its tool result are glued on one line (`{…}{…}`, two entries). Replacing
    // the line by the pruned result's text alone dropped the call (the result then an orphan).
    const big = 'x'.repeat(40000);
    const lines = [HEADER, messageLine('u1', null, 'user', 'hi')];
    let parent = 'u1';
    for (let k = 0; k < 3; k++) {
      const call = messageLine(`a${k}`, parent, 'assistant', [
        { type: 'toolCall', id: `c${k}`, name: 'bash', arguments: { command: `ls ${k}` } },
      ]);
      const result = JSON.stringify({
        type: 'message',
        id: `r${k}`,
        parentId: `a${k}`,
        timestamp: '2025-01-01T00:00:00.000Z',
        message: { role: 'toolResult', toolCallId: `c${k}`, toolName: 'bash', content: text(big), timestamp: 1 },
      });
      lines.push(call + result);
      parent = `r${k}`;
    }
    lines.push(messageLine('u2', parent, 'user', 'done'));
    const data = Buffer.from(`${lines.join('\n')}\n`);
    const file = tmpFile('glued.jsonl', data);
    const r = await runCli(['prune', file, '--write', '--minimum-savings', '0', '--protect-tokens', '10', '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).written.prunedCount, 2);
    const tree = sc.SessionTree.fromBytes(readFileSync(file), {});
    assert.deepEqual(tree.loadErrors, []);
    assert.deepEqual(
      tree.getBranch().map((e) => e.id),
      ['u1', 'a0', 'r0', 'a1', 'r1', 'a2', 'r2', 'u2'],
    );
    assert.deepEqual(tree.validate().issues, []);
    assert.equal(tree.planPrune({ minimumSavings: 0, protectTokens: 10 }).candidates.length, 0);
    tree.free();
  });

  test('a pruned line ended by CR CR LF keeps that line end', async () => {
    const big = 'x'.repeat(40000);
    const lines = [HEADER, messageLine('u1', null, 'user', 'hi')];
    let parent = 'u1';
    for (let k = 0; k < 3; k++) {
      lines.push(
        messageLine(`a${k}`, parent, 'assistant', [{ type: 'toolCall', id: `c${k}`, name: 'bash', arguments: {} }]),
      );
      lines.push(
        JSON.stringify({
          type: 'message',
          id: `r${k}`,
          parentId: `a${k}`,
          timestamp: '2025-01-01T00:00:00.000Z',
          message: { role: 'toolResult', toolCallId: `c${k}`, toolName: 'bash', content: text(big), timestamp: 1 },
        }),
      );
      parent = `r${k}`;
    }
    const data = Buffer.from(`${lines.join('\r\r\n')}\r\r\n`);
    const file = tmpFile('crcrlf.jsonl', data);
    const r = await runCli(['prune', file, '--write', '--minimum-savings', '0', '--protect-tokens', '10', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const now = lineBuffers(readFileSync(file));
    assert.equal(now.length, lines.length);
    for (const [k, line] of now.entries())
      assert.equal(line.subarray(-3).toString('latin1'), '\r\r\n', `line ${k + 1}`);
  });

  test('compact --write on a CRLF file appends its line with CRLF, keeping every byte before it', async () => {
    const lines = readFileSync(SAMPLE, 'utf8').split('\n').filter(Boolean);
    const data = Buffer.from(lines.map((l) => `${l}\r\n`).join(''));
    const file = tmpFile('crlf-compact.jsonl', data);
    const r = await runCli(['compact', file, '--write']);
    assert.equal(r.status, 0, r.stderr);
    const after = readFileSync(file);
    assert.ok(after.subarray(0, data.length).equals(data), 'the original bytes are kept');
    const added = after.subarray(data.length).toString('utf8');
    assert.match(added, /^\{"type":"compaction".*\}\r\n$/s);
    assert.equal(added.split('\r\n').length, 2, 'one line, ended by CRLF');
    const tree = sc.SessionTree.fromBytes(after, {});
    assert.equal(tree.loadErrors.length, 0);
    assert.equal(tree.getBranch().at(-1)?.type, 'compaction');
    tree.free();
  });

  test('prune --help says what --write rewrites', async () => {
    const r = await runCli(['prune', '--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /only the lines of the pruned entries are\s+rewritten/);
    assert.match(r.stdout, /every other byte of the file stays as it is/);
  });
});

/** An HTTP server on 127.0.0.1 that counts the requests (and answers a summary). */
async function countingServer() {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ summary: 'a summary' }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}/summarize`,
    count: () => requests,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  };
}

describe('--write checks that the file can be written before the model is called', () => {
  const asRoot = process.getuid?.() === 0;
  test('a read-only folder: compact and navigate --summarize --write fail before any request', {
    skip: asRoot ? 'runs as root: file permissions are not enforced' : false,
  }, async () => {
    const dir = join(TMP, 'read-only');
    mkdirSync(dir);
    const file = join(dir, 'session.jsonl');
    copyFileSync(SAMPLE, file);
    const original = readFileSync(file);
    chmodSync(dir, 0o555);
    const server = await countingServer();
    try {
      const compact = await runCli(['compact', file, '--write', '--endpoint', server.url]);
      assert.equal(compact.status, 2, compact.stderr);
      assert.equal(
        compact.stderr.trim(),
        `session-compaction: error: cannot write the backup ${file}.bak: permission denied: nothing written (E_FILE)`,
      );
      const leaf = sc.SessionTree.fromBytes(original, {});
      const target = /** @type {string} */ (leaf.getTree()[1].id);
      const nav = await runCli([
        'navigate',
        file,
        target,
        '--summarize',
        '--write',
        '--endpoint',
        server.url,
        '--json',
      ]);
      assert.equal(nav.status, 2, nav.stderr);
      assert.equal(JSON.parse(nav.stdout).error.code, 'E_FILE');
      assert.equal(server.count(), 0, 'no request reached the model');
      assert.ok(readFileSync(file).equals(original));
      assert.ok(!existsSync(`${file}.bak`));
    } finally {
      chmodSync(dir, 0o755);
      await server.close();
    }
  });

  test('a read-only file: refused before any request', {
    skip: asRoot ? 'runs as root: file permissions are not enforced' : false,
  }, async () => {
    const file = join(TMP, 'read-only-file.jsonl');
    copyFileSync(SAMPLE, file);
    chmodSync(file, 0o444);
    const server = await countingServer();
    try {
      const r = await runCli(['compact', file, '--write', '--endpoint', server.url]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /cannot write .*read-only-file\.jsonl: permission denied: nothing written \(E_FILE\)/);
      assert.equal(server.count(), 0);
    } finally {
      chmodSync(file, 0o644);
      await server.close();
    }
  });
});

describe('validate lists the errors first', () => {
  test('66 warnings before an E_MISSING_PARENT on the last line: the error row is shown', async () => {
    const lines = [HEADER, messageLine('u0', null, 'user', text('start'))];
    let parent = 'u0';
    for (let k = 0; k < 66; k++) {
      const a = `a${k}`;
      lines.push(
        messageLine(a, parent, 'assistant', [
          { type: 'toolCall', id: `call${k}`, name: 'read', arguments: { path: '/x' } },
        ]),
      );
      const u = `u${k + 1}`;
      lines.push(messageLine(u, a, 'user', text(`go on ${k}`)));
      parent = u;
    }
    lines.push(messageLine('lost', 'nowhere', 'user', text('the last line')));
    const data = `${lines.join('\n')}\n`;
    const file = tmpFile('warnings-then-error.jsonl', data);
    const issues = sc.SessionTree.fromBytes(Buffer.from(data), {}).validate().issues;
    const warnings = issues.filter((i) => i.code === 'E_UNANSWERED_TOOL_CALL').length;
    assert.equal(warnings, 66);
    assert.deepEqual(
      issues.filter((i) => i.code !== 'E_UNANSWERED_TOOL_CALL').map((i) => [i.code, i.line]),
      [['E_MISSING_PARENT', lines.length]],
    );

    const r = await runCli(['validate', file]);
    assert.equal(r.status, 1, r.stderr);
    const rows = r.stdout.split('\n').filter((l) => /^\s+(error|warning)\s+E_/.test(l));
    assert.equal(rows.length, 20);
    assert.match(
      rows[0],
      new RegExp(`^\\s+error\\s+E_MISSING_PARENT\\s+${lines.length}\\s+entry lost: parent nowhere`),
    );
    assert.equal(rows.filter((l) => /^\s+warning\s+E_UNANSWERED_TOOL_CALL/.test(l)).length, 19);
    assert.match(
      r.stdout,
      /… 47 more findings not listed \(--max-errors 20; 0 = all; --json has every one\): 0 errors, 47 warnings/,
    );
    assert.match(r.stdout, /INVALID: 1 error, 66 warnings/);
  });
});

describe('a file too large to load', () => {
  test('a 2.2 GB (sparse) file: the size and the limit, E_FILE, without reading it', async () => {
    const file = tmpFile('big.jsonl', '');
    truncateSync(file, 2_200_000_000);
    const started = Date.now();
    const r = await runCli(['plan', file]);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(
      r.stderr.trim(),
      `session-compaction: error: cannot read ${file}: a file of 2,200,000,000 bytes (2.20 GB) is too large: ` +
        'the CLI loads files of at most 2,147,483,647 bytes (2 GiB - 1), since the engine holds the bytes and the ' +
        'session built from them in WebAssembly memory (4 GiB in all) (E_FILE)',
    );
    assert.ok(Date.now() - started < 5000, 'refused without reading the file');
    const json = await runCli(['plan', file, '--json']);
    assert.equal(json.status, 2);
    assert.equal(JSON.parse(json.stdout).error.code, 'E_FILE');
  });
});

describe('a stdout that cannot be written', () => {
  const sh = (/** @type {string} */ command) => spawnSync('bash', ['-c', command], { encoding: 'utf8' });
  test('> /dev/full: one line on stderr, exit 2, no stack', {
    skip: !existsSync('/dev/full') && 'no /dev/full',
  }, () => {
    const r = sh(`"${process.execPath}" "${CLI}" plan "${SAMPLE}" > /dev/full`);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(
      r.stderr,
      'session-compaction: error: cannot write the output to stdout: no space left on the device (ENOSPC) (E_FILE)\n',
    );
  });

  // A --write whose output then fails: the file is written, so the error line says so and names
  // it (a user who took the run for failed and ran it again would append a second entry).
  describe('after a --write, the error says the file was written', {
    skip: !existsSync('/dev/full') && 'no /dev/full',
  }, () => {
    const LARGE = join(ROOT, 'examples', 'sessions', 'pi-session-large.jsonl');
    /** @param {string} name @param {string} source */
    const copy = (name, source) => {
      const file = join(TMP, name);
      copyFileSync(source, file);
      return file;
    };
    /** @param {string[]} args */
    const toFull = async (args) => {
      const fd = openSync('/dev/full', 'w');
      try {
        return await runCliWithStdout(args, fd);
      } finally {
        closeSync(fd);
      }
    };
    const stdoutFailed =
      'session-compaction: error: cannot write the output to stdout: no space left on the device (ENOSPC) (E_FILE)';
    const again = ' (running the command again would write it again)\n';
    /** @param {string} file @param {string} type */
    const entriesOf = (file, type) =>
      sc.SessionTree.fromBytes(readFileSync(file), {})
        .getTree()
        .filter((n) => n.type === type);

    for (const json of [false, true]) {
      test(`compact --write${json ? ' --json' : ''} > /dev/full: one compaction, and the line names it`, async () => {
        const file = copy(`full-compact-${json}.jsonl`, LARGE);
        const before = entriesOf(file, 'compaction').length;
        const r = await toFull(['compact', file, '--write', ...(json ? ['--json'] : [])]);
        assert.equal(r.status, 2, r.stderr);
        const added = entriesOf(file, 'compaction');
        assert.equal(added.length, before + 1, 'exactly one new compaction');
        const id = /** @type {any} */ (added.at(-1)).id;
        assert.equal(
          r.stderr,
          `${stdoutFailed}; the session file was written all the same: ${file}: compaction entry ${id} appended; ` +
            `original kept as ${file}.bak${again}`,
        );
      });
    }

    test('navigate --summarize --write > /dev/full: one branch summary, and the line names it', async () => {
      const file = copy('full-navigate.jsonl', LARGE);
      const tree = sc.SessionTree.fromBytes(readFileSync(file), {});
      const users = tree
        .getBranch()
        .filter((e) => e.type === 'message' && /** @type {any} */ (e).message.role === 'user');
      const target = /** @type {any} */ (users.at(-3));
      const before = entriesOf(file, 'branch_summary').length;
      const r = await toFull(['navigate', file, target.id, '--summarize', '--write']);
      assert.equal(r.status, 2, r.stderr);
      const added = entriesOf(file, 'branch_summary');
      assert.equal(added.length, before + 1, 'exactly one new branch summary');
      const id = /** @type {any} */ (added.at(-1)).id;
      assert.equal(
        r.stderr,
        `${stdoutFailed}; the session file was written all the same: ${file}: branch_summary entry ${id} appended; ` +
          `original kept as ${file}.bak${again}`,
      );
    });

    test('prune --write > /dev/full: pruned once, and the line names it', async () => {
      const file = copy('full-prune.jsonl', SAMPLE);
      const expected = sc.SessionTree.fromBytes(readFileSync(file), {}).planPrune({
        minimumSavings: 0,
        protectTokens: 10000,
      });
      assert.ok(expected.candidates.length > 1);
      const r = await toFull(['prune', file, '--write', ...PRUNE_FLAGS]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `^${stdoutFailed.replace(/[()]/g, '\\$&')}; the session file was written all the same: ` +
            `${file.replace(/[.]/g, '\\.')}: ${expected.candidates.length} tool outputs pruned, [\\d,]+ tokens saved; ` +
            `original kept as ${file.replace(/[.]/g, '\\.')}\\.bak \\(running the command again would write it again\\)\\n$`,
        ),
      );
      const pruned = sc.SessionTree.fromBytes(readFileSync(file), {}).planPrune({
        minimumSavings: 0,
        protectTokens: 10000,
      });
      assert.equal(pruned.candidates.length, 0, 'the file holds the pruned outputs');
    });

    test('without --write nothing is claimed', async () => {
      const r = await toFull(['compact', copy('full-nowrite.jsonl', LARGE)]);
      assert.equal(r.status, 2);
      assert.equal(r.stderr, `${stdoutFailed}\n`);
    });
  });

  test('a closed pipe (| head -n 1): exits quietly with 0', () => {
    const r = sh(
      `"${process.execPath}" "${CLI}" tree "${SAMPLE}" --full | head -n 1 > /dev/null; echo "\${PIPESTATUS[0]}"`,
    );
    assert.equal(r.stdout.trim(), '0');
    assert.equal(r.stderr, '');
  });
});

describe('a broken tree warns', () => {
  const missing = tmpFile(
    'missing-parent.jsonl',
    `${[HEADER, messageLine('m1', null, 'user', text('one')), messageLine('m2', 'm1', 'assistant', text('two')), messageLine('m3', 'gone', 'user', text('three'))].join('\n')}\n`,
  );
  const cycle = tmpFile(
    'cycle.jsonl',
    `${[HEADER, messageLine('c1', 'c2', 'user', text('one')), messageLine('c2', 'c1', 'assistant', text('two'))].join('\n')}\n`,
  );
  const sound = tmpFile(
    'sound.jsonl',
    `${[HEADER, messageLine('m1', null, 'user', text('one')), messageLine('m2', 'm1', 'assistant', text('two'))].join('\n')}\n`,
  );

  for (const args of [['plan'], ['prune'], ['compact'], ['navigate', 'm2']]) {
    test(`${args[0]}: a parentId pointing nowhere warns on stderr and in --json`, async () => {
      const [command, ...rest] = args;
      const r = await runCli([command, missing, ...rest]);
      assert.equal(r.status, 0, r.stderr);
      const warning =
        `warning: ${missing}: the session tree is broken (1 E_MISSING_PARENT; first: line 4: entry m3: parent gone ` +
        `not found): the branch may be cut short; run \`session-compaction validate ${missing}\` for every problem\n`;
      assert.equal(r.stderr, warning);
      const json = await runCli([command, missing, ...rest, '--json']);
      assert.equal(json.status, 0, json.stderr);
      assert.equal(json.stderr, warning);
      assert.deepEqual(JSON.parse(json.stdout).treeProblems, {
        count: 1,
        codes: { E_MISSING_PARENT: 1 },
        first: 'line 4: entry m3: parent gone not found',
        message: warning.slice(`warning: ${missing}: `.length, -1),
      });
    });
  }

  test('a parent cycle warns; a sound tree does not', async () => {
    const codes = sc.SessionTree.fromBytes(readFileSync(cycle), {})
      .validate()
      .issues.map((i) => i.code);
    assert.ok(codes.includes('E_CYCLE'), codes.join());
    const r = await runCli(['plan', cycle, '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /the session tree is broken \(\d+ E_CYCLE.*run `session-compaction validate /);
    assert.ok(JSON.parse(r.stdout).treeProblems.codes.E_CYCLE >= 1);
    const ok = await runCli(['plan', sound, '--json']);
    assert.equal(ok.stderr, '');
    assert.equal(JSON.parse(ok.stdout).treeProblems, null);
  });
});

describe('help, numbers, examples', () => {
  test('compact --help and navigate --help show --timeout in the usage line', async () => {
    for (const command of ['compact', 'navigate']) {
      const r = await runCli([command, '--help']);
      assert.match(r.stdout.split('\n')[0], /\[--timeout seconds\]/, command);
    }
  });

  test('a number too large names the maximum', async () => {
    const r = await runCli(['plan', SAMPLE, '--keep-recent-tokens', '99999999999999999999']);
    assert.equal(r.status, 2);
    assert.equal(
      r.stderr.trim(),
      'session-compaction: error: --keep-recent-tokens "99999999999999999999" is not accepted: too large, ' +
        'at most 9,007,199,254,740,991 (E_INVALID_ARGUMENT)',
    );
  });

  for (const [name, variable] of [
    ['anthropic.mjs', 'ANTHROPIC_API_KEY'],
    ['openai.mjs', 'OPENAI_API_KEY'],
    ['ai-sdk.mjs', 'AI_GATEWAY_API_KEY'],
  ]) {
    test(`examples/${name} without ${variable}: one line that names it, exit 1`, () => {
      const env = { ...process.env };
      delete env.ANTHROPIC_API_KEY;
      delete env.OPENAI_API_KEY;
      delete env.AI_GATEWAY_API_KEY;
      const r = spawnSync(process.execPath, [join(ROOT, 'examples', name)], { encoding: 'utf8', env });
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, new RegExp(`^examples/${name.replace('.', '\\.')}: set ${variable}\\b[^\\n]*\\n$`));
    });
  }
});
