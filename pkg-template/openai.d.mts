// Types of session-compaction/openai (openai.mjs).

/** What {@link openaiComplete} needs. */
export interface OpenAiConfig {
  /** The API's base URL, e.g. `https://api.openai.com/v1` (`/chat/completions` is appended). */
  baseUrl: string;
  /** The model name sent as `model`. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`; no header without it. Never part of an error message. */
  apiKey?: string;
  /** The `fetch` to use (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
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
 * `{model, messages: [system, user], max_tokens}`), resolving to `choices[0].message.content`.
 * A non-2xx reply rejects with an `Error` carrying `status` and `headers` (so the engine's retries
 * see 429/5xx and `retry-after`); a network failure rejects with "fetch failed: …"; an abort of
 * `request.signal` rejects with the `AbortError` of `fetch`. Messages never contain the key.
 */
export declare function openaiComplete(config: OpenAiConfig): OpenAiComplete;
