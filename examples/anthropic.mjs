// A pi session with the official `@anthropic-ai/sdk` client: check (summary by the model), next request.
// Env: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL (default https://api.anthropic.com). `npm run examples`: locally.
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { fromAnthropicMessages, toAnthropicMessages } from '../pkg/anthropic.mjs';
import { SessionTree } from '../pkg/index.node.mjs';

const baseURL = process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com';
const [apiKey, model] = [process.env.ANTHROPIC_API_KEY, 'claude-sonnet-4-5'];
if (!apiKey) [console.error('examples/anthropic.mjs: set ANTHROPIC_API_KEY (the Anthropic API key)'), process.exit(1)];
const tree = SessionTree.fromBytes(readFileSync(new URL('sessions/pi-session-large.jsonl', import.meta.url)));
const last = tree.buildSessionContext().messages.findLast((m) => m.role === 'assistant');
const client = new Anthropic({ baseURL, apiKey });
/** @type {import('../pkg/index.node.mjs').CompleteFn} */
const complete = async ({ systemPrompt: system, prompt, maxTokens, signal }) => {
  const r = await client.messages.create(
    { model, max_tokens: maxTokens, system, messages: [{ role: 'user', content: prompt }] },
    { signal },
  );
  return r.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
};
const check = await tree.checkCompaction(/** @type {any} */ (last), { contextWindow: 190000, complete });
const said = [check.reason || 'no', check.result?.summarizer, check.result?.fallbackReason, check.errorMessage];
console.log('compacted:', ...said.filter((s) => s), tree.estimateContextTokens());
tree.appendMessage({ role: 'user', content: check.continuePrompt ?? 'Go on.', timestamp: Date.now() });
const messages = toAnthropicMessages(tree.buildLlmMessages());
const reply = await client.messages.create({ model, max_tokens: 4096, system: 'You are a coding agent.', messages });
for (const message of fromAnthropicMessages([reply])) tree.appendMessage(message);
console.log('reply:', reply.content.find((b) => b.type === 'text')?.text.split('\n')[0]);
