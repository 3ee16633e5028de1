import type Database from 'better-sqlite3';

/** One statement of an item; `expect` turns "no row changed" / "no row found" into the item's failure. */
export interface WriteOp {
  sql: string;
  params: unknown[];
  expect?: 'change' | 'row';
  /** the failure's code and message when `expect` does not hold */
  code?: string;
  message?: string;
  /** run to its end with exec (no parameters, no changes counted): `PRAGMA incremental_vacuum` */
  exec?: boolean;
}

/** Per item: the changes of each op, or why the item was not written. */
export type ItemResult = { changes: number[] } | { code: string; message: string };

export type StatementCache = Map<string, Database.Statement<unknown[]>>;

export function runItems(db: Database.Database, cache: StatementCache, items: readonly (readonly WriteOp[])[]): ItemResult[];

/** The items of a writer message (writer.ts `flat`), their statements' texts found in `sqls`. */
export function unflatten(flat: readonly unknown[], sqls: ReadonlyMap<number, string>): WriteOp[][];
