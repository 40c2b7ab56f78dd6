// Loads the package's `web` entry and provides the two summarizers of the demo.
//
// Where the package comes from: `web-demo/pkg/` (the copy `npm run demo` / `node scripts/demo.mjs
// --prepare` makes of pkg/ after `npm run build`), else the repository's own `pkg/` when the
// repository root is what is being served (any static server at the root, /web-demo/ opened).

const PACKAGE_CANDIDATES = ['../pkg/index.web.mjs', '../../pkg/index.web.mjs'];
const SAMPLE_CANDIDATES = [
  '../sample/pi-session-with-compactions.jsonl',
  '../../examples/sessions/pi-session-with-compactions.jsonl',
];

/** @returns {Promise<{ api: any, url: string }>} the initialized package */
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
    return { api, url: url.href };
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

/**
 * A `complete` that asks an OpenAI-compatible endpoint (`POST {base}/chat/completions`). The key
 * lives only in this closure and in the password field.
 * @param {{ base: string, model: string, key: string }} endpoint
 */
export function openAiSummarizer({ base, model, key }) {
  const url = `${base.replace(/\/+$/, '')}/chat/completions`;
  return async function complete(request) {
    const headers = { 'content-type': 'application/json' };
    if (key) headers.authorization = `Bearer ${key}`;
    const response = await fetch(url, {
      method: 'POST',
      headers,
      signal: request.signal,
      body: JSON.stringify({
        model,
        messages: [
          { role: 'system', content: request.systemPrompt },
          { role: 'user', content: request.prompt },
        ],
        max_tokens: request.maxTokens,
      }),
    });
    if (!response.ok) {
      const body = await response.text().catch(() => '');
      const error = new Error(`${url}: HTTP ${response.status} ${body.slice(0, 300)}`);
      Object.assign(error, { status: response.status, headers: Object.fromEntries(response.headers) });
      throw error;
    }
    const data = await response.json();
    const content = data?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new Error(`${url}: the answer has no choices[0].message.content`);
    return content;
  };
}
