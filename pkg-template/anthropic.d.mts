// Types of session-compaction/anthropic (anthropic.mjs).

import type { AgentMessage, MessageEntry } from './index.js';
import type { LlmMessage } from './openai.mjs';

export type { AgentMessage, LlmMessage, MessageEntry };

/** What {@link anthropicComplete} needs. */
export interface AnthropicConfig {
  /** The API's base URL (default `https://api.anthropic.com/v1`; `/messages` is appended). Credentials in it never appear in an error. */
  baseUrl?: string;
  /** The model name sent as `model`. */
  model: string;
  /** Sent as `x-api-key`; no header without it. Never part of an error message. */
  apiKey?: string;
  /** The `fetch` to use (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
}

/** The request the engine passes to a `complete` callback (the fields this module reads). */
export interface AnthropicRequest {
  systemPrompt: string;
  prompt: string;
  maxTokens: number;
  signal?: AbortSignal;
}

/** A `complete` callback: resolves to the model's answer text. */
export type AnthropicComplete = (request: AnthropicRequest) => Promise<string>;

/** The `anthropic-version` header {@link anthropicComplete} sends. */
export declare const ANTHROPIC_VERSION: string;

/**
 * A `complete` callback for the Messages API (`POST {baseUrl}/messages`, `system` separate,
 * one user message), resolving to the reply's text blocks joined. A non-2xx reply rejects with
 * an `Error` carrying `status` and `headers` (the engine's retries honour `retry-after`); "fetch
 * failed: …" when unreachable; the `AbortError` of `fetch` on abort. Messages never contain the
 * key nor credentials written into `baseUrl`.
 */
export declare function anthropicComplete(config: AnthropicConfig): AnthropicComplete;

/** The image types the Messages API accepts. */
export type AnthropicImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** A Messages API content block (`ContentBlockParam` of `@anthropic-ai/sdk`, the forms this module writes). */
export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: AnthropicImageType; data: string } }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content: (
        | { type: 'text'; text: string }
        | { type: 'image'; source: { type: 'base64'; media_type: AnthropicImageType; data: string } }
      )[];
      is_error?: boolean;
    };

/** A Messages API message (`MessageParam` of `@anthropic-ai/sdk`, structurally). */
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

/**
 * The engine's LLM messages as Messages API `messages`: tool results of a turn grouped into one
 * `user` message (first), roles alternating (consecutive same-role messages merged), text that is
 * empty or only white space dropped, `thinking` sent only with a signature of this API (the
 * message's `api` is `anthropic-messages` or absent), as `redacted_thinking` when marked
 * `redacted`; a failed or aborted assistant message (`stopReason` `"error"` / `"aborted"`) and the
 * results of its calls not sent; an assistant message that begins with thinking not merged into
 * the one before it (a user message `(continued)` between); a tool call id outside the
 * API's pattern `^[a-zA-Z0-9_-]+$` (another provider's, such as `call_1|fc_1`) sent with `_` for
 * each other character (`_2`, `_3`, … if taken), in the call and its result; a conversation that
 * would begin with the assistant begins with a user message `(continued)` (the API requires a
 * user turn first); a call's `input` is `{}` when its arguments are no plain object; a failed
 * tool result keeps its text only, `(the tool failed without output)` when it has none (the API
 * refuses an empty error result or one with images). Pass the app's system prompt as `system`
 * of the request.
 */
export declare function toAnthropicMessages(messages: readonly AgentMessage[]): AnthropicMessage[];

/**
 * Messages API messages (history, and each reply `Message`) as pi messages: `tool_result` blocks
 * → `toolResult` messages (before the user message's other blocks); a reply's `usage`, `model`
 * and `stop_reason` fill the assistant message. `now`: ms since epoch (default `Date.now()`).
 */
export declare function fromAnthropicMessages(
  messages: readonly unknown[],
  options?: { model?: string; now?: number },
): LlmMessage[];
