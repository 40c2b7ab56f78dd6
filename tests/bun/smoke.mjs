// Bun smoke test of the web entry of the built package (pkg/index.web.mjs).
//   bun tests/bun/smoke.mjs [bytes|auto]
// The checks are in tests/web-smoke/smoke.mjs; this file supplies Bun's file reading.
import { smoke } from '../web-smoke/smoke.mjs';

const mode = process.argv[2] ?? 'bytes';
const root = new URL('../../', import.meta.url);
const cargoToml = await Bun.file(new URL('Cargo.toml', root)).text();
const expected = cargoToml.match(/^\[workspace\.package\][^[]*?^version\s*=\s*"([^"]+)"/ms)[1];
const session = await Bun.file(new URL('examples/sessions/pi-session-with-compactions.jsonl', root)).text();
const readWasm = async () =>
  new Uint8Array(await Bun.file(new URL('pkg/web/session_compaction_bg.wasm', root)).arrayBuffer());
const sessionFile = new URL('examples/sessions/pi-session-with-compactions.jsonl', root);
const { passed, failed } = await smoke({ mode, expected, session, sessionFile, readWasm });
console.log(`bun ${Bun.version} (${mode}): ${passed} passed, ${failed} failed`);
if (failed > 0) process.exit(1);
