/**
 * The statements of one boundary batch, built (and JSON-encoded) before the transaction opens:
 * a value that cannot be encoded fails the item before anything is written. Logs and events
 * go in one multi-row upsert each; a key given twice in one batch keeps its last value, as
 * two upserts in a row would (PostgreSQL refuses one statement touching a row twice).
 */
import { iso, iterationKey, normalizeLog, toJson } from '../shared.js';
import type { BoundaryBatch } from '../types.js';
import type { Statement } from './executions.js';

export interface BoundaryWrites {
  id: string;
  /** the INSERT's parameters of the record to create, or null */
  create: unknown[] | null;
  guard: { status: string; context: string | null } | null;
  patch: Statement | null;
  /** after the patch: the dropped logs, the log and event upserts, in this order */
  statements: Statement[];
}

export function boundaryWrites(id: string, create: unknown[] | null, guard: BoundaryWrites['guard'], patch: Statement | null, batch: BoundaryBatch): BoundaryWrites {
  const statements: Statement[] = [];
  const drops = (batch.dropLogs ?? []).map((d) => [d.blockId, iterationKey(d.iteration)] as const);
  if (drops.length > 0) {
    statements.push({
      sql: `DELETE FROM block_logs WHERE execution_id = $1 AND (block_id, iteration_key) IN (
        SELECT * FROM unnest($2::text[], $3::text[]))`,
      params: [id, drops.map((d) => d[0]), drops.map((d) => d[1])],
    });
  }
  const logs = lastByKey((batch.logs ?? []).map((log) => ({ key: `${log.blockId}\u0000${iterationKey(log.iteration)}`, log })));
  if (logs.length > 0) {
    statements.push({
      sql: `INSERT INTO block_logs (execution_id, block_id, iteration_key, ord, status, body)
        SELECT $1, * FROM unnest($2::text[], $3::text[], $4::float8[], $5::text[], $6::text[])
        ON CONFLICT (execution_id, block_id, iteration_key) DO UPDATE SET ord = excluded.ord, status = excluded.status, body = excluded.body`,
      params: [
        id, logs.map((l) => l.log.blockId), logs.map((l) => iterationKey(l.log.iteration)), logs.map((l) => l.log.order),
        logs.map((l) => l.log.status), logs.map((l) => toJson(normalizeLog(l.log))),
      ],
    });
  }
  const events = lastByKey((batch.events ?? []).map((ev) => ({ key: String(ev.seq), ev })));
  if (events.length > 0) {
    statements.push({
      sql: `INSERT INTO execution_events (execution_id, seq, event, data, at)
        SELECT $1, * FROM unnest($2::int8[], $3::text[], $4::text[], $5::text[])
        ON CONFLICT (execution_id, seq) DO UPDATE SET event = excluded.event, data = excluded.data, at = excluded.at`,
      params: [id, events.map((e) => e.ev.seq), events.map((e) => e.ev.event), events.map((e) => toJson(e.ev.data)), events.map((e) => iso(e.ev.at))],
    });
  }
  return { id, create, guard, patch, statements };
}

/** Entries in first-seen order of their key, each with its last value. */
function lastByKey<T extends { key: string }>(entries: readonly T[]): T[] {
  const byKey = new Map<string, T>();
  for (const e of entries) {
    byKey.delete(e.key);
    byKey.set(e.key, e);
  }
  return [...byKey.values()];
}
