/**
 * Cancelling a parked execution (SPEC §2.1; docs/waiting.md): it runs nowhere, so no actor can
 * hear a cancel. Its record is ended here, guarded by its status and context as read: when the
 * waker claimed it in between, the claim wins and the cancel goes to the run over the bus.
 */
import { isTroupeError } from '../errors.js';
import type { Engine } from '../engine/engine.js';
import type { ExecutionResult } from '../runtime/types.js';
import type { BlockLog, ExecutionRecord, Store } from '../store/types.js';

export async function cancelParked(store: Store, engine: Engine, rec: ExecutionRecord & { logs: BlockLog[] }, at = new Date()): Promise<boolean> {
  const endedAt = at.toISOString();
  const started = Date.parse(rec.startedAt ?? endedAt);
  const durationMs = Math.max(0, at.getTime() - started);
  const error = { code: 'CANCELLED', message: 'execution cancelled', blockId: null };
  const done: ExecutionResult = {
    id: rec.id, workflowId: rec.workflowId, version: rec.version, status: 'cancelled', output: null, error, response: null,
    startedAt: rec.startedAt ?? endedAt, endedAt, durationMs,
  };
  const logs = rec.logs.filter((l) => l.status === 'waiting').map((l) => ({
    ...l, status: 'cancelled', endedAt, durationMs: l.startedAt === null ? null : Math.max(0, at.getTime() - Date.parse(l.startedAt)),
  }));
  const seq = ((await store.executions.listEvents(rec.id)).at(-1)?.seq ?? 0) + 1;
  try {
    await store.executions.saveBoundary(rec.id, {
      guard: { status: 'waiting', context: rec.context ?? null },
      patch: { status: 'cancelled', output: null, error, endedAt, durationMs },
      ...(logs.length > 0 ? { logs } : {}),
      events: [{ executionId: rec.id, seq, event: 'done', data: done, at: endedAt }],
    });
  } catch (err) {
    if (isTroupeError(err) && err.code === 'CONFLICT') return false;
    throw err;
  }
  await store.waits.delete(rec.id);
  engine.announce('cancelled', { executionId: rec.id, workflowId: rec.workflowId, trigger: rec.trigger, status: 'cancelled', durationMs });
  return true;
}
