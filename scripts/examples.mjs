// `npm run examples`: runs examples/openai.mjs, anthropic.mjs and ai-sdk.mjs against the local
// server the tests use (tests/js/support/provider-servers.mjs: it answers as each provider does and
// refuses what the provider would), so the SDK examples can be tried without an API key. Each
// example reads its provider's variables: OPENAI_BASE_URL / OPENAI_API_KEY, ANTHROPIC_BASE_URL /
// ANTHROPIC_API_KEY, AI_GATEWAY_BASE_URL / AI_GATEWAY_API_KEY; set them yourself to run one
// against the real service (`node examples/openai.mjs`). On a fresh clone it first installs the
// npm packages (`npm ci`, the SDKs) and builds the package (`npm run build`), as `npm start` does.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Runs a setup command in the project, its output shown; exits with its status when it fails. */
const setup = (/** @type {string} */ what, /** @type {string} */ cmd, /** @type {string[]} */ args) => {
  console.log(`[examples] ${what}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
if (!existsSync(`${root}node_modules`)) setup('node_modules/ is missing', 'npm', ['ci']);
if (!existsSync(`${root}pkg/index.node.mjs`)) setup('pkg/ is missing', process.execPath, ['scripts/build.mjs']);
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
      const { stdout } = await promisify(execFile)(process.execPath, [`${root}examples/${name}`], { env });
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
