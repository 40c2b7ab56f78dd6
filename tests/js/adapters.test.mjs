// Tests of the provider adapters (pkg/openai.mjs, pkg/anthropic.mjs, pkg/ai-sdk.mjs, built by
// `npm run build`) with the real SDKs (devDependencies `openai`, `@anthropic-ai/sdk`, `ai`):
// the engine's context (`buildLlmMessages()`) mapped to each SDK's messages and sent by the
// SDK's own client to a local server on 127.0.0.1 that enforces the provider's rules
// (tests/js/support/provider-servers.mjs); SDK messages and replies mapped back to pi entries
// and appended to a SessionTree; the `complete` callbacks through the engine (retry-after,
// keys and URL credentials never in errors, abort); and the examples (examples/*.mjs) run
// against the same server. Run: node --test tests/js/adapters.test.mjs
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createAnthropic } from '@ai-sdk/anthropic';
import Anthropic from '@anthropic-ai/sdk';
import { createGateway, generateText } from 'ai';
import OpenAI from 'openai';
import { aiSdkComplete, fromModelMessages, toModelMessages } from '../../pkg/ai-sdk.mjs';
import { anthropicComplete, fromAnthropicMessages, toAnthropicMessages } from '../../pkg/anthropic.mjs';
import { SessionTree } from '../../pkg/index.node.mjs';
import {
  fromChatMessages,
  fromResponsesItems,
  openaiComplete,
  toChatMessages,
  toResponsesInput,
} from '../../pkg/openai.mjs';
import {
  anthropicViolation,
  chatViolation,
  responsesViolation,
  SUMMARY,
  startProviderServer,
} from './support/provider-servers.mjs';

const SECRET = `sk-test-${Math.random().toString(36).slice(2)}-do-not-print`;
const SESSIONS = ['pi-session-large.jsonl', 'pi-session-with-compactions.jsonl', 'pi-session-v1-format.jsonl'];
const sessionPath = (/** @type {string} */ name) =>
  fileURLToPath(new URL(`../../examples/sessions/${name}`, import.meta.url));
const IMAGE = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' };
const NOW = 1765233665000;

/** A context in the engine's output shapes: every role and block kind the adapters map. */
const CONTEXT = [
  { role: 'user', content: [{ type: 'text', text: 'The conversation history before this point was compacted…' }] },
  { role: 'user', content: 'Read both files.' },
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'Two reads.', thinkingSignature: 'sig-1' },
      { type: 'text', text: 'Reading them.' },
      { type: 'toolCall', id: 'call_a', name: 'read', arguments: { path: 'a.ts' } },
      { type: 'toolCall', id: 'call_b', name: 'read', arguments: { path: 'b.png' } },
    ],
  },
  {
    role: 'toolResult',
    toolCallId: 'call_a',
    toolName: 'read',
    content: [{ type: 'text', text: 'export {}' }],
    isError: false,
  },
  {
    role: 'toolResult',
    toolCallId: 'call_b',
    toolName: 'read',
    content: [{ type: 'text', text: 'an image' }, IMAGE],
    isError: false,
  },
  { role: 'user', content: [{ type: 'text', text: 'Ran `ls`\n```\na.ts\n```' }] },
  {
    role: 'assistant',
    content: [{ type: 'toolCall', id: 'call_c', name: 'bash', arguments: { command: 'false' } }],
  },
  {
    role: 'toolResult',
    toolCallId: 'call_c',
    toolName: 'bash',
    content: [{ type: 'text', text: 'exit 1' }],
    isError: true,
  },
  { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
];

/** Runs `fn(server)` with a fresh provider server, closed afterwards. */
async function withServer(
  /** @type {(server: Awaited<ReturnType<typeof startProviderServer>>) => Promise<void>} */ fn,
  /** @type {Parameters<typeof startProviderServer>[0]} */ options = {},
) {
  const server = await startProviderServer(options);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

const openaiClient = (/** @type {string} */ baseURL) => new OpenAI({ baseURL, apiKey: SECRET, maxRetries: 0 });
const anthropicClient = (/** @type {string} */ baseURL) => new Anthropic({ baseURL, apiKey: SECRET, maxRetries: 0 });

/** Sends `messages` through @anthropic-ai/sdk to a fresh rule server, which must accept them. */
async function assertAnthropicAccepts(/** @type {unknown[]} */ messages) {
  await withServer(async (server) => {
    await anthropicClient(server.anthropicSdkBaseUrl).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: /** @type {any} */ (messages),
    });
    assert.equal(server.requests[0].violation, undefined);
  });
}

const gatewayModel = (/** @type {string} */ baseURL) =>
  createGateway({ baseURL, apiKey: SECRET })('openai/gpt-4.1-mini');

test('toChatMessages: tool calls answered in order, images of tool results after them, thinking not sent; the openai SDK sends it and the server accepts it', async () => {
  const messages = toChatMessages(/** @type {any} */ (CONTEXT), { system: 'You are a coding agent.' });
  assert.deepEqual(messages, [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: [{ type: 'text', text: 'The conversation history before this point was compacted…' }] },
    { role: 'user', content: 'Read both files.' },
    {
      role: 'assistant',
      content: 'Reading them.',
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'read', arguments: '{"path":"a.ts"}' } },
        { id: 'call_b', type: 'function', function: { name: 'read', arguments: '{"path":"b.png"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_a', content: 'export {}' },
    { role: 'tool', tool_call_id: 'call_b', content: 'an image' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
    { role: 'user', content: [{ type: 'text', text: 'Ran `ls`\n```\na.ts\n```' }] },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'bash', arguments: '{"command":"false"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_c', content: 'exit 1' },
    { role: 'assistant', content: 'Done.' },
  ]);
  await withServer(async (server) => {
    const completion = await openaiClient(server.openaiBaseUrl).chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: /** @type {any} */ (messages),
    });
    assert.equal(completion.choices[0].message.content, SUMMARY);
    assert.deepEqual(server.requests[0].body.messages, messages);
    assert.equal(server.requests[0].violation, undefined);
  });
});

test('toResponsesInput: function_call / function_call_output items; the openai SDK sends it to /responses and the server accepts it', async () => {
  const input = toResponsesInput(/** @type {any} */ (CONTEXT));
  assert.deepEqual(
    input.map((i) => i.type ?? i.role),
    [
      'user',
      'user',
      'assistant',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'user',
      'user',
      'function_call',
      'function_call_output',
      'assistant',
    ],
  );
  assert.deepEqual(input[4], { type: 'function_call', call_id: 'call_b', name: 'read', arguments: '{"path":"b.png"}' });
  assert.deepEqual(input[7], {
    role: 'user',
    content: [{ type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' }],
  });
  await withServer(async (server) => {
    const response = await openaiClient(server.openaiBaseUrl).responses.create({
      model: 'gpt-4.1-mini',
      instructions: 'You are a coding agent.',
      input: /** @type {any} */ (input),
    });
    assert.equal(response.output_text, SUMMARY);
    assert.equal(server.requests[0].violation, undefined);
    assert.deepEqual(server.requests[0].body.input, input);
  });
});

test('toAnthropicMessages: tool results grouped first in one user message, roles alternate, signed thinking kept; @anthropic-ai/sdk sends it and the server accepts it', async () => {
  const messages = toAnthropicMessages(/** @type {any} */ (CONTEXT));
  assert.deepEqual(
    messages.map((m) => [m.role, m.content.map((b) => b.type).join(',')]),
    [
      ['user', 'text,text'],
      ['assistant', 'thinking,text,tool_use,tool_use'],
      ['user', 'tool_result,tool_result,text'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
      ['assistant', 'text'],
    ],
  );
  assert.deepEqual(messages[2].content[1], {
    type: 'tool_result',
    tool_use_id: 'call_b',
    content: [
      { type: 'text', text: 'an image' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ],
  });
  assert.deepEqual(messages[4].content[0], {
    type: 'tool_result',
    tool_use_id: 'call_c',
    content: [{ type: 'text', text: 'exit 1' }],
    is_error: true,
  });
  assert.deepEqual(messages[1].content[0], { type: 'thinking', thinking: 'Two reads.', signature: 'sig-1' });
  // Unsigned thinking and empty text are not sent (the API refuses both).
  const unsigned = toAnthropicMessages(
    /** @type {any} */ ([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'x' },
          { type: 'text', text: '' },
          { type: 'text', text: 'ok' },
        ],
      },
    ]),
  );
  assert.deepEqual(unsigned[1], { role: 'assistant', content: [{ type: 'text', text: 'ok' }] });
  await withServer(async (server) => {
    // The conversation must end with a user turn for a new request.
    const reply = await anthropicClient(server.anthropicSdkBaseUrl).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'You are a coding agent.',
      messages: /** @type {any} */ ([...messages, { role: 'user', content: 'Go on.' }]),
    });
    assert.equal(/** @type {any} */ (reply.content[0]).text, SUMMARY);
    assert.equal(server.requests[0].violation, undefined);
    assert.equal(server.requests[0].headers.authorization, `Bearer ${SECRET}`);
  });
});

/** Calls with ids of other providers (a Responses `call|fc` pair, 60 characters) and blank text. */
const FOREIGN_IDS = [
  { role: 'user', content: [{ type: 'text', text: 'Go.' }] },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: '\n\n' },
      { type: 'toolCall', id: 'call_1|fc_1', name: 'bash', arguments: {} },
      { type: 'toolCall', id: 'call_1_fc_1', name: 'bash', arguments: {} },
      { type: 'toolCall', id: `${'a'.repeat(40)}-one`, name: 'bash', arguments: {} },
      { type: 'toolCall', id: `${'a'.repeat(40)}-two`, name: 'bash', arguments: {} },
    ],
  },
  ...['call_1|fc_1', 'call_1_fc_1', `${'a'.repeat(40)}-one`, `${'a'.repeat(40)}-two`].map((id, k) => ({
    role: 'toolResult',
    toolCallId: id,
    toolName: 'bash',
    content: [{ type: 'text', text: k === 0 ? ' ' : `out ${k}` }],
    isError: false,
  })),
  { role: 'user', content: ' \n' },
  { role: 'assistant', content: [{ type: 'text', text: '\t' }] },
  { role: 'user', content: 'Next.' },
];

test('toAnthropicMessages: ids outside the API pattern are rewritten in calls and results, blank text blocks dropped; the server accepts them', async () => {
  // `call_1|fc_1` was sent as it is (400: `tool_use.id: String should match pattern`), and text
  // of white space only ("\n\n" before tool calls, a blank user message) too (400: "text content
  // blocks must contain non-whitespace text").
  const messages = toAnthropicMessages(/** @type {any} */ (FOREIGN_IDS));
  assert.deepEqual(
    messages[1].content.map((/** @type {any} */ b) => b.id),
    ['call_1_fc_1_2', 'call_1_fc_1', `${'a'.repeat(40)}-one`, `${'a'.repeat(40)}-two`],
  );
  assert.deepEqual(
    messages[2].content.map((/** @type {any} */ b) => [b.type, b.tool_use_id, b.content?.length]),
    [
      ['tool_result', 'call_1_fc_1_2', 0],
      ['tool_result', 'call_1_fc_1', 1],
      ['tool_result', `${'a'.repeat(40)}-one`, 1],
      ['tool_result', `${'a'.repeat(40)}-two`, 1],
      ['text', undefined, undefined],
    ],
  );
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'user'],
  );
  assert.deepEqual(messages[2].content.at(-1), { type: 'text', text: 'Next.' });
  await assertAnthropicAccepts(messages);
});

/**
 * Failed results without text (empty, blank, image only, text and image), and calls whose
 * arguments are no object: an array, the JSON text of an object (sent as that object), null.
 */
const ODD_RESULTS = [
  { role: 'user', content: 'Try them.' },
  {
    role: 'assistant',
    content: [
      { type: 'toolCall', id: 'call_e', name: 'bash', arguments: { command: 'false' } },
      { type: 'toolCall', id: 'call_b', name: 'bash', arguments: [] },
      { type: 'toolCall', id: 'call_i', name: 'shot', arguments: '{"x":1}' },
      { type: 'toolCall', id: 'call_t', name: 'shot', arguments: null },
    ],
  },
  { role: 'toolResult', toolCallId: 'call_e', toolName: 'bash', content: [{ type: 'text', text: '' }], isError: true },
  {
    role: 'toolResult',
    toolCallId: 'call_b',
    toolName: 'bash',
    content: [{ type: 'text', text: ' \n' }],
    isError: true,
  },
  { role: 'toolResult', toolCallId: 'call_i', toolName: 'shot', content: [IMAGE], isError: true },
  {
    role: 'toolResult',
    toolCallId: 'call_t',
    toolName: 'shot',
    content: [{ type: 'text', text: 'crashed' }, IMAGE],
    isError: true,
  },
  { role: 'user', content: 'Why?' },
];

test('toAnthropicMessages: a failed result without text says so, keeps text only, and a call input is always an object; the server accepts it', async () => {
  // Sent as they were: 400 "content cannot be empty if `is_error` is true", "all content must be
  // type `text` if `is_error` is true" and "tool_use.input: Input should be a valid dictionary".
  const messages = toAnthropicMessages(/** @type {any} */ (ODD_RESULTS));
  assert.deepEqual(
    messages[1].content.map((/** @type {any} */ b) => b.input),
    [{ command: 'false' }, {}, { x: 1 }, {}],
  );
  const failed = { type: 'text', text: '(the tool failed without output)' };
  assert.deepEqual(
    messages[2].content.slice(0, 4).map((/** @type {any} */ b) => [b.tool_use_id, b.is_error, b.content]),
    [
      ['call_e', true, [failed]],
      ['call_b', true, [failed]],
      ['call_i', true, [failed]],
      ['call_t', true, [{ type: 'text', text: 'crashed' }]],
    ],
  );
  await assertAnthropicAccepts(messages);
});

test('toModelMessages: text parts that are empty or only white space are dropped, and a message left with nothing is not sent', () => {
  // They were sent: Anthropic's models refuse a blank text block and an empty message.
  const messages = toModelMessages(/** @type {any} */ (ASSISTANT_FIRST));
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'tool', 'user'],
  );
  assert.equal(messages[0].content, '(continued)', 'the blank first user message is left out');
  const blank = toModelMessages(
    /** @type {any} */ ([
      { role: 'user', content: ' \n ' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '' },
          { type: 'text', text: 'Go.' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: '\t' },
          { type: 'text', text: 'Done.' },
        ],
      },
    ]),
  );
  assert.deepEqual(blank, [
    { role: 'user', content: [{ type: 'text', text: 'Go.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
  ]);
});

test('toModelMessages: a failed result without text says so, and a call input is always an object', () => {
  /** @type {any[]} */
  const messages = toModelMessages(/** @type {any} */ (ODD_RESULTS));
  assert.deepEqual(
    messages[1].content.map((/** @type {any} */ p) => p.input),
    [{ command: 'false' }, {}, { x: 1 }, {}],
  );
  assert.deepEqual(
    messages[2].content.map((/** @type {any} */ p) => p.output),
    [
      { type: 'error-text', value: '(the tool failed without output)' },
      { type: 'error-text', value: '(the tool failed without output)' },
      { type: 'error-text', value: '(the tool failed without output)' },
      { type: 'error-text', value: 'crashed' },
    ],
  );
});

test("toChatMessages / toResponsesInput: a call's arguments are always an object's JSON text (a JSON string of one parsed, anything else {}); the servers accept them", async () => {
  // A string of JSON text went as the JSON text of that string ("\"{\\\"x\\\":1}\""), an array or
  // null as itself: the model saw no arguments object.
  const want = ['{"command":"false"}', '{}', '{"x":1}', '{}'];
  const chat = toChatMessages(/** @type {any} */ (ODD_RESULTS));
  assert.deepEqual(
    /** @type {any} */ (chat[1]).tool_calls.map((/** @type {any} */ c) => c.function.arguments),
    want,
  );
  const items = toResponsesInput(/** @type {any} */ (ODD_RESULTS));
  assert.deepEqual(
    items.filter((i) => i.type === 'function_call').map((i) => i.arguments),
    want,
  );
  await withServer(async (server) => {
    const client = openaiClient(server.openaiBaseUrl);
    await client.chat.completions.create({ model: 'gpt-4.1-mini', messages: /** @type {any} */ (chat) });
    await client.responses.create({ model: 'gpt-4.1-mini', input: /** @type {any} */ (items) });
    assert.deepEqual(
      server.requests.map((r) => r.violation),
      [undefined, undefined],
    );
  });
});

/** A context that begins with the assistant: a blank first user text, then a reply with a call. */
const ASSISTANT_FIRST = [
  { role: 'user', content: [{ type: 'text', text: '  \n' }] },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Listing.' },
      { type: 'toolCall', id: 'call_ls', name: 'bash', arguments: { command: 'ls' } },
    ],
  },
  { role: 'toolResult', toolCallId: 'call_ls', toolName: 'bash', content: [{ type: 'text', text: 'a.ts' }] },
  // Nothing any provider is sent: unsigned thinking for Anthropic, and no part at all for the SDK.
  { role: 'assistant', content: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }] },
  { role: 'user', content: 'Go on.' },
];

test('toAnthropicMessages: a conversation that would begin with the assistant begins with a user turn; the server accepts it', async () => {
  // It was sent as it was: 400 "messages: first message must use the \"user\" role".
  const messages = toAnthropicMessages(/** @type {any} */ (ASSISTANT_FIRST));
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'user'],
  );
  assert.deepEqual(messages[0].content, [{ type: 'text', text: '(continued)' }]);
  assert.deepEqual(
    messages[2].content.map((/** @type {any} */ b) => b.type),
    ['tool_result', 'text'],
  );
  // A context that begins with a user turn gets none.
  assert.deepEqual(toAnthropicMessages(/** @type {any} */ (ASSISTANT_FIRST.slice(4))), [
    { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
  ]);
  await assertAnthropicAccepts(messages);
});

test('toModelMessages: an assistant message without parts is left out, and the conversation begins with a user turn; the ai package posts it', async () => {
  // The empty assistant message was sent (Anthropic's models: 400 "all messages must have
  // non-empty content"), and so was a conversation beginning with the assistant.
  const messages = toModelMessages(/** @type {any} */ (ASSISTANT_FIRST.slice(1)), {
    system: 'You are a coding agent.',
  });
  assert.deepEqual(
    messages.map((m) => [m.role, Array.isArray(m.content) ? m.content.length : m.content]),
    [
      ['system', 'You are a coding agent.'],
      ['user', '(continued)'],
      ['assistant', 2],
      ['tool', 1],
      ['user', 'Go on.'],
    ],
  );
  // A context that begins with a user turn gets none.
  assert.deepEqual(
    toModelMessages(/** @type {any} */ (ASSISTANT_FIRST)).map((m) => m.role),
    ['user', 'assistant', 'tool', 'user'],
  );
  assert.ok(toModelMessages(/** @type {any} */ (CONTEXT)).every((m) => m.role !== 'assistant' || m.content.length));
  await withServer(async (server) => {
    // ai 7 takes the system prompt as `system` / `instructions` only (a system message in
    // `messages` is refused unless `allowSystemInMessages`).
    const result = await generateText({
      model: gatewayModel(server.gatewayBaseUrl),
      system: 'You are a coding agent.',
      messages: /** @type {any} */ (toModelMessages(/** @type {any} */ (ASSISTANT_FIRST.slice(1)))),
      maxRetries: 0,
    });
    assert.equal(result.text, SUMMARY);
    assert.equal(server.requests[0].violation, undefined);
    assert.deepEqual(
      server.requests[0].body.prompt.map((/** @type {any} */ m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'user'],
    );
  });
});

test('toChatMessages: tool call ids longer than 40 characters are cut in calls and results, kept distinct; the server accepts them', async () => {
  const messages = /** @type {any[]} */ (toChatMessages(/** @type {any} */ (FOREIGN_IDS)));
  const a40 = 'a'.repeat(40);
  assert.deepEqual(
    messages[1].tool_calls.map((/** @type {any} */ c) => c.id),
    ['call_1|fc_1', 'call_1_fc_1', a40, `${'a'.repeat(38)}_2`],
  );
  assert.deepEqual(
    messages.slice(2, 6).map((m) => m.tool_call_id),
    ['call_1|fc_1', 'call_1_fc_1', a40, `${'a'.repeat(38)}_2`],
  );
  await withServer(async (server) => {
    await openaiClient(server.openaiBaseUrl).chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: /** @type {any} */ (messages),
    });
    assert.equal(server.requests[0].violation, undefined);
  });
});

test('toModelMessages: ModelMessage[] that the ai package validates and its gateway provider posts; the server accepts the prompt', async () => {
  const messages = toModelMessages(/** @type {any} */ (CONTEXT));
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'user', 'assistant', 'tool', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.deepEqual(messages[2].content, [
    { type: 'reasoning', text: 'Two reads.', providerOptions: { anthropic: { signature: 'sig-1' } } },
    { type: 'text', text: 'Reading them.' },
    { type: 'tool-call', toolCallId: 'call_a', toolName: 'read', input: { path: 'a.ts' } },
    { type: 'tool-call', toolCallId: 'call_b', toolName: 'read', input: { path: 'b.png' } },
  ]);
  assert.deepEqual(messages[3].content[1], {
    type: 'tool-result',
    toolCallId: 'call_b',
    toolName: 'read',
    output: {
      type: 'content',
      value: [
        { type: 'text', text: 'an image' },
        { type: 'file', data: { type: 'data', data: 'iVBORw0KGgo=' }, mediaType: 'image/png' },
      ],
    },
  });
  assert.deepEqual(/** @type {any} */ (messages[6]).content[0].output, { type: 'error-text', value: 'exit 1' });
  await withServer(async (server) => {
    const result = await generateText({
      model: gatewayModel(server.gatewayBaseUrl),
      system: 'You are a coding agent.',
      messages: /** @type {any} */ ([...messages, { role: 'user', content: 'Go on.' }]),
      maxRetries: 0,
    });
    assert.equal(result.text, SUMMARY);
    const [request] = server.requests;
    assert.equal(request.violation, undefined);
    assert.equal(request.headers['ai-language-model-id'], 'openai/gpt-4.1-mini');
    assert.deepEqual(
      request.body.prompt.map((/** @type {any} */ m) => m.role),
      ['system', 'user', 'user', 'assistant', 'tool', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
  });
});

/**
 * A tool loop with Anthropic's extended thinking, as pi stores it: the turn that called the
 * tool begins with signed thinking; an earlier turn holds a redacted block (pi keeps its data in
 * `thinkingSignature`) and a turn of another API holds thinking signed by that API.
 */
const THINKING_LOOP = [
  { role: 'user', content: 'Plan it.' },
  {
    role: 'assistant',
    api: 'anthropic-messages',
    provider: 'anthropic',
    content: [
      { type: 'thinking', thinking: '', thinkingSignature: 'EmRlZGFjdGVk', redacted: true },
      { type: 'text', text: 'Planned.' },
    ],
  },
  { role: 'user', content: 'Now with the other model.' },
  {
    role: 'assistant',
    api: 'openai-responses',
    provider: 'openai',
    content: [
      { type: 'thinking', thinking: 'Other.', thinkingSignature: '{"type":"reasoning","id":"rs_1","summary":[]}' },
      { type: 'text', text: 'Answered.' },
    ],
  },
  { role: 'user', content: 'Read a.ts.' },
  {
    role: 'assistant',
    api: 'anthropic-messages',
    provider: 'anthropic',
    content: [
      { type: 'thinking', thinking: 'One read.', thinkingSignature: 'EqQBCkYIBxgC' },
      { type: 'toolCall', id: 'toolu_1', name: 'read', arguments: { path: 'a.ts' } },
    ],
  },
  { role: 'toolResult', toolCallId: 'toolu_1', toolName: 'read', content: [{ type: 'text', text: 'export {}' }] },
];

/** The assistant blocks of an Anthropic request body, by type, with what identifies each. */
const assistantThinking = (/** @type {any} */ body) =>
  body.messages
    .filter((/** @type {any} */ m) => m.role === 'assistant')
    .map((/** @type {any} */ m) =>
      m.content.map((/** @type {any} */ b) =>
        b.type === 'thinking'
          ? `thinking:${b.signature}`
          : b.type === 'redacted_thinking'
            ? `redacted:${b.data}`
            : b.type,
      ),
    );

test("thinking reaches Anthropic signed through both adapters (redacted blocks as redacted_thinking, another API's signature left out); with thinking on, the server accepts the tool loop", async () => {
  const expected = [['redacted:EmRlZGFjdGVk', 'text'], ['text'], ['thinking:EqQBCkYIBxgC', 'tool_use']];
  // toAnthropicMessages, sent by @anthropic-ai/sdk. Before, the redacted block went as a
  // `thinking` block signed with its data and the OpenAI one with its JSON: both refused.
  await withServer(async (server) => {
    await anthropicClient(server.anthropicSdkBaseUrl).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: /** @type {any} */ (toAnthropicMessages(/** @type {any} */ (THINKING_LOOP))),
    });
    assert.equal(server.requests[0].violation, undefined);
    assert.deepEqual(assistantThinking(server.requests[0].body), expected);
  });
  // toModelMessages, sent by @ai-sdk/anthropic: it sends a reasoning part only with its signature
  // (or redacted data) in providerOptions.anthropic. Before, it had neither, so the tool loop's
  // turn began with tool_use: 400 "Expected `thinking` or `redacted_thinking`".
  const parts = toModelMessages(/** @type {any} */ (THINKING_LOOP));
  assert.deepEqual(/** @type {any} */ (parts[5]).content[0], {
    type: 'reasoning',
    text: 'One read.',
    providerOptions: { anthropic: { signature: 'EqQBCkYIBxgC' } },
  });
  assert.deepEqual(/** @type {any} */ (parts[3]).content[0], { type: 'reasoning', text: 'Other.' });
  const reply = {
    id: 'msg_think',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'It exports nothing.', signature: 'EpoCReply' },
      { type: 'redacted_thinking', data: 'EmReplyRedacted' },
      { type: 'text', text: 'a.ts exports nothing.' },
    ],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 900, output_tokens: 60, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  };
  const respond = (/** @type {any} */ r) => {
    r.violation = anthropicViolation(r.body);
    return r.violation
      ? { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: r.violation } } }
      : { status: 200, body: reply };
  };
  await withServer(
    async (server) => {
      const model = createAnthropic({ baseURL: server.anthropicBaseUrl, apiKey: SECRET })('claude-sonnet-4-5');
      const thinking = { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } };
      const result = await generateText({
        model,
        messages: /** @type {any} */ (parts),
        providerOptions: thinking,
        maxRetries: 0,
      });
      assert.equal(server.requests[0].violation, undefined);
      assert.deepEqual(assistantThinking(server.requests[0].body), expected);
      // The reply's signed and redacted thinking come back into the session, and go out again.
      const back = fromModelMessages(result.response.messages, { now: NOW, provider: 'anthropic' });
      assert.deepEqual(/** @type {any} */ (back[0]).content.slice(0, 2), [
        { type: 'thinking', thinking: 'It exports nothing.', thinkingSignature: 'EpoCReply' },
        { type: 'thinking', thinking: '', thinkingSignature: 'EmReplyRedacted', redacted: true },
      ]);
      const tree = SessionTree.fromEntries([]);
      for (const m of [...THINKING_LOOP, ...back]) tree.appendMessage(/** @type {any} */ (m));
      const again = toModelMessages(tree.buildLlmMessages(), { system: undefined });
      await generateText({
        model,
        messages: /** @type {any} */ ([...again, { role: 'user', content: 'Go on.' }]),
        providerOptions: thinking,
        maxRetries: 0,
      });
      assert.equal(server.requests[1].violation, undefined);
      assert.deepEqual(assistantThinking(server.requests[1].body).at(-1), [
        'thinking:EpoCReply',
        'redacted:EmReplyRedacted',
        'text',
      ]);
      tree.free();
    },
    { respond },
  );
  // The Messages API reply itself, mapped by fromAnthropicMessages, keeps the redacted block.
  assert.deepEqual(/** @type {any} */ (fromAnthropicMessages([reply], { now: NOW })[0]).content.slice(0, 2), [
    { type: 'thinking', thinking: 'It exports nothing.', thinkingSignature: 'EpoCReply' },
    { type: 'thinking', thinking: '', thinkingSignature: 'EmReplyRedacted', redacted: true },
  ]);
  // The rule server refuses what the adapters no longer send.
  assert.match(
    String(
      anthropicViolation({
        max_tokens: 9,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x' }] },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'y', signature: '{"id":"rs_1"}' }] },
        ],
      }),
    ),
    /Invalid `signature`/,
  );
  assert.match(
    String(
      anthropicViolation({
        max_tokens: 9,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: toAnthropicMessages(
          /** @type {any} */ (THINKING_LOOP.map((m) => (m.role === 'assistant' ? { ...m, api: 'other' } : m))),
        ),
      }),
    ),
    /Expected `thinking` or `redacted_thinking`, but found `tool_use`/,
  );
});

/**
 * A turn that failed mid-stream (`stopReason: "error"`, partial text and a call) and pi's retry
 * (signed thinking, a call whose id is pi's Responses form `{call_id}|{item id}`, 83 characters),
 * then an aborted turn with a call the engine answers, and a turn that stopped before another
 * assistant message that begins with signed thinking.
 */
const RESPONSES_ID = 'call_Qm9oZ2VuZ3JhdWJ1c2N1aGF0|fc_68a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718';
const A = { api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5' };
const REPLAYED = [
  { role: 'user', content: 'List the files.' },
  {
    role: 'assistant',
    ...A,
    stopReason: 'error',
    errorMessage: 'Overloaded',
    content: [
      { type: 'text', text: 'Let me' },
      { type: 'toolCall', id: 'toolu_cut', name: 'bash', arguments: { command: 'l' } },
    ],
  },
  {
    role: 'toolResult',
    toolCallId: 'toolu_cut',
    toolName: 'bash',
    content: [{ type: 'text', text: 'No result provided' }],
    isError: true,
  },
  {
    role: 'assistant',
    ...A,
    stopReason: 'toolUse',
    content: [
      { type: 'thinking', thinking: 'Run ls.', thinkingSignature: 'EqQBCkYIBxgC' },
      { type: 'toolCall', id: RESPONSES_ID, name: 'bash', arguments: { command: 'ls' } },
    ],
  },
  { role: 'toolResult', toolCallId: RESPONSES_ID, toolName: 'bash', content: [{ type: 'text', text: 'a.ts' }] },
  { role: 'assistant', ...A, stopReason: 'aborted', content: [{ type: 'text', text: 'a.ts is' }] },
  { role: 'user', content: 'Go on.' },
  { role: 'assistant', ...A, stopReason: 'stop', content: [{ type: 'text', text: 'Reading it.' }] },
  {
    role: 'assistant',
    ...A,
    stopReason: 'toolUse',
    content: [
      { type: 'thinking', thinking: 'Read a.ts.', thinkingSignature: 'EqQBCkYIBxgD' },
      { type: 'toolCall', id: 'toolu_read', name: 'read', arguments: { path: 'a.ts' } },
    ],
  },
  { role: 'toolResult', toolCallId: 'toolu_read', toolName: 'read', content: [{ type: 'text', text: 'export {}' }] },
];

test("every adapter: a failed or aborted turn is not replayed (nor its calls' results), a turn beginning with signed thinking is not merged into the one before, and long or foreign tool ids are sent in each provider's form; the servers accept them", async () => {
  // Before: the failed turn merged with its retry, whose thinking then came second (Anthropic,
  // thinking on: 400 "Expected `thinking` … but found `text`"), the 83-character id went to the
  // Responses API (400 "string too long … maximum length 64") and, through the AI SDK, to
  // Anthropic (400 "tool_use.id: String should match pattern").
  const anthropic = toAnthropicMessages(/** @type {any} */ (REPLAYED));
  assert.deepEqual(
    anthropic.map((m) => [m.role, m.content.map((b) => b.type).join(',')]),
    [
      ['user', 'text'],
      ['assistant', 'thinking,tool_use'],
      ['user', 'tool_result,text'],
      ['assistant', 'text'],
      ['user', 'text'],
      ['assistant', 'thinking,tool_use'],
      ['user', 'tool_result'],
    ],
  );
  assert.deepEqual(anthropic[4].content, [{ type: 'text', text: '(continued)' }]);
  assert.equal(/** @type {any} */ (anthropic[1].content[1]).id, RESPONSES_ID.replace('|', '_'));
  const thinkingOn = { type: 'enabled', budget_tokens: 1024 };
  assert.equal(anthropicViolation({ max_tokens: 2048, thinking: thinkingOn, messages: anthropic }), undefined);

  const parts = toModelMessages(/** @type {any} */ (REPLAYED));
  assert.deepEqual(
    parts.map((m) => m.role),
    ['user', 'assistant', 'tool', 'user', 'assistant', 'user', 'assistant', 'tool'],
  );
  const portable = /** @type {any} */ (parts[1]).content[1].toolCallId;
  assert.match(portable, /^[a-zA-Z0-9_-]{1,40}$/);
  assert.equal(/** @type {any} */ (parts[2]).content[0].toolCallId, portable, 'the result answers the call');
  await withServer(async (server) => {
    const model = createAnthropic({ baseURL: server.anthropicBaseUrl, apiKey: SECRET })('claude-sonnet-4-5');
    await generateText({
      model,
      messages: /** @type {any} */ (parts),
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
      maxRetries: 0,
    });
    assert.equal(server.requests[0].violation, undefined);
  });

  const chat = toChatMessages(/** @type {any} */ (REPLAYED));
  assert.deepEqual(
    chat.map((m) => m.role),
    ['user', 'assistant', 'tool', 'user', 'assistant', 'assistant', 'tool'],
  );
  assert.equal(/** @type {any} */ (chat[1]).tool_calls[0].id, RESPONSES_ID.slice(0, 40));
  const items = toResponsesInput(/** @type {any} */ (REPLAYED));
  const ids = items.flatMap((/** @type {any} */ i) => (i.call_id ? [i.call_id] : []));
  assert.deepEqual(ids, [RESPONSES_ID.slice(0, 64), RESPONSES_ID.slice(0, 64), 'toolu_read', 'toolu_read']);
  assert.ok(!JSON.stringify(items).includes('Let me') && !JSON.stringify(items).includes('toolu_cut'));
  await withServer(async (server) => {
    const client = openaiClient(server.openaiBaseUrl);
    await client.chat.completions.create({ model: 'gpt-4.1-mini', messages: /** @type {any} */ (chat) });
    await client.responses.create({ model: 'gpt-4.1-mini', input: /** @type {any} */ (items) });
    assert.deepEqual(
      server.requests.map((r) => r.violation),
      [undefined, undefined],
    );
  });
  // The oracle refuses the id as it was sent.
  assert.match(
    String(
      responsesViolation([
        { type: 'function_call', call_id: RESPONSES_ID, name: 'bash', arguments: '{}' },
        { type: 'function_call_output', call_id: RESPONSES_ID, output: 'a.ts' },
      ]),
    ),
    /string too long\. Expected a string with maximum length 64/,
  );
});

test("a failed turn's results are left out up to the next assistant message only (a retry may reuse the call id); unsigned reasoning first does not hide signed thinking from the (continued) rule", async () => {
  const reused = [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      stopReason: 'aborted',
      content: [{ type: 'toolCall', id: 'call_0', name: 'ls', arguments: {} }],
    },
    {
      role: 'toolResult',
      toolCallId: 'call_0',
      toolName: 'ls',
      content: [{ type: 'text', text: 'cut' }],
      isError: true,
    },
    {
      role: 'assistant',
      stopReason: 'toolUse',
      content: [{ type: 'toolCall', id: 'call_0', name: 'ls', arguments: {} }],
    },
    { role: 'toolResult', toolCallId: 'call_0', toolName: 'ls', content: [{ type: 'text', text: 'a.ts' }] },
  ];
  // Before, the retry's result was dropped too: a call without its result.
  assert.deepEqual(
    toAnthropicMessages(/** @type {any} */ (reused)).map((m) => m.content.map((b) => b.type).join(',')),
    ['text', 'tool_use', 'tool_result'],
  );
  assert.equal(toChatMessages(/** @type {any} */ (reused)).filter((m) => m.role === 'tool').length, 1);
  assert.equal(chatViolation(toChatMessages(/** @type {any} */ (reused))), undefined);
  assert.equal(responsesViolation(toResponsesInput(/** @type {any} */ (reused))), undefined);
  assert.deepEqual(
    toModelMessages(/** @type {any} */ (reused)).map((m) => m.role),
    ['user', 'assistant', 'tool'],
  );
  const unsignedFirst = [
    { role: 'user', content: 'go' },
    { role: 'assistant', ...A, stopReason: 'stop', content: [{ type: 'text', text: 'Looking.' }] },
    {
      role: 'assistant',
      ...A,
      stopReason: 'toolUse',
      content: [
        { type: 'thinking', thinking: 'unsigned' },
        { type: 'thinking', thinking: 'Run ls.', thinkingSignature: 'EqQBCkYIBxgE' },
        { type: 'toolCall', id: 'toolu_ls', name: 'ls', arguments: {} },
      ],
    },
    { role: 'toolResult', toolCallId: 'toolu_ls', toolName: 'ls', content: [{ type: 'text', text: 'a.ts' }] },
  ];
  const parts = toModelMessages(/** @type {any} */ (unsignedFirst));
  assert.deepEqual(
    parts.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant', 'tool'],
  );
  await withServer(async (server) => {
    const model = createAnthropic({ baseURL: server.anthropicBaseUrl, apiKey: SECRET })('claude-sonnet-4-5');
    await generateText({
      model,
      messages: /** @type {any} */ (parts),
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
      maxRetries: 0,
    });
    assert.equal(server.requests[0].violation, undefined);
  });
  assert.throws(() => toChatMessages(/** @type {any} */ (undefined)), /toChatMessages: messages must be an array/);
});

test('toModelMessages: an assistant message of unsigned reasoning only is not sent; @ai-sdk/anthropic then sends one user turn', async () => {
  // Before, the SDK dropped the reasoning and with it the message: two user turns in a row.
  const messages = [
    { role: 'user', content: 'q1' },
    { role: 'assistant', api: 'openai-responses', content: [{ type: 'thinking', thinking: 'hmm' }] },
    { role: 'user', content: 'q2' },
  ];
  const parts = toModelMessages(/** @type {any} */ (messages));
  assert.deepEqual(
    parts.map((m) => m.role),
    ['user', 'user'],
  );
  await withServer(async (server) => {
    const model = createAnthropic({ baseURL: server.anthropicBaseUrl, apiKey: SECRET })('claude-sonnet-4-5');
    await generateText({ model, messages: /** @type {any} */ (parts), maxRetries: 0 });
    assert.equal(server.requests[0].violation, undefined);
    assert.deepEqual(
      server.requests[0].body.messages.map((/** @type {any} */ m) => m.role),
      ['user'],
    );
  });
});

test('the rule servers refuse what the providers refuse (a result without its call, an unanswered call, two user turns for Anthropic)', async () => {
  await withServer(async (server) => {
    const orphan = [
      { role: 'user', content: 'hi' },
      { role: 'tool', tool_call_id: 'nope', content: 'x' },
    ];
    await assert.rejects(
      openaiClient(server.openaiBaseUrl).chat.completions.create({ model: 'm', messages: /** @type {any} */ (orphan) }),
      (/** @type {any} */ e) => e.status === 400 && /preceeding message with 'tool_calls'/.test(e.message),
    );
    const unanswered = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }] },
      { role: 'user', content: [{ type: 'text', text: 'and?' }] },
    ];
    await assert.rejects(
      anthropicClient(server.anthropicSdkBaseUrl).messages.create({
        model: 'm',
        max_tokens: 10,
        messages: /** @type {any} */ (unanswered),
      }),
      (/** @type {any} */ e) => e.status === 400 && /without `tool_result` blocks/.test(e.message),
    );
    const twoUsers = /** @type {const} */ ([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
    await assert.rejects(
      anthropicClient(server.anthropicSdkBaseUrl).messages.create({
        model: 'm',
        max_tokens: 10,
        messages: [...twoUsers],
      }),
      (/** @type {any} */ e) => e.status === 400 && /alternate/.test(e.message),
    );
  });
});

test('the real sessions: buildLlmMessages() of each example session, mapped by each adapter, is accepted by each rule server (the engine decides the content)', {}, async () => {
  await withServer(async (server) => {
    for (const name of SESSIONS) {
      const tree = SessionTree.fromBytes(readFileSync(sessionPath(name)));
      try {
        const context = tree.buildLlmMessages();
        assert.ok(context.length > 50, `${name}: ${context.length} messages`);
        const next = { role: /** @type {const} */ ('user'), content: 'Go on.', timestamp: NOW };
        await openaiClient(server.openaiBaseUrl).chat.completions.create({
          model: 'm',
          messages: /** @type {any} */ ([...toChatMessages(context, { system: 'S' }), next]),
        });
        await openaiClient(server.openaiBaseUrl).responses.create({
          model: 'm',
          input: /** @type {any} */ ([...toResponsesInput(context), next]),
        });
        await anthropicClient(server.anthropicSdkBaseUrl).messages.create({
          model: 'm',
          max_tokens: 1024,
          system: 'S',
          messages: /** @type {any} */ ([...toAnthropicMessages([...context, next])]),
        });
        await generateText({
          model: gatewayModel(server.gatewayBaseUrl),
          messages: /** @type {any} */ ([...toModelMessages(context), next]),
          maxRetries: 0,
        });
        // The adapter keeps the engine's text: the first message of the compacted session is the
        // rendered compaction summary, byte for byte.
        const first = /** @type {any} */ (context[0]);
        const firstText = typeof first.content === 'string' ? first.content : first.content[0].text;
        const chatFirst = /** @type {any} */ (toChatMessages(context)[0]);
        assert.equal(typeof chatFirst.content === 'string' ? chatFirst.content : chatFirst.content[0].text, firstText);
      } finally {
        tree.free();
      }
    }
    assert.equal(server.requests.length, SESSIONS.length * 4);
    assert.deepEqual(
      server.requests.map((r) => r.violation),
      server.requests.map(() => undefined),
    );
  });
});

test('a compacted session: the summary reaches every provider as the engine rendered it', () => {
  const tree = SessionTree.fromBytes(readFileSync(sessionPath('pi-session-with-compactions.jsonl')));
  try {
    const context = /** @type {any[]} */ (tree.buildLlmMessages());
    const summary = context[0].content[0].text;
    assert.match(summary, /summary/i);
    assert.equal(/** @type {any} */ (toAnthropicMessages(context)[0]).content[0].text, summary);
    assert.equal(/** @type {any} */ (toModelMessages(context)[0]).content[0].text, summary);
    assert.equal(/** @type {any} */ (toResponsesInput(context)[0]).content[0].text, summary);
  } finally {
    tree.free();
  }
});

test('fromChatMessages / fromResponsesItems / fromAnthropicMessages / fromModelMessages invert the mapping (text, tool calls, results, names)', () => {
  const core = (/** @type {any[]} */ ms) =>
    ms.map((m) => ({
      role: m.role,
      text: (Array.isArray(m.content) ? m.content : [{ type: 'text', text: m.content }])
        .filter((/** @type {any} */ b) => b.type === 'text')
        .map((/** @type {any} */ b) => b.text),
      calls: (Array.isArray(m.content) ? m.content : [])
        .filter((/** @type {any} */ b) => b.type === 'toolCall')
        .map((/** @type {any} */ b) => [b.id, b.name, b.arguments]),
      result: m.role === 'toolResult' ? [m.toolCallId, m.toolName, m.isError] : null,
    }));
  // Chat and Responses have no image-in-tool-result form nor thinking; Anthropic merges the two
  // leading user messages, so each is compared against what its provider can carry.
  // Chat and Responses have no error flag on a tool result either.
  const chat = fromChatMessages(toChatMessages(/** @type {any} */ (CONTEXT)), { now: NOW });
  assert.deepEqual(core(chat), core(withoutImageTurns(CONTEXT, 'user')));
  const responses = fromResponsesItems(toResponsesInput(/** @type {any} */ (CONTEXT)), { now: NOW });
  assert.deepEqual(core(responses), core(withoutImageTurns(CONTEXT, 'user')));
  const ai = fromModelMessages(toModelMessages(/** @type {any} */ (CONTEXT)), { now: NOW });
  assert.deepEqual(core(ai), core(CONTEXT));
  assert.deepEqual(/** @type {any} */ (ai[2]).content[0], {
    type: 'thinking',
    thinking: 'Two reads.',
    thinkingSignature: 'sig-1',
  });
  assert.deepEqual(/** @type {any} */ (ai[4]).content[1], IMAGE);
  const anthropic = fromAnthropicMessages(toAnthropicMessages(/** @type {any} */ (CONTEXT)), { now: NOW });
  assert.deepEqual(
    anthropic.map((m) => m.role),
    ['user', 'assistant', 'toolResult', 'toolResult', 'user', 'assistant', 'toolResult', 'assistant'],
  );
  assert.deepEqual(anthropic[3].content, [{ type: 'text', text: 'an image' }, IMAGE]);
  assert.deepEqual(/** @type {any} */ (anthropic[6]).isError, true);
  assert.deepEqual(/** @type {any} */ (anthropic[1]).content[0], {
    type: 'thinking',
    thinking: 'Two reads.',
    thinkingSignature: 'sig-1',
  });
  assert.ok(chat.every((m) => m.timestamp === NOW));
});

/** CONTEXT as Chat / Responses give it back: a tool result's images come back as one user turn. */
function withoutImageTurns(/** @type {any[]} */ context, /** @type {string} */ role) {
  const out = [];
  for (const m of context) {
    if (m.role === 'toolResult') {
      const images = m.content.filter((/** @type {any} */ b) => b.type === 'image');
      out.push({ ...m, isError: false, content: m.content.filter((/** @type {any} */ b) => b.type !== 'image') });
      if (images.length) out.push({ role, content: images });
    } else {
      out.push(m);
    }
  }
  return out;
}

test('turn by turn: an SDK reply mapped back and appended keeps the SessionTree in step with the SDK history', {}, async () => {
  await withServer(async (server) => {
    const tree = SessionTree.fromBytes(readFileSync(sessionPath('pi-session-large.jsonl')));
    try {
      const client = anthropicClient(server.anthropicSdkBaseUrl);
      const before = tree.buildLlmMessages().length;
      const user = { role: /** @type {const} */ ('user'), content: 'Summarize what changed.' };
      for (const message of fromAnthropicMessages([user], { now: NOW })) tree.appendMessage(message);
      const messages = toAnthropicMessages(tree.buildLlmMessages());
      const reply = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 512, messages });
      const [assistant] = fromAnthropicMessages([reply], { now: NOW });
      assert.equal(assistant.role, 'assistant');
      assert.deepEqual(assistant.usage, { input: 1200, output: 40, cacheRead: 0, cacheWrite: 0, totalTokens: 1240 });
      assert.equal(assistant.stopReason, 'stop');
      const leaf = tree.leafId;
      const entry = tree.appendMessage(assistant);
      assert.match(entry.id, /^[0-9a-f]{8}$/);
      assert.equal(entry.parentId, leaf);
      assert.deepEqual(entry.message, assistant);
      assert.equal(tree.leafId, entry.id);
      const after = tree.buildLlmMessages();
      assert.equal(after.length, before + 2);
      // The tree's next request is the SDK history plus the reply, as the SDK would send it.
      assert.deepEqual(toAnthropicMessages(after), [...messages, { role: 'assistant', content: reply.content }]);
    } finally {
      tree.free();
    }
  });
});

test('fromChatMessages reads a completion: usage, model, stop reason, tool names of results', () => {
  const completion = {
    model: 'gpt-4.1-mini',
    choices: [{ finish_reason: 'tool_calls' }],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 7,
      total_tokens: 107,
      prompt_tokens_details: { cached_tokens: 30 },
    },
  };
  const out = fromChatMessages(
    [
      { role: 'system', content: 'S' },
      { role: 'tool', tool_call_id: 'x', content: 'orphan text kept as given' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'grep', arguments: '{"q":1}' } }],
      },
    ],
    { completion, now: NOW },
  );
  assert.deepEqual(out, [
    {
      role: 'toolResult',
      toolCallId: 'x',
      toolName: '',
      content: [{ type: 'text', text: 'orphan text kept as given' }],
      isError: false,
      timestamp: NOW,
    },
    {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'c1', name: 'grep', arguments: { q: 1 } }],
      timestamp: NOW,
      usage: { input: 70, output: 7, cacheRead: 30, cacheWrite: 0, totalTokens: 107 },
      provider: 'openai',
      model: 'gpt-4.1-mini',
      stopReason: 'toolUse',
      api: 'openai-completions',
    },
  ]);
});

test('an SDK history becomes a SessionTree through appendMessage (ids, parents, timestamps by the engine)', () => {
  const messages = fromModelMessages(toModelMessages(/** @type {any} */ (CONTEXT)), {
    model: 'm',
    provider: 'p',
    now: NOW,
  });
  assert.deepEqual(
    messages
      .filter((m) => m.role === 'assistant')
      .map((m) => [/** @type {any} */ (m).provider, /** @type {any} */ (m).model, /** @type {any} */ (m).stopReason]),
    [
      ['p', 'm', 'toolUse'],
      ['p', 'm', 'toolUse'],
      ['p', 'm', 'stop'],
    ],
  );
  const tree = SessionTree.fromEntries([]);
  try {
    const entries = messages.map((m) => tree.appendMessage(m));
    assert.equal(entries[0].parentId, null);
    for (let i = 1; i < entries.length; i++) assert.equal(entries[i].parentId, entries[i - 1].id);
    assert.equal(new Set(entries.map((e) => e.id)).size, entries.length);
    assert.equal(tree.leafId, entries.at(-1)?.id);
    // Saved and loaded again: a session built in memory has a header, so nothing is lost.
    const again = SessionTree.fromJsonl(tree.toJsonl());
    try {
      assert.equal(again.entryCount, entries.length);
      assert.equal(again.header?.type, 'session');
      assert.equal(again.header?.version, 3);
      assert.deepEqual(again.getBranch(), tree.getBranch());
    } finally {
      again.free();
    }
    assert.deepEqual(tree.validate().issues, []);
    assert.deepEqual(
      tree.buildLlmMessages().map((m) => m.role),
      CONTEXT.map((m) => m.role),
    );
  } finally {
    tree.free();
  }
});

test('anthropicComplete: the Messages request (system separate), the text of the reply', async () => {
  await withServer(async (server) => {
    const complete = anthropicComplete({
      baseUrl: `${server.anthropicBaseUrl}/`,
      model: 'claude-haiku-4-5',
      apiKey: SECRET,
    });
    const text = await complete({ systemPrompt: 'You summarize.', prompt: 'The conversation', maxTokens: 321 });
    assert.equal(text, SUMMARY);
    const [r] = server.requests;
    assert.equal(r.path, '/v1/messages');
    assert.equal(r.headers['x-api-key'], SECRET);
    assert.equal(r.headers['anthropic-version'], '2023-06-01');
    assert.equal(r.headers.authorization, undefined);
    assert.deepEqual(r.body, {
      model: 'claude-haiku-4-5',
      max_tokens: 321,
      system: 'You summarize.',
      messages: [{ role: 'user', content: 'The conversation' }],
    });
  });
});

test('openaiComplete({api: "responses"}): the request the openai SDK sends for the same call, the SDK\'s output_text; compacts a real session', async () => {
  await withServer(async (server) => {
    const request = { systemPrompt: 'You summarize.', prompt: 'The conversation', maxTokens: 321 };
    const complete = openaiComplete({
      baseUrl: `${server.openaiBaseUrl}/`,
      model: 'gpt-4.1-mini',
      apiKey: SECRET,
      api: 'responses',
    });
    const text = await complete(request);
    const response = await openaiClient(server.openaiBaseUrl).responses.create({
      model: 'gpt-4.1-mini',
      instructions: request.systemPrompt,
      input: request.prompt,
      max_output_tokens: request.maxTokens,
    });
    assert.equal(text, SUMMARY);
    assert.equal(text, response.output_text);
    const [ours, sdk] = server.requests;
    assert.equal(ours.path, '/v1/responses');
    assert.equal(ours.headers.authorization, `Bearer ${SECRET}`);
    assert.deepEqual(ours.body, sdk.body);
    assert.deepEqual(ours.body, {
      model: 'gpt-4.1-mini',
      instructions: 'You summarize.',
      input: 'The conversation',
      max_output_tokens: 321,
    });
    assert.equal(ours.violation, undefined);

    // Through the engine: every summary request of a compaction goes to /responses.
    const tree = SessionTree.fromBytes(readFileSync(sessionPath('pi-session-large.jsonl')));
    try {
      const { result, compactionEntry } = await tree.compact({ complete });
      assert.ok(result.summary.includes(SUMMARY), result.summary);
      assert.equal(tree.leafId, compactionEntry.id);
      const calls = server.requests.slice(2);
      assert.ok(calls.length >= 1);
      assert.deepEqual(
        calls.map((c) => [c.path, c.violation, typeof c.body.instructions, typeof c.body.input]),
        calls.map(() => ['/v1/responses', undefined, 'string', 'string']),
      );
    } finally {
      tree.free();
    }
  });
  await withServer(
    async (server) => {
      const complete = openaiComplete({ baseUrl: server.openaiBaseUrl, model: 'm', apiKey: SECRET, api: 'responses' });
      const error = await complete({ systemPrompt: 's', prompt: 'p', maxTokens: 1 }).then(
        () => assert.fail('resolved'),
        (/** @type {any} */ e) => e,
      );
      assert.match(error.message, /no output_text in output\[\] \(status incomplete\)/);
      assert.ok(!error.message.includes(SECRET));
    },
    { respond: () => ({ status: 200, body: { id: 'resp_1', object: 'response', status: 'incomplete', output: [] } }) },
  );
  assert.throws(
    () => openaiComplete({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', api: /** @type {any} */ ('completions') }),
    /unknown api "completions" \(expected "chat" or "responses"\)/,
  );
});

test('the complete callbacks reject with status and headers, never the key nor URL credentials; the engine retries after retry-after', async () => {
  let failures = 1;
  await withServer(
    async (server) => {
      const url = new URL(server.anthropicBaseUrl);
      url.searchParams.set('api_key', 'query-key-secret');
      const complete = anthropicComplete({ baseUrl: url.toString(), model: 'm', apiKey: SECRET });
      const error = await complete({ systemPrompt: 's', prompt: 'p', maxTokens: 1 }).then(
        () => assert.fail('resolved'),
        (/** @type {any} */ e) => e,
      );
      assert.equal(error.status, 429);
      assert.equal(error.headers.get('retry-after'), '0');
      for (const secret of [SECRET, 'query-key-secret']) {
        assert.ok(!error.message.includes(secret), `${secret} in ${error.message}`);
      }
      assert.match(error.message, /answered HTTP 429 Too Many Requests: overloaded for \[redacted\]/);
      // Through the engine: the 429 is retried after the server's retry-after, then compacts.
      failures = 1;
      const tree = SessionTree.fromBytes(readFileSync(sessionPath('pi-session-large.jsonl')));
      try {
        const last = tree
          .buildSessionContext()
          .messages.filter((m) => m.role === 'assistant')
          .at(-1);
        const check = await tree.checkCompaction(/** @type {any} */ (last), {
          contextWindow: 190000,
          complete: anthropicComplete({ baseUrl: server.anthropicBaseUrl, model: 'm', apiKey: SECRET }),
          retry: { maxRetries: 2, baseDelayMs: 60000 },
        });
        assert.equal(check.errorMessage, undefined);
        assert.equal(check.reason, 'threshold');
        assert.ok(check.result?.summary.includes('The local test server answered.'));
        const calls = server.requests.slice(1);
        assert.equal(calls[0].path, '/v1/messages');
        assert.ok(calls.length >= 2, `retried: ${calls.length} requests`);
      } finally {
        tree.free();
      }
    },
    {
      respond: () =>
        failures-- > 0
          ? {
              status: 429,
              headers: { 'retry-after': '0' },
              body: { type: 'error', error: { type: 'rate_limit_error', message: `overloaded for ${SECRET}` } },
            }
          : undefined,
    },
  );
});

test('aiSdkComplete: generateText through the ai package; its APICallError keeps status and headers for the engine', async () => {
  let fail = false;
  await withServer(
    async (server) => {
      const complete = aiSdkComplete({ generateText, model: gatewayModel(server.gatewayBaseUrl) });
      assert.equal(
        await complete({ systemPrompt: 'You summarize.', prompt: 'The conversation', maxTokens: 99 }),
        SUMMARY,
      );
      const [r] = server.requests;
      assert.equal(r.body.maxOutputTokens, 99);
      assert.deepEqual(
        r.body.prompt.map((/** @type {any} */ m) => m.role),
        ['system', 'user'],
      );
      fail = true;
      const error = await complete({ systemPrompt: 's', prompt: 'p', maxTokens: 1 }).then(
        () => assert.fail('resolved'),
        (/** @type {any} */ e) => e,
      );
      assert.equal(error.status, 429);
      assert.equal(new Headers(error.headers).get('retry-after'), '3');
      const controller = new AbortController();
      controller.abort();
      fail = false;
      await assert.rejects(complete({ systemPrompt: 's', prompt: 'p', maxTokens: 1, signal: controller.signal }), {
        name: 'AbortError',
      });
    },
    {
      respond: () =>
        fail
          ? {
              status: 429,
              headers: { 'retry-after': '3' },
              body: { error: { message: 'slow down', type: 'rate_limit_exceeded' } },
            }
          : undefined,
    },
  );
});

test('openaiComplete redacts credentials written into the base URL (fetch refuses such a URL: "fetch failed")', async () => {
  await withServer(async (server) => {
    const url = new URL(server.openaiBaseUrl);
    url.username = 'me';
    url.password = 'pw-secret-1';
    url.searchParams.set('key', 'query-secret-2');
    const complete = openaiComplete({ baseUrl: url.toString(), model: 'm', apiKey: SECRET });
    const error = await complete({ systemPrompt: 's', prompt: 'p', maxTokens: 1 }).then(
      () => assert.fail('resolved'),
      (/** @type {any} */ e) => e,
    );
    for (const secret of ['pw-secret-1', 'query-secret-2', SECRET])
      assert.ok(!error.message.includes(secret), error.message);
    assert.match(
      error.message,
      /^fetch failed: cannot reach http:\/\/\[redacted\]@127\.0\.0\.1:\d+\/v1\/chat\/completions\?key=\[redacted\]: /,
    );
    assert.equal(server.requests.length, 0);
  });
});

// ai-sdk.mjs rebuilds the whole history of a real session (interrupted tool calls included) as
// the app's SessionTree; the other two send what remains after the compaction.
const EXAMPLES = [{ name: 'openai.mjs', skip: false }, { name: 'anthropic.mjs', skip: false }, { name: 'ai-sdk.mjs' }];

for (const { name, skip } of EXAMPLES) {
  test(`examples/${name} compacts a real session and sends the next request to the local server`, {
    skip,
  }, async () => {
    await withServer(async (server) => {
      const path = fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));
      assert.ok(readFileSync(path, 'utf8').trimEnd().split('\n').length < 30, `${name} is under 30 lines`);
      const { stdout } = await promisify(execFile)(process.execPath, [path], {
        env: {
          ...process.env,
          OPENAI_BASE_URL: server.openaiBaseUrl,
          ANTHROPIC_BASE_URL: server.anthropicSdkBaseUrl,
          AI_GATEWAY_BASE_URL: server.gatewayBaseUrl,
          OPENAI_API_KEY: SECRET,
          ANTHROPIC_API_KEY: SECRET,
          AI_GATEWAY_API_KEY: SECRET,
        },
      });
      // The summary came from the (local) model, not from the fallback summarizer.
      assert.match(stdout, /compacted: threshold model /, `${name}: ${stdout}`);
      assert.match(stdout, /reply: ## Goal/, `${name}: ${stdout}`);
      assert.ok(server.requests.length >= 2, `${name}: ${server.requests.length} requests`);
      assert.deepEqual(
        server.requests.map((r) => r.violation),
        server.requests.map(() => undefined),
      );
    });
  });
}

test('npm run examples runs the three examples against the local server, none refused', async () => {
  const script = fileURLToPath(new URL('../../scripts/examples.mjs', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script]);
  assert.equal(stdout.match(/^compacted: threshold model \d+$/gm)?.length, 3, stdout);
  assert.equal(stdout.match(/^ {2}\d+ request\(s\) to the server, 0 refused$/gm)?.length, 3, stdout);
});

test('the package exports the adapters as subpaths, typed', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../pkg/package.json', import.meta.url), 'utf8'));
  for (const name of ['openai', 'anthropic', 'ai-sdk']) {
    assert.deepEqual(pkg.exports[`./${name}`], { types: `./${name}.d.mts`, default: `./${name}.mjs` });
    assert.ok(pkg.files.includes(`${name}.mjs`) && pkg.files.includes(`${name}.d.mts`), name);
  }
  assert.ok(pkg.files.includes('http.mjs'));
});
