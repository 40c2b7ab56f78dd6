// `npm run examples`: runs examples/openai.mjs, anthropic.mjs and ai-sdk.mjs against the local
// server the tests use (tests/js/support/provider-servers.mjs: it answers as each provider does and
// refuses what the provider would), so the SDK examples can be tried without an API key. Each
// example reads its provider's variables: OPENAI_BASE_URL / OPENAI_API_KEY, ANTHROPIC_BASE_URL /
// ANTHROPIC_API_KEY, AI_GATEWAY_BASE_URL / AI_GATEWAY_API_KEY; set them yourself to run one
// against the real service (`node examples/openai.mjs`). It first installs the npm packages (the
// SDKs) and builds the package when they are missing or stale, as `npm start` does (setup.mjs).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT, UserError } from './lib.mjs';
import { ensureBuild, ensureDependencies } from './setup.mjs';

try {
  ensureDependencies('examples');
  ensureBuild('examples');
} catch (error) {
  if (!(error instanceof UserError)) throw error;
  console.error(`[examples] FAILED: ${error.message}`);
  process.exit(1);
}
const { startProviderServer } = await import('../tests/js/support/provider-servers.mjs');
const server = await startProviderServer();
const env = {
  ...process.env,
  OPENAI_BASE_URL: server.openaiBaseUrl,
  ANTHROPIC_BASE_URL: server.anthropicSdkBaseUrl,
  AI_GATEWAY_BASE_URL: server.gatewayBaseUrl,
  OPENAI_API_KEY: 'sk-local',
  ANTHROPIC_API_KEY: 'sk-local',
  AI_GATEWAY_API_KEY: 'sk-local',
};
let failed = 0;
try {
  for (const name of ['openai.mjs', 'anthropic.mjs', 'ai-sdk.mjs']) {
    const before = server.requests.length;
    console.log(`\n$ node examples/${name}    (against the local ${name.replace('.mjs', '')} server)`);
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [`${ROOT}/examples/${name}`], { env });
      process.stdout.write(stdout);
    } catch (error) {
      failed++;
      console.error(`examples/${name} failed: ${/** @type {Error} */ (error).message}`);
    }
    const sent = server.requests.slice(before);
    const refused = sent.filter((r) => r.violation);
    console.log(`  ${sent.length} request(s) to the server, ${refused.length} refused`);
    for (const r of refused) console.log(`  refused ${r.path}: ${r.violation}`);
    failed += refused.length ? 1 : 0;
  }
} finally {
  await server.close();
}
process.exit(failed ? 1 : 0);
