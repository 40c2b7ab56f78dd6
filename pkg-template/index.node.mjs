// session-compaction, Node.js entry for `import`: the same module instance as `require`
// (index.node.cjs), so values and classes are interchangeable between the two.
import api from './index.node.cjs';

export const { DEFAULT_COMPACTION_SETTINGS, DEFAULT_PRUNE_CONFIG, isSessionCompactionError } = api;
// @generated-exports
