// Types of session-compaction/openai (openai.mjs).

import type { AgentMessage, AssistantMessage, MessageEntry, ToolResultMessage, UserMessage } from './index.js';

export type { AgentMessage, MessageEntry };

/** What {@link openaiComplete} needs. */
export interface OpenAiConfig {
  /** The API's base URL, e.g. `https://api.openai.com/v1` (`/chat/completions`, or `/responses` with `api: "responses"`, is appended). Credentials in it never appear in an error. */
  baseUrl: string;
  /** The model name sent as `model`. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`; no header without it. Never part of an error message. */
  apiKey?: string;
  /** The `fetch` to use (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  /**
   * Which API to call: `"chat"` (default, `POST {baseUrl}/chat/completions`) or `"responses"`
   * (`POST {baseUrl}/responses`, `{model, instructions, input, max_output_tokens}`). Another
   * value throws a `TypeError`.
   */
  api?: 'chat' | 'responses';
  /**
   * The chat-completions field that carries the request's `maxTokens`: `"max_completion_tokens"`
   * (default; OpenAI's reasoning and GPT-5 models refuse `max_tokens`) or `"max_tokens"`, for a
   * compatible server that knows only the older field. Not used with `api: "responses"`
   * (`max_output_tokens`). Another value throws a `TypeError`.
   */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
}

/** The request the engine passes to a `complete` callback (the fields this module reads). */
export interface OpenAiRequest {
  systemPrompt: string;
  prompt: string;
  maxTokens: number;
  signal?: AbortSignal;
}

/** A `complete` callback: resolves to the model's answer text. */
export type OpenAiComplete = (request: OpenAiRequest) => Promise<string>;

/**
 * A `complete` callback for an OpenAI-compatible chat-completions API (`POST {baseUrl}/chat/completions`,
 * `{model, messages: [system, user], max_completion_tokens}`, or `max_tokens` with `maxTokensField`),
 * resolving to `choices[0].message.content`; with
 * `api: "responses"`, for the Responses API (`POST {baseUrl}/responses`, `{model, instructions: systemPrompt,
 * input: prompt, max_output_tokens}`), resolving to the reply's `output_text` parts joined.
 * A non-2xx reply rejects with an `Error` carrying `status` and `headers` (so the engine's retries
 * see 429/5xx and `retry-after`); a network failure rejects with "fetch failed: …"; an abort of
 * `request.signal` rejects with the `AbortError` of `fetch`. Messages never contain the key nor
 * credentials written into `baseUrl`.
 */
export declare function openaiComplete(config: OpenAiConfig): OpenAiComplete;

/** A pi LLM message as the adapters give it back (`user`, `assistant`, `toolResult`). */
export type LlmMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** A Chat Completions message (`ChatCompletionMessageParam` of the `openai` package, structurally). */
export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | { type: 'text'; text: string }[] }
  | {
      role: 'user';
      content:
        | string
        | (
            | { type: 'text'; text: string }
            | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
          )[];
    }
  | {
      role: 'assistant';
      content?: string | null | { type: 'text'; text: string }[];
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string | { type: 'text'; text: string }[] };

/** A Responses API input item (`ResponseInputItem` of the `openai` package, the forms this module writes and reads). */
export type ResponsesItem =
  | {
      type?: 'message';
      role: 'user' | 'system' | 'developer';
      content:
        | string
        | (
            | { type: 'input_text'; text: string }
            | { type: 'input_image'; image_url: string; detail: 'auto' | 'low' | 'high' }
          )[];
    }
  | { type?: 'message'; role: 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string };

/**
 * The engine's LLM messages as Chat Completions messages (`system` first when given): `toolCall`
 * blocks → `tool_calls`, `toolResult` → `tool` messages (their images in one `user` message after
 * the run of tool messages), images → data-URL `image_url` parts; `thinking` is not sent. A tool
 * call id longer than the API's 40 characters is sent as its first 40 (`_2`, `_3`, … at the end
 * if taken), in the call and its result. A call's `arguments` are an object's JSON text (a
 * string of JSON text of an object is that object; anything else not an object is `{}`). A
 * failed or aborted assistant message (`stopReason` `"error"` / `"aborted"`) and the results of
 * its calls are not sent.
 */
export declare function toChatMessages(messages: readonly AgentMessage[], options?: { system?: string }): ChatMessage[];

/**
 * The engine's LLM messages as Responses API input items (`system` first when given):
 * `toolCall` → `function_call` (`arguments` as in {@link toChatMessages}), `toolResult` →
 * `function_call_output`; a `call_id` longer than the API's 64 characters (pi keeps a Responses
 * call's id as `{call_id}|{item id}`) sent as its first 64 (`_2`, `_3`, … if taken); `thinking`,
 * and a failed or aborted assistant message with its calls' results, are not sent.
 */
export declare function toResponsesInput(
  messages: readonly AgentMessage[],
  options?: { system?: string },
): ResponsesItem[];

/**
 * Chat Completions messages (history, and `completion.choices[0].message`) as pi messages;
 * `system` / `developer` skipped. Assistant messages get `provider` (default `"openai"`),
 * `model` (default `""`) and `stopReason`; with `completion`, the last one gets its `usage`,
 * `model` and `stopReason`. `now`: ms since epoch for `timestamp` (default `Date.now()`).
 */
export declare function fromChatMessages(
  messages: readonly unknown[],
  options?: { completion?: unknown; model?: string; provider?: string; now?: number },
): LlmMessage[];

/** Responses API items (history, and `response.output`) as pi messages; `system` / `developer` skipped. */
export declare function fromResponsesItems(
  items: readonly unknown[],
  options?: { model?: string; provider?: string; now?: number },
): LlmMessage[];
