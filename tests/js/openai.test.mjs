// Tests of session-compaction/openai (pkg/openai.mjs, built by `npm run build`): the one
// OpenAI-compatible `complete` that the CLI (--openai) and the web demo import. Against a local
// fake chat-completions server on 127.0.0.1 (ephemeral port): the request it sends, the answer it
// reads, and its errors (status and headers kept for the engine's retries, the key never in a
// message). Run: node --test tests/js/openai.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { openaiComplete } from '../../pkg/openai.mjs';

const SECRET = `sk-test-${Math.random().toString(36).slice(2)}-do-not-print`;

/**
 * A local server answering every request with `handler(request)`.
 * @param {(request: { url?: string, method?: string, headers: import('node:http').IncomingHttpHeaders, body: any }) =>
 *   { status?: number, headers?: Record<string, string>, body: string }} handler
 */
async function serve(handler) {
  /** @type {{ url?: string, method?: string, headers: import('node:http').IncomingHttpHeaders, body: any }[]} */
  const requests = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const record = { url: req.url, method: req.method, headers: req.headers, body: JSON.parse(text || 'null') };
      requests.push(record);
      const reply = handler(record);
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.close(() => r(undefined));
        server.closeAllConnections();
      }),
  };
}

const reply = (/** @type {unknown} */ content) =>
  JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] });
const request = { systemPrompt: 'You summarize.', prompt: 'The conversation', maxTokens: 123 };

test('POSTs the chat request and resolves to choices[0].message.content', async () => {
  const server = await serve(() => ({ body: reply('the summary') }));
  try {
    const complete = openaiComplete({ baseUrl: `${server.base}/v1/`, model: 'local-model', apiKey: SECRET });
    assert.equal(await complete(request), 'the summary');
    const [r] = server.requests;
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/v1/chat/completions', 'trailing slashes of the base URL are dropped');
    assert.equal(r.headers.authorization, `Bearer ${SECRET}`);
    assert.deepEqual(r.body, {
      model: 'local-model',
      messages: [
        { role: 'system', content: 'You summarize.' },
        { role: 'user', content: 'The conversation' },
      ],
      max_completion_tokens: 123,
    });
  } finally {
    await server.close();
  }
});

test('maxTokensField "max_tokens" sends the older field instead; another value is a TypeError', async () => {
  const server = await serve(() => ({ body: reply('ok') }));
  try {
    const complete = openaiComplete({ baseUrl: server.base, model: 'm', maxTokensField: 'max_tokens' });
    assert.equal(await complete(request), 'ok');
    assert.equal(server.requests[0].body.max_tokens, 123);
    assert.equal('max_completion_tokens' in server.requests[0].body, false);
    assert.throws(
      () => openaiComplete({ baseUrl: server.base, model: 'm', maxTokensField: /** @type {any} */ ('tokens') }),
      {
        name: 'TypeError',
        message: /unknown maxTokensField "tokens" \(expected "max_completion_tokens" or "max_tokens"\)/,
      },
    );
  } finally {
    await server.close();
  }
});

test('content parts are joined; no key, no Authorization header', async () => {
  const server = await serve(() => ({ body: reply([{ type: 'text', text: 'part one, ' }, 'part two']) }));
  try {
    const complete = openaiComplete({ baseUrl: server.base, model: 'm' });
    assert.equal(await complete(request), 'part one, part two');
    assert.equal(server.requests[0].headers.authorization, undefined);
  } finally {
    await server.close();
  }
});

test('a non-2xx reply rejects with status, headers and the error text, never the key', async () => {
  const server = await serve(() => ({
    status: 429,
    headers: { 'retry-after': '2' },
    body: JSON.stringify({ error: { message: `rate limited for key ${SECRET}` } }),
  }));
  try {
    const complete = openaiComplete({ baseUrl: server.base, model: 'm', apiKey: SECRET });
    const error = await complete(request).then(
      () => assert.fail('resolved'),
      (/** @type {any} */ e) => e,
    );
    assert.equal(error.status, 429);
    assert.equal(error.headers.get('retry-after'), '2');
    assert.match(error.message, /answered HTTP 429 Too Many Requests: rate limited for key \[redacted\]/);
    assert.ok(!error.message.includes(SECRET));
  } finally {
    await server.close();
  }
});

test('a reply without content, and a reply that is not JSON, reject with what is wrong', async () => {
  let answer = JSON.stringify({ error: { message: 'no model' } });
  const server = await serve(() => ({ body: answer }));
  try {
    const complete = openaiComplete({ baseUrl: server.base, model: 'm' });
    await assert.rejects(complete(request), /the reply has no choices\[0\]\.message\.content: no model/);
    answer = '<html>proxy error</html>';
    await assert.rejects(complete(request), /the reply is not JSON: <html>proxy error<\/html>/);
  } finally {
    await server.close();
  }
});

test('a server that cannot be reached: "fetch failed", an abort: the AbortError', async () => {
  const server = await serve(() => ({ body: reply('late') }));
  const base = server.base;
  await server.close();
  const complete = openaiComplete({ baseUrl: base, model: 'm', apiKey: SECRET });
  const error = await complete(request).then(
    () => assert.fail('resolved'),
    (/** @type {any} */ e) => e,
  );
  assert.match(error.message, /^fetch failed: cannot reach http:\/\/127\.0\.0\.1:\d+\/chat\/completions: ECONNREFUSED/);
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(complete({ ...request, signal: controller.signal }), { name: 'AbortError' });
});

test('the package exports it as session-compaction/openai, typed', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../pkg/package.json', import.meta.url), 'utf8'));
  assert.deepEqual(pkg.exports['./openai'], { types: './openai.d.mts', default: './openai.mjs' });
  assert.ok(pkg.files.includes('openai.mjs') && pkg.files.includes('openai.d.mts'));
});
