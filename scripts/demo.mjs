#!/usr/bin/env node
// npm run demo — serves the web demo (web-demo/) on 127.0.0.1 and prints its URL.
//
//   1. builds pkg/ (npm run build) when its web entry is missing (and runs `npm ci` first when
//      node_modules/ is missing: the build needs binaryen from it);
//   2. copies what the page loads into web-demo/ (both copies are gitignored):
//        pkg/            → web-demo/pkg/     (the package; the page imports pkg/index.web.mjs)
//        examples/sessions/pi-session-with-compactions.jsonl
//                        → web-demo/sample/pi-session-with-compactions.jsonl ("Load sample")
//      after which web-demo/ is a self-contained static site that works offline from any static
//      file server (the page makes no request to another host unless you type in a model endpoint);
//   3. serves web-demo/ from a small static server bound to 127.0.0.1 (nothing else is served).
//
// Usage: npm run demo                    serve on an ephemeral port
//        npm run demo -- --port 8080     serve on a fixed port (or PORT=8080 npm run demo)
//        npm run demo -- --prepare       only build (if needed) and copy, then exit
//
// The browser test (tests/browser/demo.test.mjs) imports prepareDemo() and startServer() from here.
import { copyFileSync, cpSync, createReadStream, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PKG_DIR, probe, ROOT, run, UserError } from './lib.mjs';
import { ensureDependencies } from './setup.mjs';

/** The page's folder: the static root of the demo. */
export const DEMO_DIR = join(ROOT, 'web-demo');
/** The real session behind "Load sample" (copied into web-demo/sample/). */
export const SAMPLE_SOURCE = join(ROOT, 'examples', 'sessions', 'pi-session-with-compactions.jsonl');
/** Where the copies go (both gitignored by web-demo/.gitignore). */
export const DEMO_PKG_DIR = join(DEMO_DIR, 'pkg');
export const DEMO_SAMPLE = join(DEMO_DIR, 'sample', 'pi-session-with-compactions.jsonl');

/** Files of pkg/ that the page needs: without them, pkg/ is (re)built. */
const REQUIRED = [join(PKG_DIR, 'index.web.mjs'), join(PKG_DIR, 'web', 'session_compaction_bg.wasm')];

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.mts': 'text/plain; charset=utf-8',
  '.cts': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Builds pkg/ if needed and copies the package and the sample session into web-demo/.
 * @param {{ log?: (line: string) => void, build?: boolean }} [options]
 *   `build: false` never builds (throws when pkg/ is missing; used by the test, which runs after
 *   the build step).
 */
export function prepareDemo({ log = (line) => console.log(line), build = true } = {}) {
  const missing = REQUIRED.filter((f) => !existsSync(f));
  if (missing.length) {
    if (!build) {
      throw new UserError(`pkg/ is not built (no ${relative(ROOT, missing[0])}): run \`npm run build\` first`);
    }
    log(`[demo] pkg/ is missing or incomplete (no ${relative(ROOT, missing[0])}): building it (npm run build)`);
    ensureDependencies('demo', log);
    if (probe('cargo', ['--version']) === null) {
      throw new UserError(
        'building pkg/ needs Rust (cargo), which is not installed: install it from https://rustup.rs',
      );
    }
    run(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { label: 'build' });
  }
  rmSync(DEMO_PKG_DIR, { recursive: true, force: true });
  cpSync(PKG_DIR, DEMO_PKG_DIR, { recursive: true });
  mkdirSync(join(DEMO_DIR, 'sample'), { recursive: true });
  copyFileSync(SAMPLE_SOURCE, DEMO_SAMPLE);
  log(`[demo] copied pkg/ → ${relative(ROOT, DEMO_PKG_DIR)}/ and the sample session → ${relative(ROOT, DEMO_SAMPLE)}`);
}

/**
 * Serves `root` (default web-demo/) on 127.0.0.1. GET and HEAD only; paths outside the root,
 * dot-files and folders without an index.html are 404. Nothing is cached (`no-store`), so a
 * rebuilt package is picked up on reload.
 * @param {{ port?: number, root?: string }} [options] port 0 (default) picks a free port
 * @returns {Promise<{ url: string, port: number, close: () => Promise<void> }>}
 */
export function startServer({ port = 0, root = DEMO_DIR } = {}) {
  const base = resolve(root);
  const server = createServer((req, res) => {
    const send = (status, text) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    } catch {
      return send(400, 'bad request\n');
    }
    let file = normalize(join(base, pathname));
    if (file !== base && !file.startsWith(base + sep)) return send(404, 'not found\n');
    if (
      relative(base, file)
        .split(sep)
        .some((part) => part.startsWith('.'))
    )
      return send(404, 'not found\n');
    let stat;
    try {
      stat = statSync(file);
      if (stat.isDirectory()) {
        if (!pathname.endsWith('/')) {
          res.writeHead(301, { location: `${pathname}/`, 'cache-control': 'no-store' });
          return res.end();
        }
        file = join(file, 'index.html');
        stat = statSync(file);
      }
    } catch {
      return send(404, 'not found\n');
    }
    if (!stat.isFile()) return send(404, 'not found\n');
    res.writeHead(200, {
      'content-type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const actual = typeof address === 'object' && address ? address.port : port;
      resolvePromise({
        url: `http://127.0.0.1:${actual}/`,
        port: actual,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

function parseArgs(argv) {
  const options = { port: Number(process.env.PORT ?? 0), prepareOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--prepare') options.prepareOnly = true;
    else if (arg === '--port' || arg.startsWith('--port=')) {
      const value = arg === '--port' ? argv[++i] : arg.slice('--port='.length);
      options.port = Number(value);
    } else if (arg === '--help' || arg === '-h') {
      console.log('Usage: npm run demo [-- --port N] [-- --prepare]');
      process.exit(0);
    } else throw new UserError(`unknown argument: ${arg} (usage: npm run demo [-- --port N] [-- --prepare])`);
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new UserError(`invalid port: ${options.port}`);
  }
  return options;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  prepareDemo();
  if (options.prepareOnly) {
    console.log(`[demo] web-demo/ is ready: serve it with any static file server (it needs no network)`);
    return;
  }
  const server = await startServer({ port: options.port });
  console.log(`[demo] serving ${relative(ROOT, DEMO_DIR)}/ (offline, 127.0.0.1 only)`);
  console.log(`[demo] open ${server.url}   (Ctrl-C to stop)`);
  const stop = () => {
    server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  main().catch((error) => {
    console.error(`[demo] FAILED: ${error instanceof UserError ? error.message : (error?.stack ?? error)}`);
    process.exit(1);
  });
}
