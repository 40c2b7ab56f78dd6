// An engine that has seen nothing, for tests that compare the per-turn functions (which reuse
// their work on the objects of the last call) with a computation from scratch: a module instance
// of the glue of its own (Node keeps one instance per URL, so the `?fresh` query gives a second
// one beside the package entries' shared instance), its functions called with no unchanged
// prefix.
import { readFileSync } from 'node:fs';

const raw = await import(new URL('../../../pkg/web/session_compaction.js?fresh', import.meta.url).href);
raw.initSync({ module: readFileSync(new URL('../../../pkg/web/session_compaction_bg.wasm', import.meta.url)) });

/** `buildSessionContext(entries, leafId?)` and `prepareCompaction(pathEntries, settings?)` from scratch. */
export const fresh = {
  /** @param {any[]} entries @param {string | undefined} [leafId] */
  buildSessionContext: (entries, leafId) => raw.buildSessionContext(entries, leafId, 0),
  /** @param {any[]} pathEntries @param {any} [settings] */
  prepareCompaction: (pathEntries, settings) => raw.prepareCompaction(pathEntries, settings, 0),
};
