// A pi session with the official `@anthropic-ai/sdk` client: check (compact when over the
// threshold, the summary written by session-compaction/anthropic's `complete`), then send the
// next request. npm test runs it against a local server (ANTHROPIC_BASE_URL).
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { anthropicComplete, fromAnthropicMessages, toAnthropicMessages } from '../pkg/anthropic.mjs';
import { SessionTree } from '../pkg/index.node.mjs';

const baseURL = process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com';
const [apiKey, model] = [process.env.ANTHROPIC_API_KEY, 'claude-sonnet-4-5'];
const tree = SessionTree.fromBytes(readFileSync(new URL('sessions/pi-session-large.jsonl', import.meta.url)));
const last = tree.buildSessionContext().messages.findLast((m) => m.role === 'assistant');
const complete = anthropicComplete({ baseUrl: `${baseURL}/v1`, model, apiKey });
const check = await tree.checkCompaction(/** @type {any} */ (last), { contextWindow: 190000, complete });
console.log('compacted:', check.reason ?? 'no', check.errorMessage ?? '', '→', tree.estimateContextTokens(), 'tokens');

/** @type {import('../pkg/index.node.mjs').AgentMessage} */
const user = { role: 'user', content: check.continuePrompt ?? 'Go on.', timestamp: Date.now() };
tree.appendMessage(user);
const client = new Anthropic({ baseURL, apiKey });
const messages = toAnthropicMessages(tree.buildLlmMessages());
const reply = await client.messages.create({ model, max_tokens: 4096, system: 'You are a coding agent.', messages });
for (const message of fromAnthropicMessages([reply])) tree.appendMessage(message);
const text = reply.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
console.log('reply:', text.split('\n')[0]);
