'use strict';
/**
 * Runs batches of execution writes on a SQLite connection: the same code on the service's
 * thread (in-memory databases) and on the writer thread (files; see writer.ts). Plain CommonJS
 * so the writer thread needs no TypeScript loader. Types: write-ops.d.cts.
 *
 * A batch is one IMMEDIATE transaction, and an item that fails (a refused guard, a constraint)
 * leaves the others written (see runItems).
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
  // a statement run to its end in one call: `PRAGMA incremental_vacuum` frees one page per step
  if (op.exec === true) {
    db.exec(op.sql);
    return 0;
  }
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

/**
 * Optimistic first: the whole batch with no savepoints, which is what nearly every batch needs.
 * When an item fails, that transaction rolls back and the batch runs again with one savepoint per
 * item, so the failing item is the only one left out (a SAVEPOINT and RELEASE per item cost
 * about as much as one more insert).
 */
function runItems(db, cache, items) {
  try {
    return db.transaction(() => items.map((ops) => ({ changes: ops.map((op) => runOp(db, cache, op)) }))).immediate();
  } catch {
    return runItemsApart(db, cache, items);
  }
}

function runItemsApart(db, cache, items) {
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

/**
 * The items of a message from the service's thread (writer.ts `flat`): one flat array, per item
 * its op count, per op its statement's number, a kind (0; 1 with expect, code and message; 2 the
 * same run with exec), its parameter count and the parameters. `sqls` maps the numbers to texts.
 */
function unflatten(flat, sqls) {
  let at = 0;
  const items = new Array(flat[at++]);
  for (let i = 0; i < items.length; i++) {
    const ops = new Array(flat[at++]);
    for (let k = 0; k < ops.length; k++) {
      const sql = sqls.get(flat[at++]);
      const kind = flat[at++];
      const op = kind === 0 ? { sql, params: null } : { sql, params: null, expect: flat[at++], code: flat[at++], message: flat[at++] };
      if (kind === 2) op.exec = true;
      const n = flat[at++];
      op.params = flat.slice(at, at + n);
      at += n;
      ops[k] = op;
    }
    items[i] = ops;
  }
  return items;
}

module.exports = { runItems, unflatten };
