// session-compaction/openai: a `complete` callback (see `CompleteFn` of the package) for an
// OpenAI-compatible chat-completions API, shared by the CLI (`--openai`) and the web demo. Uses
// only `fetch`: it runs in Node >= 20, Deno, Bun and browsers. Types: openai.d.ts.

/**
 * A `complete(request)` callback for an OpenAI-compatible chat-completions API:
 * `POST {baseUrl}/chat/completions` with
 * `{model, messages: [{role: "system", content: systemPrompt}, {role: "user", content: prompt}],
 * max_tokens}` and `Authorization: Bearer <apiKey>` (none without a key); resolves to
 * `choices[0].message.content` (content parts are joined).
 *
 * Failures reject with an `Error` whose message never contains the key (nor any request
 * header): a non-2xx reply carries `status` and `headers` (the response's `Headers`), so the
 * engine's retries see 429/5xx and honour `retry-after`; a network failure reads
 * "fetch failed: …" (retried as transient); an abort of `request.signal` rejects with the
 * `AbortError` of `fetch`.
 * @param {import('./openai.mjs').OpenAiConfig} config
 * @returns {import('./openai.mjs').OpenAiComplete}
 */
export function openaiComplete({ baseUrl, model, apiKey, fetch: fetchImpl = globalThis.fetch }) {
  const url = `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
  /** Removes the key from a text that may echo it (some servers quote the header they refused). */
  const redact = (/** @type {unknown} */ text) =>
    apiKey ? String(text).split(apiKey).join('[redacted]') : String(text);
  return async (request) => {
    /** @type {Record<string, string>} */
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const body = JSON.stringify({
      model,
      messages: [
        { role: 'system', content: request.systemPrompt },
        { role: 'user', content: request.prompt },
      ],
      max_tokens: request.maxTokens,
    });
    /** @type {Response} */
    let response;
    /** @type {string} */
    let text;
    try {
      response = await fetchImpl(url, { method: 'POST', headers, body, signal: request.signal });
      text = await response.text();
    } catch (error) {
      if (/** @type {any} */ (error)?.name === 'AbortError') throw error;
      const cause = /** @type {any} */ (error)?.cause;
      const why = cause?.code ?? cause?.message ?? /** @type {any} */ (error)?.message ?? String(error);
      throw new Error(redact(`fetch failed: cannot reach ${url}: ${why}`));
    }
    if (!response.ok) {
      const detail = errorDetail(text);
      const error = /** @type {Error & { status?: number, headers?: Headers }} */ (
        new Error(
          redact(
            `${url} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${detail ? `: ${detail}` : ''}`,
          ),
        )
      );
      error.status = response.status;
      error.headers = response.headers;
      throw error;
    }
    let reply;
    try {
      reply = JSON.parse(text);
    } catch {
      throw new Error(`${url}: the reply is not JSON: ${redact(oneLine(text, 120))}`);
    }
    const content = reply?.choices?.[0]?.message?.content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      // Some compatible servers answer with content parts.
      return content
        .map((part) => (typeof part === 'string' ? part : typeof part?.text === 'string' ? part.text : ''))
        .join('');
    }
    const why = typeof reply?.error?.message === 'string' ? `: ${redact(oneLine(reply.error.message, 200))}` : '';
    throw new Error(`${url}: the reply has no choices[0].message.content${why}`);
  };
}

/** The error text of an API reply body: `error.message` of a JSON body, else the start of the text. */
function errorDetail(/** @type {string} */ text) {
  try {
    const body = JSON.parse(text);
    const message = body?.error?.message ?? body?.message ?? body?.error;
    if (typeof message === 'string') return oneLine(message, 300);
  } catch {
    // not JSON
  }
  return oneLine(text, 300);
}

/** One line of at most `max` characters: whitespace runs collapsed, `…` when cut. */
function oneLine(/** @type {unknown} */ text, /** @type {number} */ max) {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let cut = flat.slice(0, Math.max(1, max - 1));
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}
