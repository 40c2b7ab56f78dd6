// session-compaction/anthropic: the Anthropic Messages adapter. The engine's LLM messages
// (`buildLlmMessages()` / `convertToLlm`) as Messages API `messages`; Messages API messages and
// responses back as pi messages and entries; and a `complete` callback over `fetch`
// (`POST {baseUrl}/messages`). Runs in Node >= 20, Deno, Bun and browsers. Types: anthropic.d.mts.
//
// The engine decides the content (summaries rendered, pruned outputs, bash executions, tool
// calls answered); these functions only map shapes.

import {
  anthropicThinking,
  assistantMessage,
  blocksOf,
  callInput,
  EMPTY_ERROR_TEXT,
  isBlank,
  joinUrl,
  knownOptions,
  LEADING_USER_TEXT,
  postJson,
  redactUrl,
  replayedMessages,
  toolIdMap,
  toolResultMessage,
} from './http.mjs';

/** The `anthropic-version` header sent by {@link anthropicComplete}. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * A `complete(request)` callback for the Anthropic Messages API: `POST {baseUrl}/messages` with
 * `{model, max_tokens, system: systemPrompt, messages: [{role: "user", content: prompt}]}` and
 * the headers `x-api-key` (none without a key) and `anthropic-version`; resolves to the reply's
 * text blocks joined.
 *
 * Failures reject like `openaiComplete`'s: a non-2xx reply carries `status` and `headers` (the
 * engine's retries see 429/529/5xx and honour `retry-after`); "fetch failed: …" when the server
 * cannot be reached; the `AbortError` of `fetch` on an abort of `request.signal`; the key and
 * credentials written into `baseUrl` never appear in a message.
 * @param {import('./anthropic.mjs').AnthropicConfig} config
 * @returns {import('./anthropic.mjs').AnthropicComplete}
 */
export function anthropicComplete(config) {
  knownOptions(config, ['baseUrl', 'model', 'apiKey', 'fetch'], 'anthropicComplete');
  const { baseUrl = 'https://api.anthropic.com/v1', model, apiKey, fetch } = config;
  const url = joinUrl(baseUrl, 'messages');
  return async (request) => {
    /** @type {Record<string, string>} */
    const headers = { 'anthropic-version': ANTHROPIC_VERSION };
    if (apiKey) headers['x-api-key'] = apiKey;
    const body = {
      model,
      max_tokens: request.maxTokens,
      system: request.systemPrompt,
      messages: [{ role: 'user', content: request.prompt }],
    };
    const reply = await postJson({ url, headers, body, signal: request.signal, fetch, secrets: [apiKey] });
    if (Array.isArray(reply?.content)) {
      return reply.content
        .filter((/** @type {any} */ b) => b?.type === 'text' && typeof b.text === 'string')
        .map((/** @type {any} */ b) => b.text)
        .join('');
    }
    throw new Error(`${redactUrl(url)}: the reply has no content blocks`);
  };
}

/**
 * An Anthropic content block for a pi text or image block (other blocks: none).
 * @param {any} b
 * @returns {any[]}
 */
function userBlock(b) {
  // The API refuses a text block that is empty or only white space.
  if (b.type === 'text') return isBlank(b.text) ? [] : [{ type: 'text', text: b.text }];
  if (b.type === 'image') {
    return [{ type: 'image', source: { type: 'base64', media_type: b.mimeType ?? 'image/png', data: b.data ?? '' } }];
  }
  return [];
}

/**
 * The engine's LLM messages (`user`, `assistant`, `toolResult`) as Messages API `messages`:
 * - `user` → `user` with `text` and base64 `image` blocks;
 * - `assistant` → `assistant` with `text`, `tool_use` (`input` = the call's arguments, `{}` when
 *   they are no plain object: the API takes an object only) and, when
 *   the stored block kept its `thinkingSignature` and the message came from this API (its `api`
 *   is `anthropic-messages`, or it names none), `thinking` blocks, and `redacted_thinking` for a
 *   block marked `redacted` (unsigned thinking, and thinking another API signed, are not sent:
 *   the API refuses a thinking block without its own valid signature);
 * - `toolResult` → a `tool_result` block (`tool_use_id`, its text and image blocks, `is_error`;
 *   a failed result keeps its text blocks only, and one without text gets the text
 *   `(the tool failed without output)`: the API refuses an error result that is empty or holds
 *   images);
 *   the results of one turn are grouped into one `user` message, before any user text.
 * An assistant message that failed or was aborted (`stopReason` `"error"` / `"aborted"`) is not
 * sent, nor are the results of its calls (see `replayedMessages`: its retry follows it).
 * Consecutive messages of one role are merged (the API alternates `user` / `assistant`), except
 * an assistant message that begins with thinking, which gets a user message `(continued)` before
 * it (the API requires a tool loop's turn to begin with its thinking); text
 * blocks that are empty or only white space and messages left empty are dropped (the API refuses
 * them), and a conversation that would begin with the assistant begins with a user message
 * `(continued)` (the API requires a user turn first). A tool call id that is not made of `a-z A-Z 0-9 _ -` only (the API's pattern; ids of
 * other providers such as `call_1|fc_1` are not) is sent with `_` for each other character
 * (`call_1_fc_1`, then `_2`, `_3`, … if that is taken), in the call and in its result. There is no system message in a session:
 * pass the app's own system prompt as `system` of the request.
 * @param {any[]} messages
 * @returns {any[]}
 */
export function toAnthropicMessages(messages) {
  /** @type {{ role: 'user' | 'assistant', content: any[] }[]} */
  const out = [];
  messages = replayedMessages(messages, 'toAnthropicMessages');
  const toolId = toolIdMap(messages, { plain: true });
  const push = (/** @type {'user' | 'assistant'} */ role, /** @type {any[]} */ content) => {
    if (!content.length) return;
    // Merged, a turn's thinking would no longer begin it (see LEADING_USER_TEXT).
    if (role === 'assistant' && out.at(-1)?.role === 'assistant' && THINKING_BLOCKS.has(content[0].type)) {
      out.push({ role: 'user', content: [{ type: 'text', text: LEADING_USER_TEXT }] });
    }
    const last = out.at(-1);
    if (last?.role !== role) {
      out.push({ role, content });
      return;
    }
    // tool_result blocks come first in a user message.
    const results = [...last.content, ...content].filter((b) => b.type === 'tool_result');
    const rest = [...last.content, ...content].filter((b) => b.type !== 'tool_result');
    last.content = [...results, ...rest];
  };
  for (const m of messages) {
    if (m?.role === 'user') {
      push('user', blocksOf(m.content).flatMap(userBlock));
    } else if (m?.role === 'assistant') {
      const content = blocksOf(m.content).flatMap(
        /** @returns {any[]} */ (b) => {
          if (b.type === 'text') return userBlock(b);
          if (b.type === 'toolCall') {
            return [
              { type: 'tool_use', id: toolId(String(b.id)), name: String(b.name), input: callInput(b.arguments) },
            ];
          }
          if (b.type === 'thinking') {
            const kept = anthropicThinking(m, b);
            if (kept && 'redactedData' in kept) return [{ type: 'redacted_thinking', data: kept.redactedData }];
            if (kept) return [{ type: 'thinking', thinking: kept.thinking, signature: kept.signature }];
          }
          return [];
        },
      );
      push('assistant', content);
    } else if (m?.role === 'toolResult') {
      let content = blocksOf(m.content).flatMap(userBlock);
      // A failed result takes text only, and some (the API refuses anything else).
      if (m.isError) content = content.filter((b) => b.type === 'text');
      if (m.isError && !content.length) content = [{ type: 'text', text: EMPTY_ERROR_TEXT }];
      /** @type {any} */
      const block = { type: 'tool_result', tool_use_id: toolId(String(m.toolCallId)), content };
      if (m.isError) block.is_error = true;
      push('user', [block]);
    }
  }
  // The API's conversation begins with a user turn.
  if (out[0]?.role === 'assistant') out.unshift({ role: 'user', content: [{ type: 'text', text: LEADING_USER_TEXT }] });
  return out;
}

/** The blocks that must begin a tool loop's turn when thinking is on. */
const THINKING_BLOCKS = new Set(['thinking', 'redacted_thinking']);

/** pi content blocks of Anthropic blocks (a string becomes one text block). */
function piBlocks(/** @type {unknown} */ content) {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap(
    /** @returns {any[]} */ (b) => {
      if (b?.type === 'text') return [{ type: 'text', text: String(b.text ?? '') }];
      if (b?.type === 'image' && b.source?.type === 'base64') {
        return [{ type: 'image', mimeType: b.source.media_type, data: b.source.data }];
      }
      if (b?.type === 'thinking') {
        return [{ type: 'thinking', thinking: String(b.thinking ?? ''), thinkingSignature: b.signature }];
      }
      // pi keeps a redacted block's encrypted payload in `thinkingSignature`.
      if (b?.type === 'redacted_thinking' && typeof b.data === 'string') {
        return [{ type: 'thinking', thinking: '', thinkingSignature: b.data, redacted: true }];
      }
      if (b?.type === 'tool_use') {
        return [{ type: 'toolCall', id: String(b.id), name: String(b.name), arguments: b.input ?? {} }];
      }
      return [];
    },
  );
}

const STOP_REASONS = /** @type {Record<string, string>} */ ({
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'toolUse',
  max_tokens: 'length',
});

/**
 * Messages API messages (an app's history, and each reply `Message`) as pi messages, for
 * `SessionTree.appendMessage`: `assistant` → `assistant` (`text`, `thinking`
 * with its signature, `redacted_thinking` → a `thinking` block with `redacted: true` and its
 * `data` as `thinkingSignature`, as pi keeps it, `tool_use` → `toolCall`); a `user` message → one `toolResult` per
 * `tool_result` block (its `toolName` from the `tool_use` it answers), then a `user` message
 * with the rest of its blocks, if any. Assistant messages get `api: "anthropic-messages"`,
 * `provider: "anthropic"`, `model` (the reply's, else the option, else `""`) and `stopReason`
 * (the reply's `stop_reason`, else from the content); a reply `Message` also fills `usage`.
 * @param {any[]} messages
 * @param {{ model?: string, now?: number }} [options]
 * @returns {any[]}
 */
export function fromAnthropicMessages(messages, options = {}) {
  knownOptions(options, ['model', 'now'], 'fromAnthropicMessages');
  const { model, now = Date.now() } = options;
  /** @type {Map<string, string>} */
  const names = new Map();
  /** @type {any[]} */
  const out = [];
  for (const m of messages) {
    if (m?.role === 'assistant') {
      const content = piBlocks(m.content);
      for (const b of content) if (b.type === 'toolCall') names.set(b.id, b.name);
      /** @type {any} */
      let usage;
      if (m.usage) {
        const cacheRead = m.usage.cache_read_input_tokens ?? 0;
        const cacheWrite = m.usage.cache_creation_input_tokens ?? 0;
        const input = m.usage.input_tokens ?? 0;
        const output = m.usage.output_tokens ?? 0;
        usage = { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite };
      }
      const message = assistantMessage(content, {
        api: 'anthropic-messages',
        provider: 'anthropic',
        model: m.model ?? model,
        stopReason: m.stop_reason ? (STOP_REASONS[m.stop_reason] ?? 'stop') : undefined,
        usage,
        now,
      });
      out.push(message);
    } else if (m?.role === 'user') {
      const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
      for (const b of blocks) {
        if (b?.type !== 'tool_result') continue;
        const id = String(b.tool_use_id);
        out.push(toolResultMessage(id, names.get(id) ?? '', piBlocks(b.content), b.is_error === true, now));
      }
      const rest = piBlocks(blocks.filter((/** @type {any} */ b) => b?.type !== 'tool_result'));
      if (rest.length) out.push({ role: 'user', content: rest, timestamp: now });
    }
  }
  return out;
}
