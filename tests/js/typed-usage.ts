// A typed use of the package, type-checked (never run) by `tsc -p tsconfig.json` against the
// built declarations in pkg/. Every `@ts-expect-error` below marks a wrong use the types must
// reject: if a type degraded to `any`, the directive would be unused and tsc would fail (TS2578).
import { readFileSync } from 'node:fs';
import {
  type AgentMessage,
  buildSessionContext,
  type CompactionPreparation,
  type CompactionSettings,
  type CutPointResult,
  DEFAULT_COMPACTION_SETTINGS,
  DEFAULT_PRUNE_CONFIG,
  type ErrorCode,
  estimateTokens,
  findCutPoint,
  init,
  isSessionCompactionError,
  type LineError,
  type MessageEntry,
  type PruneOutcome,
  type PruneResult,
  type PruneSummary,
  parseSession,
  prepareCompaction,
  pruneToolOutputs,
  type SessionCompactionError,
  type SessionContext,
  type SessionEntry,
  type SessionHooks,
  SessionTree,
  shouldCompact,
  type TreeNode,
} from '../../pkg/index.node.mjs';

await init();

const text: string = readFileSync(new URL('../../examples/sessions/pi-session-large.jsonl', import.meta.url), 'utf8');
const parsed = parseSession(text, { strict: false });
const entries: SessionEntry[] = parsed.entries;
const errors: LineError[] = parsed.errors;
const lines: number[] = errors.map((e) => e.line);

// Discriminated unions: entry `type`, then message `role`.
let outputTokens = 0;
for (const entry of entries) {
  if (entry.type === 'message' && entry.message.role === 'assistant') {
    const usage = entry.message.usage;
    if (usage) outputTokens += usage.output;
    const model: string = entry.message.model;
    void model;
  } else if (entry.type === 'compaction') {
    const kept: string = entry.firstKeptEntryId;
    void kept;
  }
}

const settings: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 10_000 };
const reserve: number = DEFAULT_COMPACTION_SETTINGS.reserveTokens;
const preparation: CompactionPreparation | undefined = prepareCompaction(entries, settings);
const toSummarize: AgentMessage[] = preparation?.messagesToSummarize ?? [];
const read: string[] = preparation?.fileOps.read ?? [];
const cut: CutPointResult = findCutPoint(entries, 0, entries.length, 20_000);
const split: boolean = cut.isSplitTurn;
const context: SessionContext = buildSessionContext(entries);
const tokens: number = context.messages.reduce((sum, m) => sum + estimateTokens(m), 0);
const pruned: PruneResult = pruneToolOutputs(entries, DEFAULT_PRUNE_CONFIG, Date.now());
const prunedIds: string[] = pruned.prunedEntries.map((e) => e.id);
const compactNow: boolean = shouldCompact(tokens, 200_000);

// The handle, freed at the end of the block.
{
  using tree = SessionTree.fromJsonl(text);
  const leaf: string | undefined = tree.leafId;
  const nodes: TreeNode[] = tree.getTree();
  const json: string = tree.buildSessionContextJson();
  tree.setLeaf(null);
  tree.setLeaf(leaf ?? null);
  // The handle's prune reports its change; objects only when asked for.
  const outcome: PruneOutcome = tree.pruneToolOutputs({ minimumSavings: 0 }, 1);
  const ids: (string | null)[] = outcome.prunedIds;
  const indices: Uint32Array = outcome.entryIndices;
  const lines: string = outcome.jsonl;
  const first: SessionEntry | undefined = outcome.entry(0);
  const all: SessionEntry[] = outcome.prunedEntries;
  const summary: PruneSummary = outcome.toJSON();
  void [nodes, json, ids, indices, lines, first, all, summary, outcome.prunedCount + outcome.tokensSaved];
}

// Errors carry a code from the union.
try {
  SessionTree.fromJsonl('not json', { strict: true });
} catch (error) {
  const code: ErrorCode = (error as SessionCompactionError).code;
  if (code === 'E_PARSE' || code === 'E_HEADER') console.log('bad file');
  // The guard narrows `unknown` without a cast.
  if (isSessionCompactionError(error)) {
    const narrowed: ErrorCode = error.code;
    void narrowed;
  }
}

// appendMessage fills id, parentId and timestamp; appendEntry's parentId is optional; hooks return typed values.
const hooks: SessionHooks = {
  session_before_compact: ({ preparation: p }) =>
    p.tokensBefore > 0 ? { compaction: { summary: 'Done so far.', firstKeptEntryId: p.firstKeptEntryId } } : undefined,
  'session.compacting': async () => ({ context: ['Keep the API names.'], preserveData: { step: 3 } }),
  session_before_tree: () => ({ cancel: true }),
  session_tree: () => {},
};
{
  using tree = SessionTree.fromJsonl(text);
  const appended: MessageEntry = tree.appendMessage({ role: 'user', content: 'Next step.', timestamp: Date.now() });
  const appendedId: string = appended.id;
  tree.appendEntry({
    type: 'message',
    id: 'typed-1',
    timestamp: new Date().toISOString(),
    message: { role: 'user', content: 'And then?', timestamp: Date.now() },
  });
  // @ts-expect-error: appendMessage takes an agent message (its `role` is required)
  tree.appendMessage({ content: 'no role' });
  // @ts-expect-error: the entry still needs its `type`
  tree.appendEntry({ id: 'typed-2', timestamp: '2026-01-01T00:00:00.000Z' });
  void [appendedId, hooks];
}

// ---- wrong uses the declarations must reject ----

// @ts-expect-error: a string is not an agent message
estimateTokens('hello');

// @ts-expect-error: `cancel` is a boolean
const cancelText: SessionHooks = { session_before_compact: () => ({ cancel: 'yes' }) };

// @ts-expect-error: a supplied compaction needs its `summary`
const noSummary: SessionHooks = { session_before_compact: () => ({ compaction: { tokensBefore: 1 } }) };

// @ts-expect-error: `context` lines are strings
const contextNumbers: SessionHooks = { 'session.compacting': () => ({ context: [1, 2] }) };

// @ts-expect-error: settings hold numbers
prepareCompaction(entries, { reserveTokens: '1000' });

// @ts-expect-error: the defaults are read-only
DEFAULT_COMPACTION_SETTINGS.reserveTokens = 1;

// @ts-expect-error: not one of the error codes
const notACode: ErrorCode = 'E_SOMETHING';

// @ts-expect-error: the leaf id is a string (or undefined), not a number
const leafNumber: number = SessionTree.fromEntries(entries).leafId;

// @ts-expect-error: entries are objects, not strings
buildSessionContext(['{"type":"message"}']);

// @ts-expect-error: the result has no `cutIndex`
const cutIndex: number = cut.cutIndex;

const first = entries[0];
const userMessage = first.type === 'message' && first.message.role === 'user' ? first.message : undefined;
// @ts-expect-error: `role` narrows the message; a user message has no `usage`
const userUsage = userMessage ? userMessage.usage.input : 0;

export const summary = {
  lines,
  outputTokens,
  reserve,
  toSummarize,
  read,
  split,
  prunedIds,
  compactNow,
  notACode,
  leafNumber,
  cutIndex,
  userUsage,
  cancelText,
  noSummary,
  contextNumbers,
};
