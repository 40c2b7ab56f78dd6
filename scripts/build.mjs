#!/usr/bin/env node
// Builds the npm package `session-compaction` in pkg/ from the Rust crate.
//
//   1. toolchain: the wasm32-unknown-unknown Rust target, and the wasm-bindgen CLI at exactly
//      the version of the `wasm-bindgen` crate in Cargo.lock (installed with cargo if needed);
//   2. cargo build --release --target wasm32-unknown-unknown -p session-compaction-wasm (the binding
//      crate in bindings/wasm; the core crate at the root has no wasm code);
//   3. wasm-bindgen --target web (an ES module), then wasm-opt -Oz (binaryen from node_modules) on
//      the .wasm; cached in <target>/npm-pkg/, redone only when the cargo output, a tool version or
//      a flag changes. The package ships ONE glue and ONE .wasm (web/): both entries use the web
//      glue, patched (firstUseHook) so that an entry can decide what the first engine call does
//      while the module is not instantiated (the Node entry instantiates it from the file then:
//      importing the package compiles nothing; the web entry's own guard throws E_NOT_INITIALIZED
//      before that). Shipped: the glue .js and the .wasm (web/), and the API part of the glue's
//      .d.ts as node/session_compaction.d.ts (what index.d.ts and index.d.cts re-export; a
//      CommonJS folder, see apiDeclarations; not wasm-bindgen's loader declarations, which the
//      entries replace with their own init/initSync, nor the *_bg.wasm.d.ts, which nothing reads);
//   4. pkg/ = those outputs + pkg-template/ (package.json gets version/description/license from
//      Cargo.toml; the entries get their export lists and the Node entry its default constants
//      generated from the wasm module); files are written only when their content changed, stale
//      files are removed;
//   5. prints the raw and gzip size of the .wasm.
//
// Usage: node scripts/build.mjs        (npm run build)
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { capture, formatBytes, npmBin, PKG_DIR, probe, ROOT, run, UserError } from './lib.mjs';

const WASM_TARGET = 'wasm32-unknown-unknown';
const TEMPLATE_DIR = join(ROOT, 'pkg-template');
/** The wasm-bindgen output shipped in the package: pkg/<dir>/ ← --target <target>. */
const FLAVOUR = { dir: 'web', target: 'web', type: 'module' };
// --weak-refs: Rust objects handed to JS free their wasm memory when garbage-collected
// (FinalizationRegistry). Since wasm-bindgen 0.2.91 this is the default (with run-time detection)
// and the flag is a deprecated no-op that 0.2.130 still accepts; drop it if a later CLI rejects it.
const WASM_BINDGEN_FLAGS = ['--weak-refs'];
// --merge-similar-functions (functions that differ only in constants become one, the constants
// passed as parameters; the generic instantiations of serde and of the engine), then -Oz --converge:
// binaryen's size passes, repeated while the module still shrinks. Figures: docs/BENCHMARKS.md, "Size".
const WASM_OPT_FLAGS = [
  '--merge-similar-functions',
  '-Oz',
  '--converge',
  '--strip-debug',
  '--strip-producers',
  '--strip-target-features',
];
/**
 * Exports the entries wrap (pkg-template/shared/pure.js, `perTurnFunctions`): the glue compares
 * the list with the last call's and calls the engine's `__…After` variant.
 */
const PER_TURN_EXPORTS = ['prepareCompaction', 'buildSessionContext'];
/** Names the package entries define themselves; a Rust export with one of them would clash. */
const RESERVED_EXPORTS = ['init', 'initSync', 'default', 'isSessionCompactionError'];
/** Marker line in the entry templates, replaced by the generated export list. */
const EXPORTS_MARKER = '// @generated-exports';
/** Marker line in index.node.mjs, replaced by the default constants (values read from the module). */
const DEFAULTS_MARKER = '// @generated-defaults';
/**
 * Marker line in both entries, replaced by pkg-template/shared/freed-guard.js, errors.js and from-file.js
 * (isSessionCompactionError), not shipped themselves.
 */
const FREED_GUARD_MARKER = '// @generated-freed-guard';

const log = (message) => console.log(`[build] ${message}`);

async function main() {
  const started = Date.now();
  const meta = crateMetadata();
  ensureWasmTarget();
  const bindgenVersion = ensureWasmBindgen();
  const wasmIn = cargoBuild(meta);
  const staging = join(meta.targetDir, 'npm-pkg');
  bindgenAndOptimize({ wasmIn, staging, bindgenVersion, libName: meta.libName });
  const { names: exportNames, defaults } = await apiExportNames(staging, meta.libName);
  const changed = syncDir(PKG_DIR, packageFiles({ staging, meta, exportNames, defaults }));
  log(`pkg/ ${changed === 0 ? 'unchanged' : `updated (${changed} file(s) written or removed)`}`);
  reportSizes(meta.libName);
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Version, description and license (of the core crate, which the npm package ships), the binding
 * crate's lib name (the `.wasm` cargo writes), the output name of the generated files and the
 * target dir, from `cargo metadata`.
 */
function crateMetadata() {
  if (!existsSync(join(ROOT, 'Cargo.lock'))) {
    log('Cargo.lock is missing: cargo generate-lockfile');
    run('cargo', ['generate-lockfile'], { label: 'cargo generate-lockfile' });
  }
  const metadata = JSON.parse(capture('cargo', ['metadata', '--format-version', '1', '--no-deps', '--offline']));
  const find = (manifest) => {
    const pkg = metadata.packages.find((p) => p.manifest_path === manifest);
    if (!pkg) throw new UserError(`cargo metadata does not list the package of ${manifest}`);
    return pkg;
  };
  const core = find(join(ROOT, 'Cargo.toml'));
  const binding = find(join(ROOT, 'bindings', 'wasm', 'Cargo.toml'));
  const lib = binding.targets.find((t) => t.kind.includes('cdylib'));
  if (!lib) throw new UserError('bindings/wasm/Cargo.toml: the [lib] needs crate-type "cdylib" to build a .wasm');
  return {
    version: core.version,
    description: core.description,
    license: core.license,
    bindingPackage: binding.name,
    cargoLibName: lib.name.replaceAll('-', '_'),
    // The generated files keep the core crate's name (session_compaction.js, …_bg.wasm).
    libName: core.targets.find((t) => t.kind.includes('lib')).name.replaceAll('-', '_'),
    targetDir: metadata.target_directory,
  };
}

function ensureWasmTarget() {
  const installed = probe('rustup', ['target', 'list', '--installed']);
  if (installed === null) {
    // No rustup (e.g. a distribution's Rust): trust that the target exists; cargo says otherwise.
    log('rustup not found; assuming the wasm32-unknown-unknown target is installed');
    return;
  }
  if (!installed.split('\n').includes(WASM_TARGET)) {
    log(`rustup target add ${WASM_TARGET}`);
    run('rustup', ['target', 'add', WASM_TARGET], { label: 'rustup target add' });
  }
}

/** The `wasm-bindgen` crate version pinned in Cargo.lock; the CLI must match it exactly. */
function lockedWasmBindgenVersion() {
  const lock = readFileSync(join(ROOT, 'Cargo.lock'), 'utf8');
  const versions = [...lock.matchAll(/^name = "wasm-bindgen"\r?\nversion = "([^"]+)"/gm)].map((m) => m[1]);
  if (versions.length === 0) {
    throw new UserError('Cargo.lock has no `wasm-bindgen` package: is it a wasm32 dependency?');
  }
  if (new Set(versions).size > 1) {
    throw new UserError(`Cargo.lock has several wasm-bindgen versions (${versions.join(', ')})`);
  }
  return versions[0];
}

function ensureWasmBindgen() {
  const wanted = lockedWasmBindgenVersion();
  const current = installedWasmBindgen();
  if (current !== wanted) {
    log(
      `wasm-bindgen CLI ${current ?? 'not found'}, Cargo.lock wants ${wanted}: ` +
        `cargo install wasm-bindgen-cli --version ${wanted} (takes a few minutes)`,
    );
    // No --locked: the CLI's own lock pins transitive versions a registry mirror may lack.
    run('cargo', ['install', 'wasm-bindgen-cli', '--version', wanted, '--force'], {
      label: 'cargo install wasm-bindgen-cli',
    });
    const after = installedWasmBindgen();
    if (after !== wanted) {
      throw new UserError(
        `wasm-bindgen on PATH is ${after ?? 'missing'} after installing ${wanted}: ` +
          'another wasm-bindgen earlier on PATH shadows ~/.cargo/bin/wasm-bindgen',
      );
    }
  }
  return wanted;
}

function installedWasmBindgen() {
  const out = probe('wasm-bindgen', ['--version']);
  return out?.match(/^wasm-bindgen (\S+)/)?.[1] ?? null;
}

function cargoBuild(meta) {
  log(`cargo build --release --target ${WASM_TARGET} -p ${meta.bindingPackage}`);
  run('cargo', ['build', '--release', '--target', WASM_TARGET, '-p', meta.bindingPackage], {
    label: 'cargo build',
    // Keep the `target_features` section (strip = true in Cargo.toml removes it): wasm-bindgen
    // reads it to know which Wasm features rustc used. wasm-opt strips all of it afterwards.
    env: { CARGO_PROFILE_RELEASE_STRIP: 'debuginfo' },
  });
  const wasm = join(meta.targetDir, WASM_TARGET, 'release', `${meta.cargoLibName}.wasm`);
  if (!existsSync(wasm)) throw new UserError(`cargo build did not produce ${wasm}`);
  return wasm;
}

/**
 * The `rustflags` that `.cargo/config.toml` sets for the wasm target (`-C target-feature=+simd128`:
 * the scanner's WebAssembly SIMD), so that `rustc --print cfg` reports the features cargo builds with.
 */
function wasmRustflags() {
  const file = join(ROOT, '.cargo', 'config.toml');
  if (!existsSync(file)) return [];
  const section = readFileSync(file, 'utf8').split(`[target.${WASM_TARGET}]`)[1]?.split(/^\[/m)[0] ?? '';
  const list = section.match(/^rustflags\s*=\s*\[([^\]]*)\]/m)?.[1] ?? '';
  return [...list.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
}

/**
 * The `--enable-*` flags wasm-opt needs: the Wasm features rustc enables for the target
 * (`rustc --print cfg`), e.g. bulk-memory, reference-types, multivalue in Rust 1.8x/1.9x.
 * wasm-opt would otherwise assume the MVP feature set and reject or mis-optimize the module.
 */
function wasmOptFeatureFlags(wasmOpt) {
  const cfg = capture('rustc', ['--print', 'cfg', '--target', WASM_TARGET, ...wasmRustflags()]);
  const features = [...cfg.matchAll(/^target_feature="([^"]+)"$/gm)].map((m) => m[1]);
  const binaryenName = { 'nontrapping-fptoint': 'nontrapping-float-to-int', simd128: 'simd' };
  const help = capture(wasmOpt, ['--help']);
  return features.map((feature) => {
    const flag = `--enable-${binaryenName[feature] ?? feature}`;
    if (!help.includes(`${flag} `)) {
      throw new UserError(`rustc enables the Wasm feature "${feature}" but wasm-opt has no ${flag}`);
    }
    return flag;
  });
}

function bindgenAndOptimize({ wasmIn, staging, bindgenVersion, libName }) {
  const wasmOpt = npmBin('wasm-opt');
  const optFlags = [...WASM_OPT_FLAGS, ...wasmOptFeatureFlags(wasmOpt)];
  const stamp = JSON.stringify({
    input: createHash('sha256').update(readFileSync(wasmIn)).digest('hex'),
    wasmBindgen: bindgenVersion,
    wasmBindgenFlags: WASM_BINDGEN_FLAGS,
    flavour: FLAVOUR,
    wasmOpt: capture(wasmOpt, ['--version']).trim(),
    wasmOptFlags: optFlags,
  });
  const stampFile = join(staging, 'stamp.json');
  const out = join(staging, FLAVOUR.dir);
  const wasm = join(out, `${libName}_bg.wasm`);
  if (existsSync(wasm) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    log('wasm-bindgen + wasm-opt: up to date');
    return;
  }
  rmSync(staging, { recursive: true, force: true });
  log(`wasm-bindgen --target ${FLAVOUR.target} → ${FLAVOUR.dir}/`);
  run(
    'wasm-bindgen',
    [...WASM_BINDGEN_FLAGS, '--target', FLAVOUR.target, '--out-name', libName, '--out-dir', out, wasmIn],
    { label: `wasm-bindgen --target ${FLAVOUR.target}` },
  );
  // Tells Node (and bundlers) how to read the generated .js files, whatever encloses them.
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type: FLAVOUR.type }, null, 2)}\n`);
  log(`wasm-opt ${optFlags.join(' ')} ${libName}_bg.wasm`);
  run(wasmOpt, [...optFlags, wasm, '-o', `${wasm}.opt`], { label: 'wasm-opt' });
  renameSync(`${wasm}.opt`, wasm);
  writeFileSync(stampFile, stamp);
}

/**
 * The names the Rust crate exports to JavaScript, read from the generated module. The entries
 * re-export exactly these, plus `init` and `initSync`.
 */
async function apiExportNames(staging, libName) {
  // Importing the glue is side-effect free: it instantiates nothing until initSync().
  const glue = await import(pathToFileURL(join(staging, FLAVOUR.dir, `${libName}.js`)).href);
  // `__…` exports are the glue's own (pkg-template/shared/pure.js), not the package's API.
  const names = Object.keys(glue).filter((n) => n !== 'default' && n !== 'initSync' && !n.startsWith('__'));
  const clash = names.filter((n) => RESERVED_EXPORTS.includes(n));
  if (clash.length) {
    throw new UserError(`the Rust crate exports ${clash.join(', ')}: reserved for the package entries`);
  }
  // The Node entry's constants, written into it so that loading it instantiates nothing.
  glue.initSync({ module: readFileSync(join(staging, FLAVOUR.dir, `${libName}_bg.wasm`)) });
  const defaults = {
    DEFAULT_COMPACTION_SETTINGS: glue.defaultCompactionSettings(),
    DEFAULT_PRUNE_CONFIG: glue.defaultPruneConfig(),
  };
  return { names, defaults };
}

/**
 * Every file of pkg/: relative path → content (Buffer or string), with its mode if special.
 * From the staging dir only what something loads: the glue module (patched) and the one .wasm
 * (web/), and the API part of the glue's .d.ts, which index.d.ts re-exports (node/).
 */
function packageFiles({ staging, meta, exportNames, defaults }) {
  const files = new Map();
  const { dir } = FLAVOUR;
  const staged = (rel) => readFileSync(join(staging, dir, rel));
  const lib = meta.libName;
  files.set(`${dir}/package.json`, { content: staged('package.json') });
  const glueRel = `${dir}/${lib}.js`;
  files.set(glueRel, {
    content: withoutDocComments(
      nativeStringPassing(
        firstUseHook(withoutSelfTypes(staged(`${lib}.js`).toString('utf8'), glueRel), glueRel),
        glueRel,
      ),
      glueRel,
    ),
  });
  // The declarations go to node/, a CommonJS folder, with a module for Deno to find them by.
  files.set('node/package.json', { content: `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n` });
  files.set(`node/${lib}.d.ts`, { content: apiDeclarations(staged(`${lib}.d.ts`), `${dir}/${lib}.d.ts`) });
  files.set(`node/${lib}.js`, { content: typesModule(lib) });
  files.set(`${dir}/${lib}_bg.wasm`, { content: staged(`${lib}_bg.wasm`) });
  const freedGuard = ['freed-guard.js', 'errors.js', 'from-file.js', 'wasm-file.js', 'pure.js']
    .map((f) => readFileSync(join(TEMPLATE_DIR, 'shared', f), 'utf8').trimEnd())
    .join('\n\n');
  for (const path of walk(TEMPLATE_DIR)) {
    const rel = relative(TEMPLATE_DIR, path).split(sep).join('/');
    if (rel.startsWith('shared/')) continue;
    let content = readFileSync(path, 'utf8');
    if (rel === 'index.web.mjs' || rel === 'index.node.mjs') {
      content = fillMarker(rel, content, FREED_GUARD_MARKER, [freedGuard]);
    }
    if (rel === 'package.json') content = packageJson(content, meta);
    if (rel === 'index.web.mjs') {
      content = fillExports(
        rel,
        content,
        exportNames.map(
          (n) =>
            `export const ${n} = guard(${JSON.stringify(n)}, ${PER_TURN_EXPORTS.includes(n) ? 'perTurn' : 'raw'}.${n});`,
        ),
      );
    }
    if (rel === 'index.node.mjs') {
      const direct = exportNames.filter((n) => !PER_TURN_EXPORTS.includes(n));
      const perTurn = exportNames.filter((n) => PER_TURN_EXPORTS.includes(n));
      content = fillExports(rel, content, [
        `export const { ${direct.join(', ')} } = raw;`,
        `export const { ${perTurn.join(', ')} } = perTurn;`,
      ]);
      content = fillMarker(
        rel,
        content,
        DEFAULTS_MARKER,
        Object.entries(defaults).map(([name, value]) => `export const ${name} = deepFreeze(${JSON.stringify(value)});`),
      );
    }
    const mode = rel.startsWith('bin/') ? 0o755 : undefined;
    files.set(rel, { content, mode });
    if (rel === 'index.d.ts') {
      // index.d.ts is read as ESM (the package is "type": "module"); `require` needs a .d.cts.
      files.set('index.d.cts', { content });
      // Declarations beside each entry file, for imports of the file itself (e.g. tests).
      files.set('index.web.d.mts', { content: "export * from './index.js';\n" });
      files.set('index.node.d.mts', { content: "export * from './index.js';\n" });
      files.set('index.node.d.cts', { content: "export * from './index.cjs';\n" });
    }
  }
  return files;
}

/**
 * wasm-bindgen's web glue leaves `wasm` (the module's exports) undefined until `initSync()` or
 * the default export instantiated the module, so a call before that fails inside the glue.
 * Patched: until then `wasm` is a Proxy whose property reads (the first engine call) run the
 * hook an entry set with the added export `__onFirstUse(hook)`, then read the real exports; with
 * no hook, or when the hook did not instantiate the module, the read throws. The Node entry's
 * hook instantiates the module synchronously from the file beside it (so importing it compiles
 * nothing and there is nothing to await); the web entry sets none (its guard throws
 * E_NOT_INITIALIZED before any call reaches the glue). The glue's "already instantiated" checks
 * then look at `wasmInstance`, which only instantiation sets. Once instantiated, `wasm` is the
 * real exports and every call reads them directly.
 */
function firstUseHook(glue, rel) {
  const declaration = 'let wasmModule, wasmInstance, wasm;\n';
  const lazy = [
    '// Patched by scripts/build.mjs (firstUseHook): the first use of an uninstantiated module runs the',
    '// hook an entry set with __onFirstUse (the Node entry instantiates the module from its file).',
    'let wasmModule, wasmInstance;',
    'let firstUse = null;',
    'let wasm = new Proxy({}, {',
    '    get(_target, name) {',
    '        if (wasmInstance === undefined && firstUse !== null) firstUse();',
    "        if (wasmInstance === undefined) throw new Error('session-compaction: the WebAssembly module is not instantiated');",
    '        return wasm[name];',
    '    },',
    '});',
    'export function __onFirstUse(hook) {',
    '    firstUse = hook;',
    '}',
    '',
  ].join('\n');
  const check = '    if (wasm !== undefined) return wasm;\n';
  const at = glue.indexOf(declaration);
  const checks = glue.split(check).length - 1;
  if (at === -1 || glue.indexOf(declaration, at + 1) !== -1 || checks !== 2 || /\bfirstUse\b/.test(glue)) {
    throw new UserError(
      `${rel}: wasm-bindgen's instantiation state is not the one build.mjs patches ` +
        '(a new wasm-bindgen version? update firstUseHook)',
    );
  }
  const patched = glue.slice(0, at) + lazy + glue.slice(at + declaration.length);
  return patched.replaceAll(check, '    if (wasmInstance !== undefined) return wasm;\n');
}

/**
 * wasm-bindgen's `passStringToWasm0` (every JS string the engine receives: JSONL text, JSON of
 * options and entries, the pure functions' restricted `JSON.stringify` of entry heads) copies a
 * string's leading ASCII with a `charCodeAt` loop, one character per iteration, and hands only
 * the rest to `TextEncoder.encodeInto`. On long strings that loop is ~20× slower than the native
 * encoder (Node 20, 126 MB: ~450 ms against ~40 ms). Patched: a string of more than 64 UTF-16
 * units is written by `encodeInto` into the `length` bytes allocated for it (all of it when it
 * is ASCII), and what did not fit by a second `encodeInto` after growing the allocation to 3
 * bytes per remaining unit, as the original does for its non-ASCII rest; then the allocation is
 * shrunk to the bytes written. The bytes are the same UTF-8 (lone surrogates as U+FFFD either
 * way). Where `encodeInto` is not native (the glue's own fallback copies a whole `encode()` into
 * the view, which a view of `length` bytes cannot hold), and for short strings, the original
 * loop runs.
 */
function nativeStringPassing(glue, rel) {
  // The allocation of `length` bytes, then the ASCII loop: the fast path goes between them.
  const allocation = ['    let len = arg.length;', '    let ptr = malloc(len, 1) >>> 0;', ''];
  const ascii = [
    '    const mem = getUint8ArrayMemory0();',
    '',
    '    let offset = 0;',
    '',
    '    for (; offset < len; offset++) {',
  ];
  const loop = [...allocation, ...ascii].join('\n');
  const native = [
    ...allocation,
    '    // Patched by scripts/build.mjs (nativeStringPassing): long strings through the native encoder.',
    "    if (len > 64 && typeof TextEncoder.prototype.encodeInto === 'function') {",
    '        const head = cachedTextEncoder.encodeInto(arg, getUint8ArrayMemory0().subarray(ptr, ptr + len));',
    '        let written = head.written;',
    '        if (head.read < arg.length) {',
    '            const rest = arg.slice(head.read);',
    '            ptr = realloc(ptr, len, len = written + rest.length * 3, 1) >>> 0;',
    '            written += cachedTextEncoder.encodeInto(rest, getUint8ArrayMemory0().subarray(ptr + written, ptr + len)).written;',
    '        }',
    '        if (written !== len) ptr = realloc(ptr, len, written, 1) >>> 0;',
    '        WASM_VECTOR_LEN = written;',
    '        return ptr;',
    '    }',
    '',
    ...ascii,
  ].join('\n');
  const at = glue.indexOf(loop);
  if (at === -1 || glue.indexOf(loop, at + 1) !== -1) {
    throw new UserError(
      `${rel}: wasm-bindgen's passStringToWasm0 is not the one build.mjs patches ` +
        '(a new wasm-bindgen version? update nativeStringPassing)',
    );
  }
  return glue.slice(0, at) + native + glue.slice(at + loop.length);
}

/**
 * The engine's declarations, node/<lib>.d.ts: wasm-bindgen's .d.ts of the glue up to its loader
 * section (`InitInput`, `initSync`, the default export, `InitOutput`), which the entries replace
 * with their own `init`/`initSync` (declared in index.d.ts). index.d.ts and index.d.cts re-export
 * it for every entry. It lies in node/, a "type": "commonjs" folder: a CommonJS declaration file
 * can be re-exported by the ESM index.d.ts and the CommonJS index.d.cts under every `module`
 * setting (TypeScript's `node16` refuses a .d.cts re-exporting an ES module's declarations).
 */
function apiDeclarations(dts, rel) {
  const text = dts.toString('utf8');
  const cut = text.indexOf('export type InitInput');
  if (cut < 0) throw new UserError(`${rel}: no \`export type InitInput\` loader section (a new wasm-bindgen?)`);
  return `${text.slice(0, cut).trimEnd()}\n`;
}

/**
 * Drops the `/** … *\/` doc comments wasm-bindgen copies from the Rust doc comments into the JS
 * glue (about a quarter of each glue file): the package's types and their docs come from the
 * shipped .d.ts, nothing reads the comments in the .js. Only whole-line comment blocks are
 * removed (a block ends at its first `*\/`, as in JavaScript); any other `/**` left is an error.
 */
function withoutDocComments(glue, rel) {
  const stripped = glue.replace(/^[ \t]*\/\*\*[\s\S]*?\*\/[ \t]*\r?\n/gm, '');
  if (stripped.includes('/**')) {
    throw new UserError(`${rel}: a \`/**\` that is not a whole-line doc comment (a new wasm-bindgen version?)`);
  }
  return stripped;
}

/**
 * node/<lib>.js, the module that index.d.ts names for the engine's declarations
 * (`export * from './node/<lib>.js'`): TypeScript reads node/<lib>.d.ts beside it, Deno resolves the
 * specifier to this file and follows its `@ts-self-types` pointer to that .d.ts, so the file must
 * exist. It holds no glue; requiring it gives the Node entry. Nothing loads it on `import`/`require`
 * of the package.
 */
function typesModule(lib) {
  return [
    `/* @ts-self-types="./${lib}.d.ts" */`,
    `// The engine's declarations are ./${lib}.d.ts (index.d.ts re-exports this module for them).`,
    "// The engine's glue is ../web/session_compaction.js; this is the Node entry.",
    "'use strict';",
    "module.exports = require('../index.node.cjs');",
    '',
  ].join('\n');
}

/** Drops the `@ts-self-types` pointer of the glue: its declarations are shipped as node/<lib>.d.ts. */
function withoutSelfTypes(glue, rel) {
  const line = /^\/\* @ts-self-types="[^"]*" \*\/\r?\n/;
  if (!line.test(glue)) throw new UserError(`${rel}: no @ts-self-types line to remove (a new wasm-bindgen version?)`);
  return glue.replace(line, '');
}

function packageJson(template, meta) {
  const pkg = JSON.parse(template);
  // Cargo.toml is the single source of these.
  pkg.version = meta.version;
  pkg.description = meta.description;
  pkg.license = meta.license;
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function fillExports(rel, content, lines) {
  return fillMarker(rel, content, EXPORTS_MARKER, lines);
}

function fillMarker(rel, content, marker, lines) {
  if (!content.includes(marker)) {
    throw new UserError(`pkg-template/${rel}: the line "${marker}" is missing`);
  }
  // A function replacement: the inserted code may hold `$&`-like sequences, taken literally.
  return content.replace(marker, () => `${marker} by scripts/build.mjs\n${lines.join('\n')}`);
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** Makes `dir` hold exactly `files`; returns how many files were written or removed. */
function syncDir(dir, files) {
  let changed = 0;
  for (const [rel, { content, mode }] of files) {
    const path = join(dir, rel);
    const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
    if (!existsSync(path) || !readFileSync(path).equals(bytes)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, bytes);
      changed++;
    }
    if (mode !== undefined && (statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
  }
  const prune = (sub) => {
    for (const entry of readdirSync(sub, { withFileTypes: true })) {
      const path = join(sub, entry.name);
      if (entry.isDirectory()) {
        prune(path);
        if (readdirSync(path).length === 0) rmdirSync(path);
      } else if (!files.has(relative(dir, path).split(sep).join('/'))) {
        rmSync(path);
        changed++;
      }
    }
  };
  prune(dir);
  return changed;
}

function reportSizes(libName) {
  const bytes = readFileSync(join(PKG_DIR, 'web', `${libName}_bg.wasm`));
  const gzip = gzipSync(bytes, { level: 9 }).length;
  log(`size: pkg/web/${libName}_bg.wasm  raw ${formatBytes(bytes.length)}  gzip ${formatBytes(gzip)}`);
}

main().catch((error) => {
  console.error(`[build] FAILED: ${error instanceof UserError ? error.message : error.stack}`);
  process.exit(1);
});
