// The adapters' results are assignable to the real SDKs' own types (checked by the tsc step of
// npm test, which type-checks tests/js): ai's ModelMessage[], openai's ChatCompletionMessageParam[]
// and Responses ResponseInput, @anthropic-ai/sdk's MessageParam[]. At run time: the shapes of a
// tool result with an image. Run: node --test tests/js/sdk-types.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromModelMessages, toModelMessages } from '../../pkg/ai-sdk.mjs';
import { toAnthropicMessages } from '../../pkg/anthropic.mjs';
import { toChatMessages, toResponsesInput } from '../../pkg/openai.mjs';

/** @type {import('../../pkg/index.node.mjs').AgentMessage[]} */
const CONTEXT = /** @type {any} */ ([
  { role: 'user', content: 'look at the screenshot', timestamp: 1 },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading it.' },
      { type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'shot.png' } },
    ],
    stopReason: 'toolUse',
    timestamp: 2,
  },
  {
    role: 'toolResult',
    toolCallId: 'c1',
    toolName: 'read',
    content: [
      { type: 'text', text: 'an image' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ],
    isError: false,
    timestamp: 3,
  },
  { role: 'assistant', content: [{ type: 'text', text: 'A login form.' }], stopReason: 'stop', timestamp: 4 },
]);

test('the adapters give the SDKs their own types, and the AI SDK file part round-trips', () => {
  /** @type {import('ai').ModelMessage[]} */
  const model = toModelMessages(CONTEXT);
  /** @type {import('openai').OpenAI.Chat.ChatCompletionMessageParam[]} */
  const chat = toChatMessages(CONTEXT);
  /** @type {import('openai').OpenAI.Responses.ResponseInput} */
  const responses = toResponsesInput(CONTEXT);
  /** @type {import('@anthropic-ai/sdk').Anthropic.MessageParam[]} */
  const anthropic = toAnthropicMessages(CONTEXT);
  assert.equal(model.length, 4);
  assert.ok(chat.length >= 4 && responses.length >= 4 && anthropic.length >= 3);
  const tool = /** @type {any} */ (model.find((m) => m.role === 'tool'));
  const file = tool.content[0].output.value.find((/** @type {any} */ p) => p.type === 'file');
  assert.deepEqual(file, { type: 'file', data: { type: 'data', data: 'iVBORw0KGgo=' }, mediaType: 'image/png' });
  const back = /** @type {any[]} */ (fromModelMessages(model));
  const result = back.find((m) => m.role === 'toolResult');
  assert.deepEqual(
    result.content.find((/** @type {any} */ b) => b.type === 'image'),
    { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
  );
  // Assistant text goes to the Responses API as a plain string (an EasyInputMessage).
  assert.deepEqual(
    responses.filter((i) => 'role' in i && i.role === 'assistant').map((i) => /** @type {any} */ (i).content),
    ['Reading it.', 'A login form.'],
  );
});
