// Helpers of the session-compaction CLI (bin/session-compaction.mjs): output styling and
// formatting, loading a session file (with a progress bar for big files), atomic rewrites and
// appends. Node built-ins only. The OpenAI-compatible `complete` is the package's
// `session-compaction/openai` (../openai.mjs), re-exported here.
import {
  accessSync,
  closeSync,
  copyFileSync,
  constants as fsConstants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real pi session used when no file is given: the repository's copy in examples/sessions/
 * (this file is pkg/bin/support.mjs in a checkout). The npm package does not ship it (2.4 MB):
 * an installed CLI run without a file says so ({@link NO_SAMPLE_MESSAGE}, exit 2).
 */
export const SAMPLE_FILE = fileURLToPath(
  new URL('../../examples/sessions/pi-session-with-compactions.jsonl', import.meta.url),
);

/** What the CLI says when it is run without a file outside a checkout of the repository. */
export const NO_SAMPLE_MESSAGE =
  'no session file given: pass a pi session file (.jsonl). Without a file the CLI uses the sample ' +
  'session of a checkout of the repository (examples/sessions/pi-session-with-compactions.jsonl); ' +
  'the npm package does not ship it';

/** Files above this size are loaded with a progress bar (when stderr is a terminal). */
export const PROGRESS_THRESHOLD = 20 * 1024 * 1024;
const CHUNK = 4 * 1024 * 1024;

/**
 * The largest file the CLI loads: 2 GiB less one byte, the largest one allocation of WebAssembly
 * memory can be (what `SessionTree.fromFile` reads the file into). The engine holds the file's bytes and the session built
 * from them in WebAssembly memory (4 GiB in all); a bigger file is refused before it is read.
 */
export const MAX_FILE_SIZE = 2 ** 31 - 1;

/** The error of a file over {@link MAX_FILE_SIZE}. @param {string} display @param {number} size */
function tooLarge(display, size) {
  return new CliError(
    `cannot read ${display}: a file of ${num(size)} bytes (${bytes(size)}) is too large: the CLI loads files of ` +
      `at most ${num(MAX_FILE_SIZE)} bytes (2 GiB - 1), since the engine holds the bytes and the session built from ` +
      'them in WebAssembly memory (4 GiB in all)',
    'E_FILE',
  );
}

/**
 * Exit codes: 0 ok, 1 validation found errors, 2 bad usage or unusable input, 3 the summarizer
 * (remote endpoint or model) failed, 130 interrupted (Ctrl-C) before anything was written.
 */
export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_INPUT = 2;
export const EXIT_SUMMARIZER = 3;
export const EXIT_INTERRUPTED = 130;

/**
 * An error whose message is the complete explanation for the user; ends the run with `exitCode`.
 * `code` is the engine's error code it stands for (`E_INVALID_ARGUMENT` for bad usage, `E_FILE`
 * for a file that cannot be read or written, …): every fatal error the CLI prints carries one
 * (`… (E_FILE)`, or `{"error":{"code","message","exitCode"}}` with `--json`).
 */
export class CliError extends Error {
  /** @param {string} message @param {string} [code] @param {number} [exitCode] */
  constructor(message, code = 'E_INVALID_ARGUMENT', exitCode = EXIT_INPUT) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}

// ── styling ─────────────────────────────────────────────────────────────────────────────────

/**
 * Whether to color a stream: only a terminal, never with NO_COLOR (any non-empty value) or
 * TERM=dumb; FORCE_COLOR (other than "0") forces it on.
 * @param {{ isTTY?: boolean }} stream
 */
export function colorEnabled(stream, env = process.env) {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0';
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/**
 * ANSI styles that turn into identity functions when color is off.
 * @param {boolean} enabled
 */
export function makeStyle(enabled) {
  /** @param {string} open @param {string} close */
  const wrap = (open, close) => (/** @type {string} */ s) => (enabled ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return {
    enabled,
    bold: wrap('1', '22'),
    dim: wrap('2', '22'),
    red: wrap('31', '39'),
    green: wrap('32', '39'),
    yellow: wrap('33', '39'),
    blue: wrap('34', '39'),
    magenta: wrap('35', '39'),
    cyan: wrap('36', '39'),
  };
}

// ── formatting ──────────────────────────────────────────────────────────────────────────────

/** `12345` → `12,345`. @param {number} n */
export function num(n) {
  return typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US') : String(n);
}

/** `1234567` → `1.2 MB` (decimal units, like file managers). @param {number} n */
export function bytes(n) {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

/** `(n, 'entry')` → `1 entry` / `2 entries` / `3 messages`. @param {number} n @param {string} word */
export function plural(n, word) {
  const many = word.endsWith('y') ? `${word.slice(0, -1)}ies` : `${word}s`;
  return `${num(n)} ${n === 1 ? word : many}`;
}

/** Visible width of a string that may contain ANSI color codes. @param {string} s */
export function visibleLength(s) {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\u001b\[[0-9;]*m/g, '').length;
}

/**
 * Aligned columns. `align` holds 'l' or 'r' per column (default 'l'); cells may contain ANSI
 * codes. Trailing blanks are not written.
 * @param {string[][]} rows
 * @param {{ align?: string, indent?: string, gap?: string }} [options]
 * @returns {string[]}
 */
export function table(rows, { align = '', indent = '  ', gap = '  ' } = {}) {
  /** @type {number[]} */
  const widths = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell));
    });
  }
  return rows.map((row) => {
    const cells = row.map((cell, i) => {
      const pad = ' '.repeat(widths[i] - visibleLength(cell));
      return align[i] === 'r' ? pad + cell : cell + pad;
    });
    return (indent + cells.join(gap)).trimEnd();
  });
}

/**
 * Shortens text for display: at most `maxChars` characters and `maxLines` lines (0 = no limit).
 * Returns the kept text and how much was cut.
 * @param {string} text
 * @param {{ maxChars?: number, maxLines?: number }} limits
 */
export function clip(text, { maxChars = 0, maxLines = 0 }) {
  text = text.trimEnd();
  let kept = text;
  if (maxChars > 0 && kept.length > maxChars) {
    kept = kept.slice(0, maxChars);
    // Do not split a surrogate pair, and prefer to stop at a word boundary nearby.
    if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
    const space = kept.lastIndexOf(' ');
    if (space > maxChars * 0.8) kept = kept.slice(0, space);
  }
  if (maxLines > 0) {
    let at = -1;
    for (let i = 0; i < maxLines; i++) {
      at = kept.indexOf('\n', at + 1);
      if (at === -1) break;
    }
    if (at !== -1) kept = kept.slice(0, at);
  }
  kept = kept.trimEnd();
  const cutChars = text.length - kept.length;
  const cutLines = cutChars > 0 ? countLines(text) - countLines(kept) : 0;
  return { text: kept, cutChars: Math.max(cutChars, 0), cutLines };
}

/** @param {string} s */
function countLines(s) {
  if (s === '') return 0;
  let n = 1;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/** One line of at most `max` characters: whitespace runs collapsed, `…` when cut. @param {unknown} text @param {number} max */
export function oneLine(text, max) {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let cut = flat.slice(0, Math.max(1, max - 1));
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

// ── loading ─────────────────────────────────────────────────────────────────────────────────

/**
 * Reads a whole file as bytes. Above PROGRESS_THRESHOLD, with `progress` "always", or "auto"
 * and a terminal on stderr, it reads in chunks and draws a progress bar on stderr.
 * Throws CliError (exit 2) when the file cannot be read.
 * @param {string} path
 * @param {{ progress?: 'auto' | 'always' | 'never', stderr?: NodeJS.WriteStream, display?: string }} [options]
 *   `display`: the name used in messages (default `path`)
 * @returns {{ data: Buffer, size: number, mtimeMs: number, bar: ProgressBar | null }}
 */
export function readSessionFile(path, { progress = 'auto', stderr = process.stderr, display = path } = {}) {
  let fd;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (path === SAMPLE_FILE && /** @type {any} */ (error).code === 'ENOENT')
      throw new CliError(NO_SAMPLE_MESSAGE, 'E_FILE');
    throw new CliError(`cannot read ${display}: ${describeFsError(error)}`, 'E_FILE');
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw new CliError(`cannot read ${display}: it is a directory`, 'E_FILE');
    const size = stat.size;
    if (size > MAX_FILE_SIZE) throw tooLarge(display, size);
    const show = size > PROGRESS_THRESHOLD && (progress === 'always' || (progress === 'auto' && Boolean(stderr.isTTY)));
    const bar = show ? new ProgressBar(stderr, `loading ${basename(path)}`, size) : null;
    // One byte more than the size: a full buffer means the file grew while it was read.
    let buffer = Buffer.allocUnsafe(size + 1);
    let offset = 0;
    for (;;) {
      if (offset === buffer.length) {
        // The file grew while we read it: keep reading to its current end.
        if (offset > MAX_FILE_SIZE) throw tooLarge(display, offset);
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, MAX_FILE_SIZE + 1));
        buffer.copy(bigger, 0, 0, offset);
        buffer = bigger;
      }
      const n = readSync(fd, buffer, offset, Math.min(CHUNK, buffer.length - offset), null);
      if (n === 0) break;
      offset += n;
      bar?.update(offset);
    }
    bar?.update(offset, true);
    return { data: buffer.subarray(0, offset), size: offset, mtimeMs: stat.mtimeMs, bar };
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read ${display}: ${describeFsError(error)}`, 'E_FILE');
  } finally {
    closeSync(fd);
  }
}

/** What a file is when it is not text (bin/binary.mjs: the web demo uses the same check). */
export { binaryKind } from './binary.mjs';

/** @param {any} error */
function describeFsError(error) {
  switch (error?.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return error?.message ?? String(error);
  }
}

/**
 * A one-line progress bar on stderr. On a terminal it redraws in place; elsewhere (forced with
 * --progress) it prints a line every 10 %.
 */
export class ProgressBar {
  /** @param {NodeJS.WriteStream} stream @param {string} label @param {number} total */
  constructor(stream, label, total) {
    this.stream = stream;
    this.label = label;
    this.total = Math.max(total, 1);
    this.tty = Boolean(stream.isTTY);
    this.lastDraw = 0;
    this.lastDecile = -1;
  }

  /** @param {number} done @param {boolean} [force] */
  update(done, force = false) {
    const fraction = Math.min(1, done / this.total);
    const percent = Math.floor(fraction * 100);
    if (this.tty) {
      const now = Date.now();
      if (!force && now - this.lastDraw < 80) return;
      this.lastDraw = now;
      const width = 24;
      const full = Math.round(fraction * width);
      const bar = '█'.repeat(full) + '░'.repeat(width - full);
      this.stream.write(
        `\r\u001b[K${this.label}  ${bar} ${String(percent).padStart(3)}%  ${bytes(done)} / ${bytes(this.total)}`,
      );
    } else {
      const decile = Math.floor(percent / 10);
      if (decile === this.lastDecile) return;
      this.lastDecile = decile;
      this.stream.write(`${this.label}: ${percent}% (${bytes(done)} / ${bytes(this.total)})\n`);
    }
  }

  /** @param {string} text a status replacing the bar (e.g. "parsing …") */
  status(text) {
    if (this.tty) this.stream.write(`\r\u001b[K${this.label}  ${text}`);
    else this.stream.write(`${this.label}: ${text}\n`);
  }

  /** Clears the bar (terminal) so that the report starts on a clean line. */
  done() {
    if (this.tty) this.stream.write('\r\u001b[K');
  }
}

// ── writing ─────────────────────────────────────────────────────────────────────────────────

/** A temp file beside `file` (`what`: its purpose), hidden and unique to this process. @param {string} file @param {string} what */
function tmpPath(file, what) {
  return join(dirname(file), `.${basename(file)}.${what}.${process.pid}.${Date.now()}.tmp`);
}

/** Throws the CliError (E_FILE) of a `file` this process may not write. @param {string} file */
function requireWritable(file) {
  try {
    accessSync(file, fsConstants.W_OK);
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${describeFsError(error)}: nothing written`, 'E_FILE');
  }
}

/** The current bytes of `file`, before a rewrite (E_FILE when it cannot be read). @param {string} file */
function readForRewrite(file) {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${describeFsError(error)}: nothing written`, 'E_FILE');
  }
}

/**
 * `file` through symbolic links (a rename replaces the link's target, not the link), opened with
 * `flags`, its stat (of that open file) checked against `expect`, and the file writable; throws
 * the CliError (E_FILE, nothing written) of a write that cannot be. The caller closes `fd`.
 * @param {string} file
 * @param {number | string} flags
 * @param {{ size: number, mtimeMs: number }} [expect]
 */
function openChecked(file, flags, expect) {
  try {
    file = realpathSync(file);
  } catch {
    // a missing file is reported by openSync below
  }
  let fd;
  try {
    fd = openSync(file, flags);
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${describeFsError(error)}: nothing written`, 'E_FILE');
  }
  try {
    const stat = fstatSync(fd);
    if (expect && (stat.size !== expect.size || stat.mtimeMs !== expect.mtimeMs)) {
      throw new CliError(`${file} changed on disk while it was being processed: nothing written`, 'E_FILE');
    }
    // A rename would replace a read-only file as long as its folder is writable.
    requireWritable(file);
    return { file, fd, stat };
  } catch (error) {
    closeSync(fd);
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot write ${file}: ${describeFsError(error)}: nothing written`, 'E_FILE');
  }
}

/** Copies `file` to `backup` through a temp file + rename; E_FILE (nothing written) on failure. */
function writeBackup(/** @type {string} */ file, /** @type {string} */ backup) {
  const tmpBackup = tmpPath(file, 'bak');
  try {
    copyFileSync(file, tmpBackup);
    renameSync(tmpBackup, backup);
  } catch (error) {
    rmSync(tmpBackup, { force: true });
    throw new CliError(`cannot write the backup ${backup}: ${describeFsError(error)}: nothing written`, 'E_FILE');
  }
}

/** Makes a rename in `dir` durable (not supported on every platform: best effort). */
function syncDir(/** @type {string} */ dir) {
  try {
    const dirFd = openSync(dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // ignore
  }
}

/** Writes all of `data` at the position of `fd`; returns how many bytes were written. */
function writeAll(/** @type {number} */ fd, /** @type {Uint8Array} */ data) {
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
  return offset;
}

/** The bytes of open file `fd` from `from` to its current end. */
function tailOf(/** @type {number} */ fd, /** @type {number} */ from) {
  const size = fstatSync(fd).size;
  const tail = Buffer.alloc(Math.max(0, size - from));
  let read = 0;
  while (read < tail.length) {
    const n = readSync(fd, tail, read, tail.length - read, from + read);
    if (n === 0) break;
    read += n;
  }
  return tail.subarray(0, read);
}

/**
 * Replaces `file` with `text` atomically: first copies the original to `backup` (through a
 * temp file + rename), then writes a temp file in the same folder (same mode), fsyncs it and
 * renames it over the original. If anything fails, the original is untouched.
 *
 * Lines another process appends meanwhile (pi appends each entry as it goes) are kept, in their
 * order: the original stays open, and what was appended to it after it was checked is copied to
 * the end of the temp file before the rename (again until it stops growing), and what came in the
 * last instant before the rename right after it. Only a line written at the instant of the rename
 * itself can land before one carried over, or (by a writer that opened the file before the
 * rename and writes after the carry) be lost (CHANGELOG: the measure). A file that shrank
 * meanwhile (rewritten in place by someone else) is refused before the rename.
 * @param {string} file
 * @param {string | Uint8Array} text the new content (a string is written as UTF-8)
 * @param {{ backup?: string, expect?: { size: number, mtimeMs: number }, beforeRename?: () => void }} [options]
 *   `expect`: refuse (CliError) when the file changed on disk since it was read;
 *   `beforeRename`: called just before the last copy of the appended lines and the rename (the
 *   tests append there).
 */
export function writeFileAtomic(file, text, { backup, expect, beforeRename } = {}) {
  const opened = openChecked(file, 'r', expect);
  file = opened.file;
  const { fd: original, stat } = opened;
  try {
    if (backup) writeBackup(file, backup);
    const tmp = tmpPath(file, 'new');
    let copied = stat.size;
    try {
      const fd = openSync(tmp, 'wx', stat.mode & 0o777);
      try {
        writeAll(fd, typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
        beforeRename?.();
        for (let round = 0; round < 16; round++) {
          const tail = tailOf(original, copied);
          if (tail.length === 0) break;
          copied += writeAll(fd, tail);
        }
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      if (fstatSync(original).size < stat.size) {
        throw new CliError(`${file} was rewritten on disk while it was being written: nothing written`, 'E_FILE');
      }
      renameSync(tmp, file);
    } catch (error) {
      rmSync(tmp, { force: true });
      if (error instanceof CliError) throw error;
      throw new CliError(`cannot write ${file}: ${describeFsError(error)}: the file is unchanged`, 'E_FILE');
    }
    carryAppended(file, original, copied);
    syncDir(dirname(file));
  } finally {
    closeSync(original);
  }
}

/**
 * Appends to `file` (the new file, just renamed into place) what the replaced original (still
 * open as `original`) gained beyond `from` in the instant before the rename. Should that fail,
 * the bytes go to `<file>.appended`, which the error names.
 */
function carryAppended(/** @type {string} */ file, /** @type {number} */ original, /** @type {number} */ from) {
  /** @type {Buffer | undefined} */
  let tail;
  try {
    tail = tailOf(original, from);
    if (tail.length === 0) return;
    const fd = openSync(file, fsConstants.O_WRONLY | fsConstants.O_APPEND);
    try {
      writeAll(fd, tail);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    const aside = `${file}.appended`;
    let kept = 'they could not be read back';
    if (tail?.length) {
      try {
        writeFileSync(aside, tail);
        kept = `they are in ${aside}`;
      } catch {
        kept = `they could not be written to ${aside} either`;
      }
    }
    throw new CliError(
      `${file} was written, but the lines another process appended to it while it was written could not be added (${describeFsError(error)}): ${kept}`,
      'E_FILE',
    );
  }
}

/**
 * Checks up front that {@link writeFileAtomic} can replace `file` and write `backup` (before a
 * paid model call, say): the file is writable, and a temp file can be created (and is removed)
 * in its folder. Throws the CliError (E_FILE) the write itself would end with.
 * @param {string} file
 * @param {string} [backup]
 */
export function assertWritable(file, backup) {
  try {
    file = realpathSync(file);
  } catch {
    // a missing file is reported below
  }
  requireWritable(file);
  const probe = tmpPath(file, 'probe');
  try {
    closeSync(openSync(probe, 'wx', 0o600));
  } catch (error) {
    const what = backup ? `the backup ${backup}` : `${file}`;
    throw new CliError(`cannot write ${what}: ${describeFsError(error)}: nothing written`, 'E_FILE');
  } finally {
    rmSync(probe, { force: true });
  }
}

/**
 * Appends one line (a JSONL entry) to `file` in place, as pi itself appends: one write at the
 * end of the file (`O_APPEND`), so that lines another process appends at the same time stay
 * (each write lands whole at the end, on a local file system), and the original bytes are kept
 * exactly as they are (a missing final line break is added first; the line ends with the file's
 * own line end). The original is copied to `backup` first, and `expect` refuses a file that
 * changed since it was read. Not atomic against a crash: one cut short leaves a partial last
 * line, which the next load reports and keeps as it is. A failed write is cut back off the file
 * when nothing was appended after it.
 * @param {string} file
 * @param {string} line without its line break
 * @param {{ backup?: string, expect?: { size: number, mtimeMs: number }, beforeWrite?: () => void }} [options]
 *   `beforeWrite`: called just before the write (the tests append there).
 */
export function appendLine(file, line, { backup, expect, beforeWrite } = {}) {
  const current = readForRewrite(file);
  const opened = openChecked(file, fsConstants.O_WRONLY | fsConstants.O_APPEND, expect);
  file = opened.file;
  const { fd } = opened;
  // The file's own line end (that of its first line): `\r\n` files stay `\r\n` files.
  const first = current.indexOf(0x0a);
  const eol = first > 0 && current[first - 1] === 0x0d ? '\r\n' : '\n';
  const separator = current.length > 0 && current[current.length - 1] !== 0x0a ? eol : '';
  const data = Buffer.from(`${separator}${line}${eol}`, 'utf8');
  let written = 0;
  try {
    if (backup) writeBackup(file, backup);
    beforeWrite?.();
    const before = fstatSync(fd).size;
    try {
      // Counted as it goes: a write that fails part way is cut back by what it wrote.
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
      fsyncSync(fd);
    } catch (error) {
      throw new CliError(
        `cannot write ${file}: ${describeFsError(error)}: ${cutBack(file, fd, before, written)}`,
        'E_FILE',
      );
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Cuts a failed append of `written` bytes at `before` back off `file`, when nothing was appended
 * after it (else leaves the file as it is); says what became of the file.
 */
function cutBack(
  /** @type {string} */ file,
  /** @type {number} */ fd,
  /** @type {number} */ before,
  /** @type {number} */ written,
) {
  try {
    if (written === 0 && fstatSync(fd).size === before) return 'the file is unchanged';
    if (fstatSync(fd).size !== before + written) return 'part of the line may remain at the end of the file';
    // Through a second descriptor: one opened for appending cannot truncate everywhere.
    const rw = openSync(file, 'r+');
    try {
      ftruncateSync(rw, before);
    } finally {
      closeSync(rw);
    }
    return 'the file is unchanged';
  } catch {
    return 'part of the line may remain at the end of the file';
  }
}

/**
 * Replaces whole lines of `file` atomically, through {@link writeFileAtomic}: every other byte of
 * the current file is kept exactly as it is (a byte order mark, `\r\n` line ends, bytes that are
 * not UTF-8), and each replaced line keeps its own line end (`\n`, `\r\n` or none at the end of
 * the file); a byte order mark before line 1 stays. The original is kept as `backup`, and
 * `expect` refuses a file that changed since it was read.
 * @param {string} file
 * A line to replace must hold one JSON value (one record): when one holds several records glued
 * together (`{…}{…}`, which the engine reads as one entry each), replacing it by one entry's text
 * would drop the others, so the file is instead written whole from `options.whole()` (the
 * engine's save, every record kept); without `whole` that is an `E_FILE` error, nothing written.
 * @param {string} file
 * @param {Map<number, string>} lines 1-based line number → the new text of that line (no line break)
 * @param {{ backup?: string, expect?: { size: number, mtimeMs: number }, whole?: () => Uint8Array }} [options]
 */
export function replaceLinesAtomic(file, lines, options = {}) {
  const current = readForRewrite(file);
  /** @type {Buffer[]} */
  const parts = [];
  let start = 0;
  let lineNumber = 1;
  let replaced = 0;
  while (start < current.length) {
    const newline = current.indexOf(0x0a, start);
    const end = newline < 0 ? current.length : newline + 1;
    const text = lines.get(lineNumber);
    if (text === undefined) {
      parts.push(current.subarray(start, end));
    } else {
      // The line end is the `\n` and every `\r` before it (the engine's rule: `\r\r\n` ends a line).
      let contentEnd = newline < 0 ? current.length : newline;
      while (contentEnd > start && current[contentEnd - 1] === 0x0d) contentEnd--;
      const bom = lineNumber === 1 && current[0] === 0xef && current[1] === 0xbb && current[2] === 0xbf ? 3 : 0;
      if (!holdsOneValue(current.subarray(start + bom, contentEnd))) {
        if (!options.whole)
          throw new CliError(
            `cannot write ${file}: line ${lineNumber} holds several records: nothing written`,
            'E_FILE',
          );
        writeFileAtomic(file, options.whole(), options);
        return;
      }
      parts.push(current.subarray(start, start + bom), Buffer.from(text, 'utf8'), current.subarray(contentEnd, end));
      replaced++;
    }
    start = end;
    lineNumber++;
  }
  if (replaced !== lines.size) {
    const missing = [...lines.keys()].filter((n) => n >= lineNumber).sort((a, b) => a - b);
    throw new CliError(
      `cannot write ${file}: it has no line ${missing[0] ?? '?'} (${lineNumber - 1} lines): nothing written`,
      'E_FILE',
    );
  }
  writeFileAtomic(file, Buffer.concat(parts), options);
}

/**
 * Whether a line's bytes (without its line end) are one JSON value, as `JSON.parse` reads them
 * (bytes that are not UTF-8 read as U+FFFD, as the engine reads them).
 * @param {Buffer} bytes
 */
function holdsOneValue(bytes) {
  try {
    JSON.parse(bytes.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

// ── OpenAI-compatible API ───────────────────────────────────────────────────────────────────

/** The package's `session-compaction/openai` (kept here for the CLI's older imports). */
export { openaiComplete } from '../openai.mjs';
