// session-compaction, Node.js entry for `import`: the same module instance as `require`
// (index.node.cjs), so values and classes are interchangeable between the two. Loaded through
// `createRequire` rather than `import … from './index.node.cjs'`: Node then skips scanning the
// CommonJS source for export names (the names are listed below), about 1.5 ms of every import.
import { createRequire } from 'node:module';

const api = createRequire(import.meta.url)('./index.node.cjs');

export const { DEFAULT_COMPACTION_SETTINGS, DEFAULT_PRUNE_CONFIG, isSessionCompactionError } = api;
// @generated-exports
