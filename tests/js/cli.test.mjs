// Tests of the package's command-line tool (pkg/bin/session-compaction.mjs, built by
// `npm run build`): every command on each real session of examples/sessions/, its numbers
// checked against the JavaScript API; malformed and missing files; `prune --write`; the v1 format;
// the repository's sample session used when no file is given (and the clear error of an installed
// package, which does not ship it). Run: node --test tests/js/cli.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as sc from '../../pkg/index.node.mjs';
import { CLI, HEADER, messageLine } from './support/cli.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSIONS_DIR = join(ROOT, 'examples', 'sessions');
const SAMPLE = join(SESSIONS_DIR, 'pi-session-with-compactions.jsonl');
const SESSIONS = readdirSync(SESSIONS_DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();
const VERSION = sc.version();

const TMP = mkdtempSync(join(tmpdir(), 'session-compaction-cli-'));
after(() => rmSync(TMP, { recursive: true, force: true }));

/**
 * Runs the CLI; colors off unless `env` says otherwise.
 * @param {string[]} args
 * @param {Record<string, string | undefined>} [env]
 */
function cli(args, env = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, ...env },
    maxBuffer: 512 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** @param {string[]} args @returns {any} */
function cliJson(args) {
  const r = cli([...args, '--json']);
  assert.equal(r.status, 0, `${args.join(' ')} --json: exit ${r.status}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** @param {string} file */
function load(file) {
  return sc.SessionTree.fromBytes(readFileSync(file), {});
}

/** @param {import('../../pkg/index.node.mjs').AgentMessage[]} messages */
function tokens(messages) {
  return messages.reduce((sum, m) => sum + sc.estimateTokens(m), 0);
}

/** @param {number} n */
const fmt = (n) => n.toLocaleString('en-US');

/** The lines of a real session, to derive malformed variants from. */
const LARGE_LINES = readFileSync(join(SESSIONS_DIR, 'pi-session-large.jsonl'), 'utf8').split('\n');

/** Writes a file into the temp folder and returns its path. @param {string} name @param {string} text */
function tmpFile(name, text) {
  const path = join(TMP, name);
  writeFileSync(path, text);
  return path;
}

describe('every command on each real session', () => {
  for (const name of SESSIONS) {
    const file = join(SESSIONS_DIR, name);

    describe(name, () => {
      const tree = load(file);
      const branch = tree.getBranch();
      const plan = tree.planCompaction({});
      const prep = tree.prepareCompaction({});
      assert.ok(plan && prep, 'the real sessions have something to compact');

      test('plan --json matches the JS API', () => {
        const out = cliJson(['plan', file]);
        assert.equal(out.file, file);
        assert.equal(out.sample, false);
        assert.equal(out.entryCount, tree.entryCount);
        assert.equal(out.branchLength, branch.length);
        assert.equal(out.contextTokens, tree.estimateContextTokens());
        assert.equal(out.contextWindow, 200000);
        assert.equal(out.shouldCompact, sc.shouldCompact(out.contextTokens, 200000, {}));
        assert.deepEqual(out.plan, plan);
        assert.equal(out.cutPoint.index, plan.cutPoint.firstKeptEntryIndex);
        assert.equal(out.cutPoint.isSplitTurn, prep.isSplitTurn);
        assert.equal(out.cutPoint.turnStart?.index ?? -1, plan.cutPoint.turnStartIndex);
        // Ids compare across loads, those a v1 migration assigns too (SPEC §13.10).
        assert.equal(out.cutPoint.entryId, prep.firstKeptEntryId);
        assert.equal(out.preparation.firstKeptEntryId, prep.firstKeptEntryId);
        assert.equal(out.leafId, tree.leafId);
        assert.equal(out.cutPoint.entryId, branch[plan.cutPoint.firstKeptEntryIndex].id);
        const cutEntry = /** @type {any} */ (branch[plan.cutPoint.firstKeptEntryIndex]);
        assert.equal(out.cutPoint.role, cutEntry.type === 'message' ? cutEntry.message.role : cutEntry.type);
        assert.deepEqual(out.counts, {
          toSummarize: { messages: prep.messagesToSummarize.length, tokens: tokens(prep.messagesToSummarize) },
          turnPrefix: { messages: prep.turnPrefixMessages.length, tokens: tokens(prep.turnPrefixMessages) },
          kept: { messages: prep.recentMessages.length, tokens: tokens(prep.recentMessages) },
        });
        assert.deepEqual(out.preview, plan.preview, 'the engine preview, as planCompaction gives it');
        assert.ok(out.preview.compaction.contextTokensAfter < out.contextTokens);
        assert.equal(out.preparation.tokensBefore, prep.tokensBefore);
        assert.equal(out.lastUsage.contextTokens, prep.tokensBefore);
        assert.equal(out.preparation.messagesToSummarize.length, prep.messagesToSummarize.length);
        assert.deepEqual(out.preparation.fileOps, prep.fileOps);
        // SPEC §8: modified = written ∪ edited, read = read − modified, both sorted.
        const modified = [...new Set([...prep.fileOps.written, ...prep.fileOps.edited])].sort();
        assert.deepEqual(out.modifiedFiles, modified);
        assert.deepEqual(out.readFiles, [...new Set(prep.fileOps.read.filter((f) => !modified.includes(f)))].sort());
      });

      test('plan: readable report with the key numbers', () => {
        const r = cli(['plan', file]);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stderr, '');
        assert.match(r.stdout, new RegExp(`^session-compaction ${VERSION.replaceAll('.', '\\.')}$`, 'm'));
        assert.match(r.stdout, new RegExp(`entries\\s+${fmt(tree.entryCount)}\\b`));
        assert.match(r.stdout, new RegExp(`branch length\\s+${fmt(branch.length)}\\b`));
        assert.match(r.stdout, new RegExp(`context tokens\\s+${fmt(tree.estimateContextTokens())}\\b`));
        assert.match(
          r.stdout,
          new RegExp(
            `to summarize\\s+${fmt(prep.messagesToSummarize.length)}\\s+${fmt(tokens(prep.messagesToSummarize))}`,
          ),
        );
        assert.match(
          r.stdout,
          new RegExp(`kept\\s+${fmt(prep.recentMessages.length)}\\s+${fmt(tokens(prep.recentMessages))}`),
        );
        assert.match(
          r.stdout,
          new RegExp(`cut point\\s+\\S+\\s+\\S+\\s+index ${fmt(plan.cutPoint.firstKeptEntryIndex)}`),
        );
        assert.match(r.stdout, new RegExp(`cut point\\s+${prep.firstKeptEntryId}\\b`));
        assert.match(r.stdout, new RegExp(`split turn\\s+${prep.isSplitTurn ? 'yes' : 'no'}`));
        assert.match(r.stdout, /should compact\s+(yes|no)/);
        const c = /** @type {NonNullable<typeof plan.preview>} */ (plan.preview);
        assert.match(
          r.stdout,
          new RegExp(
            `after compaction\\s+${fmt(/** @type {any} */ (c.compaction).contextTokensBefore)} → ${fmt(/** @type {any} */ (c.compaction).contextTokensAfter)} tokens`,
          ),
        );
        assert.match(
          r.stdout,
          new RegExp(
            `prune, then compact\\s+.* → ${fmt(c.withPrune.contextTokensAfterPrune)} → ${fmt(c.withPrune.contextTokensAfter)} tokens`,
          ),
        );
        assert.doesNotMatch(r.stdout, /\u001b\[/, 'no colors when stdout is not a terminal');
      });

      test('plan options change the plan like the API', () => {
        const out = cliJson([
          'plan',
          file,
          '--keep-recent-tokens',
          '5000',
          '--reserve-tokens',
          '1000',
          '--context-window',
          '150k',
        ]);
        const expected = tree.planCompaction({ keepRecentTokens: 5000, reserveTokens: 1000 });
        assert.deepEqual(out.plan, expected);
        assert.equal(out.contextWindow, 150000);
        assert.equal(out.shouldCompact, out.contextTokens > 150000 - 1000);
        assert.equal(out.preparation.settings.keepRecentTokens, 5000);
      });

      test('context --json: the LLM messages of the API', () => {
        const out = cliJson(['context', file]);
        assert.deepEqual(out.messages, tree.buildLlmMessages());
        assert.equal(out.estimatedTokens, tree.estimateContextTokens());
      });

      test('context: one header per message, long texts shortened with a note', () => {
        const count = tree.buildLlmMessages().length;
        const r = cli(['context', file]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`messages\\s+${fmt(count)} \\(`));
        assert.equal((r.stdout.match(/^#\d+ /gm) ?? []).length, count);
        assert.match(r.stdout, /… [\d,]+ more characters?/);
        assert.match(r.stdout, /→ \w+\(/, 'tool calls shown compactly');
        const tail = cli(['context', file, '--last', '3']);
        assert.equal((tail.stdout.match(/^#\d+ /gm) ?? []).length, 3);
        assert.match(tail.stdout, new RegExp(`^#${count} `, 'm'));
        assert.match(tail.stdout, new RegExp(`${fmt(count - 3)} messages not shown`));
      });

      test('prune: candidates and savings like planPrune', () => {
        const expected = tree.planPrune({});
        const out = cliJson(['prune', file]);
        assert.equal(out.tokensSaved, expected.tokensSaved);
        assert.equal(out.candidates.length, expected.candidates.length);
        assert.equal(out.wouldPrune, expected.candidates.length > 0);
        assert.deepEqual(out.candidates, expected.candidates);
        const r = cli(['prune', file]);
        assert.equal(r.status, 0, r.stderr);
        if (expected.candidates.length) {
          assert.match(
            r.stdout,
            new RegExp(`${fmt(expected.candidates.length)} candidates, ${fmt(expected.tokensSaved)} tokens saved`),
          );
          assert.match(r.stdout, /would prune/);
        } else {
          assert.match(r.stdout, /nothing to prune/);
        }
        const loose = cliJson(['prune', file, '--minimum-savings', '0', '--protect-tokens', '1000']);
        const expectedLoose = tree.planPrune({ minimumSavings: 0, protectTokens: 1000 });
        assert.equal(loose.tokensSaved, expectedLoose.tokensSaved);
        assert.equal(loose.candidates.length, expectedLoose.candidates.length);
      });

      test('tree: the leaf marked, long linear runs collapsed', () => {
        const r = cli(['tree', file]);
        assert.equal(r.status, 0, r.stderr);
        const leafLine = r.stdout.split('\n').filter((l) => l.startsWith('* '));
        assert.equal(leafLine.length, 1, 'exactly one leaf line');
        assert.match(leafLine[0], new RegExp(`^\\* ${tree.leafId}\\b`));
        assert.match(r.stdout, /… [\d,]+ entries \(/);
        assert.ok(r.stdout.split('\n').length < 60, 'a linear session of 1,000 entries fits on a screen or two');
        const full = cli(['tree', file, '--full']);
        assert.equal(full.stdout.split('\n').filter((l) => /^[* ] [0-9a-f]{8} /.test(l)).length, tree.entryCount);
        const json = cliJson(['tree', file]);
        assert.equal(json.nodes.length, tree.entryCount);
      });

      test('validate: only warnings (unanswered tool calls) → exit 0', () => {
        const report = tree.validate();
        const r = cli(['validate', file]);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stdout, new RegExp(`valid: 0 errors, ${fmt(report.issues.length)} warnings?`));
        const out = JSON.parse(cli(['validate', file, '--json']).stdout);
        assert.equal(out.errors, 0);
        assert.equal(out.warnings, report.issues.length);
        assert.equal(out.valid, true);
      });
    });
  }
});

describe("no file: the repository's sample session (not shipped in the package)", () => {
  test('the package holds no sample session', () => {
    assert.ok(existsSync(SAMPLE));
    assert.equal(existsSync(join(ROOT, 'pkg', 'sample')), false);
    const pkgJson = JSON.parse(readFileSync(join(ROOT, 'pkg', 'package.json'), 'utf8'));
    assert.deepEqual(
      pkgJson.files.filter((/** @type {string} */ f) => f.includes('sample') || f.endsWith('.jsonl')),
      [],
      'package.json `files` ships no session',
    );
  });

  test('outside a checkout (an installed package) no file is a clear error, exit 2', () => {
    const installed = join(TMP, 'installed', 'node_modules', 'session-compaction');
    cpSync(join(ROOT, 'pkg'), installed, { recursive: true });
    for (const command of ['plan', 'tree']) {
      const r = spawnSync(process.execPath, [join(installed, 'bin', 'session-compaction.mjs'), command], {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined },
      });
      assert.equal(r.status, 2, `${command}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /no session file given: pass a pi session file \(\.jsonl\)/);
      assert.match(r.stderr, /examples\/sessions\/pi-session-with-compactions\.jsonl/);
      assert.match(r.stderr, /the npm package does not ship it/);
    }
    const withFile = spawnSync(process.execPath, [join(installed, 'bin', 'session-compaction.mjs'), 'plan', SAMPLE], {
      encoding: 'utf8',
    });
    assert.equal(withFile.status, 0, withFile.stderr);
    // --help names no sample path that this installation does not have.
    const help = spawnSync(process.execPath, [join(installed, 'bin', 'session-compaction.mjs'), '--help'], {
      encoding: 'utf8',
    });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /this installation has none/);
    assert.doesNotMatch(help.stdout, /node_modules[/\\]examples/);
  });

  test('every command defaults to it', () => {
    const tree = load(SAMPLE);
    const plan = cliJson(['plan']);
    assert.equal(plan.file, SAMPLE);
    assert.equal(plan.sample, true);
    assert.equal(plan.cutPoint.entryId, tree.prepareCompaction({})?.firstKeptEntryId);
    const text = cli(['plan']);
    assert.equal(text.status, 0);
    assert.match(text.stdout, /bundled sample session/);
    for (const command of ['context', 'prune', 'tree', 'validate']) {
      const r = cli([command]);
      assert.equal(r.status, 0, `${command}: ${r.stderr}`);
      assert.ok(r.stdout.includes(SAMPLE), `${command} names the sample`);
    }
  });

  test('prune --write refuses to modify the bundled sample', () => {
    const before = statSync(SAMPLE).mtimeMs;
    const r = cli(['prune', '--write']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /needs a file/);
    assert.equal(statSync(SAMPLE).mtimeMs, before);
  });
});

describe('the v1 session goes through migration', () => {
  const file = join(SESSIONS_DIR, 'pi-session-v1-format.jsonl');
  const v3 = join(SESSIONS_DIR, 'pi-session-with-compactions.jsonl');

  test('it plans like the same session in v3 (same indices and counts)', () => {
    const a = cliJson(['plan', file]);
    const b = cliJson(['plan', v3]);
    assert.equal(a.entryCount, b.entryCount);
    assert.deepEqual(a.plan, b.plan);
    assert.equal(a.cutPoint.index, b.cutPoint.index);
    assert.equal(a.counts.toSummarize.messages, b.counts.toSummarize.messages);
    assert.equal(a.counts.kept.messages, b.counts.kept.messages);
    assert.match(a.cutPoint.entryId, /^[0-9a-f]{8}$/, 'migration assigned ids');
  });

  test('the ids plan prints for it are the same on the next run and in the API (SPEC §13.10)', () => {
    const a = cliJson(['plan', file]);
    const b = cliJson(['plan', file]);
    assert.equal(b.cutPoint.entryId, a.cutPoint.entryId);
    assert.equal(b.leafId, a.leafId);
    assert.deepEqual(b.preparation, a.preparation);
    const tree = load(file);
    assert.equal(a.leafId, tree.leafId);
    assert.equal(a.cutPoint.entryId, tree.prepareCompaction({})?.firstKeptEntryId);
    const jsonl = tree.toJsonl();
    assert.equal(sc.SessionTree.fromBytes(readFileSync(file)).toJsonl(), jsonl, 'the same file on every load');
    const ids = jsonl
      .split('\n')
      .filter(Boolean)
      .slice(1)
      .map((line) => JSON.parse(line).id);
    assert.deepEqual(
      sc.parseSession(readFileSync(file, 'utf8')).entries.map((e) => /** @type {{ id: string }} */ (e).id),
      ids,
      'the pure parser assigns the same ids',
    );
    assert.equal(new Set(ids).size, ids.length);
  });

  test('prune --write writes it back in format v3', () => {
    const copy = join(TMP, 'v1-copy.jsonl');
    copyFileSync(file, copy);
    const flags = ['--minimum-savings', '0', '--protect-tokens', '10000'];
    const r = cli(['prune', copy, '--write', ...flags]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /format v1; it is now written in format v3/);
    assert.ok(readFileSync(`${copy}.bak`).equals(readFileSync(file)));
    const header = JSON.parse(readFileSync(copy, 'utf8').split('\n')[0]);
    assert.equal(header.version, 3);
    const again = cliJson(['prune', copy, ...flags]);
    assert.equal(again.candidates.length, 0);
  });
});

describe('prune --write', () => {
  test('rewrites a copy atomically, keeps the .bak, a second prune finds nothing', () => {
    const original = join(SESSIONS_DIR, 'pi-session-with-compactions.jsonl');
    const copy = join(TMP, 'prune-copy.jsonl');
    copyFileSync(original, copy);
    // Pruning only touches outputs the model still sees (after the last compaction's boundary);
    // on this session the defaults find too little, so the test lowers the thresholds.
    const config = { minimumSavings: 0, protectTokens: 10000 };
    const flags = ['--minimum-savings', '0', '--protect-tokens', '10000'];
    const expected = load(original).planPrune(config);
    assert.ok(expected.candidates.length > 0);

    const r = cli(['prune', copy, '--write', ...flags]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `written: .*${fmt(expected.candidates.length)} tool outputs pruned, ${fmt(expected.tokensSaved)} tokens saved`,
      ),
    );
    assert.ok(readFileSync(`${copy}.bak`).equals(readFileSync(original)), 'the .bak is the original');
    assert.deepEqual(
      readdirSync(TMP).filter((f) => f.endsWith('.tmp')),
      [],
      'no temp file left',
    );

    const pruned = sc.SessionTree.fromBytes(readFileSync(copy), { strict: true });
    assert.equal(pruned.loadErrors.length, 0);
    assert.equal(pruned.entryCount, load(original).entryCount);
    for (const c of expected.candidates) {
      const entry = /** @type {any} */ (pruned.getEntry(/** @type {string} */ (c.id)));
      assert.equal(typeof entry.message.prunedAt, 'number', `entry ${c.id} is marked pruned`);
    }
    assert.equal(pruned.planPrune(config).candidates.length, 0);

    const second = cli(['prune', copy, ...flags]);
    assert.equal(second.status, 0);
    assert.match(second.stdout, /nothing to prune/);
    const bytes = readFileSync(copy);
    const third = cli(['prune', copy, '--write', ...flags]);
    assert.equal(third.status, 0);
    assert.match(third.stdout, /unchanged/);
    assert.ok(readFileSync(copy).equals(bytes), 'nothing to prune: the file is not rewritten');
  });

  test('a file with a malformed line: pruned, the malformed line kept byte for byte (a warning names it)', () => {
    const lines = readFileSync(join(SESSIONS_DIR, 'pi-session-large.jsonl'), 'utf8').split('\n');
    lines[9] = lines[9].slice(0, 40);
    const file = tmpFile('prune-malformed.jsonl', lines.join('\n'));
    const before = readFileSync(file);
    const r = cli(['prune', file, '--write', '--minimum-savings', '0']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /line 10/);
    assert.match(r.stdout, /written:/);
    assert.ok(readFileSync(`${file}.bak`).equals(before));
    const now = readFileSync(file, 'utf8').split('\n');
    assert.equal(now.length, lines.length);
    assert.equal(now[9], lines[9], 'the malformed line is kept as written');
    assert.ok(
      now.some((l, k) => l !== lines[k]),
      'something was pruned',
    );
  });
});

describe('malformed and missing files', () => {
  test('a truncated JSON line: a warning naming the line, the command goes on', () => {
    const lines = [...LARGE_LINES];
    lines[5] = lines[5].slice(0, 50);
    const file = tmpFile('truncated.jsonl', lines.join('\n'));
    for (const command of ['plan', 'context', 'prune', 'tree']) {
      const r = cli([command, file]);
      assert.equal(r.status, 0, `${command}: ${r.stderr}`);
      assert.match(r.stderr, /warning: .*truncated\.jsonl: line 6: malformed JSON/, command);
    }
    const plan = cliJson(['plan', file]);
    assert.deepEqual(
      plan.loadErrors.map((/** @type {any} */ e) => e.line),
      [6],
    );
    // validate counts the unreadable line as an error.
    const v = cli(['validate', file]);
    assert.equal(v.status, 1);
    assert.match(v.stdout, /error\s+E_PARSE\s+6\s/);
    assert.match(v.stdout, /INVALID/);
    // --strict refuses the file, naming the line.
    const strict = cli(['plan', file, '--strict']);
    assert.equal(strict.status, 2);
    assert.match(strict.stderr, /truncated\.jsonl: line 6: malformed JSON/);
    assert.equal(strict.stdout, '');
  });

  test('an invalid header: exit 2 with a message naming line 1, for every command', () => {
    const broken = [...LARGE_LINES];
    broken[0] = '{"type":"sess';
    const noHeader = LARGE_LINES.slice(1);
    for (const [name, text] of [
      ['bad-header.jsonl', broken.join('\n')],
      ['no-header.jsonl', noHeader.join('\n')],
      ['empty.jsonl', ''],
      ['not-json.txt', 'hello\nworld\n'],
    ]) {
      const file = tmpFile(name, text);
      // Every command on one file; `plan` and `validate` on the others (each run costs ~0.5 s).
      const commands =
        name === 'bad-header.jsonl' ? ['plan', 'context', 'prune', 'tree', 'validate'] : ['plan', 'validate'];
      for (const command of commands) {
        const r = cli([command, file]);
        assert.equal(r.status, 2, `${command} ${name}`);
        assert.match(r.stderr, new RegExp(`${name.replace('.', '\\.')}: line 1: `), `${command} ${name}`);
        assert.equal(r.stdout, '');
      }
      assert.equal(readFileSync(file, 'utf8'), text, 'the file is untouched');
    }
  });

  test('a missing file, a folder: exit 2 naming it', () => {
    const missing = join(TMP, 'does-not-exist.jsonl');
    for (const command of ['plan', 'context', 'prune', 'tree', 'validate']) {
      const r = cli([command, missing]);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /cannot read .*does-not-exist\.jsonl: no such file/);
    }
    const dir = cli(['plan', TMP]);
    assert.equal(dir.status, 2);
    assert.match(dir.stderr, /is a directory/);
  });

  test('validate: the summary counts the load errors by code; a header version is one', () => {
    const body = messageLine('a', null, 'user', 'hello');
    for (const [version, code] of /** @type {const} */ ([
      [99, 'E_UNSUPPORTED_VERSION'],
      [-1, 'E_MISSING_FIELD'],
      ['3', 'E_MISSING_FIELD'],
    ])) {
      const header = JSON.stringify({ ...JSON.parse(HEADER), version });
      const file = tmpFile(`version-${String(version)}.jsonl`, `${header}\n${body}\n`);
      const r = cli(['validate', file]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stdout, new RegExp(`1 entry loaded, 1 load error: 1 ${code}\n`));
      assert.doesNotMatch(r.stdout, /malformed/);
      assert.match(r.stdout, new RegExp(`error\\s+${code}\\s+1\\s`));
      assert.match(r.stdout, /INVALID: 1 error\b/, 'listed once (load error and validation issue)');
    }
    const lines = [HEADER, '{"broken', messageLine('a', null, 'user', 'hello')];
    const mixed = cli(['validate', tmpFile('one-malformed.jsonl', `${lines.join('\n')}\n`)]);
    assert.match(mixed.stdout, /1 entry loaded, 1 load error: 1 E_PARSE \(lines skipped\)\n/);
    assert.match(cli(['validate', SAMPLE]).stdout, /entries loaded, no load errors\n/);
  });

  test('validate: structural errors → exit 1, listed with their lines', () => {
    const lines = [
      HEADER,
      messageLine('a', null, 'user', 'hello'),
      messageLine('b', 'a', 'assistant', 'hi'),
      messageLine('c', 'zzz', 'user', 'orphan'),
      messageLine('b', 'a', 'assistant', 'duplicate'),
    ];
    const file = tmpFile('broken-structure.jsonl', `${lines.join('\n')}\n`);
    const r = cli(['validate', file]);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /error\s+E_MISSING_PARENT\s+4\s/);
    assert.match(r.stdout, /error\s+E_DUPLICATE_ID\s+5\s/);
    assert.match(r.stdout, /INVALID: 2 errors/);
    const json = JSON.parse(cli(['validate', file, '--json']).stdout);
    assert.equal(json.errors, 2);
    assert.equal(json.valid, false);
  });
});

describe('tree shapes', () => {
  test('branches, labels and the leaf', () => {
    const lines = [
      HEADER,
      messageLine('u1', null, 'user', 'first question'),
      messageLine('a1', 'u1', 'assistant', 'first answer'),
      messageLine('u2', 'a1', 'user', 'abandoned follow-up'),
      messageLine('a2', 'u2', 'assistant', 'abandoned answer'),
      messageLine('u3', 'a1', 'user', 'better follow-up'),
      messageLine('a3', 'u3', 'assistant', 'final answer'),
      JSON.stringify({
        type: 'label',
        id: 'l1',
        parentId: 'a3',
        timestamp: '2025-01-01T00:00:00.000Z',
        targetId: 'a1',
        label: 'checkpoint',
      }),
    ];
    const file = tmpFile('branched.jsonl', `${lines.join('\n')}\n`);
    const r = cli(['tree', file, '--leaf', 'a2']);
    assert.equal(r.status, 0, r.stderr);
    const out = r.stdout.split('\n');
    const a1 = out.find((l) => l.includes('a1 ')) ?? '';
    assert.match(a1, /\[checkpoint\]/);
    assert.match(a1, /2 branches/);
    // With --leaf a2 the branch u2 → a2 leads to the leaf: it continues in the main column and
    // u3 → a3 is drawn as a side branch.
    assert.match(r.stdout, /^\* a2 /m, 'the leaf is marked');
    assert.match(r.stdout, /^ {2}u2 /m);
    assert.match(r.stdout, /^ {2}├─ u3 /m);
    assert.match(r.stdout, /^ {2}│ {2}a3 /m);
    const plain = cli(['tree', file]);
    assert.match(plain.stdout, /^ {2}├─ u2 /m);
    assert.match(plain.stdout, /^\* l1 +label +a1 → "checkpoint"/m);
  });

  test('a parent cycle and a shadowed duplicate id: every entry still shown', () => {
    const cycle = tmpFile(
      'cycle.jsonl',
      `${[HEADER, messageLine('a', 'c', 'user', 'x'), messageLine('b', 'a', 'assistant', 'y'), messageLine('c', 'b', 'user', 'z')].join('\n')}\n`,
    );
    const r = cli(['tree', cycle]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /3 entries not reachable from a root/);
    for (const id of ['a', 'b', 'c']) assert.match(r.stdout, new RegExp(`^[* ] ${id} `, 'm'));
    const v = cli(['validate', cycle]);
    assert.equal(v.status, 1);
    assert.match(v.stdout, /E_CYCLE/);
    for (const command of ['plan', 'context', 'prune']) assert.equal(cli([command, cycle]).status, 0, command);

    const dup = tmpFile(
      'duplicate.jsonl',
      `${[HEADER, messageLine('a', null, 'user', 'x'), messageLine('b', 'a', 'assistant', 'y'), messageLine('b', 'a', 'assistant', 'again')].join('\n')}\n`,
    );
    const d = cli(['tree', dup]);
    assert.equal(d.status, 0, d.stderr);
    assert.match(d.stdout, /1 entry not reachable from a root/);
  });

  test('a session with a header only', () => {
    const file = tmpFile('header-only.jsonl', `${HEADER}\n`);
    assert.match(cli(['tree', file]).stdout, /\(no entries\)/);
    assert.match(cli(['plan', file]).stdout, /the branch is empty/);
    assert.equal(cliJson(['context', file]).messages.length, 0);
    assert.equal(cli(['validate', file]).status, 0);
    assert.equal(cli(['prune', file]).status, 0);
  });

  test('a 50,000-entry linear session: no deep recursion, runs collapsed', () => {
    const lines = [HEADER];
    /** @type {string | null} */
    let parent = null;
    for (let i = 0; i < 50000; i++) {
      const id = `e${i}`;
      lines.push(messageLine(id, parent, i % 2 ? 'assistant' : 'user', `message ${i}`));
      parent = id;
    }
    const file = tmpFile('linear-50k.jsonl', `${lines.join('\n')}\n`);
    const r = cli(['tree', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /… 49,994 entries \((user|assistant) 24,997, (user|assistant) 24,997\) …/);
    assert.match(r.stdout, /^\* e49999 /m);
    const plan = cliJson(['plan', file]);
    assert.equal(plan.branchLength, 50000);
  });
});

describe('options, help, version, output', () => {
  test('--version and --help', () => {
    const v = cli(['--version']);
    assert.equal(v.status, 0);
    assert.equal(v.stdout.trim(), `session-compaction ${VERSION}`);
    const h = cli(['--help']);
    assert.equal(h.status, 0);
    for (const command of ['plan', 'context', 'prune', 'tree', 'validate'])
      assert.match(h.stdout, new RegExp(`^  ${command} `, 'm'));
    const ph = cli(['plan', '--help']);
    assert.equal(ph.status, 0);
    assert.match(ph.stdout, /--keep-recent-tokens <n>/);
    assert.equal(cli(['help', 'prune']).status, 0);
  });

  test('usage errors exit 2', () => {
    for (const args of [
      [],
      ['bogus'],
      ['plan', '--bogus'],
      ['plan', '--write'],
      ['plan', 'a.jsonl', 'b.jsonl'],
      ['plan', '--keep-recent-tokens', 'many'],
    ]) {
      const r = cli(args);
      assert.equal(r.status, 2, args.join(' '));
      assert.notEqual(r.stderr, '', args.join(' '));
    }
    const leaf = cli(['plan', '--leaf', 'no-such-entry']);
    assert.equal(leaf.status, 2);
    assert.match(leaf.stderr, /no-such-entry/);
  });

  test('--leaf plans the branch of that entry', () => {
    const tree = load(SAMPLE);
    const branch = tree.getBranch();
    const target = /** @type {{ id: string }} */ (branch[Math.floor(branch.length / 2)]);
    const out = cliJson(['plan', '--leaf', target.id]);
    tree.setLeaf(target.id);
    assert.equal(out.leafId, target.id);
    assert.equal(out.branchLength, tree.getBranch().length);
    assert.deepEqual(out.plan, tree.planCompaction({}) ?? null);
  });

  test('colors only when asked (FORCE_COLOR) and never with NO_COLOR', () => {
    assert.match(cli(['validate'], { NO_COLOR: undefined, FORCE_COLOR: '1' }).stdout, /\u001b\[/);
    assert.doesNotMatch(cli(['validate'], { NO_COLOR: '1', FORCE_COLOR: '1' }).stdout, /\u001b\[/);
    assert.doesNotMatch(cli(['validate'], { NO_COLOR: undefined }).stdout, /\u001b\[/);
  });

  test('--progress shows the progress bar for a file above 20 MB', () => {
    const big = 'x'.repeat(21 * 1024 * 1024);
    const lines = [HEADER, messageLine('u', null, 'user', 'please summarize'), messageLine('a', 'u', 'assistant', big)];
    const file = tmpFile('big.jsonl', `${lines.join('\n')}\n`);
    const r = cli(['validate', file, '--progress']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /loading big\.jsonl: 100%/);
    assert.match(r.stderr, /parsing/);
    const quiet = cli(['validate', file]);
    assert.equal(quiet.stderr, '', 'no bar when stderr is not a terminal');
  });
});
