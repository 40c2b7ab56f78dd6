// Hostile inputs through every export of the package (not a step of `npm test`: ~3–7 min on 2 cores).
// Calls every function and every SessionTree method with ~40 kinds of hostile values in each of
// the first three argument positions (throwing Proxies and getters, a revoked Proxy, cyclic and
// 20,000-deep values, BigInt, Symbol, NaN and ±Infinity, odd settings, throwing or odd `countTokens`
// and `complete` callbacks). Passes when every failure is a SessionCompactionError (a `code`) or
// the host's own exception passed through; a wasm trap stops it with exit code 3, any other raw
// exception is listed and makes the exit code 1.
// Usage: node scripts/build.mjs && node scripts/hostile-inputs.mjs [exportName]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PKG = process.env.PKG || fileURLToPath(new URL('../pkg/index.node.cjs', import.meta.url));
const { createRequire } = await import('node:module');
const api = createRequire(import.meta.url)(PKG);
const sample = readFileSync(new URL('../examples/sessions/pi-session-with-compactions.jsonl', import.meta.url));
const cyclic = {};
cyclic.self = cyclic;
const cycArr = [];
cycArr.push(cycArr);
const throwingProxy = new Proxy(
  {},
  {
    get() {
      throw new Error('proxy get');
    },
    ownKeys() {
      throw new Error('proxy keys');
    },
    has() {
      throw new Error('proxy has');
    },
    getOwnPropertyDescriptor() {
      throw new Error('proxy gopd');
    },
  },
);
const arrProxy = new Proxy([], {
  get(_t, k) {
    if (k === 'length') return 5;
    throw new Error('arr proxy');
  },
});
const getterThrows = {
  get type() {
    throw new Error('getter');
  },
  id: 'x',
};
const toJsonThrows = {
  toJSON() {
    throw new Error('toJSON');
  },
};
let deep = [];
for (let i = 0; i < 20000; i++) deep = [deep];
let deepObj = {};
for (let i = 0; i < 20000; i++) deepObj = { message: deepObj };
const revoked = Proxy.revocable({}, {});
revoked.revoke();
const entry = (o) => ({ type: 'message', id: 'e1', parentId: null, timestamp: '2026-01-01T00:00:00Z', message: o });
const WEIRD = {
  undef: undefined,
  nul: null,
  t: true,
  zero: 0,
  neg: -1,
  nan: NaN,
  inf: Infinity,
  big: 1e308,
  negzero: -0,
  max: 2 ** 53 + 2,
  str: 'x',
  empty: '',
  sym: Symbol('s'),
  bigint: 10n,
  arr: [],
  arrNull: [null],
  arrObj: [{}],
  obj: {},
  nullProto: Object.create(null),
  fn: () => 1,
  u8: new Uint8Array([1, 2, 3]),
  cyclic,
  cycArr,
  throwingProxy,
  arrProxy,
  getterThrows,
  toJsonThrows,
  deep,
  deepObj,
  revoked: revoked.proxy,
  arrOfProxies: [throwingProxy],
  arrOfGetters: [getterThrows],
  arrDeep: [deepObj],
  msgWeird: [entry({ role: 'assistant', content: [{ type: 'toolCall', id: 1, name: {}, arguments: cyclic }] })],
  msgBig: [entry({ role: 'user', content: 'x'.repeat(1 << 20) })],
  msgNumRole: [entry({ role: 5, content: NaN })],
  settingsWeird: { reserveTokens: -1e308, keepRecentTokens: NaN, enabled: 'yes' },
  settingsHuge: { reserveTokens: 1e308, keepRecentTokens: 1e308 },
  settingsNeg: { keepRecentTokens: -5, protectTokens: -1, minimumSavings: NaN },
  countTokensWeird: { countTokens: () => NaN },
  countTokensThrow: {
    countTokens: () => {
      throw new Error('ct');
    },
  },
  countTokensObj: { countTokens: () => ({}) },
  countTokensNeg: { countTokens: () => -5 },
  countTokensBig: { countTokens: () => 1e308 },
  completeThrows: {
    complete: () => {
      throw new Error('c');
    },
  },
  completeWeird: { complete: async () => 5, contextWindow: 1000 },
  completeObj: { complete: async () => ({}), contextWindow: NaN },
  lone: '\ud800',
  bytesBad: new Uint8Array([0xff, 0xfe, 0x0a, 0x7b]),
};
const findings = [];
let calls = 0;
function classify(name, key, e) {
  if (e && (e.code || e.name === 'SessionCompactionError')) return;
  const msg = String(e?.message || e);
  if (/unreachable|RuntimeError/.test(msg) || (e?.constructor && e.constructor.name === 'RuntimeError')) {
    findings.push(`TRAP ${name}(${key}): ${msg}`);
    console.log(findings.at(-1));
    process.exit(3);
  }
  // The host's own exception passed through (our proxies/getters/callbacks) is fine when it is theirs.
  if (/proxy|getter|toJSON|^c$|^ct$/.test(msg)) return;
  findings.push(`RAW ${name}(${key}): ${e?.constructor?.name}: ${msg.slice(0, 160)}`);
}
async function tryCall(name, f, thisArg, args, key) {
  calls++;
  try {
    const r = Reflect.apply(f, thisArg, args);
    if (r && typeof r.then === 'function')
      await Promise.race([
        r,
        new Promise((_, rej) => setTimeout(() => rej(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })), 3000)),
      ]);
  } catch (e) {
    classify(name, key, e);
  }
}
const fns = Object.entries(api).filter(
  ([n, v]) =>
    typeof v === 'function' &&
    !/^(init|initSync|SessionTree|PruneOutcome|isSessionCompactionError|resetPromptTemplates)$/.test(n),
);
const only = process.argv[2];
for (const [name, f] of fns) {
  if (only && name !== only) continue;
  for (const [k, v] of Object.entries(WEIRD)) {
    for (let pos = 0; pos < 3; pos++) {
      const args = [undefined, undefined, undefined];
      args[pos] = v;
      args.length = pos + 1;
      await tryCall(name, f, undefined, args, `${pos}:${k}`);
      // With a valid first argument (entries) and the weird one later.
      if (pos > 0) {
        const a2 = [api.parseSession(sample.toString()).entries, ...args.slice(1)];
        await tryCall(name, f, undefined, a2, `entries,${pos}:${k}`);
      }
    }
  }
}
// Static constructors and handle methods.
for (const [k, v] of Object.entries(WEIRD)) {
  for (const s of ['fromBytes', 'fromEntries', 'fromJsonl']) {
    await tryCall(`SessionTree.${s}`, api.SessionTree[s], api.SessionTree, [v], k);
    await tryCall(
      `SessionTree.${s}`,
      api.SessionTree[s],
      api.SessionTree,
      [
        s === 'fromBytes'
          ? sample
          : s === 'fromJsonl'
            ? sample.toString()
            : api.parseSession(sample.toString()).entries,
        v,
      ],
      `opts:${k}`,
    );
  }
}
const methods = Object.getOwnPropertyNames(api.SessionTree.prototype).filter(
  (m) => !/^(constructor|__destroy_into_raw|free)$/.test(m),
);
for (const m of methods) {
  const d = Object.getOwnPropertyDescriptor(api.SessionTree.prototype, m);
  if (typeof d.value !== 'function') continue;
  for (const [k, v] of Object.entries(WEIRD)) {
    for (let pos = 0; pos < 2; pos++) {
      const tree = api.SessionTree.fromBytes(sample);
      const args = [undefined, undefined];
      args[pos] = v;
      args.length = pos + 1;
      await tryCall(`tree.${m}`, d.value, tree, args, `${pos}:${k}`);
      try {
        tree.free();
      } catch {}
    }
  }
}
console.log(`calls ${calls}; findings ${findings.length}`);
for (const f of [...new Set(findings)].slice(0, 80)) console.log(f);
process.exitCode = findings.length > 0 ? 1 : 0;
