// Token counting the host controls: the cut point and the context size counted by a real
// tokenizer (gpt-tokenizer, o200k_base) instead of chars/4, and estimates calibrated by the
// provider's usage. Run: node examples/tokenizer.mjs (after npm run build).
import { readFileSync } from 'node:fs';
import { countTokens } from 'gpt-tokenizer';
import { SessionTree } from '../pkg/index.node.mjs';

const tree = SessionTree.fromBytes(readFileSync(new URL('sessions/pi-session-large.jsonl', import.meta.url)));
const settings = { keepRecentTokens: 8000 };
const byChars = tree.planCompaction(settings);
const byTokenizer = tree.planCompaction({ ...settings, countTokens });
const calibrated = tree.planCompaction({ ...settings, tokenCalibration: 'usage' });
const [cut, tokenizerCut] = [byChars?.cutPoint.firstKeptEntryIndex, byTokenizer?.cutPoint.firstKeptEntryIndex];
const [chars, o200k] = [tree.estimateContextTokens(), tree.estimateContextTokens({ countTokens })];
console.log('context tokens: chars/4', chars, '| o200k', o200k);
console.log('first kept entry: chars/4', cut, '| o200k', tokenizerCut);
const factor = calibrated?.tokenCalibrationFactor;
console.log('calibrated by usage: factor', factor, 'first kept', calibrated?.cutPoint.firstKeptEntryIndex);
tree.free();
