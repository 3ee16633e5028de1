/**
 * The connection pool, transactions and migrations of the PostgreSQL store.
 *
 * Migrations run under a session advisory lock, so several instances starting at once apply
 * each migration exactly once: the first takes the lock and migrates, the others wait for it
 * and then find nothing left to do.
 */
import pg from 'pg';
import type { PoolClient, QueryResultRow } from 'pg';
import { TroupeError } from '../../errors.js';
import { isRetryableState, sqlState } from './errors.js';
import { MIGRATIONS } from './schema.js';

/** Arbitrary, fixed: the advisory lock key every Troupe instance takes to migrate. */
const MIGRATION_LOCK = 7_241_905_331;
/** How often a transaction that lost a serialization race or a deadlock runs again. */
const TX_ATTEMPTS = 3;

/** int8 (counts, seqs) as numbers: every one Troupe stores is far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** What a query runs on: the pool (one statement) or a transaction's client. */
export interface Querier {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: readonly unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * Every statement runs as a named prepared statement: each connection parses and plans a text
 * once, not at every boundary. The texts are the adapter's own, in a few shapes (patches and
 * list filters vary by the fields given), so the names stay few.
 */
const statementNames = new Map<string, string>();

function named(sql: string, params: readonly unknown[]): pg.QueryConfig {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `troupe_${statementNames.size}`;
    statementNames.set(sql, name);
  }
  return { name, text: sql, values: params as unknown[] };
}

function prepared(client: PoolClient): Querier {
  return { query: (sql, params = []) => client.query(named(sql, params)) };
}

/**
 * A client taken from the pool for several statements. A connection that dies while it is out
 * emits 'error' on it (an unhandled one would end the process); the statement in flight fails
 * anyway, so the listener only has to exist. Returns the release that also removes it.
 */
async function checkOut(pool: pg.Pool): Promise<{ client: PoolClient; release: (broken?: Error) => void }> {
  const client = await pool.connect();
  const ignore = (): void => undefined;
  client.on('error', ignore);
  return {
    client,
    release: (broken) => {
      client.removeListener('error', ignore);
      client.release(broken);
    },
  };
}

export class Pg implements Querier {
  constructor(readonly pool: pg.Pool) {}

  query<R extends QueryResultRow = QueryResultRow>(sql: string, params: readonly unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(named(sql, params));
  }

  /**
   * Runs `fn` in one transaction (READ COMMITTED; the claims lock the rows they decide on).
   * A serialization failure or deadlock runs it again, so `fn` must only write through `q`.
   */
  async tx<T>(fn: (q: Querier) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const { client, release } = await checkOut(this.pool);
      try {
        await client.query('BEGIN');
        const out = await fn(prepared(client));
        await client.query('COMMIT');
        release();
        return out;
      } catch (err) {
        release(await rollback(client));
        const state = sqlState(err);
        if (attempt >= TX_ATTEMPTS || state === undefined || !state.startsWith('40')) throw err;
      }
    }
  }
}

/** Rolls back; returns the error when the connection itself is unusable (so the pool drops it). */
async function rollback(client: PoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

export interface PgPoolOptions {
  /** most connections this instance holds (default 10) */
  max?: number;
  /** how long to wait for a connection (default 10 s) */
  connectionTimeoutMillis?: number;
  onWarning?: (message: string) => void;
}

export function createPool(url: string, opts: PgPoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 10_000,
    idleTimeoutMillis: 30_000,
    application_name: 'troupe',
    types,
  });
  // an idle connection the server dropped: the pool discards it; unhandled, it would end the process
  pool.on('error', (err) => opts.onWarning?.(`PostgreSQL connection lost: ${err.message}`));
  return pool;
}

/** Applies the migrations this database lacks; refuses a database of a newer Troupe. */
export async function migrate(pool: pg.Pool): Promise<void> {
  const { client, release } = await checkOut(pool);
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS troupe_schema_version (
        version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`);
      const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM troupe_schema_version');
      const current = rows[0]?.v ?? 0;
      if (current > MIGRATIONS.length) {
        throw new TroupeError('STORE_ERROR', `database schema version ${current} is newer than this Troupe (${MIGRATIONS.length})`, { retryable: false });
      }
      for (let v = current; v < MIGRATIONS.length; v++) await applyMigration(client, v);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } catch (err) {
    broken = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    release(broken !== undefined && !(broken instanceof TroupeError) ? broken : undefined);
  }
}

async function applyMigration(client: PoolClient, index: number): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(MIGRATIONS[index] as string);
    await client.query('INSERT INTO troupe_schema_version (version, applied_at) VALUES ($1, $2)', [index + 1, new Date().toISOString()]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'the configured URL';
  }
}

/** Why opening failed, retryable when the server may answer later (down, starting, unreachable). */
export function openError(url: string, err: unknown): TroupeError {
  if (err instanceof TroupeError) return err;
  const state = sqlState(err);
  const message = err instanceof Error ? err.message || (err as { code?: string }).code || err.name : String(err);
  return new TroupeError('STORE_ERROR', `cannot open PostgreSQL store at ${redactUrl(url)}: ${message}`, {
    cause: err,
    retryable: state === undefined ? true : isRetryableState(state),
    ...(state === undefined ? {} : { details: { sqlstate: state } }),
  });
}
