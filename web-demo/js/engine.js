// Loads the package's `web` entry (and its `openai` module) and the bundled sample session.
//
// Where the package comes from: `web-demo/pkg/` (the copy `npm run demo` / `node scripts/demo.mjs
// --prepare` makes of pkg/ after `npm run build`), else the repository's own `pkg/` when the
// repository root is what is being served (any static server at the root, /web-demo/ opened).

const PACKAGE_CANDIDATES = ['../pkg/index.web.mjs', '../../pkg/index.web.mjs'];
const SAMPLE_CANDIDATES = [
  '../sample/pi-session-with-compactions.jsonl',
  '../../examples/sessions/pi-session-with-compactions.jsonl',
];

/**
 * The initialized package, and its `session-compaction/openai` module (openai.mjs beside the
 * entry: the OpenAI-compatible `complete` that the CLI uses too).
 * `binaryKind`: what a file is when it is binary data, not the text of a session (`null`: text).
 * @returns {Promise<{ api: any, openai: { openaiComplete: (config: any) => (request: any) => Promise<string> } | null,
 *   binaryKind: ((data: Uint8Array) => string | null) | null, url: string }>}
 */
export async function loadEngine() {
  const failures = [];
  for (const candidate of PACKAGE_CANDIDATES) {
    const url = new URL(candidate, import.meta.url);
    let api;
    try {
      api = await import(url.href);
    } catch (error) {
      failures.push(`${url.pathname}: ${error.message}`);
      continue;
    }
    await api.init();
    const openai = await import(new URL('openai.mjs', url).href).catch(() => null);
    // The check the CLI runs before loading (bin/binary.mjs of the package): the same files are
    // refused with the same words. `null` for a package built before it existed.
    const binary = await import(new URL('bin/binary.mjs', url).href).catch(() => null);
    return { api, openai, binaryKind: binary?.binaryKind ?? null, url: url.href };
  }
  throw new Error(
    `the session-compaction package was not found (${failures.join('; ')}). ` +
      'Run `npm run build`, then `npm run demo` (it copies pkg/ into web-demo/pkg/).',
  );
}

/** Fetches the bundled real session (bytes). */
export async function fetchSample() {
  for (const candidate of SAMPLE_CANDIDATES) {
    const url = new URL(candidate, import.meta.url);
    const response = await fetch(url, { cache: 'no-store' }).catch(() => null);
    if (response?.ok)
      return { bytes: new Uint8Array(await response.arrayBuffer()), name: 'pi-session-with-compactions.jsonl' };
  }
  throw new Error(
    'the sample session was not found next to the page (run `npm run demo` to copy it into web-demo/sample/)',
  );
}

/**
 * The package's `extractiveSummarizer`: an async `complete` that needs no model (it quotes the
 * conversation of the prompt, deterministically). `null` for a package built before it existed.
 * @returns {((request: any) => Promise<string>) | null}
 */
export function extractiveSummarizer(api) {
  return typeof api.extractiveSummarizer === 'function' ? api.extractiveSummarizer : null;
}
