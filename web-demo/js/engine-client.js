// The page's side of the engine worker (js/engine-worker.js): starts the module worker and turns
// its messages into promises. The page never loads the engine itself; every engine call is a
// message to the worker, so a long load or compaction never blocks rendering or input.

/**
 * The engine worker as an async call interface.
 * `call(op, args, transfer)` resolves with the worker's value, or rejects with an Error carrying
 * the engine's `code` (e.g. `E_ABORTED`). When the worker itself fails (its script cannot load),
 * every pending call rejects and `onCrash` is called with the message.
 */
export class EngineClient {
  /** @param {{ onCrash?: (message: string) => void }} [options] */
  constructor({ onCrash } = {}) {
    this.worker = new Worker(new URL('./engine-worker.js', import.meta.url), { type: 'module' });
    this.nextId = 1;
    /** @type {Map<number, { resolve: (v: any) => void, reject: (e: any) => void }>} */
    this.pending = new Map();
    this.worker.addEventListener('message', (event) => {
      const { id, ok, value, error } = event.data;
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (ok) p.resolve(value);
      else p.reject(Object.assign(new Error(error.message), { code: error.code, name: error.name ?? 'Error' }));
    });
    this.worker.addEventListener('error', (event) => {
      event.preventDefault();
      const message = `the engine worker failed: ${event.message || 'its script could not be loaded'}`;
      for (const p of this.pending.values()) p.reject(new Error(message));
      this.pending.clear();
      onCrash?.(message);
    });
  }

  /**
   * Runs one operation of the worker.
   * @param {string} op
   * @param {Record<string, any>} [args]
   * @param {Transferable[]} [transfer] buffers handed over rather than copied (file bytes)
   * @returns {Promise<any>}
   */
  call(op, args = {}, transfer = []) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args }, { transfer });
    });
  }
}
