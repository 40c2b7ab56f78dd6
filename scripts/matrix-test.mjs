#!/usr/bin/env node
// Runtime and bundler matrix (issue 11): the package is installed the way users install it (the
// tarball of `npm pack pkg/`, `npm install`ed offline into a throwaway project) and used from
//   - Node.js: `import` (ESM) and `require` (CommonJS);
//   - Node.js bundles (what serverless functions and CLIs ship): esbuild, webpack and Rollup
//     targeting Node.js, each bundle run away from node_modules; without their setting the
//     first call must fail with E_WASM_NOT_FOUND naming it;
//   - Bun: the same two files;
//   - Deno: the `npm:session-compaction` specifier (node_modules install) and an import of the
//     unpacked package by path, each type-checked with `deno check` (a deliberate type error must
//     be reported, so the package's types really resolve) and run with no permission at all: the
//     host passes the .wasm bytes (stdin) and the session (a local module). `init()` without
//     bytes must then fail with E_WASM_NOT_FOUND naming the fix;
//   - Cloudflare's `workerd` (npm): a Worker bundled as wrangler does (esbuild, the .wasm as a
//     compiled module), serving 127.0.0.1; the test POSTs a real session and checks the answer
//     (and that init() without the module failed there with E_WASM_NOT_FOUND naming initSync);
//   - browser builds with Vite, webpack, esbuild and Rollup (the settings the README gives), each
//     page opened in one Chromium and checked; plus an esbuild build without the setting, whose
//     page must show the E_WASM_NOT_FOUND error that names it.
// Every bundler must build without a warning (Vite's dev server too).
// Every consumer runs the same calls on the same real session (examples/sessions/) and must
// report exactly what the engine reports here under Node: version, entry count, leaf, the cut
// point of prepareCompaction, the context size and the pure parseSession's entry count.
// Needs `npm run build` first (npm test runs it as the "matrix" step after the build). Without
// /usr/bin/chromium the browser part is skipped with a message, except in CI (CI=true).
// Usage: node scripts/matrix-test.mjs [--keep] [--only=NAME,...]   (names: node, node-bundles,
// bun, deno, workerd, browser; --keep leaves the temp folder for inspection)
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { capture, childEnv, npmBin, PKG_DIR, ROOT, run, UserError } from './lib.mjs';

const keep = process.argv.includes('--keep');
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const wants = (name) => !only || only.includes(name);
const SAMPLE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
const CHROMIUM = '/usr/bin/chromium';
/** The flags of ../shared/TOOLCHAIN.md: no sandbox (root in containers), no network of its own. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const IN_CI = ['true', '1'].includes(String(process.env.CI ?? '').toLowerCase());
/** workerd refuses a compatibility date later than its own release. */
const WORKERD_COMPAT_DATE = '2026-11-01';
const denoEnv = { DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };

let passed = 0;
/** @type {string[]} */
const failures = [];
const log = (message) => console.log(`[matrix] ${message}`);

/** Runs one check; a failure is recorded and the other checks go on. */
async function check(name, fn) {
  const started = Date.now();
  try {
    await fn();
    passed++;
    log(`ok ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    failures.push(name);
    const message = error instanceof UserError ? error.message : String(error?.stack ?? error);
    console.error(`[matrix] FAILED ${name}: ${message}`);
  }
}

/**
 * The calls every consumer makes, as source text (`ts`: with the annotations `deno check` needs).
 * `entryOf` tells which entry a runtime picked (only the web entry refuses calls before init());
 * `summarize` loads the session into a SessionTree and asks for a plan and a context.
 */
function callSource(ts = false) {
  const t = (type) => (ts ? `: ${type}` : '');
  return `
function entryOf(engine${t('typeof sc')})${t('string')} {
  try {
    engine.version();
    return 'node';
  } catch (error) {
    if ((error${ts ? ' as { code?: string }' : ''}).code !== 'E_NOT_INITIALIZED') throw error;
    return 'web';
  }
}
function summarize(engine${t('typeof sc')}, text${t('string')}) {
  const tree = engine.SessionTree.fromJsonl(text);
  const plan = tree.prepareCompaction();
  const context = tree.buildSessionContext();
  const result = {
    version: engine.version(),
    entryCount: tree.entryCount,
    leafId: tree.leafId ?? null,
    firstKeptEntryId: plan?.firstKeptEntryId ?? null,
    contextMessages: context.messages.length,
    contextTokens: tree.estimateContextTokens(),
    parsedEntries: engine.parseSession(text).entries.length,
  };
  tree.free();
  return result;
}
`;
}

/** Lines that make `deno check` fail unless the package's declarations were found and read. */
const TYPE_PROBE = `
function typeProbe(tree: sc.SessionTree): number {
  const count: number = tree.entryCount;
  // @ts-expect-error entryCount is a number: reported as unused if the types did not resolve
  const wrong: string = tree.entryCount;
  return count + wrong.length;
}
void typeProbe;
`;

const NODE_ESM = `import * as sc from 'session-compaction';
import { readFileSync } from 'node:fs';
${callSource()}
const entry = entryOf(sc);
await sc.init();
console.log(JSON.stringify({ entry, ...summarize(sc, readFileSync(process.argv[2], 'utf8')) }));
`;

/** A Node.js host bundled with its .wasm as bytes (esbuild `loader: { '.wasm': 'binary' }`). */
const NODE_BUNDLED_BYTES = `import * as sc from 'session-compaction';
import wasm from 'session-compaction/session_compaction_bg.wasm';
import { readFileSync } from 'node:fs';
${callSource()}
sc.initSync(wasm);
const entry = entryOf(sc);
console.log(JSON.stringify({ entry, ...summarize(sc, readFileSync(process.argv[2], 'utf8')) }));
`;

const NODE_CJS = `const sc = require('session-compaction');
const { readFileSync } = require('node:fs');
${callSource()}
const entry = entryOf(sc);
console.log(JSON.stringify({ entry, ...summarize(sc, readFileSync(process.argv[2], 'utf8')) }));
`;

/** A Deno host with no permissions: the session is a local module, the .wasm bytes come on stdin. */
function denoConsumer(specifier) {
  return `import * as sc from '${specifier}';
import text from './sample.mjs';
${callSource(true)}
${TYPE_PROBE}
const entry = entryOf(sc);
let defaultInit: { code?: string; namesFix: boolean } | null = null;
try {
  await sc.init();
} catch (error) {
  const { code, message } = error as { code?: string; message: string };
  defaultInit = { code, namesFix: message.includes('pass the bytes') };
}
const bytes = new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer());
await sc.init(bytes);
console.log(JSON.stringify({ entry, defaultInit, ...summarize(sc, text) }));
`;
}

/** The Worker: the .wasm is a compiled module (wrangler's default rule for .wasm imports). */
const WORKER = `import wasmModule from 'session-compaction/session_compaction_bg.wasm';
import * as sc from 'session-compaction';
${callSource()}
const entry = entryOf(sc);
// Without the module, init() has nothing to load here (no import.meta.url): the error names the fix.
const defaultInit = await sc.init().then(
  () => null,
  (error) => ({ code: error.code, namesFix: error.message.includes('initSync(wasmModule)') }),
);
sc.initSync(wasmModule);
export default {
  async fetch(request) {
    if (request.method !== 'POST') return new Response('POST a session (JSONL)', { status: 405 });
    try {
      return Response.json({ entry, defaultInit, ...summarize(sc, await request.text()) });
    } catch (error) {
      return Response.json({ error: { code: error.code, message: error.message } }, { status: 400 });
    }
  },
};
`;

/** A page's script: `init` is how that bundler's users start the engine (see the README). */
function pageScript({ imports = '', init = 'sc.init()' } = {}) {
  return `import * as sc from 'session-compaction';
${imports}
${callSource()}
(async () => {
  const entry = entryOf(sc);
  try {
    await ${init};
    const response = await fetch('../sample.jsonl');
    if (!response.ok) throw new Error('the page could not fetch the sample session: HTTP ' + response.status);
    const text = await response.text();
    document.body.dataset.result = JSON.stringify({ entry, ...summarize(sc, text) });
  } catch (error) {
    document.body.dataset.error = JSON.stringify({ code: error.code, message: String(error.message) });
  }
})();
`;
}

const PAGE_HTML = (script, module) =>
  `<!doctype html>\n<html><head><meta charset="utf-8"><title>matrix</title></head>` +
  `<body><script${module ? ' type="module"' : ''} src="${script}"></script></body></html>\n`;

/** What the engine says about the sample session here (the package built in pkg/, under Node). */
async function expectedResult(text) {
  const sc = await import(join(PKG_DIR, 'index.node.mjs'));
  const summarize = new Function('sc', `${callSource()}; return summarize;`)(sc);
  return summarize(sc, text);
}

function runJson(cmd, args, { cwd, env, input } = {}) {
  const result = spawnSync(cmd, args, { cwd, env: childEnv(env), input, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (result.error) throw new UserError(`could not start \`${cmd}\`: ${result.error.message}`);
  if (result.status !== 0) {
    throw new UserError(
      `\`${[cmd, ...args].join(' ')}\` exited with code ${result.status}\n${result.stderr}${result.stdout}`,
    );
  }
  const last = result.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last);
  } catch {
    throw new UserError(`\`${[cmd, ...args].join(' ')}\` printed no JSON line:\n${result.stdout}${result.stderr}`);
  }
}

/** A port that was free a moment ago (for workerd, which takes its address on the command line). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.jsonl': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** A static server of `dir` on 127.0.0.1 (404 for anything missing, as a plain host would). */
function serve(dir) {
  const server = createServer((request, response) => {
    const path = normalize(join(dir, decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)));
    const file = path.endsWith(sep) ? join(path, 'index.html') : path;
    if (!file.startsWith(dir) || !existsSync(file)) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(done)) });
    });
  });
}

async function main() {
  const text = readFileSync(SAMPLE, 'utf8');
  const expected = await expectedResult(text);
  log(`expected (pkg/ under Node): ${JSON.stringify(expected)}`);
  const tmp = mkdtempSync(join(tmpdir(), 'session-compaction-matrix-'));
  try {
    log(`npm pack pkg/ → ${tmp}`);
    const [packed] = JSON.parse(capture('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: PKG_DIR }));
    const tarball = join(tmp, packed.filename);
    const project = join(tmp, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), '{ "name": "consumer", "private": true, "type": "module" }\n');
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
      cwd: project,
      label: 'npm install (the tarball)',
    });
    writeFileSync(join(project, 'consumer.mjs'), NODE_ESM);
    writeFileSync(join(project, 'consumer.cjs'), NODE_CJS);
    const nodeExpected = { entry: 'node', ...expected };

    if (wants('node')) {
      await check('Node ESM: import of the installed package, a plan and a context of a real session', () => {
        assert.deepEqual(runJson(process.execPath, ['consumer.mjs', SAMPLE], { cwd: project }), nodeExpected);
      });
      await check('Node CommonJS: require of the installed package', () => {
        assert.deepEqual(runJson(process.execPath, ['consumer.cjs', SAMPLE], { cwd: project }), nodeExpected);
      });
    }
    if (wants('bun')) {
      await check('Bun: import (the node condition)', () => {
        assert.deepEqual(runJson(npmBin('bun'), ['consumer.mjs', SAMPLE], { cwd: project }), nodeExpected);
      });
      await check('Bun: require', () => {
        assert.deepEqual(runJson(npmBin('bun'), ['consumer.cjs', SAMPLE], { cwd: project }), nodeExpected);
      });
    }
    if (wants('node-bundles')) await nodeBundleChecks({ tmp, project, nodeExpected });
    if (wants('deno')) await denoChecks({ tmp, project, tarball, text, expected });
    if (wants('workerd')) await workerdCheck({ tmp, project, text, expected });
    if (wants('browser')) await browserChecks({ tmp, project, text, expected });
  } finally {
    if (keep) log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

async function denoChecks({ tmp, project, tarball, text, expected }) {
  const deno = npmBin('deno');
  const wasm = readFileSync(join(PKG_DIR, 'web', 'session_compaction_bg.wasm'));
  const sampleModule = `export default ${JSON.stringify(text)};\n`;
  const denoExpected = { entry: 'web', defaultInit: { code: 'E_WASM_NOT_FOUND', namesFix: true }, ...expected };
  // "manual": Deno uses the node_modules that npm installed, as it is (no registry).
  writeFileSync(join(project, 'deno.json'), '{ "nodeModulesDir": "manual" }\n');
  writeFileSync(join(project, 'sample.mjs'), sampleModule);
  writeFileSync(join(project, 'deno-npm.ts'), denoConsumer('npm:session-compaction'));
  // The unpacked tarball imported by path, in a folder without package.json or deno.json.
  const byPath = join(tmp, 'deno-path');
  mkdirSync(byPath);
  run('tar', ['-xzf', tarball, '-C', byPath], { label: 'tar -xzf (the tarball)' });
  writeFileSync(join(byPath, 'sample.mjs'), sampleModule);
  writeFileSync(join(byPath, 'main.ts'), denoConsumer('./package/index.web.mjs'));
  for (const [name, cwd, file] of [
    ['the npm: specifier (node_modules install)', project, 'deno-npm.ts'],
    ['a local path import (./package/index.web.mjs)', byPath, 'main.ts'],
  ]) {
    await check(`Deno, ${name}: deno check resolves the package's types`, () => {
      run(deno, ['check', '--quiet', file], { cwd, env: denoEnv, label: `deno check ${file}` });
    });
    await check(`Deno, ${name}: runs with no permission (bytes passed by the host)`, () => {
      const args = ['run', '--no-prompt', '--no-check', file];
      assert.deepEqual(runJson(deno, args, { cwd, env: denoEnv, input: wasm }), denoExpected);
    });
  }
}

/**
 * Node.js hosts bundled for Node.js (as serverless functions and CLIs are): each bundle is run
 * from its own folder, away from node_modules. webpack (target node) and Rollup with the asset
 * plugin emit the .wasm that the Node entry names with `new URL(…, import.meta.url)`; esbuild
 * embeds it as bytes (`loader: { '.wasm': 'binary' }`, then `initSync(wasm)`). Without those, the
 * first call must fail with E_WASM_NOT_FOUND naming the fix, never a bare ENOENT.
 */
async function nodeBundleChecks({ tmp, project, nodeExpected }) {
  const out = (name) => join(tmp, 'node-bundles', name);
  writeFileSync(join(project, 'bundled-bytes.mjs'), NODE_BUNDLED_BYTES);
  const runBundle = (name, file) => runJson(process.execPath, [join(out(name), file), SAMPLE], { cwd: out(name) });
  const failsNaming = (name, file, fix) => {
    const r = spawnSync(process.execPath, [join(out(name), file), SAMPLE], { cwd: out(name), encoding: 'utf8' });
    assert.notEqual(r.status, 0, `the ${name} bundle ran without its .wasm`);
    assert.match(r.stderr, /code: 'E_WASM_NOT_FOUND'/);
    assert.ok(r.stderr.includes(fix), `the error names ${fix}:\n${r.stderr}`);
    assert.doesNotMatch(r.stderr, /^Error: ENOENT/m);
  };
  const esbuild = await import('esbuild');
  const esbuildNode = async (name, entry, loader) => {
    const result = await esbuild.build({
      absWorkingDir: project,
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      outfile: join(out(name), 'main.mjs'),
      loader,
      logLevel: 'warning',
    });
    assert.deepEqual(result.warnings, [], 'esbuild warned');
  };
  await check("Node.js bundle, esbuild (platform node, loader: { '.wasm': 'binary' }, initSync(wasm))", async () => {
    await esbuildNode('esbuild', 'bundled-bytes.mjs', { '.wasm': 'binary' });
    assert.deepEqual(runBundle('esbuild', 'main.mjs'), nodeExpected);
  });
  await check('Node.js bundle, esbuild without the setting: E_WASM_NOT_FOUND naming the fix', async () => {
    await esbuildNode('esbuild-plain', 'consumer.mjs', undefined);
    failsNaming('esbuild-plain', 'main.mjs', "loader: { '.wasm': 'binary' }");
  });
  await check('Node.js bundle, webpack (target node, no setting needed)', async () => {
    const { default: webpack } = await import('webpack');
    const stats = await new Promise((resolve, reject) => {
      webpack(
        {
          mode: 'production',
          target: 'node20',
          context: project,
          entry: './consumer.mjs',
          experiments: { outputModule: true },
          output: { path: out('webpack'), filename: 'main.mjs', module: true, chunkFormat: 'module', clean: true },
          performance: { hints: false },
        },
        (error, result) => (error ? reject(error) : resolve(result)),
      );
    });
    if (stats.hasErrors() || stats.hasWarnings()) {
      throw new UserError(stats.toString({ all: false, errors: true, warnings: true }));
    }
    assert.deepEqual(runBundle('webpack', 'main.mjs'), nodeExpected);
  });
  const rollupNode = async (name, withAssets) => {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    const { importMetaAssets } = await import('@web/rollup-plugin-import-meta-assets');
    const warnings = [];
    const bundle = await rollup({
      input: join(project, 'consumer.mjs'),
      external: [/^node:/],
      plugins: [nodeResolve({ exportConditions: ['node'] }), ...(withAssets ? [importMetaAssets()] : [])],
      onwarn: (warning) => warnings.push(warning.message),
    });
    await bundle.write({ dir: out(name), format: 'es', entryFileNames: 'main.mjs' });
    await bundle.close();
    assert.deepEqual(warnings, [], 'Rollup warned');
  };
  await check("Node.js bundle, Rollup (node-resolve exportConditions: ['node'] + import-meta-assets)", async () => {
    await rollupNode('rollup', true);
    assert.deepEqual(runBundle('rollup', 'main.mjs'), nodeExpected);
  });
  await check('Node.js bundle, Rollup without the asset plugin: E_WASM_NOT_FOUND naming the fix', async () => {
    await rollupNode('rollup-plain', false);
    failsNaming('rollup-plain', 'main.mjs', '@web/rollup-plugin-import-meta-assets');
  });
}

async function workerdCheck({ tmp, project, text, expected }) {
  await check('workerd: the engine in a Worker answers a POSTed session on 127.0.0.1', async () => {
    const esbuild = await import('esbuild');
    const dir = join(tmp, 'workerd');
    mkdirSync(dir);
    writeFileSync(join(project, 'worker.mjs'), WORKER);
    // As wrangler bundles a Worker: the .wasm import stays a module of its own (CompiledWasm).
    const wasmAsModule = {
      name: 'wasm-module',
      setup(build) {
        build.onResolve({ filter: /\.wasm$/ }, () => ({ path: './session_compaction_bg.wasm', external: true }));
      },
    };
    await esbuild.build({
      absWorkingDir: project,
      entryPoints: ['worker.mjs'],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      conditions: ['workerd', 'worker', 'browser'],
      mainFields: ['module', 'main'],
      outfile: join(dir, 'worker.mjs'),
      plugins: [wasmAsModule],
      logLevel: 'warning',
    });
    writeFileSync(
      join(dir, 'session_compaction_bg.wasm'),
      readFileSync(join(project, 'node_modules', 'session-compaction', 'web', 'session_compaction_bg.wasm')),
    );
    writeFileSync(
      join(dir, 'config.capnp'),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .engine) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const engine :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "session_compaction_bg.wasm", wasm = embed "session_compaction_bg.wasm"),
  ],
  compatibilityDate = "${WORKERD_COMPAT_DATE}",
);
`,
    );
    const port = await freePort();
    const child = spawn(npmBin('workerd'), ['serve', 'config.capnp', '--socket-addr', `http=127.0.0.1:${port}`], {
      cwd: dir,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const url = `http://127.0.0.1:${port}/`;
      const deadline = Date.now() + 60_000;
      let response;
      for (;;) {
        if (child.exitCode !== null) throw new UserError(`workerd exited (${child.exitCode}):\n${output}`);
        try {
          response = await fetch(url, { method: 'POST', body: text });
          break;
        } catch (error) {
          if (Date.now() > deadline) throw new UserError(`workerd did not answer on ${url}: ${error}\n${output}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      const body = await response.json();
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.deepEqual(body, {
        entry: 'web',
        defaultInit: { code: 'E_WASM_NOT_FOUND', namesFix: true },
        ...expected,
      });
      const wrong = await fetch(url);
      assert.equal(wrong.status, 405);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
}

/** Builds one tiny page per bundler into site/<name>/ (sources in the consumer project). */
async function buildPages({ project, site }) {
  const src = (name, files) => {
    const dir = join(project, name);
    mkdirSync(dir, { recursive: true });
    for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), content);
    return dir;
  };
  const out = (name) => join(site, name);
  const built = [];

  const wasmImport = "import wasmUrl from 'session-compaction/session_compaction_bg.wasm';";
  await check('Vite build (no setting needed)', async () => {
    const { build } = await import('vite');
    const warnings = [];
    const root = src('vite', { 'index.html': PAGE_HTML('./main.js', true), 'main.js': pageScript() });
    await build({
      root,
      base: './',
      configFile: false,
      logLevel: 'warn',
      customLogger: await recordingLogger(warnings),
      build: { outDir: out('vite'), emptyOutDir: true },
    });
    assert.deepEqual(warnings, [], 'Vite warned');
    built.push('vite');
  });
  await check('webpack build (no setting needed)', async () => {
    const { default: webpack } = await import('webpack');
    const context = src('webpack', { 'main.js': pageScript() });
    const stats = await new Promise((resolve, reject) => {
      webpack(
        {
          mode: 'production',
          context,
          entry: './main.js',
          output: { path: out('webpack'), filename: 'main.js', clean: true },
          performance: { hints: false },
        },
        (error, result) => (error ? reject(error) : resolve(result)),
      );
    });
    if (stats.hasErrors() || stats.hasWarnings()) {
      throw new UserError(stats.toString({ all: false, errors: true, warnings: true }));
    }
    writeFileSync(join(out('webpack'), 'index.html'), PAGE_HTML('main.js', false));
    built.push('webpack');
  });
  const esbuild = await import('esbuild');
  await check("esbuild build (loader: { '.wasm': 'file' }, init(wasmUrl))", async () => {
    const dir = src('esbuild', { 'main.js': pageScript({ imports: wasmImport, init: 'sc.init(wasmUrl)' }) });
    const result = await esbuild.build({
      entryPoints: [join(dir, 'main.js')],
      bundle: true,
      format: 'esm',
      outdir: out('esbuild'),
      loader: { '.wasm': 'file' },
      logLevel: 'warning',
    });
    assert.deepEqual(result.warnings, [], 'esbuild warned');
    writeFileSync(join(out('esbuild'), 'index.html'), PAGE_HTML('main.js', true));
    built.push('esbuild');
  });
  await check('esbuild build without the setting (its page must show the E_WASM_NOT_FOUND error)', async () => {
    const dir = src('esbuild-plain', { 'main.js': pageScript() });
    const result = await esbuild.build({
      entryPoints: [join(dir, 'main.js')],
      bundle: true,
      format: 'esm',
      outdir: out('esbuild-plain'),
      logLevel: 'error',
    });
    assert.deepEqual(result.warnings, [], 'esbuild warned');
    writeFileSync(join(out('esbuild-plain'), 'index.html'), PAGE_HTML('main.js', true));
    built.push('esbuild-plain');
  });
  await check('Rollup build (@rollup/plugin-node-resolve + @web/rollup-plugin-import-meta-assets)', async () => {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    const { importMetaAssets } = await import('@web/rollup-plugin-import-meta-assets');
    const dir = src('rollup', { 'main.js': pageScript() });
    const warnings = [];
    const bundle = await rollup({
      input: join(dir, 'main.js'),
      plugins: [nodeResolve({ browser: true }), importMetaAssets()],
      onwarn: (warning) => warnings.push(warning.message),
    });
    await bundle.write({ dir: out('rollup'), format: 'es' });
    await bundle.close();
    assert.deepEqual(warnings, [], 'Rollup warned');
    writeFileSync(join(out('rollup'), 'index.html'), PAGE_HTML('main.js', true));
    built.push('rollup');
  });
  await check('Rollup build without the asset plugin (its page must show the E_WASM_NOT_FOUND error)', async () => {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    const dir = src('rollup-plain', { 'main.js': pageScript() });
    const warnings = [];
    const bundle = await rollup({
      input: join(dir, 'main.js'),
      plugins: [nodeResolve({ browser: true })],
      onwarn: (warning) => warnings.push(warning.message),
    });
    await bundle.write({ dir: out('rollup-plain'), format: 'es' });
    await bundle.close();
    assert.deepEqual(warnings, [], 'Rollup warned');
    writeFileSync(join(out('rollup-plain'), 'index.html'), PAGE_HTML('main.js', true));
    built.push('rollup-plain');
  });
  return built;
}

async function browserChecks({ tmp, project, text, expected }) {
  const site = join(tmp, 'site');
  mkdirSync(site);
  writeFileSync(join(site, 'sample.jsonl'), text);
  const built = await buildPages({ project, site });
  if (!existsSync(CHROMIUM)) {
    if (IN_CI) {
      await check('Chromium is installed (CI=true)', () => {
        throw new UserError(`${CHROMIUM} is missing: .ci/run installs the chromium package`);
      });
      return;
    }
    log(`skipped the pages in Chromium: ${CHROMIUM} is missing (apt-get install chromium)`);
    return;
  }
  const server = await serve(site);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    for (const name of built) {
      const fix = FIX_NAMED[name];
      const title = fix
        ? `${name} page (no setting): init() rejects with E_WASM_NOT_FOUND naming the fix`
        : `${name} page in Chromium: the engine's plan and context of the real session`;
      await check(title, () =>
        checkPage(browser, `${server.url}/${name}/index.html`, {
          expected,
          missing: fix ? { url: `${server.url}/${name}/web/session_compaction_bg.wasm`, fix } : undefined,
        }),
      );
    }
    if (built.includes('vite')) {
      await check('Vite dev server (`vite`, dependency pre-bundling on): the page in Chromium', async () => {
        const { createServer: viteServer } = await import('vite');
        const root = join(project, 'vite');
        writeFileSync(join(root, 'sample.jsonl'), text);
        const warnings = [];
        const dev = await viteServer({
          root,
          configFile: false,
          logLevel: 'warn',
          customLogger: await recordingLogger(warnings),
          server: { host: '127.0.0.1', port: 0 },
        });
        try {
          await dev.listen();
          const [url] = dev.resolvedUrls?.local ?? [];
          assert.ok(url, 'the Vite dev server has a local URL');
          await checkPage(browser, `${url}index.html`, { expected });
          assert.deepEqual(warnings, [], 'the Vite dev server warned');
        } finally {
          await dev.close();
        }
      });
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

/** A Vite logger that collects warnings and errors (a clean package makes Vite print none). */
async function recordingLogger(sink) {
  const { createLogger } = await import('vite');
  const logger = createLogger('warn');
  logger.warn = (message) => sink.push(message);
  logger.warnOnce = (message) => sink.push(message);
  logger.error = (message) => sink.push(message);
  return logger;
}

/** The pages built without their bundler's setting, and the fix their error must name. */
const FIX_NAMED = {
  'esbuild-plain': "loader: { '.wasm': 'file' }",
  'rollup-plain': '@web/rollup-plugin-import-meta-assets',
};

/**
 * Opens one page and waits for its result. `missing`: the page is expected to fail with
 * E_WASM_NOT_FOUND because `missing.url` (the .wasm) answers 404, with a message naming
 * `missing.fix`; otherwise it must report the engine's `expected` answer with no failed request
 * and no page error.
 */
async function checkPage(browser, url, { expected, missing }) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()} ${response.url()}`);
  });
  try {
    await page.goto(url);
    await page.waitForFunction(() => document.body?.dataset.result || document.body?.dataset.error, null, {
      timeout: 60_000,
    });
    const { result, error } = await page.evaluate(() => ({ ...document.body.dataset }));
    if (missing) {
      assert.equal(result, undefined);
      const { code, message } = JSON.parse(error);
      assert.equal(code, 'E_WASM_NOT_FOUND');
      assert.match(message, /answered HTTP 404/);
      assert.ok(message.includes(missing.fix), `the message names ${missing.fix}: ${message}`);
      assert.deepEqual(problems, [`HTTP 404 ${missing.url}`]);
    } else {
      assert.equal(error, undefined, `the page reported ${error}`);
      assert.deepEqual(JSON.parse(result), { entry: 'web', ...expected });
      assert.deepEqual(problems, []);
    }
  } finally {
    await page.close();
  }
}

try {
  await main();
} catch (error) {
  failures.push('setup');
  console.error(`[matrix] FAILED: ${error instanceof UserError ? error.message : error.stack}`);
}
console.log(`matrix-test: ${passed} passed, ${failures.length} failed`);
if (failures.length) {
  console.log(`[matrix] failed: ${failures.join('; ')}`);
  process.exit(1);
}
