'use strict';
/**
 * The writer thread (see writer.ts): owns a connection that runs execution write batches and
 * the WAL checkpoints, so neither the commits nor copying the WAL back into the database
 * stall the service's event loop. PASSIVE checkpoints never wait; a WAL still past
 * `restartPages` gets a RESTART, which waits briefly for readers so the file starts over.
 */
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');
const { runItems } = require('./write-ops.cjs');

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

function checkpointIfDue() {
  if (Date.now() - lastCheckpoint >= workerData.checkpointMs) checkpoint();
}

const timer = setInterval(checkpointIfDue, workerData.checkpointMs);

parentPort.on('message', (message) => {
  if (message.stop === true) {
    clearInterval(timer);
    db.close();
    parentPort.close();
    return;
  }
  try {
    for (const [n, sql] of message.sqls) sqls.set(n, sql);
    // each op arrives as [sql number, params, expect, code, message, exec] (writer.ts `wire`)
    for (const ops of message.items) {
      for (let k = 0; k < ops.length; k++) {
        const w = ops[k];
        ops[k] = { sql: sqls.get(w[0]), params: w[1], expect: w[2], code: w[3], message: w[4], exec: w[5] };
      }
    }
    parentPort.postMessage({ id: message.id, results: runItems(db, cache, message.items) });
  } catch (err) {
    parentPort.postMessage({ id: message.id, error: err instanceof Error ? err.message : String(err) });
  }
  checkpointIfDue();
});
