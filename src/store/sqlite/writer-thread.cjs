'use strict';
/**
 * The writer thread (see writer.ts): owns a connection that runs execution write batches and
 * the WAL checkpoints, so neither the commits nor copying the WAL back into the database
 * stall the service's event loop. PASSIVE checkpoints never wait; a WAL still past
 * `restartPages` gets a RESTART, which waits briefly for readers so the file starts over.
 */
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');
const { runItems, unflatten } = require('./write-ops.cjs');

const db = new Database(workerData.path);
// the same as the service's connection (connectionPragmas in db.ts); checkpoints are done below
for (const pragma of workerData.pragmas) db.pragma(pragma);
db.pragma('wal_autocheckpoint = 0');
const cache = new Map();
// the statements' texts by the numbers the service's thread gives them (writer.ts)
const sqls = new Map();
let lastCheckpoint = Date.now();

function checkpoint() {
  lastCheckpoint = Date.now();
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result && result.log > workerData.restartPages) db.pragma('wal_checkpoint(RESTART)');
  } catch (err) {
    parentPort.postMessage({ warning: `WAL checkpoint failed: ${err instanceof Error ? err.message : String(err)}` });
  }
}

/**
 * The checkpoint's first step syncs the WAL: under load that flushes every frame written since
 * the last one (tens of MB under S1 at 500 ms), and all that time no commit can run, so every
 * execution waiting for one waits too (median ~20 ms of stall per checkpoint, measured live).
 * The WAL's data is therefore flushed first on the thread pool while commits go on; the
 * checkpoint then syncs only what came since. It syncs as before: durability is unchanged,
 * this sync only takes the bulk of the flush off the commits' path. The -wal file carries no
 * SQLite lock, so opening and closing a descriptor of it here cannot drop one of SQLite's.
 */
let flushing = false;
let stopped = false;

function checkpointIfDue() {
  if (flushing || stopped || Date.now() - lastCheckpoint < workerData.checkpointMs) return;
  flushing = true;
  flushWal(() => {
    flushing = false;
    if (!stopped) checkpoint();
  });
}

function flushWal(done) {
  fs.open(`${workerData.path}-wal`, 'r+', (err, fd) => {
    // no WAL (nothing written yet) or not ours to open: the checkpoint syncs it as it always did
    if (err) return done();
    fs.fdatasync(fd, () => fs.close(fd, () => done()));
  });
}

const timer = setInterval(checkpointIfDue, workerData.checkpointMs);

parentPort.on('message', (message) => {
  if (message.stop === true) {
    stopped = true;
    clearInterval(timer);
    db.close();
    parentPort.close();
    return;
  }
  try {
    for (const [n, sql] of message.sqls) sqls.set(n, sql);
    // the items arrive as one flat array (writer.ts `flat`)
    parentPort.postMessage({ id: message.id, results: runItems(db, cache, unflatten(message.flat, sqls)) });
  } catch (err) {
    parentPort.postMessage({ id: message.id, error: err instanceof Error ? err.message : String(err) });
  }
  checkpointIfDue();
});
