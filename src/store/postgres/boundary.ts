/**
 * Boundary batches of several executions written together: each kind of write is one
 * statement for the whole group (the records to create, the existence and guard check, the
 * patches of one shape, dropped logs, log upserts, event upserts), so a group commit costs a
 * handful of round trips whatever its size. Items are built (and JSON-encoded) before the
 * transaction opens: a value that cannot be encoded fails its item before anything is written.
 */
import { iterationKeyOf } from '../../model/block-run.js';
import { TroupeError } from '../../errors.js';
import { checkBatch, conflict, contextText, iso, normalizeLog, notFound, toJson } from '../shared.js';
import type { BoundaryBatch, Now } from '../types.js';
import { pgExecutionRow, pgPatchColumns } from './rows.js';
import type { PgExecutionRow } from './rows.js';
import type { Querier } from './db.js';

/** The executions table's columns, with the array type unnest needs for each. */
export const EXECUTION_COLUMNS: readonly (readonly [keyof PgExecutionRow, string])[] = [
  ['id', 'text'], ['workflow_id', 'text'], ['version', 'int4'], ['status', 'text'], ['trigger', 'text'], ['input', 'text'],
  ['output', 'text'], ['error', 'text'], ['started_at', 'text'], ['ended_at', 'text'], ['duration_ms', 'float8'],
  ['context', 'text'], ['created_at', 'text'], ['trigger_type', 'text'],
];
const COLUMN_TYPES = new Map<string, string>(EXECUTION_COLUMNS.map(([c, t]) => [c, t]));

export interface ItemWrites {
  id: string;
  create: PgExecutionRow | null;
  guard: { status: string; context: string | null } | null;
  patch: [string, unknown][];
  drops: [string, string][];
  /** block id, iteration key, order, status, body */
  logs: [string, string, number, string, string][];
  /** seq, event, data, at */
  events: [number, string, string, string][];
}

/** An item that cannot be written as it is: a duplicate record, a missing one, a guard that no longer holds. */
export class Refused extends Error {
  constructor(readonly error: TroupeError) {
    super(error.message);
  }
}

/** Throws before anything is written when the batch is malformed (or cannot be encoded). */
export function itemWrites(id: string, batch: BoundaryBatch, now: Now): ItemWrites {
  checkBatch(id, batch);
  const logs = new Map<string, ItemWrites['logs'][number]>();
  for (const log of batch.logs ?? []) {
    const key = iterationKeyOf(log.iteration);
    // a key given twice keeps its last value, as two upserts in a row would
    logs.delete(`${log.blockId}\u0000${key}`);
    logs.set(`${log.blockId}\u0000${key}`, [log.blockId, key, log.order, log.status, toJson(normalizeLog(log))]);
  }
  const events = new Map<number, ItemWrites['events'][number]>();
  for (const ev of batch.events ?? []) events.set(ev.seq, [ev.seq, ev.event, toJson(ev.data), iso(ev.at)]);
  return {
    id,
    create: batch.create === undefined ? null : pgExecutionRow(batch.create, iso(batch.create.createdAt ?? now().toISOString())),
    guard: batch.guard === undefined ? null : { status: batch.guard.status, context: contextText(batch.guard.context) },
    patch: batch.patch ? pgPatchColumns(batch.patch) : [],
    drops: (batch.dropLogs ?? []).map((d) => [d.blockId, iterationKeyOf(d.iteration)]),
    logs: [...logs.values()],
    events: [...events.values()],
  };
}

/** Column i of rows, as one array parameter. */
function column<T extends unknown[]>(rows: readonly T[], i: number): unknown[] {
  return rows.map((r) => r[i]);
}

/**
 * Writes the items, whose ids must be distinct, in the caller's transaction; Refused (and the
 * caller rolls back) when one of them cannot be written.
 */
export async function writeGroup(q: Querier, items: readonly ItemWrites[]): Promise<void> {
  await insertRecords(q, items.filter((w) => w.create !== null));
  await checkRecords(q, items.filter((w) => w.create === null || w.guard !== null));
  await applyPatches(q, items);
  const drops = items.flatMap((w) => w.drops.map((d) => [w.id, ...d]));
  if (drops.length > 0) {
    await q.query(`DELETE FROM block_logs WHERE (execution_id, block_id, iteration_key) IN (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`, [column(drops, 0), column(drops, 1), column(drops, 2)]);
  }
  const logs = items.flatMap((w) => w.logs.map((l) => [w.id, ...l]));
  if (logs.length > 0) {
    await q.query(`INSERT INTO block_logs (execution_id, block_id, iteration_key, ord, status, body)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::text[], $6::text[])
      ON CONFLICT (execution_id, block_id, iteration_key) DO UPDATE SET ord = excluded.ord, status = excluded.status, body = excluded.body`,
    [0, 1, 2, 3, 4, 5].map((i) => column(logs, i)));
  }
  const events = items.flatMap((w) => w.events.map((e) => [w.id, ...e]));
  if (events.length > 0) {
    await q.query(`INSERT INTO execution_events (execution_id, seq, event, data, at)
      SELECT * FROM unnest($1::text[], $2::int8[], $3::text[], $4::text[], $5::text[])
      ON CONFLICT (execution_id, seq) DO UPDATE SET event = excluded.event, data = excluded.data, at = excluded.at`,
    [0, 1, 2, 3, 4].map((i) => column(events, i)));
  }
}

async function insertRecords(q: Querier, creating: readonly ItemWrites[]): Promise<void> {
  if (creating.length === 0) return;
  const rows = creating.map((w) => w.create as PgExecutionRow);
  const inserted = await q.query<{ id: string }>(`INSERT INTO executions (${EXECUTION_COLUMNS.map(([c]) => c).join(', ')})
    SELECT * FROM unnest(${EXECUTION_COLUMNS.map(([, t], i) => `$${i + 1}::${t}[]`).join(', ')}) ON CONFLICT (id) DO NOTHING RETURNING id`,
  EXECUTION_COLUMNS.map(([c]) => rows.map((r) => r[c])));
  if (inserted.rows.length === rows.length) return;
  const written = new Set(inserted.rows.map((r) => r.id));
  const existing = creating.find((w) => !written.has(w.id)) as ItemWrites;
  throw new Refused(conflict('execution', existing.id));
}

/**
 * Locks the records (in id order, so two instances locking overlapping groups cannot deadlock)
 * and checks that each exists and still matches its guard: a claim racing another for the
 * same execution waits on the lock here, then reads what the other wrote.
 */
async function checkRecords(q: Querier, checking: readonly ItemWrites[]): Promise<void> {
  if (checking.length === 0) return;
  const { rows } = await q.query<{ id: string; status: string; context: string | null }>(
    'SELECT id, status, CASE WHEN id = ANY($2::text[]) THEN context END AS context FROM executions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
    [checking.map((w) => w.id), checking.filter((w) => w.guard !== null).map((w) => w.id)],
  );
  const found = new Map(rows.map((r) => [r.id, r]));
  for (const w of checking) {
    const row = found.get(w.id);
    if (row === undefined) throw new Refused(notFound('execution', w.id));
    if (w.guard !== null && (row.status !== w.guard.status || row.context !== w.guard.context)) {
      throw new Refused(new TroupeError('CONFLICT', `execution ${w.id} changed meanwhile`, { details: { id: w.id } }));
    }
  }
}

/** One UPDATE per shape of patch (the set of fields it sets), for every item of that shape. */
async function applyPatches(q: Querier, items: readonly ItemWrites[]): Promise<void> {
  const shapes = new Map<string, ItemWrites[]>();
  for (const w of items) {
    if (w.patch.length === 0) continue;
    const shape = w.patch.map(([c]) => c).join(',');
    shapes.set(shape, [...(shapes.get(shape) ?? []), w]);
  }
  for (const [shape, group] of shapes) {
    const cols = shape.split(',');
    const params = [group.map((w) => w.id), ...cols.map((_, i) => group.map((w) => (w.patch[i] as [string, unknown])[1]))];
    await q.query(`UPDATE executions AS e SET ${cols.map((c) => `${c} = v.${c}`).join(', ')}
      FROM unnest($1::text[], ${cols.map((c, i) => `$${i + 2}::${COLUMN_TYPES.get(c) ?? 'text'}[]`).join(', ')}) AS v(id, ${cols.join(', ')})
      WHERE e.id = v.id`, params);
  }
}
