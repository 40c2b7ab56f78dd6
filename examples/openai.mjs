// A pi session through the official `openai` client: check, next request (`npm run examples` runs it locally).
// Env: OPENAI_API_KEY, OPENAI_BASE_URL (any OpenAI-compatible server; default https://api.openai.com/v1).
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { SessionTree } from '../pkg/index.node.mjs';
import { fromChatMessages, toChatMessages } from '../pkg/openai.mjs';

const [apiKey, model] = [process.env.OPENAI_API_KEY, 'gpt-4.1-mini'];
if (apiKey === undefined) [console.error('examples/openai.mjs: set OPENAI_API_KEY (empty: no key)'), process.exit(1)];
const tree = SessionTree.fromBytes(readFileSync(new URL('sessions/pi-session-large.jsonl', import.meta.url)));
const last = tree.buildSessionContext().messages.findLast((m) => m.role === 'assistant');
const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey });
/** @type {import('../pkg/index.node.mjs').CompleteFn} */
const complete = async ({ systemPrompt, prompt, maxTokens, signal }) => {
  const messages = /** @type {any} */ ([
    { role: 'system', content: systemPrompt },
    { role: 'user', content: prompt },
  ]);
  const r = await client.chat.completions.create({ model, max_completion_tokens: maxTokens, messages }, { signal });
  return r.choices[0].message.content ?? '';
};
const check = await tree.checkCompaction(/** @type {any} */ (last), { contextWindow: 190000, complete });
const said = [check.reason || 'no', check.result?.summarizer, check.result?.fallbackReason, check.errorMessage];
console.log('compacted:', ...said.filter((s) => s), tree.estimateContextTokens());
tree.appendMessage({ role: 'user', content: check.continuePrompt ?? 'Go on.', timestamp: Date.now() });
const messages = toChatMessages(tree.buildLlmMessages(), { system: 'You are a coding agent.' });
const completion = await client.chat.completions.create({ model, messages: /** @type {any} */ (messages) });
for (const message of fromChatMessages([completion.choices[0].message], { completion })) tree.appendMessage(message);
console.log('reply:', completion.choices[0].message.content?.split('\n')[0]);
