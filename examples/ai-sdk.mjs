// An AI SDK app that keeps only ModelMessage[]: its history becomes a SessionTree (fromModelMessages),
// the engine checks it (compacting with session-compaction/ai-sdk's `complete` over generateText), and
// the next request is the compacted context. Env: AI_GATEWAY_API_KEY, AI_GATEWAY_BASE_URL (`npm run examples`).
import { readFileSync } from 'node:fs';
import { createGateway, generateText } from 'ai';
import { aiSdkComplete, fromModelMessages, toModelMessages } from '../pkg/ai-sdk.mjs';
import { SessionTree } from '../pkg/index.node.mjs';

if (!process.env.AI_GATEWAY_API_KEY) [console.error('examples/ai-sdk.mjs: set AI_GATEWAY_API_KEY'), process.exit(1)];
const gateway = createGateway({ baseURL: process.env.AI_GATEWAY_BASE_URL, apiKey: process.env.AI_GATEWAY_API_KEY });
const model = gateway('anthropic/claude-sonnet-4-5');
// The app's history (here: a real session's context as ModelMessage[]), kept in a SessionTree.
const source = SessionTree.fromBytes(readFileSync(new URL('sessions/pi-session-large.jsonl', import.meta.url)));
const history = toModelMessages(source.buildLlmMessages());
const tree = SessionTree.fromEntries([]);
for (const message of fromModelMessages(history)) tree.appendMessage(message);
const last = tree.buildSessionContext().messages.findLast((m) => m.role === 'assistant');
const complete = aiSdkComplete({ generateText, model });
const check = await tree.checkCompaction(/** @type {any} */ (last), { contextWindow: 130000, complete });
const said = [check.reason || 'no', check.result?.summarizer, check.result?.fallbackReason, check.errorMessage];
console.log('compacted:', ...said.filter((s) => s), tree.estimateContextTokens());

const user = fromModelMessages([{ role: 'user', content: check.continuePrompt ?? 'Go on.' }]);
for (const message of user) tree.appendMessage(message);
const messages = toModelMessages(tree.buildLlmMessages());
const result = await generateText({ model, system: 'You are a coding agent.', messages });
const reply = fromModelMessages(result.response.messages, { usage: result.usage });
for (const message of reply) tree.appendMessage(message);
console.log('reply:', result.text.split('\n')[0]);
