// `validate`: structural problems and unreadable lines (exit code 1 on errors).
import { byCode, capped, printJson, reportHeader } from '../report.mjs';
import { EXIT_FINDINGS, EXIT_OK, num, plural, table } from '../support.mjs';

/** Issue codes of `validate` that are warnings; every other issue and every load error is an error. */
const WARNING_CODES = new Set(['E_UNANSWERED_TOOL_CALL']);

/** @type {import('../report.mjs').Command} */
export const validate = {
  summary: 'structural problems and unreadable lines (exit code 1 on errors)',
  usage: 'validate [file] [--json] [--max-errors n]',
  options: ['json'],
  run: cmdValidate,
};

/** @param {import('../report.mjs').Session} session @param {import('../report.mjs').Opts} opts @param {import('../report.mjs').Io} io */
function cmdValidate(session, opts, io) {
  const { tree } = session;
  const { style } = io;
  const report = tree.validate();
  // A line the load reported and validation reports again with the same code (an entry without
  // a string `type` or `id`) is listed once, as validation's finding.
  const reported = new Set(report.issues.map((/** @type {any} */ i) => `${i.code}:${i.line}`));
  /** @type {{ severity: 'error' | 'warning', code: string, line: number | undefined, id: string | undefined, message: string }[]} */
  const findings = [
    ...session.loadErrors
      .filter((e) => !reported.has(`${e.code}:${e.line}`))
      .map((e) => ({
        severity: /** @type {const} */ ('error'),
        code: e.code,
        line: e.line,
        id: undefined,
        message: e.message.replace(/^line \d+: /, ''),
      })),
    ...report.issues.map((/** @type {any} */ i) => ({
      severity: WARNING_CODES.has(i.code) ? /** @type {const} */ ('warning') : /** @type {const} */ ('error'),
      code: i.code,
      line: i.line,
      id: i.id,
      message: i.message,
    })),
  ].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  const errors = findings.filter((f) => f.severity === 'error').length;
  const warnings = findings.length - errors;

  if (opts.json) {
    printJson(io, {
      file: session.path,
      sample: session.sample,
      entryCount: tree.entryCount,
      valid: errors === 0,
      errors,
      warnings,
      findings,
      issues: report.issues,
      loadErrors: session.loadErrors,
    });
    return errors ? EXIT_FINDINGS : EXIT_OK;
  }

  reportHeader('validation', session, io);
  const loadErrors = session.loadErrors.length
    ? `${plural(session.loadErrors.length, 'load error')}: ${byCode(session.loadErrors)}`
    : 'no load errors';
  io.out(`  ${plural(tree.entryCount, 'entry')} loaded, ${loadErrors}`);
  io.out('');
  if (findings.length) {
    const rows = [[style.dim('severity'), style.dim('code'), style.dim('line'), style.dim('message')]];
    // Errors first (every one up to --max-errors), then warnings in the room left: a run of
    // warnings never hides an error.
    const ordered = [
      ...findings.filter((f) => f.severity === 'error'),
      ...findings.filter((f) => f.severity !== 'error'),
    ];
    const shown = capped(ordered, session.maxErrors);
    for (const f of shown.items) {
      rows.push([
        f.severity === 'error' ? style.red('error') : style.yellow('warning'),
        f.code,
        f.line !== undefined ? num(f.line) : '-',
        f.message,
      ]);
    }
    io.out(table(rows, { align: 'llrl' }).join('\n'));
    if (shown.more) {
      io.out(
        style.dim(
          `  … ${plural(shown.more, 'more finding')} not listed (--max-errors ${session.maxErrors}; 0 = all; --json has every one): ` +
            `${plural(errors - Math.min(errors, shown.items.length), 'error')}, ` +
            `${plural(warnings - Math.max(0, shown.items.length - errors), 'warning')}`,
        ),
      );
    }
    io.out('');
  }
  const verdict = errors ? style.red('INVALID') : style.green('valid');
  io.out(
    `  ${verdict}: ${plural(errors, 'error')}, ${plural(warnings, 'warning')}` +
      (warnings ? style.dim('  (unanswered tool calls are warnings: interrupted turns leave them)') : ''),
  );
  return errors ? EXIT_FINDINGS : EXIT_OK;
}
