// session-compaction/openai: the OpenAI adapter. A `complete` callback (see `CompleteFn` of the
// package) for an OpenAI-compatible chat-completions API, shared by the CLI (`--openai`) and the
// web demo; the engine's LLM messages (`buildLlmMessages()` / `convertToLlm`) as Chat Completions
// messages or Responses input items; and OpenAI messages / response items back as pi messages
// and entries. Uses only `fetch`: it runs in Node >= 20, Deno, Bun and browsers. Types: openai.d.mts.
//
// The engine decides the content (summaries rendered, pruned outputs, bash executions, tool
// calls answered); these functions only map shapes.

import {
  assistantMessage,
  blocksOf,
  callInput,
  finishAssistant,
  joinUrl,
  knownOptions,
  oneLine,
  postJson,
  redactUrl,
  replayedMessages,
  textOf,
  toolIdMap,
  toolResultMessage,
} from './http.mjs';

/**
 * A `complete(request)` callback for an OpenAI-compatible API, `Authorization: Bearer <apiKey>`
 * (none without a key):
 * - `api: "chat"` (default): `POST {baseUrl}/chat/completions` with
 *   `{model, messages: [{role: "system", content: systemPrompt}, {role: "user", content: prompt}],
 *   max_completion_tokens}` (the field OpenAI's reasoning and GPT-5 models require: they refuse
 *   `max_tokens`; `maxTokensField: "max_tokens"` for a compatible server that knows only the
 *   older one); resolves to `choices[0].message.content` (content parts are joined);
 * - `api: "responses"`: `POST {baseUrl}/responses` with
 *   `{model, instructions: systemPrompt, input: prompt, max_output_tokens: maxTokens}`; resolves to
 *   the text of the reply's `output_text` parts (of its `message` items, joined: what the SDK's
 *   `response.output_text` gives).
 *
 * Failures reject with an `Error` whose message never contains the key (nor any request
 * header, nor credentials written into `baseUrl`): a non-2xx reply carries `status` and
 * `headers` (the response's `Headers`), so the engine's retries see 429/5xx and honour
 * `retry-after`; a network failure reads "fetch failed: …" (retried as transient); an abort of
 * `request.signal` rejects with the `AbortError` of `fetch`.
 * @param {import('./openai.mjs').OpenAiConfig} config
 * @returns {import('./openai.mjs').OpenAiComplete}
 */
export function openaiComplete(config) {
  knownOptions(config, ['baseUrl', 'model', 'apiKey', 'fetch', 'api', 'maxTokensField'], 'openaiComplete');
  const { baseUrl, model, apiKey, fetch, api = 'chat', maxTokensField = 'max_completion_tokens' } = config;
  if (api !== 'chat' && api !== 'responses') {
    throw new TypeError(`openaiComplete: unknown api ${JSON.stringify(api)} (expected "chat" or "responses")`);
  }
  if (maxTokensField !== 'max_completion_tokens' && maxTokensField !== 'max_tokens') {
    throw new TypeError(
      `openaiComplete: unknown maxTokensField ${JSON.stringify(maxTokensField)} (expected "max_completion_tokens" or "max_tokens")`,
    );
  }
  const responses = api === 'responses';
  const url = joinUrl(baseUrl, responses ? 'responses' : 'chat/completions');
  return async (request) => {
    /** @type {Record<string, string>} */
    const headers = {};
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const body = responses
      ? { model, instructions: request.systemPrompt, input: request.prompt, max_output_tokens: request.maxTokens }
      : {
          model,
          messages: [
            { role: 'system', content: request.systemPrompt },
            { role: 'user', content: request.prompt },
          ],
          [maxTokensField]: request.maxTokens,
        };
    const reply = await postJson({ url, headers, body, signal: request.signal, fetch, secrets: [apiKey] });
    if (responses) return responsesText(reply, url);
    const content = reply?.choices?.[0]?.message?.content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      // Some compatible servers answer with content parts.
      return content
        .map((part) => (typeof part === 'string' ? part : typeof part?.text === 'string' ? part.text : ''))
        .join('');
    }
    const why = typeof reply?.error?.message === 'string' ? `: ${oneLine(reply.error.message, 200)}` : '';
    throw new Error(`${redactUrl(url)}: the reply has no choices[0].message.content${why}`);
  };
}

/**
 * The answer text of a Responses API reply: its `message` items' `output_text` parts, joined.
 * @param {any} reply
 * @param {string} url
 * @returns {string}
 */
function responsesText(reply, url) {
  const parts = [];
  for (const item of Array.isArray(reply?.output) ? reply.output : []) {
    if (item?.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content)
      if (part?.type === 'output_text' && typeof part.text === 'string') parts.push(part.text);
  }
  if (parts.length) return parts.join('');
  const why =
    typeof reply?.error?.message === 'string'
      ? `: ${oneLine(reply.error.message, 200)}`
      : typeof reply?.status === 'string'
        ? ` (status ${oneLine(reply.status, 40)})`
        : '';
  throw new Error(`${redactUrl(url)}: the reply has no output_text in output[]${why}`);
}

/** The longest tool call id Chat Completions accepts (`string too long` beyond it). */
const CHAT_TOOL_ID_MAX = 40;

/**
 * The longest `call_id` the Responses API accepts (`string_above_max_length` beyond it); pi keeps
 * a Responses call's id as `{call_id}|{item id}`, about 80 characters.
 */
const RESPONSES_TOOL_ID_MAX = 64;

/** A pi image block as a data URL. */
const dataUrl = (/** @type {any} */ b) => `data:${b.mimeType ?? 'image/png'};base64,${b.data ?? ''}`;

/**
 * The engine's LLM messages (`buildLlmMessages()` / `convertToLlm` output: `user`, `assistant`,
 * `toolResult`) as Chat Completions messages:
 * - `user` → `{role: "user", content}`: a string stays a string; text and image blocks become
 *   `text` / `image_url` (data URL) parts;
 * - `assistant` → `{role: "assistant", content: text | null, tool_calls?}`: text blocks joined
 *   with "\n"; each `toolCall` becomes a `function` tool call (`arguments` as the JSON text of
 *   an object: a string that is an object's JSON text as that object, anything else not an
 *   object as `{}`);
 *   `thinking` blocks are not sent (Chat Completions has no input form for them);
 * - `toolResult` → `{role: "tool", tool_call_id, content: text}`; its images (a tool message
 *   carries text only) follow the run of tool messages in one `user` message.
 * A tool call id longer than 40 UTF-16 units (the API's limit; ids of other providers can be
 * longer) is sent as its first 40 (`_2`, `_3`, … at the end if that is taken), in the call and
 * in its result. An assistant message that failed or was aborted (`stopReason` `"error"` /
 * `"aborted"`) is not sent, nor are the results of its calls (see `replayedMessages`).
 * Other roles are skipped (the engine produces none). `system` (the app's own system prompt)
 * is placed first when given.
 * @param {any[]} messages
 * @param {{ system?: string }} [options]
 * @returns {any[]}
 */
export function toChatMessages(messages, options = {}) {
  knownOptions(options, ['system'], 'toChatMessages');
  const { system } = options;
  /** @type {any[]} */
  const out = system ? [{ role: 'system', content: system }] : [];
  messages = replayedMessages(messages, 'toChatMessages');
  const toolId = toolIdMap(messages, { max: CHAT_TOOL_ID_MAX });
  /** @type {any[]} */
  let pendingImages = [];
  const flushImages = () => {
    if (pendingImages.length) out.push({ role: 'user', content: pendingImages });
    pendingImages = [];
  };
  for (const m of messages) {
    if (m?.role !== 'toolResult') flushImages();
    if (m?.role === 'user') {
      if (typeof m.content === 'string') {
        out.push({ role: 'user', content: m.content });
        continue;
      }
      const parts = blocksOf(m.content).flatMap(
        /** @returns {any[]} */ (b) =>
          b.type === 'text'
            ? [{ type: 'text', text: b.text ?? '' }]
            : b.type === 'image'
              ? [{ type: 'image_url', image_url: { url: dataUrl(b) } }]
              : [],
      );
      out.push({ role: 'user', content: parts.length ? parts : '' });
    } else if (m?.role === 'assistant') {
      const blocks = blocksOf(m.content);
      const text = textOf(blocks);
      const calls = blocks
        .filter((b) => b.type === 'toolCall')
        .map((b) => ({
          id: toolId(String(b.id)),
          type: 'function',
          function: { name: String(b.name), arguments: JSON.stringify(callInput(b.arguments)) },
        }));
      /** @type {any} */
      const message = { role: 'assistant', content: text || null };
      if (calls.length) message.tool_calls = calls;
      else if (!text) message.content = '';
      out.push(message);
    } else if (m?.role === 'toolResult') {
      const blocks = blocksOf(m.content);
      out.push({ role: 'tool', tool_call_id: toolId(String(m.toolCallId)), content: textOf(blocks) });
      for (const b of blocks) {
        if (b.type === 'image') pendingImages.push({ type: 'image_url', image_url: { url: dataUrl(b) } });
      }
    }
  }
  flushImages();
  return out;
}

/**
 * The engine's LLM messages as Responses API input items: `user` → `{role: "user", content:
 * [input_text | input_image]}`; `assistant` text → `{role: "assistant", content: text}`, each
 * `toolCall` → `{type: "function_call", call_id, name, arguments}` (an object's JSON text, as in
 * {@link toChatMessages}); `toolResult` →
 * `{type: "function_call_output", call_id, output: text}` (its images follow in a `user`
 * message after the run of outputs). A `call_id` longer than the API's 64 characters (pi keeps a
 * Responses call's id as `{call_id}|{item id}`) is sent as its first 64 (`_2`, `_3`, … at the
 * end if taken), in the call and its output. `thinking` blocks are not sent, nor a failed or
 * aborted assistant message and its calls' results (as in {@link toChatMessages}); `system` (the
 * app's own instructions) is placed first as a `system` message when given.
 * @param {any[]} messages
 * @param {{ system?: string }} [options]
 * @returns {any[]}
 */
export function toResponsesInput(messages, options = {}) {
  knownOptions(options, ['system'], 'toResponsesInput');
  const { system } = options;
  messages = replayedMessages(messages, 'toResponsesInput');
  const toolId = toolIdMap(messages, { max: RESPONSES_TOOL_ID_MAX });
  /** @type {any[]} */
  const out = system ? [{ role: 'system', content: system }] : [];
  /** @type {any[]} */
  let pendingImages = [];
  const flushImages = () => {
    if (pendingImages.length) out.push({ role: 'user', content: pendingImages });
    pendingImages = [];
  };
  for (const m of messages) {
    if (m?.role !== 'toolResult') flushImages();
    if (m?.role === 'user') {
      const parts = blocksOf(m.content).flatMap(
        /** @returns {any[]} */ (b) =>
          b.type === 'text'
            ? [{ type: 'input_text', text: b.text ?? '' }]
            : b.type === 'image'
              ? [{ type: 'input_image', image_url: dataUrl(b), detail: 'auto' }]
              : [],
      );
      out.push({ role: 'user', content: parts.length ? parts : [{ type: 'input_text', text: '' }] });
    } else if (m?.role === 'assistant') {
      const blocks = blocksOf(m.content);
      const text = textOf(blocks);
      if (text) out.push({ role: 'assistant', content: text });
      for (const b of blocks) {
        if (b.type === 'toolCall') {
          out.push({
            type: 'function_call',
            call_id: toolId(String(b.id)),
            name: String(b.name),
            arguments: JSON.stringify(callInput(b.arguments)),
          });
        }
      }
    } else if (m?.role === 'toolResult') {
      const blocks = blocksOf(m.content);
      out.push({ type: 'function_call_output', call_id: toolId(String(m.toolCallId)), output: textOf(blocks) });
      for (const b of blocks) {
        if (b.type === 'image') pendingImages.push({ type: 'input_image', image_url: dataUrl(b), detail: 'auto' });
      }
    }
  }
  flushImages();
  return out;
}

/** Parses tool-call arguments (JSON text); text that is not JSON is kept as `{_raw: text}`. */
function parseArguments(/** @type {unknown} */ text) {
  if (typeof text !== 'string') return text && typeof text === 'object' ? text : {};
  try {
    const value = JSON.parse(text || '{}');
    return value && typeof value === 'object' ? value : { _raw: text };
  } catch {
    return { _raw: text };
  }
}

/** pi content blocks of an OpenAI content value (a string or parts). */
function piBlocks(/** @type {unknown} */ content) {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap(
    /** @returns {any[]} */ (p) => {
      if (typeof p?.text === 'string') return [{ type: 'text', text: p.text }];
      if (typeof p?.refusal === 'string') return [{ type: 'text', text: p.refusal }];
      const url = p?.image_url?.url ?? (typeof p?.image_url === 'string' ? p.image_url : undefined);
      const match = typeof url === 'string' ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null;
      return match ? [{ type: 'image', mimeType: match[1], data: match[2] }] : [];
    },
  );
}

/**
 * Chat Completions messages (an app's history, and `completion.choices[0].message` of each
 * reply) as pi messages, for `SessionTree.appendMessage`: `user` → `user`
 * (text and data-URL image parts); `assistant` → `assistant` with `text` and `toolCall` blocks
 * (`arguments` parsed); `tool` → `toolResult` (its `toolName` from the call it answers).
 * `system` / `developer` messages are the app's prompt, not session history: skipped.
 * Assistant messages get `api: "openai-completions"`, `provider` (default `"openai"`), `model`
 * (default `""`) and `stopReason`; `usage`, `model` and `finish_reason` of a `completion` given
 * as `{completion}` fill those of the last assistant message.
 * @param {any[]} messages
 * @param {{ completion?: any, model?: string, provider?: string, now?: number }} [options]
 * @returns {any[]}
 */
export function fromChatMessages(messages, options = {}) {
  knownOptions(options, ['completion', 'model', 'provider', 'now'], 'fromChatMessages');
  const { completion, model, provider = 'openai', now = Date.now() } = options;
  /** @type {Map<string, string>} */
  const names = new Map();
  /** @type {any[]} */
  const out = [];
  for (const m of messages) {
    if (m?.role === 'user') {
      out.push({ role: 'user', content: piBlocks(m.content), timestamp: now });
    } else if (m?.role === 'assistant') {
      const content = piBlocks(m.content);
      for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
        const name = String(call?.function?.name ?? call?.custom?.name ?? '');
        names.set(String(call?.id), name);
        content.push({
          type: 'toolCall',
          id: String(call?.id),
          name,
          arguments: parseArguments(call?.function?.arguments ?? call?.custom?.input),
        });
      }
      out.push(assistantMessage(content, { api: 'openai-completions', provider, model, now }));
    } else if (m?.role === 'tool') {
      const id = String(m.tool_call_id);
      out.push(toolResultMessage(id, names.get(id) ?? '', piBlocks(m.content), false, now));
    }
  }
  const last = out.at(-1);
  if (completion && last?.role === 'assistant') {
    const usage = completion.usage;
    if (usage) {
      const cacheRead = usage.prompt_tokens_details?.cached_tokens ?? 0;
      last.usage = {
        input: (usage.prompt_tokens ?? 0) - cacheRead,
        output: usage.completion_tokens ?? 0,
        cacheRead,
        cacheWrite: 0,
        totalTokens: usage.total_tokens ?? 0,
      };
    }
    if (completion.model) last.model = completion.model;
    const reason = completion.choices?.[0]?.finish_reason;
    if (reason === 'tool_calls') last.stopReason = 'toolUse';
    else if (reason === 'length') last.stopReason = 'length';
    else if (reason) last.stopReason = 'stop';
  }
  return out;
}

/**
 * Responses API items (input items of an app's history, and `response.output`) as pi
 * messages: `message` items → `user` / `assistant` text (and `input_image` data URLs);
 * `function_call` → a `toolCall` block of the current assistant message; `function_call_output`
 * → `toolResult`; `reasoning` summaries → `thinking` blocks. `system` / `developer` messages
 * are skipped. Assistant messages get `api: "openai-responses"`, `provider` (default `"openai"`),
 * `model` (default `""`) and `stopReason`.
 * @param {any[]} items
 * @param {{ model?: string, provider?: string, now?: number }} [options]
 * @returns {any[]}
 */
export function fromResponsesItems(items, options = {}) {
  knownOptions(options, ['model', 'provider', 'now'], 'fromResponsesItems');
  const { model, provider = 'openai', now = Date.now() } = options;
  /** @type {Map<string, string>} */
  const names = new Map();
  /** @type {any[]} */
  const out = [];
  /** The assistant message the next assistant block joins (none after a user message or a result). */
  /** @type {any} */
  let assistant = null;
  const current = () => {
    if (!assistant) {
      assistant = assistantMessage([], { api: 'openai-responses', provider, model, now });
      out.push(assistant);
    }
    return assistant;
  };
  for (const item of items) {
    const type = item?.type ?? 'message';
    if (type === 'message' && item.role === 'user') {
      assistant = null;
      out.push({ role: 'user', content: piBlocks(item.content), timestamp: now });
    } else if (type === 'message' && item.role === 'assistant') {
      current().content.push(...piBlocks(item.content));
    } else if (type === 'reasoning') {
      const text = (item.summary ?? []).map((/** @type {any} */ s) => s?.text ?? '').join('\n');
      if (text) current().content.push({ type: 'thinking', thinking: text });
    } else if (type === 'function_call') {
      names.set(String(item.call_id), String(item.name));
      current().content.push({
        type: 'toolCall',
        id: String(item.call_id),
        name: String(item.name),
        arguments: parseArguments(item.arguments),
      });
    } else if (type === 'function_call_output') {
      assistant = null;
      const id = String(item.call_id);
      out.push(toolResultMessage(id, names.get(id) ?? '', piBlocks(item.output), false, now));
    }
  }
  for (const m of out) if (m.role === 'assistant') finishAssistant(m);
  return out;
}
