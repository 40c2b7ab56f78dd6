// Local stand-ins for the provider APIs the adapters talk to (tests/js/adapters.test.mjs and the
// examples/*.mjs it runs): one HTTP server on 127.0.0.1 (ephemeral port) that answers
// - POST /v1/chat/completions (OpenAI Chat Completions),
// - POST /v1/responses (OpenAI Responses),
// - POST /v1/messages (Anthropic Messages),
// - POST /ai-gateway/language-model (the AI SDK's gateway provider: the `ai` package's own
//   `createGateway({baseURL})` posts its language-model call options here),
// and refuses (HTTP 400, the provider's error shape) a request that breaks the provider's
// rules: every tool call answered by the results that follow it and no result without its call,
// role alternation where the provider requires it, known content part shapes, non-empty text
// where required, tool call ids of the provider's form (Anthropic: `^[a-zA-Z0-9_-]+$`; Chat
// Completions: at most 40 characters; Responses: at most 64). Every request is recorded (`requests`) with the rule it broke, if any.

import { createServer } from 'node:http';

/** @typedef {{ path: string, headers: import('node:http').IncomingHttpHeaders, body: any, violation?: string }} Recorded */

/**
 * The first broken rule of a Chat Completions `messages` array, or undefined.
 * @param {any} messages
 * @returns {string | undefined}
 */
export function chatViolation(messages) {
  if (!Array.isArray(messages) || messages.length === 0) return 'messages must be a non-empty array';
  /** @type {Set<string>} */
  let open = new Set();
  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    if (m.role !== 'tool' && open.size) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')} (before ${at})`;
    }
    if (m.role === 'system' || m.role === 'developer') {
      if (typeof m.content !== 'string') return `${at}.content must be a string`;
    } else if (m.role === 'user') {
      if (typeof m.content === 'string') continue;
      if (!Array.isArray(m.content) || m.content.length === 0) return `${at}.content must be a string or parts`;
      for (const [j, p] of m.content.entries()) {
        if (p.type === 'text' && typeof p.text === 'string') continue;
        if (p.type === 'image_url' && /^data:image\/[\w.+-]+;base64,/.test(p.image_url?.url ?? '')) continue;
        return `${at}.content[${j}]: unknown part ${JSON.stringify(p).slice(0, 80)}`;
      }
    } else if (m.role === 'assistant') {
      const calls = m.tool_calls ?? [];
      if (!Array.isArray(calls)) return `${at}.tool_calls must be an array`;
      if (m.content !== null && typeof m.content !== 'string') return `${at}.content must be a string or null`;
      if (m.content === null && calls.length === 0) return `${at}: content null without tool_calls`;
      for (const c of calls) {
        if (c.type !== 'function' || typeof c.id !== 'string' || typeof c.function?.name !== 'string') {
          return `${at}: malformed tool call`;
        }
        if (c.id.length > 40) {
          return `Invalid '${at}.tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length ${c.id.length} instead.`;
        }
        try {
          JSON.parse(c.function.arguments);
        } catch {
          return `${at}: tool call ${c.id} arguments are not JSON text`;
        }
      }
      open = new Set(calls.map((/** @type {any} */ c) => c.id));
    } else if (m.role === 'tool') {
      if (!open.has(m.tool_call_id)) {
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (${at}, ${m.tool_call_id})`;
      }
      if (typeof m.content !== 'string') return `${at}.content must be a string`;
      open.delete(m.tool_call_id);
    } else {
      return `${at}: unknown role ${m.role}`;
    }
  }
  if (open.size) return `tool calls without a response: ${[...open].join(', ')}`;
  return undefined;
}

/**
 * The first broken rule of a Responses `input` array, or undefined.
 * @param {any} input
 * @returns {string | undefined}
 */
export function responsesViolation(input) {
  if (typeof input === 'string') return undefined;
  if (!Array.isArray(input) || input.length === 0) return 'input must be a string or a non-empty array';
  /** @type {Set<string>} */
  const calls = new Set();
  /** @type {Set<string>} */
  const answered = new Set();
  for (const [i, item] of input.entries()) {
    const at = `input[${i}]`;
    const type = item.type ?? 'message';
    if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(item.role)) return `${at}: unknown role ${item.role}`;
      if (typeof item.content === 'string') continue;
      if (!Array.isArray(item.content)) return `${at}.content must be a string or parts`;
      for (const [j, p] of item.content.entries()) {
        const ok =
          (p.type === 'input_text' && typeof p.text === 'string' && item.role !== 'assistant') ||
          (p.type === 'output_text' && typeof p.text === 'string' && item.role === 'assistant') ||
          (p.type === 'input_image' && /^data:image\/[\w.+-]+;base64,/.test(p.image_url ?? '') && item.role === 'user');
        if (!ok) return `${at}.content[${j}]: invalid part for ${item.role}: ${JSON.stringify(p).slice(0, 80)}`;
      }
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') return `${at}: malformed function_call`;
      if (item.call_id.length > 64) {
        return `Invalid '${at}.call_id': string too long. Expected a string with maximum length 64, but got a string with length ${item.call_id.length} instead.`;
      }
      try {
        JSON.parse(item.arguments);
      } catch {
        return `${at}: arguments are not JSON text`;
      }
      calls.add(item.call_id);
    } else if (type === 'function_call_output') {
      if (typeof item.call_id === 'string' && item.call_id.length > 64) {
        return `Invalid '${at}.call_id': string too long. Expected a string with maximum length 64, but got a string with length ${item.call_id.length} instead.`;
      }
      if (!calls.has(item.call_id)) return `No tool call found for function call output with call_id ${item.call_id}.`;
      if (typeof item.output !== 'string') return `${at}.output must be a string`;
      answered.add(item.call_id);
    } else {
      return `${at}: unknown item type ${type}`;
    }
  }
  const missing = [...calls].filter((id) => !answered.has(id));
  if (missing.length) return `No tool output found for function call ${missing[0]}.`;
  return undefined;
}

/** Whether `b` is a valid Anthropic text / base64 image block. */
const anthropicMedia = (/** @type {any} */ b) =>
  (b.type === 'text' && typeof b.text === 'string' && b.text.trim() !== '') ||
  (b.type === 'image' &&
    b.source?.type === 'base64' &&
    /^image\/(png|jpeg|gif|webp)$/.test(b.source.media_type) &&
    typeof b.source.data === 'string');

/**
 * The first broken rule of an Anthropic Messages request body, or undefined.
 * @param {any} body
 * @returns {string | undefined}
 */
export function anthropicViolation(body) {
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) {
    return 'system: must be a string or text blocks';
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  if (messages[0].role !== 'user') return 'messages: first message must use the "user" role';
  /** @type {Set<string>} */
  const open = new Set();
  for (const [i, m] of messages.entries()) {
    const at = `messages.${i}`;
    if (m.role !== 'user' && m.role !== 'assistant') return `${at}: unexpected role "${m.role}"`;
    if (i > 0 && messages[i - 1].role === m.role) return `${at}: roles must alternate between "user" and "assistant"`;
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(content) || content.length === 0) return `${at}: all messages must have non-empty content`;
    if (m.role === 'user') {
      let seenOther = false;
      for (const [j, b] of content.entries()) {
        if (b.type === 'tool_result') {
          if (seenOther) return `${at}.content.${j}: tool_result blocks must come first`;
          if (!open.has(b.tool_use_id)) {
            return `${at}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
          }
          open.delete(b.tool_use_id);
          if (!Array.isArray(b.content) && typeof b.content !== 'string') return `${at}.content.${j}: bad content`;
          if (Array.isArray(b.content) && !b.content.every(anthropicMedia)) return `${at}.content.${j}: bad block`;
          if (b.is_error === true) {
            const blocks = typeof b.content === 'string' ? [{ type: 'text', text: b.content }] : b.content;
            if (!blocks.length || blocks.every((/** @type {any} */ c) => c.type === 'text' && c.text === '')) {
              return `${at}.content.${j}.tool_result: content cannot be empty if \`is_error\` is true`;
            }
            if (blocks.some((/** @type {any} */ c) => c.type !== 'text')) {
              return `${at}.content.${j}.tool_result: all content must be type \`text\` if \`is_error\` is true`;
            }
          }
        } else {
          seenOther = true;
          if (!anthropicMedia(b)) return `${at}.content.${j}: invalid block ${JSON.stringify(b).slice(0, 80)}`;
        }
      }
      if (open.size) {
        return `${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${[...open].join(', ')}`;
      }
    } else {
      if (open.size) return `${at}: tool_use without tool_result`;
      for (const [j, b] of content.entries()) {
        if (b.type === 'tool_use') {
          if (typeof b.id !== 'string' || typeof b.name !== 'string') return `${at}.content.${j}: malformed tool_use`;
          if (!b.input || typeof b.input !== 'object' || Array.isArray(b.input)) {
            return `${at}.content.${j}.tool_use.input: Input should be a valid dictionary`;
          }
          if (!/^[a-zA-Z0-9_-]+$/.test(b.id))
            return `${at}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
          open.add(b.id);
        } else if (b.type === 'thinking') {
          if (typeof b.signature !== 'string' || !b.signature) return `${at}.content.${j}.signature: Field required`;
          // The API checks each signature; another API's (OpenAI keeps a JSON reasoning item) fails.
          if (!/^[A-Za-z0-9+/=_-]+$/.test(b.signature))
            return `${at}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
        } else if (b.type === 'redacted_thinking') {
          if (typeof b.data !== 'string' || !b.data) return `${at}.content.${j}.data: Field required`;
        } else if (!(b.type === 'text' && typeof b.text === 'string' && b.text.trim() !== '')) {
          return `${at}.content.${j}: invalid block ${JSON.stringify(b).slice(0, 80)}`;
        }
      }
    }
  }
  if (open.size) return 'the last assistant message has tool_use blocks without results';
  // With thinking on, the turn that called the tools whose results end the request must begin
  // with its (signed or redacted) thinking.
  const last = messages.at(-1);
  const caller = messages.at(-2);
  if (
    body.thinking?.type === 'enabled' &&
    last.role === 'user' &&
    last.content.some((/** @type {any} */ b) => b.type === 'tool_result') &&
    caller?.role === 'assistant' &&
    !['thinking', 'redacted_thinking'].includes(caller.content[0]?.type)
  ) {
    return `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${caller.content[0]?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block`;
  }
  return undefined;
}

/**
 * The first broken rule of the AI SDK's language-model prompt (`LanguageModelV3Prompt` /
 * V4, what a provider receives), or undefined.
 * @param {any} prompt
 * @returns {string | undefined}
 */
export function aiPromptViolation(prompt) {
  if (!Array.isArray(prompt) || prompt.length === 0) return 'prompt must be a non-empty array';
  /** @type {Set<string>} */
  let open = new Set();
  for (const [i, m] of prompt.entries()) {
    const at = `prompt[${i}]`;
    if (m.role !== 'tool' && open.size) return `${at}: tool calls without results before it: ${[...open].join(', ')}`;
    if (m.role === 'system') {
      if (typeof m.content !== 'string') return `${at}.content must be a string`;
      continue;
    }
    if (!Array.isArray(m.content)) return `${at}.content must be parts`;
    for (const [j, p] of m.content.entries()) {
      const where = `${at}.content[${j}]`;
      if (m.role === 'user' && !['text', 'file'].includes(p.type)) return `${where}: invalid user part ${p.type}`;
      if (m.role === 'assistant') {
        if (!['text', 'reasoning', 'tool-call', 'file'].includes(p.type)) return `${where}: invalid part ${p.type}`;
        if (p.type === 'tool-call') open.add(p.toolCallId);
      }
      if (m.role === 'tool') {
        if (p.type !== 'tool-result') return `${where}: invalid tool part ${p.type}`;
        if (!open.has(p.toolCallId)) return `${where}: tool result ${p.toolCallId} without its call`;
        open.delete(p.toolCallId);
      }
    }
    if (m.role === 'assistant') {
      const calls = m.content.filter((/** @type {any} */ p) => p.type === 'tool-call');
      open = new Set(calls.map((/** @type {any} */ p) => p.toolCallId));
    }
  }
  if (open.size) return `tool calls without results: ${[...open].join(', ')}`;
  return undefined;
}

/** The summary every endpoint answers with. */
export const SUMMARY = '## Goal\nKeep the session small.\n\n## Progress\nThe local test server answered.';

/**
 * Starts the server. `respond(recorded)` may replace the answer (e.g. a 429 with
 * `retry-after`); by default each endpoint answers a valid request with `SUMMARY` in its own
 * response shape and a broken one with 400.
 * @param {{ respond?: (r: Recorded) => { status: number, headers?: Record<string, string>, body: unknown } | undefined }} [options]
 */
export async function startProviderServer({ respond } = {}) {
  /** @type {Recorded[]} */
  const requests = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      /** @type {any} */
      let body = null;
      try {
        body = JSON.parse(text || 'null');
      } catch {
        // recorded as null: a violation below
      }
      const path = (req.url ?? '').split('?')[0];
      /** @type {Recorded} */
      const recorded = { path, headers: req.headers, body };
      requests.push(recorded);
      const send = (/** @type {number} */ status, /** @type {unknown} */ json, extra = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...extra });
        res.end(JSON.stringify(json));
      };
      const custom = respond?.(recorded);
      if (custom) {
        send(custom.status, custom.body, custom.headers);
        return;
      }
      if (body === null || typeof body !== 'object') {
        recorded.violation = 'the body is not a JSON object';
        send(400, { error: { message: recorded.violation } });
      } else if (path === '/v1/chat/completions') {
        recorded.violation = chatViolation(body.messages);
        if (recorded.violation) send(400, { error: { message: recorded.violation, type: 'invalid_request_error' } });
        else send(200, chatCompletion(body));
      } else if (path === '/v1/responses') {
        recorded.violation = responsesViolation(body.input);
        if (recorded.violation) send(400, { error: { message: recorded.violation, type: 'invalid_request_error' } });
        else send(200, responsesReply(body));
      } else if (path === '/v1/messages') {
        recorded.violation = anthropicViolation(body);
        if (!req.headers['anthropic-version']) recorded.violation = 'anthropic-version: header is required';
        if (recorded.violation) {
          send(400, { type: 'error', error: { type: 'invalid_request_error', message: recorded.violation } });
        } else {
          send(200, anthropicReply(body));
        }
      } else if (path === '/ai-gateway/language-model') {
        recorded.violation = aiPromptViolation(body.prompt);
        if (recorded.violation) send(400, { error: { message: recorded.violation, type: 'invalid_request_error' } });
        else send(200, gatewayReply());
      } else {
        recorded.violation = `no route ${path}`;
        send(404, { error: { message: recorded.violation } });
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  const base = `http://127.0.0.1:${port}`;
  return {
    /** OpenAI base URL (`…/v1`). */
    openaiBaseUrl: `${base}/v1`,
    /** Anthropic base URL for `anthropicComplete` (`…/v1`). */
    anthropicBaseUrl: `${base}/v1`,
    /** Anthropic base URL for `@anthropic-ai/sdk` (it appends `/v1/messages`). */
    anthropicSdkBaseUrl: base,
    /** AI SDK gateway base URL (`createGateway({baseURL})`). */
    gatewayBaseUrl: `${base}/ai-gateway`,
    requests,
    close: () =>
      /** @type {Promise<void>} */ (
        new Promise((r) => {
          server.close(() => r());
          server.closeAllConnections();
        })
      ),
  };
}

function chatCompletion(/** @type {any} */ body) {
  return {
    id: 'chatcmpl-local',
    object: 'chat.completion',
    created: 1765233665,
    model: body.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: SUMMARY, refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: 1200,
      completion_tokens: 40,
      total_tokens: 1240,
      prompt_tokens_details: { cached_tokens: 200 },
    },
  };
}

function responsesReply(/** @type {any} */ body) {
  return {
    id: 'resp_local',
    object: 'response',
    created_at: 1765233665,
    status: 'completed',
    model: body.model,
    output: [
      {
        type: 'message',
        id: 'msg_local',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: SUMMARY, annotations: [] }],
      },
    ],
    usage: { input_tokens: 1200, output_tokens: 40, total_tokens: 1240 },
  };
}

function anthropicReply(/** @type {any} */ body) {
  return {
    id: 'msg_local',
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [{ type: 'text', text: SUMMARY }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1200, output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  };
}

function gatewayReply() {
  return {
    content: [{ type: 'text', text: SUMMARY }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 1200, noCache: 1200, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 40, text: 40, reasoning: 0 },
    },
    warnings: [],
  };
}
