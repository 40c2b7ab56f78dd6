// Types of session-compaction/ai-sdk (ai-sdk.mjs). Structural: the package does not depend on `ai`.

import type { AgentMessage, MessageEntry } from './index.js';
import type { LlmMessage } from './openai.mjs';

export type { AgentMessage, LlmMessage, MessageEntry };

/** What {@link aiSdkComplete} needs: the app's `generateText` (from `ai`) and model. */
export interface AiSdkConfig {
  /** `generateText` of `ai`, called with `{maxRetries: 0, ...options, model, system, prompt, maxOutputTokens, abortSignal}`. */
  generateText: (options: never) => PromiseLike<{ text: string }>;
  /** The model (`LanguageModel` of `ai`: a provider's model or a model id string). */
  model: unknown;
  /** More options for `generateText` (e.g. `temperature`, `providerOptions`); `maxRetries` defaults to 0. */
  options?: Record<string, unknown>;
}

/** The request the engine passes to a `complete` callback (the fields this module reads). */
export interface AiSdkRequest {
  systemPrompt: string;
  prompt: string;
  maxTokens: number;
  signal?: AbortSignal;
}

/** A `complete` callback: resolves to the model's answer text. */
export type AiSdkComplete = (request: AiSdkRequest) => Promise<string>;

/**
 * A `complete` callback over `generateText({model, system, prompt, maxOutputTokens, abortSignal})`,
 * resolving to its `text`. An SDK `APICallError` rejects with `status` / `headers` set from its
 * `statusCode` / `responseHeaders` (the engine's retries honour `retry-after`).
 */
export declare function aiSdkComplete(config: AiSdkConfig): AiSdkComplete;

/** An AI SDK `ModelMessage` (structurally, the forms this module writes). */
export type ModelMessage =
  | { role: 'system'; content: string }
  | {
      role: 'user';
      content: string | ({ type: 'text'; text: string } | { type: 'image'; image: string; mediaType: string })[];
    }
  | {
      role: 'assistant';
      content: (
        | { type: 'text'; text: string }
        | {
            type: 'reasoning';
            text: string;
            providerOptions?: { anthropic: { signature: string } | { redactedData: string } };
          }
        | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
      )[];
    }
  | {
      role: 'tool';
      content: {
        type: 'tool-result';
        toolCallId: string;
        toolName: string;
        output:
          | { type: 'text'; value: string }
          | { type: 'error-text'; value: string }
          | {
              type: 'content';
              value: (
                | { type: 'text'; text: string }
                | { type: 'file'; data: { type: 'data'; data: string }; mediaType: string }
              )[];
            };
      }[];
    };

/**
 * The engine's LLM messages as `ModelMessage[]` (`system` first when given): `thinking` →
 * `reasoning` (an Anthropic signature, or a redacted block's data, in
 * `providerOptions.anthropic`, where `@ai-sdk/anthropic` reads it), `toolCall` → `tool-call`, consecutive `toolResult`s → one `tool` message; text
 * parts that are empty or only white space are dropped, and a user or assistant message left
 * without anything to send is not sent, and a conversation that would begin with the
 * assistant begins with a user message `(continued)` (Anthropic's models refuse both); a call's
 * `input` is `{}` when its arguments are no plain object, and a failed result without text says
 * `(the tool failed without output)` (Anthropic refuses an empty error result). `ai` 7
 * refuses a system message in `messages` unless `allowSystemInMessages: true`: with it, pass the
 * app's system prompt as `system` (or `instructions`) of `generateText` rather than here.
 * A failed or aborted assistant message (`stopReason` `"error"` / `"aborted"`) and the results of
 * its calls are not sent; an assistant message that begins with signed thinking gets a user
 * message `(continued)` before it when it follows another; a tool call id outside
 * `a-z A-Z 0-9 _ -` or longer than 40 characters is sent in that form (`_` for each other
 * character, cut to 40, `_2`, `_3`, … if taken), in the call and its result.
 */
export declare function toModelMessages(
  messages: readonly AgentMessage[],
  options?: { system?: string },
): ModelMessage[];

/** The `usage` of a `generateText` result (`LanguageModelUsage` of `ai`, the fields read). */
export interface AiSdkUsage {
  inputTokens?: number;
  outputTokens?: number;
  inputTokenDetails?: { noCacheTokens?: number; cacheReadTokens?: number; cacheWriteTokens?: number };
}

/**
 * `ModelMessage[]` (history, `response.messages`) as pi messages; `system` skipped; each
 * `tool-result` part → one `toolResult`; a `reasoning` part's Anthropic signature (or redacted
 * data) in `providerOptions.anthropic` kept as the `thinking` block's `thinkingSignature`. `usage` (of the `generateText` result) becomes the last
 * assistant message's pi `usage` (tokens). Assistant messages get `provider` and `model` (the
 * options, default `""`) and `stopReason`. `now`: ms since epoch for `timestamp` (default `Date.now()`).
 */
export declare function fromModelMessages(
  messages: readonly unknown[],
  options?: { now?: number; usage?: AiSdkUsage; model?: string; provider?: string },
): LlmMessage[];
