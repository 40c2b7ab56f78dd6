// Deno smoke test of the web entry of the built package (pkg/index.web.mjs).
//   deno run --allow-read tests/deno/smoke.mjs [bytes|auto]
// bytes (default): init(<the .wasm bytes>); auto: init() finds and reads the file itself.
import * as web from '../../pkg/index.web.mjs';

const mode = Deno.args[0] ?? 'bytes';
const cargoToml = await Deno.readTextFile(new URL('../../Cargo.toml', import.meta.url));
const expected = cargoToml.match(/^\[package\][^[]*?^version\s*=\s*"([^"]+)"/ms)[1];
let passed = 0;
let failed = 0;

function check(name, fn) {
  try {
    fn();
    passed++;
  } catch (error) {
    failed++;
    console.error(`FAIL ${name}: ${error.message}`);
  }
}

check('version() before init() throws E_NOT_INITIALIZED', () => {
  let caught;
  try {
    web.version();
  } catch (error) {
    caught = error;
  }
  if (!(caught instanceof Error) || caught.code !== 'E_NOT_INITIALIZED') {
    throw new Error(`expected an Error with code E_NOT_INITIALIZED, got ${caught}`);
  }
});

const input =
  mode === 'auto' ? undefined : await Deno.readFile(new URL('../../pkg/web/session_compaction_bg.wasm', import.meta.url));
await Promise.all([web.init(input), web.init(input)]);
await web.init();

check(`version() after init (${mode}) is ${expected}`, () => {
  const got = web.version();
  if (got !== expected) throw new Error(`got ${got}`);
});

console.log(`deno ${Deno.version.deno} (${mode}): ${passed} passed, ${failed} failed`);
if (failed > 0) Deno.exit(1);
