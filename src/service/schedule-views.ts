/** What GET /api/workflows/{id}/schedules shows of each schedule trigger (SPEC §4.5). */
import type { ScheduleTrigger, WorkflowDef } from '../model/types.js';
import type { ScheduleFire, Store } from '../store/types.js';
import type { ScheduleService } from './schedules.js';

export interface ScheduleView {
  id: string;
  cron: string;
  timezone: string;
  overlap: 'skip' | 'allow';
  catchUp: 'none' | 'last';
  input: unknown;
  /** deployed with this schedule: it fires */
  active: boolean;
  /** the next due times (empty when not active) */
  nextRuns: string[];
  /** the first of them, or null */
  nextRunAt: string | null;
  /** the latest due time handled, run or skipped */
  lastResult: FireView | null;
  /** the latest due time that ran (an overlap skip does not hide it) */
  lastRun: FireView | null;
}

export interface FireView {
  dueAt: string;
  firedAt: string;
  executionId: string | null;
  /** the execution's status, or `skipped` (overlap), `starting` (claimed), `missed` (never started) */
  status: string;
  error: unknown;
}

const NEXT_RUNS = 5;

/** The schedule triggers of `def` (the pinned version when deployed, else the current one). */
export async function describeSchedules(store: Store, scheduler: ScheduleService, workflowId: string, def: WorkflowDef, deployed: boolean): Promise<ScheduleView[]> {
  const entries = deployed ? await store.schedules.listByWorkflow(workflowId) : [];
  const out: ScheduleView[] = [];
  for (const t of (def.triggers ?? []).filter((x): x is ScheduleTrigger => x.type === 'schedule')) {
    const entry = entries.find((e) => e.triggerId === t.id);
    const active = entry === undefined ? null : await scheduler.activeSchedule(entry);
    const nextRuns = active === null || entry === undefined ? [] : scheduler.nextRuns(active, entry, NEXT_RUNS);
    const [last] = await store.schedules.lastFires(workflowId, t.id, 1);
    const run = await store.schedules.lastRun(workflowId, t.id);
    const lastResult = last === undefined ? null : await fireView(store, last);
    // usually the same fire: read its execution once
    out.push({
      id: t.id,
      cron: t.cron,
      timezone: t.timezone ?? 'UTC',
      overlap: t.overlap ?? 'skip',
      catchUp: t.catchUp ?? 'none',
      input: t.input ?? {},
      active: active !== null,
      nextRuns,
      nextRunAt: nextRuns[0] ?? null,
      lastResult,
      lastRun: run === null ? null : run.dueAt === last?.dueAt ? lastResult : await fireView(store, run),
    });
  }
  return out;
}

async function fireView(store: Store, fire: ScheduleFire): Promise<FireView> {
  const base = { dueAt: fire.dueAt, firedAt: fire.firedAt, executionId: fire.executionId };
  if (fire.outcome === 'skipped' || fire.executionId === null) return { ...base, status: 'skipped', error: null };
  const rec = await store.executions.get(fire.executionId);
  if (rec === null) return { ...base, status: fire.outcome === 'claimed' ? 'starting' : 'missed', error: null };
  return { ...base, status: rec.status, error: rec.error ?? null };
}
