// Inlined by scripts/build.mjs into both entries (after freed-guard.js), like it: the one copy of
// isSessionCompactionError. Not shipped.

/** `name` of the errors the package throws (`NotInitializedError`: the web entry before init()). */
const ERROR_NAMES = new Set(['SessionCompactionError', 'NotInitializedError']);

/**
 * Whether `error` was thrown by session-compaction: an `Error` named `SessionCompactionError` (or
 * `NotInitializedError`) whose `code` is one of the engine's `E_…` codes. Works before init().
 * @param {unknown} error
 * @returns {boolean}
 */
// biome-ignore lint/correctness/noUnusedVariables: the entries export it once scripts/build.mjs has inlined this file
function isSessionCompactionError(error) {
  return (
    error instanceof Error &&
    ERROR_NAMES.has(error.name) &&
    typeof (/** @type {{ code?: unknown }} */ (error).code) === 'string' &&
    /^E_[A-Z_]+$/.test(/** @type {{ code: string }} */ (error).code)
  );
}
