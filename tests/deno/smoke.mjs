// Deno smoke test of the web entry of the built package (pkg/index.web.mjs).
//   deno run --allow-read tests/deno/smoke.mjs [bytes|auto]
// The checks are in tests/web-smoke/smoke.mjs; this file supplies Deno's file reading.
import { smoke } from '../web-smoke/smoke.mjs';

const mode = Deno.args[0] ?? 'bytes';
const root = new URL('../../', import.meta.url);
const cargoToml = await Deno.readTextFile(new URL('Cargo.toml', root));
const expected = cargoToml.match(/^\[workspace\.package\][^[]*?^version\s*=\s*"([^"]+)"/ms)[1];
const session = await Deno.readTextFile(new URL('examples/sessions/pi-session-with-compactions.jsonl', root));
const readWasm = () => Deno.readFile(new URL('pkg/web/session_compaction_bg.wasm', root));
const sessionFile = new URL('examples/sessions/pi-session-with-compactions.jsonl', root);
const { passed, failed } = await smoke({ mode, expected, session, sessionFile, readWasm });
console.log(`deno ${Deno.version.deno} (${mode}): ${passed} passed, ${failed} failed`);
if (failed > 0) Deno.exit(1);
