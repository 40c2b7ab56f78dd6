#!/usr/bin/env node
// Packaging test: `npm pack` pkg/, install the tarball (offline) into throwaway projects and use
// it the way a consumer would:
//   - an ESM project and a CommonJS project under Node (`import` / `require`, the `node` condition)
//   - the same ESM project under Deno (`deno` condition → web entry) and Bun
//   - the tarball's exact file list (one .wasm, no sample session, no unused .d.ts), its size budget
//     and the gzipped .wasm's budget
//   - the installed `session-compaction` bin (with a file; without one: the clear error)
//   - TypeScript (import and require) type-checked against the installed .d.ts / .d.cts
// Usage: node scripts/pack-test.mjs [--keep]   (--keep leaves the temp folder for inspection)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { capture, crateVersion, npmBin, PKG_DIR, ROOT, run, UserError } from './lib.mjs';

const keep = process.argv.includes('--keep');
const version = crateVersion();
const SAMPLE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
/** Every file the tarball must hold, and nothing else. */
const EXPECTED_FILES = [
  'README.md',
  'ai-sdk.d.mts',
  'ai-sdk.mjs',
  'anthropic.d.mts',
  'anthropic.mjs',
  'bin/binary.mjs',
  'bin/commands/compact.mjs',
  'bin/commands/context.mjs',
  'bin/commands/navigate.mjs',
  'bin/commands/plan.mjs',
  'bin/commands/prune.mjs',
  'bin/commands/tree.mjs',
  'bin/commands/validate.mjs',
  'bin/report.mjs',
  'bin/session-compaction.mjs',
  'bin/summarizer.mjs',
  'bin/support.mjs',
  'http.mjs',
  'index.d.cts',
  'index.d.ts',
  'index.node.cjs',
  'index.node.d.cts',
  'index.node.d.mts',
  'index.node.mjs',
  'index.web.d.mts',
  'index.web.mjs',
  'node/package.json',
  'node/session_compaction.d.ts',
  'node/session_compaction.js',
  'openai.d.mts',
  'openai.mjs',
  'package.json',
  'web/package.json',
  'web/session_compaction.js',
  'web/session_compaction_bg.wasm',
];
/**
 * Size budgets (guards against regressions; the figures are in docs/BENCHMARKS.md, "Size"). The
 * tarball as npm reports it (B; npm prints kB of 1000 B) and the shipped .wasm gzipped at level 9
 * (as `npm run build` reports it). Issue 10's targets are 450,000 B packed and 250 KB of gzipped
 * wasm; after trimming the build (wasm-opt --merge-similar-functions and --converge, no doc
 * comments in the JS glue, one serde_json reader) main stood at 488,073 B and 394,565 B; the
 * features landed after that (in-place reading of JS objects, countTokens, the typed Rust API,
 * appendMessage, the Responses API) brought it to 527.7 kB and 424,456 B; one decimal converter,
 * ryu-js's small tables, one stable sort and the model and previews compiled once took 40 KB of
 * gzipped wasm off (534.3 kB and 429,821 B → 493.2 kB and 389,600 B; with the SIMD scanner
 * 491.3 kB and 385,488 B). The pure functions' per-turn cache and countTokens inside the engine's
 * operations brought them to 498.5 kB and 392,759 B; the handle's kept message objects to
 * 500.6 kB and 395,007 B, and the pure functions' first call reading on demand (the heads of all
 * entries in one JSON.stringify, whole entries only where a decision needs them) to 503.0 kB and
 * 397,397 B (398,873 B with the result messages kept per object again, for the call after an
 * append); the handle's compaction window, shared message objects, kept tool-call arguments and
 * message spans and the parsed-template cache to 505.8 kB and 399,843 B. The session engine's
 * compaction and the counted path of countTokens compiled once (one copy for every caller) took
 * them to 499.2 kB and 393,147 B. The options read from their JSON text (no second deserializer of
 * each option struct) and `js::lowercase` through the host's `toLowerCase` (no Unicode case tables
 * in the module) took them to 488,189 B and 382,099 B (main at 135c6eb: 500,117 B and 394,044 B);
 * loads linear in any input (runs of opaque lines, the bound on listed bad lines, the checks that
 * a load fits in memory) added ~2.7 KB of gzipped wasm, the spans the scanner records for the
 * handle's first prepare (message and tool-call arguments) and the staleness rule reading them
 * ~5.8 KB: 497,745 B and 390,435 B together (2026-12-02).
 * `SessionTree.toBytes()`, the allocator that grows the memory ahead, the checks of pure lists
 * too long for the memory and of members called on a non-handle, and the empty-answer rule: 499,250 B
 * and 390,823 B; the CLI's error codes and JSON errors, its option messages and the binary check
 * shared with the web demo (bin/binary.mjs, JS and README text, no wasm) 501,617 B; validation of
 * entries that are not objects and the v1 migration's derived ids 502,241 B and 391,294 B
 * (2026-12-03); the newcomer findings (validation of entries without type or id, the reserve
 * check, E_UNSUPPORTED_VERSION, argument messages naming the setting and what was given, the
 * token-budget and object checks) 506,014 B and 394,707 B (2026-12-03). The Node entry as an ES
 * module over the web glue (no --target nodejs glue inlined into index.node.cjs, which is now
 * require(esm) of it): −10.1 kB packed, the .wasm unchanged (branch `esm`, 2026-12-03).
 * With the handle's and convertToLlm's unconverted messages handed back and hooks built only
 * when listened to: 498,286 B packed and 396,690 B gzipped (926,096 B raw; 2026-12-03).
 * The second round of newcomer findings (branch `robust2`: one header-version rule with its
 * E_MISSING_FIELD message and validation issue, hooks read once and the options' data part copied
 * without them, whole-number token counts, the disabled-compaction threshold, the previews on the
 * built context's basis): 499,414 B packed and 397,498 B gzipped (928,223 B raw; 2026-12-03), so
 * both budgets were raised: packed 499,000 → 499,700 B (+700), wasm 397,200 → 397,800 B (+600).
 * Node.js bundles (branch `bundle`: the Node entry's init()/initSync() from bytes, a module or a
 * location, and its E_WASM_NOT_FOUND, whose helpers shared/wasm-file.js both entries now inline;
 * no wasm change): 501,003 B packed, so packed 499,700 → 501,500 B (+1,800).
 * The first round of 2026-12-04 (the newcomer trial's and the promise review's findings: frame
 * tags cut at the end of a piece escaped and Unicode blanks, tool call ids renamed to be unique
 * and non-empty, fromBytes over 2 GiB and over-long string results refused, hook summaries
 * checked, contextWindow whole numbers; the CLI's prune --write splicing only the pruned lines,
 * its writability, size and stdout checks and broken-tree warning): 507,441 B packed and
 * 400,798 B gzipped (936,963 B raw), so packed 501,500 → 507,900 B and wasm 397,800 → 401,300 B.
 * Main then stood at 507,891 B packed and 400,944 B gzipped. The third round of 2026-12-04: the
 * breaker's fixes (branch `breaker`: fromBytes copying through a plain view, the leaf of a loaded
 * session being an entry, the adapters' provider id forms and blank text, the CLI's glued lines),
 * the hardening (branch `harden`: default-ignorable blanks in frame tags, one-line paths in file
 * blocks, whole numbers in saved lines, the CLI's written-file note on a failed stdout, no retry
 * after an overflow recovery that cannot fit), `maxTokensField` and the pending calls of a handle
 * (an abort in the same tick): 512,295 B packed and 402,597 B gzipped (940,842 B raw), so packed
 * 507,900 → 512,600 B and wasm 401,300 → 402,700 B.
 * The handle's prune splicing pruned entries at the places the loader records (a `content` span
 * per message, the in-place metadata update, the shared text of the changed lines) and its
 * staleness rule reading each result once, its tool names in a map past sixteen (2026-12-07):
 * 514,182 B packed and 404,452 B gzipped (942,537 B raw), so packed 512,600 → 514,400 B
 * and wasm 402,700 → 404,600 B.
 * The context's repair plan compiled once (its entry-id callback a `&dyn Fn`: it had a copy per
 * entry source) and the handle's first call cheaper (2026-12-07): 511,191 B packed and 401,488 B
 * gzipped (935,170 B raw), so packed 514,400 → 511,400 B and wasm 404,600 → 401,700 B.
 * The adapters' leading user turn and their docs (`ai` 7's system messages): 511,830 B packed,
 * so 511,400 → 512,000 B.
 * The CRLF save, the adapters' failed results and call inputs, the scanner's skip of deep values
 * without recursion (2026-12-07): 512,692 B packed and 401,781 B gzipped (935,542 B raw), so
 * packed 512,000 → 513,200 B and wasm 401,700 → 401,900 B. The extractive summarizer named as
 * the writer when it is the model (`Complete::summarizer`): 402,016 B gzipped, so 401,900 →
 * 402,100 B. The review's mends (a deep record kept whole by the v1/v2 migration and by prune,
 * opaque runs of a CRLF file written per line) and the examples' and extractive summarizer's docs:
 * 513,558 B packed and 402,294 B gzipped, so packed 513,200 → 513,800 B and wasm 402,100 →
 * 402,400 B. `npm run examples` on a fresh clone and toModelMessages' blank parts: 513,808 B
 * packed, so 513,800 → 514,200 B.
 * Thinking sent to Anthropic signed through both adapters (the shared `anthropicThinking` rule,
 * redacted blocks both ways, the AI SDK's provider options) and appendEntry's check of a
 * compaction's `firstKeptEntryId` (2026-12-08): 515,648 B packed and 402,396 B gzipped
 * (936,813 B raw), so packed 514,200 → 515,800 B and wasm 402,400 → 402,600 B. The breaker's
 * adapter findings (no replay of failed or aborted turns, thinking not merged away, tool ids in
 * each provider's form, with their docs) and the compaction at the end of its branch after the
 * host's appends: 517,766 B packed and 402,458 B gzipped (937,162 B raw), so packed 515,800 →
 * 518,000 B. The CLI's writes that keep what pi appends meanwhile (an in-place append; a rewrite
 * carrying over the original's new tail): 518,926 B packed, so 518,000 → 519,200 B. Frame tags
 * read as a reader sees their names, and a hook prompt's tags as frames: 519,464 B packed and
 * 402,977 B gzipped (938,046 B raw), so packed 519,200 → 519,800 B and wasm 402,600 → 403,100 B.
 * The review's mends (frame names in fullwidth, ligature, circled and mathematical letters; the
 * progress measured on the compaction's own branch; the CLI's writes keeping the order of lines
 * appended meanwhile; the adapters' replay rule by position): 521,589 B packed and 404,010 B
 * gzipped (939,950 B raw), so packed 519,800 → 521,800 B and wasm 403,100 → 404,200 B.
 * The budgets guard those figures with a small margin (the targets are not met). Lower both as the
 * figures fall.
 */
const MAX_PACKED_BYTES = 521_800;
const MAX_WASM_GZIP_BYTES = 404_200;
const WASM = join(PKG_DIR, 'web', 'session_compaction_bg.wasm');

let passed = 0;
const log = (message) => console.log(`[pack-test] ${message}`);
function ok(message) {
  passed++;
  log(`ok ${message}`);
}

// Which entry a runtime picked: only the web entry refuses calls before init().
const ESM_CONSUMER = `
import * as sc from 'session-compaction';
let entry = 'node';
try { sc.version(); } catch (error) {
  if (error.code !== 'E_NOT_INITIALIZED') throw error;
  entry = 'web';
}
await sc.init();
const web = await import('session-compaction/web');
await web.init();
const wasmUrl = import.meta.resolve('session-compaction/session_compaction_bg.wasm');
console.log(JSON.stringify({ entry, version: sc.version(), web: web.version(), wasm: wasmUrl.endsWith('/web/session_compaction_bg.wasm') }));
`;

const CJS_CONSUMER = `
const sc = require('session-compaction');
const node = require('session-compaction/node');
console.log(JSON.stringify({ entry: 'node', version: sc.version(), same: sc.version === node.version }));
`;

const TS_ESM = `
import { init, initSync, version, type InitInput } from 'session-compaction';
const input: InitInput = new Uint8Array(0);
void input;
void initSync;
await init();
const v: string = version();
import { openaiComplete, type OpenAiComplete } from 'session-compaction/openai';
const complete: OpenAiComplete = openaiComplete({ baseUrl: 'http://127.0.0.1:1', model: 'm' });
void complete;
import { toAnthropicMessages, type AnthropicMessage } from 'session-compaction/anthropic';
import { toModelMessages, type ModelMessage } from 'session-compaction/ai-sdk';
import { fromChatMessages, toChatMessages, type ChatMessage } from 'session-compaction/openai';
const context = [{ role: 'user' as const, content: 'hi', timestamp: 0 }];
const chat: ChatMessage[] = toChatMessages(context);
const anthropic: AnthropicMessage[] = toAnthropicMessages(context);
const model: ModelMessage[] = toModelMessages(context);
void [chat, anthropic, model, fromChatMessages([{ role: 'assistant', content: 'ok' }])[0].role];
export default v;
`;

const TS_CJS = `
import sc = require('session-compaction');
const p: Promise<void> = sc.init();
const v: string = sc.version();
export = { p, v };
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib: ['es2022', 'dom'],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  },
  files: ['check.mts', 'check.cts'],
};
/**
 * `require` types under `module: node16` too (TypeScript's model of a Node.js without
 * require(esm)): index.d.cts re-exports CommonJS declarations (node/), which it accepts.
 */
const TSCONFIG_NODE16 = {
  compilerOptions: { ...TSCONFIG.compilerOptions, module: 'node16', moduleResolution: 'node16' },
  files: ['check.cts'],
};

function project(dir, type) {
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: `consumer-${type}`, private: true, type }, null, 2)}\n`,
  );
}

function npmInstall(dir, tarball) {
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
    cwd: dir,
    label: `npm install (${dir})`,
  });
}

function runJson(cmd, args, cwd) {
  const out = capture(cmd, args, { cwd }).trim().split('\n').pop();
  return JSON.parse(out);
}

function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'session-compaction-pack-'));
  try {
    log(`npm pack pkg/ → ${tmp}`);
    const [packed] = JSON.parse(capture('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: PKG_DIR }));
    const files = packed.files.map((f) => f.path).sort();
    assert.deepEqual(files, EXPECTED_FILES, 'files in the tarball');
    assert.equal(packed.version, version);
    assert.ok(
      packed.size <= MAX_PACKED_BYTES,
      `tarball is ${packed.size.toLocaleString('en-US')} B packed, over the ${MAX_PACKED_BYTES.toLocaleString('en-US')} B budget`,
    );
    ok(`tarball ${packed.filename}: ${files.length} files, ${packed.size.toLocaleString('en-US')} B packed`);
    const wasmGzip = gzipSync(readFileSync(WASM), { level: 9 }).length;
    assert.ok(
      wasmGzip <= MAX_WASM_GZIP_BYTES,
      `web/session_compaction_bg.wasm is ${wasmGzip.toLocaleString('en-US')} B gzipped, over the ` +
        `${MAX_WASM_GZIP_BYTES.toLocaleString('en-US')} B budget`,
    );
    ok(`wasm: ${wasmGzip.toLocaleString('en-US')} B gzipped (level 9)`);
    // build.mjs drops wasm-bindgen's copies of the Rust doc comments from the glue (the .d.ts has
    // them; the entries' own comments stay).
    assert.doesNotMatch(
      readFileSync(join(PKG_DIR, 'web', 'session_compaction.js'), 'utf8'),
      /\/\*\*/,
      'web/session_compaction.js still holds doc comments',
    );
    const tarball = join(tmp, packed.filename);

    const esmDir = join(tmp, 'esm');
    const cjsDir = join(tmp, 'cjs');
    for (const [dir, type] of [
      [esmDir, 'module'],
      [cjsDir, 'commonjs'],
    ]) {
      run('mkdir', ['-p', dir]);
      project(dir, type);
      npmInstall(dir, tarball);
    }
    writeFileSync(join(esmDir, 'consumer.mjs'), ESM_CONSUMER);
    writeFileSync(join(cjsDir, 'consumer.cjs'), CJS_CONSUMER);

    const expectedEsm = { version, web: version, wasm: true };
    assert.deepEqual(runJson('node', ['consumer.mjs'], esmDir), { entry: 'node', ...expectedEsm });
    ok('Node ESM project: import resolves the node entry, /web works after init()');
    assert.deepEqual(runJson('node', ['consumer.cjs'], cjsDir), { entry: 'node', version, same: true });
    ok('Node CommonJS project: require works without init()');

    // Deno resolves bare specifiers through package.json + node_modules ("manual" = use as is).
    writeFileSync(join(esmDir, 'deno.json'), '{ "nodeModulesDir": "manual" }\n');
    const deno = runJson(npmBin('deno'), ['run', '--allow-read', '--allow-env', 'consumer.mjs'], esmDir);
    assert.deepEqual(deno, { entry: 'web', ...expectedEsm });
    ok('Deno: the `deno` condition selects the web entry (guarded until init())');
    const bun = runJson(npmBin('bun'), ['consumer.mjs'], esmDir);
    assert.deepEqual(bun, { entry: 'node', ...expectedEsm });
    ok('Bun: the `node` condition selects the node entry');

    const cli = capture(join(esmDir, 'node_modules', '.bin', 'session-compaction'), ['plan', SAMPLE], {
      cwd: esmDir,
    });
    assert.match(cli, new RegExp(`^session-compaction ${version.replaceAll('.', '\\.')}$`, 'm'));
    ok('installed bin runs');
    const noFile = spawnSync(join(esmDir, 'node_modules', '.bin', 'session-compaction'), ['plan'], {
      cwd: esmDir,
      encoding: 'utf8',
    });
    assert.equal(noFile.status, 2, noFile.stderr);
    assert.match(noFile.stderr, /no session file given: pass a pi session file/);
    ok('installed bin without a file: exit 2, says the package ships no sample session');

    writeFileSync(join(esmDir, 'check.mts'), TS_ESM);
    writeFileSync(join(esmDir, 'check.cts'), TS_CJS);
    writeFileSync(join(esmDir, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
    run(npmBin('tsc'), ['-p', esmDir], { label: 'tsc (consumer types)' });
    ok('TypeScript consumer (import and require, nodenext) type-checks');
    writeFileSync(join(esmDir, 'tsconfig.node16.json'), `${JSON.stringify(TSCONFIG_NODE16, null, 2)}\n`);
    run(npmBin('tsc'), ['-p', join(esmDir, 'tsconfig.node16.json')], { label: 'tsc (consumer types, node16)' });
    ok('TypeScript consumer (require, node16, skipLibCheck off) type-checks');

    console.log(`pack-test: ${passed} passed, 0 failed`);
  } finally {
    if (keep) log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  main();
} catch (error) {
  console.error(`[pack-test] FAILED: ${error instanceof UserError ? error.message : error.stack}`);
  console.log(`pack-test: ${passed} passed, 1 failed`);
  process.exit(1);
}
