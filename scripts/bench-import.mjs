// One fresh process of the benchmark's import row (scripts/bench.mjs): times `await import()` of
// the module named on the command line, as the first thing the process does, and prints
// `{"importMs": n}`. Kept apart from bench.mjs on purpose: that script's own 1,200 lines (and
// the garbage of compiling them) must not land in the figure, as they would not in a host.
//
// Usage: node scripts/bench-import.mjs <file-url>   (any runtime: node, bun, deno run -A)
const t0 = performance.now();
await import(process.argv[2]);
const importMs = performance.now() - t0;
process.stdout.write(`${JSON.stringify({ importMs })}\n`);
