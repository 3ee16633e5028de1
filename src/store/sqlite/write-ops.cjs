'use strict';
/**
 * Runs batches of execution writes on a SQLite connection: the same code on the service's
 * thread (in-memory databases) and on the writer thread (files; see writer.ts). Plain CommonJS
 * so the writer thread needs no TypeScript loader. Types: write-ops.d.cts.
 *
 * A batch is one IMMEDIATE transaction; each item runs in its own savepoint, so an item that
 * fails (a refused guard, a constraint) leaves the others written.
 */

/** A guard that did not hold: the item fails with `code` and nothing of it is written. */
class Refused extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function statement(db, cache, sql) {
  let stmt = cache.get(sql);
  if (stmt === undefined) {
    stmt = db.prepare(sql);
    cache.set(sql, stmt);
  }
  return stmt;
}

function runOp(db, cache, op) {
  const stmt = statement(db, cache, op.sql);
  if (op.expect === 'row') {
    if (stmt.get(...op.params) === undefined) throw new Refused(op.code, op.message);
    return 1;
  }
  const { changes } = stmt.run(...op.params);
  if (op.expect === 'change' && changes === 0) throw new Refused(op.code, op.message);
  return changes;
}

function failure(err) {
  if (err instanceof Refused) return { code: err.code, message: err.message };
  return { code: 'STORE_ERROR', message: err instanceof Error ? err.message : String(err) };
}

function runItems(db, cache, items) {
  const results = new Array(items.length).fill(null);
  const one = db.transaction((ops) => ops.map((op) => runOp(db, cache, op)));
  db.transaction(() => {
    for (let i = 0; i < items.length; i++) {
      try {
        results[i] = { changes: one(items[i]) };
      } catch (err) {
        results[i] = failure(err);
      }
    }
  }).immediate();
  return results;
}

module.exports = { runItems };
