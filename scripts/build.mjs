#!/usr/bin/env node
// Builds the npm package `session-compaction` in pkg/ from the Rust crate.
//
//   1. toolchain: the wasm32-unknown-unknown Rust target, and the wasm-bindgen CLI at exactly
//      the version of the `wasm-bindgen` crate in Cargo.lock (installed with cargo if needed);
//   2. cargo build --release --target wasm32-unknown-unknown -p session-compaction-wasm (the binding
//      crate in bindings/wasm; the core crate at the root has no wasm code);
//   3. wasm-bindgen --target nodejs (CommonJS) and --target web (ES module), then wasm-opt -Oz
//      (binaryen from node_modules) on the .wasm; cached in <target>/npm-pkg/, redone only when
//      the cargo output, a tool version or a flag changes. The package ships ONE .wasm
//      (web/session_compaction_bg.wasm): both flavours emit the same module, and the CommonJS glue
//      is patched to read web/'s file, and only on first use (importing the package compiles
//      nothing). Shipped: the web glue .js, the CommonJS glue inlined into index.node.cjs (no
//      module of its own: one file less for Node to load on import; node/session_compaction.js
//      only points Deno at the types and re-exports that entry), and the one .d.ts the package
//      types import (node/session_compaction.d.ts); not the web .d.ts nor the *_bg.wasm.d.ts
//      (nothing reads them);
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
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { capture, formatBytes, npmBin, PKG_DIR, probe, ROOT, run, UserError } from './lib.mjs';

const WASM_TARGET = 'wasm32-unknown-unknown';
const TEMPLATE_DIR = join(ROOT, 'pkg-template');
/** The two wasm-bindgen flavours shipped in the package: pkg/<dir>/ ← --target <target>. */
const FLAVOURS = [
  { dir: 'node', target: 'nodejs', type: 'commonjs' },
  { dir: 'web', target: 'web', type: 'module' },
];
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
/** Marker line in index.node.cjs, replaced by the default constants (values read from the module). */
const DEFAULTS_MARKER = '// @generated-defaults';
/**
 * Marker line in both entries, replaced by pkg-template/shared/freed-guard.js, errors.js and from-file.js
 * (isSessionCompactionError), not shipped themselves.
 */
const FREED_GUARD_MARKER = '// @generated-freed-guard';
/**
 * Marker line in index.node.cjs, replaced by wasm-bindgen's CommonJS glue (patched by lazyNodeGlue),
 * wrapped so that it defines `api` (the glue's `exports`) and nothing else in the entry's scope.
 */
const NODE_GLUE_MARKER = '// @generated-node-glue';

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
    flavours: FLAVOURS,
    wasmOpt: capture(wasmOpt, ['--version']).trim(),
    wasmOptFlags: optFlags,
  });
  const stampFile = join(staging, 'stamp.json');
  const complete = FLAVOURS.every((f) => existsSync(join(staging, f.dir, `${libName}_bg.wasm`)));
  if (complete && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    log('wasm-bindgen + wasm-opt: up to date');
    return;
  }
  rmSync(staging, { recursive: true, force: true });
  for (const { dir, target, type } of FLAVOURS) {
    const out = join(staging, dir);
    log(`wasm-bindgen --target ${target} → ${dir}/`);
    run('wasm-bindgen', [...WASM_BINDGEN_FLAGS, '--target', target, '--out-name', libName, '--out-dir', out, wasmIn], {
      label: `wasm-bindgen --target ${target}`,
    });
    // Tells Node (and bundlers) how to read the generated .js files, whatever encloses them.
    writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type }, null, 2)}\n`);
  }
  // One .wasm for every entry: the flavours differ only in their JS glue.
  const [first, ...others] = FLAVOURS.map((f) => join(staging, f.dir, `${libName}_bg.wasm`));
  for (const other of others) {
    if (!readFileSync(other).equals(readFileSync(first))) {
      throw new UserError(`wasm-bindgen wrote different .wasm files for the flavours (${first}, ${other})`);
    }
  }
  log(`wasm-opt ${optFlags.join(' ')} ${libName}_bg.wasm`);
  run(wasmOpt, [...optFlags, first, '-o', `${first}.opt`], { label: 'wasm-opt' });
  renameSync(`${first}.opt`, first);
  // The staging copies stay usable on their own (apiExportNames loads both).
  for (const other of others) writeFileSync(other, readFileSync(first));
  writeFileSync(stampFile, stamp);
}

/**
 * The names the Rust crate exports to JavaScript, read from both generated modules (they must
 * agree). The entries re-export exactly these, plus `init` and `initSync`.
 */
async function apiExportNames(staging, libName) {
  const nodeModule = createRequire(import.meta.url)(join(staging, 'node', `${libName}.js`));
  // `__…` exports are the glue's own (pkg-template/shared/pure.js), not the package's API.
  const nodeNames = Object.keys(nodeModule).filter((n) => !n.startsWith('__'));
  // Importing the web module is side-effect free: it instantiates nothing until init().
  const webModule = await import(pathToFileURL(join(staging, 'web', `${libName}.js`)).href);
  const webNames = new Set(Object.keys(webModule));
  webNames.delete('default');
  webNames.delete('initSync');
  for (const n of webNames) if (n.startsWith('__')) webNames.delete(n);
  const missing = nodeNames.filter((n) => !webNames.has(n));
  const extra = [...webNames].filter((n) => !nodeNames.includes(n));
  if (missing.length || extra.length) {
    throw new UserError(
      `the nodejs and web builds export different names (only in node: ${missing.join(', ') || '-'}; ` +
        `only in web: ${extra.join(', ') || '-'})`,
    );
  }
  const clash = nodeNames.filter((n) => RESERVED_EXPORTS.includes(n));
  if (clash.length) {
    throw new UserError(`the Rust crate exports ${clash.join(', ')}: reserved for the package entries`);
  }
  // The Node entry's constants, written into it so that loading it instantiates nothing.
  const defaults = {
    DEFAULT_COMPACTION_SETTINGS: nodeModule.defaultCompactionSettings(),
    DEFAULT_PRUNE_CONFIG: nodeModule.defaultPruneConfig(),
  };
  return { names: nodeNames, defaults };
}

/**
 * Every file of pkg/: relative path → content (Buffer or string), with its mode if special.
 * From the staging dir only what something loads: the web glue module, the CommonJS glue (inlined
 * into index.node.cjs), the one .wasm (web/) and the .d.ts that index.d.ts re-exports (node/).
 */
function packageFiles({ staging, meta, exportNames, defaults }) {
  const files = new Map();
  const staged = (rel) => readFileSync(join(staging, rel));
  const lib = meta.libName;
  for (const { dir } of FLAVOURS) files.set(`${dir}/package.json`, { content: staged(`${dir}/package.json`) });
  // The CommonJS glue is not shipped as a file of its own: it is inlined into index.node.cjs
  // (below), which saves Node a second module resolution, read and compilation on every import.
  const nodeGlue = inlinedNodeGlue(
    withoutDocComments(
      nativeStringPassing(lazyNodeGlue(staged(`node/${lib}.js`).toString('utf8'), lib), `node/${lib}.js`),
      `node/${lib}.js`,
    ),
    lib,
  );
  files.set(`node/${lib}.js`, { content: typesModule(lib) });
  files.set(`node/${lib}.d.ts`, {
    content: sameApiDeclarations(staged(`node/${lib}.d.ts`), staged(`web/${lib}.d.ts`)),
  });
  files.set(`web/${lib}.js`, {
    content: withoutDocComments(
      nativeStringPassing(withoutSelfTypes(staged(`web/${lib}.js`).toString('utf8'), `web/${lib}.js`), `web/${lib}.js`),
      `web/${lib}.js`,
    ),
  });
  files.set(`web/${lib}_bg.wasm`, { content: staged(`web/${lib}_bg.wasm`) });
  const freedGuard = ['freed-guard.js', 'errors.js', 'from-file.js', 'pure.js']
    .map((f) => readFileSync(join(TEMPLATE_DIR, 'shared', f), 'utf8').trimEnd())
    .join('\n\n');
  for (const path of walk(TEMPLATE_DIR)) {
    const rel = relative(TEMPLATE_DIR, path).split(sep).join('/');
    if (rel.startsWith('shared/')) continue;
    let content = readFileSync(path, 'utf8');
    if (rel === 'index.web.mjs' || rel === 'index.node.cjs') {
      content = fillMarker(rel, content, FREED_GUARD_MARKER, [freedGuard]);
    }
    if (rel === 'index.node.cjs') content = fillMarker(rel, content, NODE_GLUE_MARKER, [nodeGlue]);
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
      const names = [...exportNames, 'init', 'initSync'];
      content = fillExports(rel, content, [`export const { ${names.join(', ')} } = api;`]);
    }
    if (rel === 'index.node.cjs') {
      content = fillMarker(
        rel,
        content,
        DEFAULTS_MARKER,
        Object.entries(defaults).map(([name, value]) => `const ${name} = deepFreeze(${JSON.stringify(value)});`),
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
 * The nodejs-target glue reads its own copy of the .wasm and compiles and instantiates it while
 * it is being required. Patched: it reads web/'s copy (the package's only one), on the first
 * access to the wasm exports (the first engine call), so `require`/`import` of the package costs
 * no compilation. `wasm` starts as a Proxy whose first property read instantiates the module and
 * replaces `wasm` with the real exports, so every later call reads the exports directly.
 */
function lazyNodeGlue(glue, lib) {
  const eager = [
    `const wasmPath = \`\${__dirname}/${lib}_bg.wasm\`;`,
    "const wasmBytes = require('fs').readFileSync(wasmPath);",
    'const wasmModule = new WebAssembly.Module(wasmBytes);',
    'let wasmInstance = new WebAssembly.Instance(wasmModule, __wbg_get_imports());',
    'let wasm = wasmInstance.exports;',
    'wasm.__wbindgen_start();',
  ].join('\n');
  const lazy = [
    "// Patched by scripts/build.mjs: the package's one .wasm (web/), instantiated on first use.",
    `const wasmPath = \`\${__dirname}/web/${lib}_bg.wasm\`;`,
    'let wasmModule;',
    'let wasmInstance;',
    'let wasm = new Proxy({}, {',
    '    get(_target, name) {',
    '        __wbg_instantiate();',
    '        return wasm[name];',
    '    },',
    '});',
    'function __wbg_instantiate() {',
    "    const wasmBytes = require('fs').readFileSync(wasmPath);",
    '    wasmModule = new WebAssembly.Module(wasmBytes);',
    '    wasmInstance = new WebAssembly.Instance(wasmModule, __wbg_get_imports());',
    '    wasm = wasmInstance.exports;',
    '    wasm.__wbindgen_start();',
    '}',
  ].join('\n');
  const at = glue.indexOf(eager);
  if (at === -1 || glue.indexOf(eager, at + 1) !== -1) {
    throw new UserError(
      `node/${lib}.js: wasm-bindgen's instantiation code is not the one build.mjs patches ` +
        '(a new wasm-bindgen version? update lazyNodeGlue)',
    );
  }
  return glue.slice(0, at) + lazy + glue.slice(at + eager.length);
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
 * The CommonJS glue as the statement that index.node.cjs runs in its place: `const api = …` over
 * the glue in a function scope of its own, with `exports` the object it fills. Its
 * `@ts-self-types` pointer goes (index.d.ts names node/*.d.ts itself); `module` and `require`
 * stay the entry's, which is what the glue's own uses of them (getrandom's `module.require`, the
 * lazy `require('fs')`) expect.
 */
function inlinedNodeGlue(glue, lib) {
  const selfTypes = `/* @ts-self-types="./${lib}.d.ts" */\n`;
  if (!glue.startsWith(selfTypes)) {
    throw new UserError(`node/${lib}.js: no leading @ts-self-types line (a new wasm-bindgen version?)`);
  }
  if (/^\s*(module\.exports\s*=|exports\s*=)/m.test(glue)) {
    throw new UserError(
      `node/${lib}.js: the glue assigns module.exports (a new wasm-bindgen version? update inlinedNodeGlue)`,
    );
  }
  const body = glue.slice(selfTypes.length).trimEnd();
  return [
    `// wasm-bindgen's CommonJS glue (node/${lib}.js of its --target nodejs output), inlined by scripts/build.mjs.`,
    'const api = (() => {',
    'const exports = {};',
    body,
    'return exports;',
    '})();',
  ].join('\n');
}

/**
 * node/<lib>.js, the module that index.d.ts names for the engine's declarations
 * (`export * from './node/<lib>.js'`): TypeScript reads node/<lib>.d.ts beside it, Deno resolves the
 * specifier to this file and follows its `@ts-self-types` pointer to that .d.ts, so the file must
 * exist. The glue it used to hold is inlined into index.node.cjs; requiring this file gives that
 * entry. Nothing loads it on `import`/`require` of the package.
 */
function typesModule(lib) {
  return [
    `/* @ts-self-types="./${lib}.d.ts" */`,
    `// The engine's declarations are ./${lib}.d.ts (index.d.ts re-exports this module for them).`,
    "// wasm-bindgen's CommonJS glue is inlined into ../index.node.cjs by scripts/build.mjs; this is that entry.",
    "'use strict';",
    "module.exports = require('../index.node.cjs');",
    '',
  ].join('\n');
}

/**
 * The one engine .d.ts shipped (node/) also types the web entry: checks that the web build's
 * declarations, up to wasm-bindgen's loader section (`InitInput`, `initSync`, `InitOutput`),
 * are the same; returns the node declarations.
 */
function sameApiDeclarations(nodeDts, webDts) {
  const web = webDts.toString('utf8');
  const cut = web.indexOf('export type InitInput');
  if (cut < 0) throw new UserError('web/*.d.ts: no `export type InitInput` loader section (a new wasm-bindgen?)');
  const norm = (text) => text.replace(/\s+/g, ' ').trim();
  if (norm(web.slice(0, cut)) !== norm(nodeDts.toString('utf8'))) {
    throw new UserError('the nodejs and web builds declare different APIs in their .d.ts');
  }
  return nodeDts;
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

/** Drops the `@ts-self-types` pointer of a glue file whose .d.ts the package does not ship. */
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
