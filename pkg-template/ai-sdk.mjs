// session-compaction/ai-sdk: the Vercel AI SDK adapter. The engine's LLM messages
// (`buildLlmMessages()` / `convertToLlm`) as AI SDK `ModelMessage[]`; `ModelMessage[]` (an app
// that keeps only those, e.g. `response.messages` of `generateText`) back as pi messages and
// entries, so a `SessionTree` stays in step turn by turn; and a `complete` callback over the
// app's own `generateText` and model. Imports nothing from `ai`. Types: ai-sdk.d.mts.
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
  knownOptions,
  LEADING_USER_TEXT,
  replayedMessages,
  textOf,
  toolIdMap,
  toolResultMessage,
} from './http.mjs';

/**
 * A `complete(request)` callback over the AI SDK: calls
 * `generateText({model, system: systemPrompt, prompt, maxOutputTokens: maxTokens, abortSignal,
 * maxRetries: 0})` and resolves to its `text` (the engine does the retries).
 *
 * An `APICallError` of the SDK (`statusCode`, `responseHeaders`) rejects with `status` and
 * `headers` set from them, so the engine's retries see 429/5xx and honour `retry-after`; an
 * abort rejects with an error named `AbortError`.
 * @param {import('./ai-sdk.mjs').AiSdkConfig} config
 * @returns {import('./ai-sdk.mjs').AiSdkComplete}
 */
export function aiSdkComplete(config) {
  knownOptions(config, ['generateText', 'model', 'options'], 'aiSdkComplete');
  const { generateText, model, options = {} } = config;
  return async (request) => {
    try {
      const call = /** @type {(options: Record<string, unknown>) => PromiseLike<{ text: string }>} */ (generateText);
      const result = await call({
        maxRetries: 0,
        ...options,
        model,
        system: request.systemPrompt,
        prompt: request.prompt,
        maxOutputTokens: request.maxTokens,
        abortSignal: request.signal,
      });
      return String(result.text ?? '');
    } catch (error) {
      const e = /** @type {any} */ (error);
      if (request.signal?.aborted && e?.name !== 'AbortError') {
        const abort = new Error('The operation was aborted');
        abort.name = 'AbortError';
        throw abort;
      }
      // An APICallError, or an error wrapping one (RetryError's lastError, a provider's own error
      // with the APICallError as cause): the first status and headers along that chain.
      if (e && typeof e === 'object') {
        const chain = [e, e.lastError, e.cause, e.lastError?.cause].filter((x) => x && typeof x === 'object');
        const status = chain.find((x) => typeof x.statusCode === 'number')?.statusCode;
        const headers = chain.find((x) => x.responseHeaders && typeof x.responseHeaders === 'object')?.responseHeaders;
        if (e.status === undefined && status !== undefined) e.status = status;
        if (e.headers === undefined && headers !== undefined) e.headers = headers;
      }
      throw error;
    }
  };
}

/** A part worth sending: not a text part that is empty or only white space (Anthropic refuses those). */
const sent = (/** @type {any} */ p) => p.type !== 'text' || !isBlank(p.text);

/** An AI SDK user / tool-output part for a pi text or image block (other blocks: none). */
function part(/** @type {any} */ b, /** @type {boolean} */ inTool) {
  if (b.type === 'text') return [{ type: 'text', text: String(b.text ?? '') }];
  if (b.type === 'image') {
    return inTool
      ? [{ type: 'file', data: { type: 'data', data: String(b.data ?? '') }, mediaType: b.mimeType ?? 'image/png' }]
      : [{ type: 'image', image: String(b.data ?? ''), mediaType: b.mimeType ?? 'image/png' }];
  }
  return [];
}

/**
 * The tool call ids Anthropic and OpenAI take through the AI SDK: Anthropic's pattern (`a-z A-Z
 * 0-9 _ -`) within Chat Completions' 40 characters (the Responses API takes 64). Providers with
 * stricter rules of their own (Mistral wants exactly 9 letters and digits) are not covered.
 */
const PORTABLE_TOOL_IDS = { max: 40, plain: true };

/**
 * An AI SDK `reasoning` part for a pi `thinking` block of assistant message `m`, with its
 * Anthropic signature (or, for a redacted block, its encrypted data) in
 * `providerOptions.anthropic`, where `@ai-sdk/anthropic` reads them: without them it does not
 * send the thinking, and the Messages API refuses a turn whose thinking it needs and lacks.
 */
function reasoningPart(/** @type {any} */ m, /** @type {any} */ b) {
  const kept = anthropicThinking(m, b);
  if (!kept) return { type: 'reasoning', text: String(b.thinking ?? '') };
  if ('redactedData' in kept) {
    return { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: kept.redactedData } } };
  }
  return { type: 'reasoning', text: kept.thinking, providerOptions: { anthropic: { signature: kept.signature } } };
}

/**
 * The engine's LLM messages (`user`, `assistant`, `toolResult`) as AI SDK `ModelMessage[]`:
 * - `user` → `{role: "user", content}` (a string stays a string; `text` and base64 `image` parts);
 * - `assistant` → `{role: "assistant", content: [text | reasoning | tool-call]}` (`thinking` →
 *   `reasoning`, with `providerOptions.anthropic.signature` when it kept an Anthropic
 *   `thinkingSignature` (the message's `api` is `anthropic-messages` or absent), or
 *   `providerOptions.anthropic.redactedData` when marked `redacted`; `toolCall` → `tool-call`
 *   with `input` = its arguments, `{}` when they are no plain object);
 * - `toolResult` → a `tool-result` part (`output`: `{type: "text"}`, `{type: "error-text"}` when
 *   `isError`, with the text `(the tool failed without output)` when it has none, since
 *   Anthropic refuses an empty error result; `{type: "content"}` when it holds images);
 *   consecutive results share one `{role: "tool"}` message.
 * Text parts that are empty or only white space are dropped, a user or assistant message left
 * without anything to send (an assistant message of unsigned reasoning only included) is not
 * sent, and a conversation that would begin with the assistant begins with a user message
 * `(continued)` (Anthropic's models refuse all three); so does an assistant message that follows
 * another and begins with signed thinking (merged, the thinking would no longer begin the turn).
 * A tool call id outside `a-z A-Z 0-9 _ -` or longer than 40 characters (what Anthropic and
 * OpenAI take: Anthropic's pattern, Chat Completions' length) is sent with `_` for each other
 * character, cut to 40 (`_2`, `_3`, … if taken), in the call and its result. An assistant message that failed or was aborted (`stopReason` `"error"` /
 * `"aborted"`) is not sent, nor are the results of its calls (its retry follows it).
 * `system` (the app's own system prompt) is placed first when given (`ai` 7 refuses it in
 * `messages` unless `allowSystemInMessages: true`; pass it to `generateText` instead).
 * @param {any[]} messages
 * @param {{ system?: string }} [options]
 * @returns {any[]}
 */
export function toModelMessages(messages, options = {}) {
  knownOptions(options, ['system'], 'toModelMessages');
  const { system } = options;
  messages = replayedMessages(messages, 'toModelMessages');
  const toolId = toolIdMap(messages, PORTABLE_TOOL_IDS);
  /** @type {any[]} */
  const out = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    if (m?.role === 'user') {
      const content =
        typeof m.content === 'string'
          ? m.content
          : blocksOf(m.content)
              .flatMap(/** @returns {any[]} */ (b) => part(b, false))
              .filter(sent);
      // A user message with nothing to send is left out (Anthropic's models refuse it).
      if (typeof content === 'string' ? !isBlank(content) : content.length) out.push({ role: 'user', content });
    } else if (m?.role === 'assistant') {
      const content = blocksOf(m.content).flatMap(
        /** @returns {any[]} */ (b) => {
          if (b.type === 'text') return [{ type: 'text', text: String(b.text ?? '') }].filter(sent);
          if (b.type === 'thinking') return [reasoningPart(m, b)];
          if (b.type === 'toolCall') {
            return [
              {
                type: 'tool-call',
                toolCallId: toolId(String(b.id)),
                toolName: String(b.name),
                input: callInput(b.arguments),
              },
            ];
          }
          return [];
        },
      );
      // An assistant message with nothing to send is left out (Anthropic's models, through the
      // SDK, refuse an empty message; it holds no call a result could answer). Unsigned
      // reasoning is nothing to send either: the providers' SDKs drop it. `first` is the first
      // part they send.
      const first = content.find((p) => p.type !== 'reasoning' || p.providerOptions);
      if (first) {
        // `@ai-sdk/anthropic` merges consecutive assistant messages, and this one's signed
        // thinking would then no longer begin its turn (see LEADING_USER_TEXT).
        if (out.at(-1)?.role === 'assistant' && first.providerOptions?.anthropic) {
          out.push({ role: 'user', content: LEADING_USER_TEXT });
        }
        out.push({ role: 'assistant', content });
      }
    } else if (m?.role === 'toolResult') {
      const blocks = blocksOf(m.content);
      const hasImage = blocks.some((b) => b.type === 'image');
      const text = textOf(blocks);
      const output = m.isError
        ? { type: 'error-text', value: isBlank(text) ? EMPTY_ERROR_TEXT : text }
        : hasImage
          ? { type: 'content', value: blocks.flatMap(/** @returns {any[]} */ (b) => part(b, true)) }
          : { type: 'text', value: text };
      const resultPart = {
        type: 'tool-result',
        toolCallId: toolId(String(m.toolCallId)),
        toolName: String(m.toolName ?? ''),
        output,
      };
      const last = out.at(-1);
      if (last?.role === 'tool') last.content.push(resultPart);
      else out.push({ role: 'tool', content: [resultPart] });
    }
  }
  // A conversation begins with a user turn (the Messages API's rule; the others accept it).
  const first = system ? 1 : 0;
  if (out[first]?.role === 'assistant') out.splice(first, 0, { role: 'user', content: LEADING_USER_TEXT });
  return out;
}

/** pi blocks of AI SDK parts (a string becomes one text block). */
function piBlocks(/** @type {unknown} */ content) {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap(
    /** @returns {any[]} */ (p) => {
      if (p?.type === 'text') return [{ type: 'text', text: String(p.text ?? '') }];
      if (p?.type === 'reasoning') {
        // `@ai-sdk/anthropic` puts a thinking block's signature, or a redacted block's data, in
        // the part's provider options; pi keeps either in `thinkingSignature`.
        const anthropic = p.providerOptions?.anthropic;
        if (typeof anthropic?.redactedData === 'string') {
          return [{ type: 'thinking', thinking: '', thinkingSignature: anthropic.redactedData, redacted: true }];
        }
        const block = { type: 'thinking', thinking: String(p.text ?? '') };
        return [
          typeof anthropic?.signature === 'string' ? { ...block, thinkingSignature: anthropic.signature } : block,
        ];
      }
      if (p?.type === 'tool-call') {
        return [{ type: 'toolCall', id: String(p.toolCallId), name: String(p.toolName), arguments: p.input ?? {} }];
      }
      // A file's data: base64 text, or (ai 7) the tagged `{type: 'data', data}`.
      const file = p?.type === 'file' ? (p.data?.type === 'data' ? p.data.data : p.data) : undefined;
      const data = p?.type === 'image' ? p.image : file;
      const mimeType = p?.mediaType ?? 'image/png';
      if (typeof data === 'string' && String(mimeType).startsWith('image/')) return [{ type: 'image', mimeType, data }];
      return [];
    },
  );
}

/** The text of a tool-result `output`, or its content parts. */
function outputBlocks(/** @type {any} */ output) {
  if (output?.type === 'content') return piBlocks(output.value);
  if (output?.type === 'text' || output?.type === 'error-text') return [{ type: 'text', text: String(output.value) }];
  if (output?.type === 'json' || output?.type === 'error-json') {
    return [{ type: 'text', text: JSON.stringify(output.value) }];
  }
  if (output?.type === 'execution-denied') return [{ type: 'text', text: String(output.reason ?? 'Execution denied') }];
  return [];
}

/**
 * AI SDK `ModelMessage[]` (an app's history, `response.messages` of each `generateText`) as pi
 * messages, for `SessionTree.appendMessage`: `user` → `user`; `assistant` →
 * `assistant` (`reasoning` → `thinking`, keeping `providerOptions.anthropic.signature` as
 * `thinkingSignature`, and `providerOptions.anthropic.redactedData` as a `redacted` block's
 * `thinkingSignature`; `tool-call` → `toolCall`); each `tool-result` part of a
 * `tool` message → one `toolResult` (`isError` for `error-text` / `error-json` outputs). `system`
 * messages are the app's prompt, not session history: skipped. `usage` (the `usage` of the
 * `generateText` result whose `response.messages` these are: `inputTokens`, `outputTokens`,
 * `inputTokenDetails.cacheReadTokens` / `cacheWriteTokens`) becomes the last assistant message's
 * pi `usage`, so the engine's context estimate starts from the provider's count. Assistant
 * messages get `provider` and `model` (the options, default `""`) and `stopReason`.
 * @param {any[]} messages
 * @param {{ now?: number, usage?: any, model?: string, provider?: string }} [options]
 * @returns {any[]}
 */
export function fromModelMessages(messages, options = {}) {
  knownOptions(options, ['now', 'usage', 'model', 'provider'], 'fromModelMessages');
  const { now = Date.now(), usage, model, provider } = options;
  /** @type {any[]} */
  const out = [];
  for (const m of messages) {
    if (m?.role === 'user') out.push({ role: 'user', content: piBlocks(m.content), timestamp: now });
    else if (m?.role === 'assistant') out.push(assistantMessage(piBlocks(m.content), { provider, model, now }));
    else if (m?.role === 'tool') {
      for (const p of Array.isArray(m.content) ? m.content : []) {
        if (p?.type !== 'tool-result') continue;
        const isError = p.output?.type === 'error-text' || p.output?.type === 'error-json';
        out.push(
          toolResultMessage(String(p.toolCallId), String(p.toolName ?? ''), outputBlocks(p.output), isError, now),
        );
      }
    }
  }
  const last = [...out].reverse().find((m) => m.role === 'assistant');
  if (usage && last) {
    const cacheRead = usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens ?? 0;
    const cacheWrite = usage.inputTokenDetails?.cacheWriteTokens ?? 0;
    const input =
      usage.inputTokenDetails?.noCacheTokens ?? Math.max(0, (usage.inputTokens ?? 0) - cacheRead - cacheWrite);
    const output = usage.outputTokens ?? 0;
    last.usage = { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite };
  }
  return out;
}
