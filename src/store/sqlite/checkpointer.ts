/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold, on the thread that commits: copying the WAL into the database file and
 * syncing it then stalled the service's event loop (about a third of the execute endpoint's store
 * time). Here a worker thread with its own connection checkpoints on a timer instead, and the
 * main connection turns automatic checkpoints off. PASSIVE checkpoints never block the writer;
 * a WAL that still grows past `restartPages` gets a RESTART checkpoint, which waits for the
 * writer briefly so the file starts over.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface CheckpointerOptions {
  intervalMs?: number;
  restartPages?: number;
  onError?: (err: Error) => void;
}

export interface Checkpointer {
  stop(): Promise<void>;
}

// Plain CommonJS run with `eval`: the worker must not depend on the TypeScript loader the main
// thread may be using (tsx registers itself for the main thread only).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 2000');
let timer;
const tick = () => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result && result.log > workerData.restartPages) db.pragma('wal_checkpoint(RESTART)');
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
  timer = setTimeout(tick, workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

export function startCheckpointer(path: string, opts: CheckpointerOptions = {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { path, driver, intervalMs: opts.intervalMs ?? 100, restartPages: opts.restartPages ?? 16_384 },
  });
  const report = opts.onError ?? (() => undefined);
  worker.on('message', (m: { error?: string }) => {
    if (m.error !== undefined) report(new Error(`WAL checkpoint failed: ${m.error}`));
  });
  worker.on('error', (err) => report(err));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // the service's lifetime decides the process's, never this timer (after the listeners: adding one refs the worker again)
  worker.unref();
  let stopped = false;
  return {
    async stop() {
      if (stopped) return exited;
      stopped = true;
      worker.postMessage('stop');
      await exited;
    },
  };
}
