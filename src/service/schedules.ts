/**
 * Schedule triggers (SPEC §4.5). Every instance runs the same scheduler over the schedules of
 * deployed workflows; a due time fires on the instance whose claim the store accepts first
 * (its key is workflow, trigger and due time), so it fires once however many instances run.
 * Like a webhook event, a fire carries the execution id chosen before its claim: starting it is
 * creating that record, and a fire claimed by an instance that died before starting it is
 * started by the next tick anywhere.
 */
import type { Logger } from 'pino';
import { parseCron, type CronFields } from '../model/cron.js';
import { dueBetween, lastDueBetween, nextDue } from '../model/cron-next.js';
import type { ScheduleTrigger, WorkflowDef } from '../model/types.js';
import { TroupeError } from '../errors.js';
import { newExecutionId } from '../runtime/ids.js';
import type { ScheduleEntry, ScheduleFire, Store } from '../store/types.js';
import type { CompiledCache, LoadedWorkflow } from './compiled-cache.js';
import type { ExecutionService } from './executions.js';

/** a due time further back than this when first seen was missed (the service was down) */
export const LATE_AFTER_MS = 30_000;
/** a claimed fire not started after this is started by whoever ticks next */
const CLAIM_GRACE_MS = 5_000;
const RUNNING = new Set(['queued', 'running']);

export interface ScheduleServiceDeps {
  store: Store;
  executions: ExecutionService;
  cache: CompiledCache;
  logger: Logger;
  now: () => number;
}

export interface ActiveSchedule {
  loaded: LoadedWorkflow;
  trigger: ScheduleTrigger;
  fields: CronFields;
  timeZone: string;
}

/** GET /api/workflows/{id}/schedules: one per schedule trigger */
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
  lastResult: LastResult | null;
}

export interface LastResult {
  dueAt: string;
  firedAt: string;
  executionId: string | null;
  /** the execution's status, `skipped` (overlap), or `missed` (claimed, never started) */
  status: string;
  error: unknown;
}

const NEXT_RUNS = 5;

export class ScheduleService {
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(private readonly deps: ScheduleServiceDeps) {}

  start(intervalMs = 1_000): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.tickSafely(), intervalMs);
    this.timer.unref();
    void this.tickSafely();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Fires what is due up to now; one tick at a time. Returns the fires this tick started. */
  async tick(): Promise<number> {
    if (this.ticking) return 0;
    this.ticking = true;
    try {
      const now = this.deps.now();
      let started = await this.restartClaimed(now);
      for (const entry of await this.deps.store.schedules.list()) {
        try {
          started += await this.tickOne(entry, now);
        } catch (err) {
          this.deps.logger.error({ err, workflowId: entry.workflowId, triggerId: entry.triggerId }, 'schedule tick failed');
        }
      }
      return started;
    } finally {
      this.ticking = false;
    }
  }

  /** The pinned version's trigger, parsed; null when it is gone (the next deploy re-indexes). */
  async activeSchedule(entry: ScheduleEntry): Promise<ActiveSchedule | null> {
    const stored = await this.deps.store.workflows.getVersion(entry.workflowId, entry.version);
    if (stored === null) return null;
    const loaded = this.deps.cache.load(stored, stored.updatedAt);
    const trigger = (loaded.def.triggers ?? []).find((t): t is ScheduleTrigger => t.type === 'schedule' && t.id === entry.triggerId);
    if (trigger === undefined) return null;
    const cron = parseCron(trigger.cron);
    if (!cron.ok) return null;
    return { loaded, trigger, fields: cron.fields, timeZone: trigger.timezone ?? 'UTC' };
  }

  /** The next `count` due times after now (or after the last one handled, when later). */
  nextRuns(active: ActiveSchedule, entry: ScheduleEntry, count: number): string[] {
    let after = Math.max(this.deps.now(), Date.parse(entry.lastDueAt ?? entry.activeFrom));
    const out: string[] = [];
    while (out.length < count) {
      const due = nextDue(active.fields, active.timeZone, new Date(after));
      if (due === null) break;
      out.push(due.toISOString());
      after = due.getTime();
    }
    return out;
  }

  /** The schedule triggers of `def` (the pinned version when deployed, else the current one). */
  async describe(workflowId: string, def: WorkflowDef, deployed: boolean): Promise<ScheduleView[]> {
    const entries = deployed ? await this.deps.store.schedules.listByWorkflow(workflowId) : [];
    const out: ScheduleView[] = [];
    for (const t of (def.triggers ?? []).filter((x): x is ScheduleTrigger => x.type === 'schedule')) {
      const entry = entries.find((e) => e.triggerId === t.id);
      const active = entry === undefined ? null : await this.activeSchedule(entry);
      out.push({
        id: t.id,
        cron: t.cron,
        timezone: t.timezone ?? 'UTC',
        overlap: t.overlap ?? 'skip',
        catchUp: t.catchUp ?? 'none',
        input: t.input ?? {},
        active: active !== null,
        nextRuns: active === null || entry === undefined ? [] : this.nextRuns(active, entry, NEXT_RUNS),
        lastResult: await this.lastResult(workflowId, t.id),
      });
    }
    return out;
  }

  private async lastResult(workflowId: string, triggerId: string): Promise<LastResult | null> {
    const [last] = await this.deps.store.schedules.lastFires(workflowId, triggerId, 1);
    if (last === undefined) return null;
    const base = { dueAt: last.dueAt, firedAt: last.firedAt, executionId: last.executionId };
    if (last.outcome === 'skipped' || last.executionId === null) return { ...base, status: 'skipped', error: null };
    const rec = await this.deps.store.executions.get(last.executionId);
    if (rec === null) return { ...base, status: last.outcome === 'claimed' ? 'starting' : 'missed', error: null };
    return { ...base, status: rec.status, error: rec.error ?? null };
  }

  private async tickSafely(): Promise<void> {
    try {
      await this.tick();
    } catch (err) {
      this.deps.logger.error({ err }, 'scheduler tick failed');
    }
  }

  private async tickOne(entry: ScheduleEntry, now: number): Promise<number> {
    const active = await this.activeSchedule(entry);
    if (active === null) return 0;
    const from = new Date(Math.max(Date.parse(entry.activeFrom), Date.parse(entry.lastDueAt ?? entry.activeFrom)));
    const lateBefore = new Date(now - LATE_AFTER_MS);
    let started = 0;
    if (from < lateBefore) {
      // after downtime: at most one missed occurrence runs (catchUp "last"); the rest are passed over
      const missed = lastDueBetween(active.fields, active.timeZone, from, lateBefore);
      if (missed !== null) {
        if (active.trigger.catchUp === 'last') started += await this.fire(entry, active, missed, now);
        else await this.deps.store.schedules.pass(entry.workflowId, entry.triggerId, missed.toISOString());
      }
    }
    const onTimeFrom = from > lateBefore ? from : lateBefore;
    for (const due of dueBetween(active.fields, active.timeZone, onTimeFrom, new Date(now), 100)) {
      started += await this.fire(entry, active, due, now);
    }
    return started;
  }

  private async fire(entry: ScheduleEntry, active: ActiveSchedule, due: Date, now: number): Promise<number> {
    const base = { workflowId: entry.workflowId, triggerId: entry.triggerId, dueAt: due.toISOString(), firedAt: new Date(now).toISOString() };
    if ((active.trigger.overlap ?? 'skip') === 'skip' && (await this.previousRunning(entry))) {
      const skipped = await this.deps.store.schedules.claim({ ...base, executionId: null, outcome: 'skipped' });
      if (skipped) this.deps.logger.info({ ...base }, 'schedule skipped: its previous run is still running');
      return 0;
    }
    const fire: ScheduleFire = { ...base, executionId: newExecutionId(now), outcome: 'claimed' };
    if (!(await this.deps.store.schedules.claim(fire))) return 0; // another instance has this due time
    return (await this.startFire(fire, active.loaded, active.trigger)) ? 1 : 0;
  }

  private async previousRunning(entry: ScheduleEntry): Promise<boolean> {
    const [last] = (await this.deps.store.schedules.lastFires(entry.workflowId, entry.triggerId, 5)).filter((f) => f.executionId !== null);
    if (last === undefined || last.executionId === null) return false;
    if (last.outcome === 'claimed') return true; // being started right now
    const rec = await this.deps.store.executions.get(last.executionId);
    return rec !== null && RUNNING.has(rec.status);
  }

  /** false when it could not start now (no capacity: it stays claimed and a later tick starts it) */
  private async startFire(fire: ScheduleFire, loaded: LoadedWorkflow, trigger: ScheduleTrigger): Promise<boolean> {
    const executionId = fire.executionId ?? newExecutionId();
    try {
      this.deps.executions.ensureCapacity();
      await this.deps.executions.start(loaded, trigger.input ?? {}, { type: 'schedule', triggerId: fire.triggerId, dueAt: fire.dueAt }, { executionId, awaitRecord: true });
    } catch (err) {
      if (err instanceof TroupeError && err.code === 'OVERLOADED') return false;
      if (!(err instanceof TroupeError) || err.code !== 'CONFLICT') throw err;
    }
    await this.deps.store.schedules.markStarted(fire.workflowId, fire.triggerId, fire.dueAt);
    return true;
  }

  private async restartClaimed(now: number): Promise<number> {
    let started = 0;
    for (const fire of await this.deps.store.schedules.listClaimed(new Date(now - CLAIM_GRACE_MS).toISOString(), 100)) {
      const entry = (await this.deps.store.schedules.listByWorkflow(fire.workflowId)).find((e) => e.triggerId === fire.triggerId);
      const active = entry === undefined ? null : await this.activeSchedule(entry);
      if (active === null) {
        // undeployed since: what it was claimed for no longer runs
        await this.deps.store.schedules.markStarted(fire.workflowId, fire.triggerId, fire.dueAt);
        continue;
      }
      if (await this.startFire(fire, active.loaded, active.trigger)) started += 1;
    }
    return started;
  }
}
