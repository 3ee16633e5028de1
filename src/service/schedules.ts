/**
 * Schedule triggers (SPEC §4.5): what the scheduler actor (actors/scheduler.ts) does on each
 * tick while it leads. A due time fires on the instance whose claim the store accepts first
 * (its key is workflow, trigger and due time), so it fires once however many instances tick.
 * Like a webhook event, a fire carries the execution id chosen before its claim: starting it is
 * creating that record, and a fire claimed by an instance that died before starting it is
 * started by the next tick anywhere.
 *
 * Missed or on time is judged by the shared heartbeat (when any instance last finished a tick)
 * and this instance's start, not by a due time's age: due times that fell due while no instance
 * was running (the last heartbeat is older than this start), or while none ticked for over
 * 30 s, are missed and catchUp decides; the rest are on time, however late a tick runs.
 */
import type { Logger } from 'pino';
import { TroupeError } from '../errors.js';
import { parseCron, type CronFields } from '../model/cron.js';
import { dueBetween, lastDueBetween, nextDue } from '../model/cron-next.js';
import { resumedMark } from '../model/resume.js';
import type { BlockTypeRegistry, ScheduleTrigger } from '../model/types.js';
import { newExecutionId } from '../runtime/ids.js';
import type { ScheduleEntry, ScheduleFire, Store } from '../store/types.js';
import { CompiledCache, type LoadedWorkflow } from './compiled-cache.js';
import type { DeploymentService } from './deployments.js';
import type { ExecutionService } from './executions.js';
import { PeriodicWork, RetryBackoff } from './background.js';

/** no instance ticked for longer than this: the service was down */
const DOWN_AFTER_MS = 30_000;
/** how far back of the heartbeat a due time still counts as this tick's (ticks overlap a little) */
const TICK_SLACK_MS = 2_000;
/** a claimed fire not started after this is started by whoever ticks next */
const CLAIM_GRACE_MS = 5_000;
/** a claim older than this no longer counts as a run in progress for overlap "skip" */
const CLAIM_STALE_MS = 60_000;
const PURGE_EVERY_MS = 60 * 60_000;
const KEEP_FIRES_MS = 7 * 24 * 60 * 60_000;
const RUNNING = new Set(['queued', 'running']);

export interface ScheduleServiceDeps {
  store: Store;
  executions: ExecutionService;
  deployments: DeploymentService;
  registry: BlockTypeRegistry;
  logger: Logger;
  now: () => number;
  /** a run older than this plus a minute cannot still be running (its instance died) */
  executionTimeoutMs: number;
}

export interface ActiveSchedule {
  loaded: LoadedWorkflow;
  trigger: ScheduleTrigger;
  fields: CronFields;
  timeZone: string;
}

/** the scheduler's own compiled workflows: ticking never evicts what execute relies on */
const SCHEDULE_CACHE_SIZE = 1024;

export class ScheduleService {
  private lastPurge = 0;
  /** due times before this that no instance handled fell while the service was down */
  private startedAt: number;
  private readonly cache: CompiledCache;
  private readonly retry = new RetryBackoff();
  private readonly ticker: PeriodicWork;

  constructor(private readonly deps: ScheduleServiceDeps) {
    this.cache = new CompiledCache(deps.registry, SCHEDULE_CACHE_SIZE);
    this.startedAt = deps.now();
    this.ticker = new PeriodicWork((err) => deps.logger.error({ err }, 'scheduler tick failed'));
  }

  /**
   * A term of the scheduler actor begins here (actors/scheduler.ts): due times that fell before
   * now and that no tick handled (the heartbeat is older) were missed, and go by catchUp.
   */
  activate(): void {
    this.startedAt = this.deps.now();
    this.ticker.stopped = false;
  }

  /** the clock the due times are read against (the scheduler actor times its ticks by it) */
  now(): number {
    return this.deps.now();
  }

  /** No new claims from here on; resolves once a tick in progress has ended. */
  stop(): Promise<void> {
    return this.ticker.stop();
  }

  /** Fires what is due up to now; one tick at a time. Returns the fires this tick started. */
  tick(): Promise<number> {
    return this.ticker.run(() => this.runTick());
  }

  /** The pinned version's trigger, parsed; null when not deployed on that version any more. */
  async activeSchedule(entry: ScheduleEntry): Promise<ActiveSchedule | null> {
    const deployment = await this.deps.deployments.get(entry.workflowId);
    if (deployment === null || deployment.version !== entry.version) return null;
    const loaded = await this.loadVersion(entry.workflowId, entry.version, deployment.deployedAt);
    if (loaded === null) return null;
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

  private async runTick(): Promise<number> {
    const now = this.deps.now();
    const heartbeat = await this.deps.store.schedules.heartbeat();
    let started = await this.restartClaimed(now);
    for (const entry of await this.deps.store.schedules.list()) {
      if (this.ticker.stopped) break;
      try {
        started += await this.tickOne(entry, now, heartbeat);
      } catch (err) {
        this.deps.logger.error({ err, workflowId: entry.workflowId, triggerId: entry.triggerId }, 'schedule tick failed');
      }
    }
    if (!this.ticker.stopped) await this.deps.store.schedules.beat(new Date(now).toISOString());
    await this.purge(now);
    return started;
  }

  private async tickOne(entry: ScheduleEntry, now: number, heartbeat: string | null): Promise<number> {
    // the deployment instant itself is inside the window: `from` is exclusive
    const from = entry.lastDueAt === null ? Date.parse(entry.activeFrom) - 1 : Date.parse(entry.lastDueAt);
    if (from >= now) return 0;
    const active = await this.activeSchedule(entry);
    if (active === null) return 0;
    const onTimeFrom = Math.max(from, this.missedUntil(heartbeat, now));
    let started = 0;
    if (onTimeFrom > from) {
      const missed = lastDueBetween(active.fields, active.timeZone, new Date(from), new Date(onTimeFrom));
      if (missed !== null) {
        if (active.trigger.catchUp === 'last') started += await this.fire(entry, active, missed, now);
        else await this.deps.store.schedules.pass(entry.workflowId, entry.triggerId, missed.toISOString());
      }
    }
    for (const due of dueBetween(active.fields, active.timeZone, new Date(onTimeFrom), new Date(now), 100)) {
      if (this.ticker.stopped) break;
      started += await this.fire(entry, active, due, now);
    }
    return started;
  }

  /** due times up to this were missed: they fell while no instance ran or ticked */
  private missedUntil(heartbeat: string | null, now: number): number {
    const beat = heartbeat === null ? null : Date.parse(heartbeat);
    // the last tick anywhere is older than this instance: the service was down until it started
    if (beat === null || beat < this.startedAt - TICK_SLACK_MS) return this.startedAt;
    // running, but nobody ticked for a long while (a paused machine): as good as down
    if (now - beat > DOWN_AFTER_MS) return now - TICK_SLACK_MS;
    return beat - TICK_SLACK_MS;
  }

  private async fire(entry: ScheduleEntry, active: ActiveSchedule, due: Date, now: number): Promise<number> {
    const base = { workflowId: entry.workflowId, triggerId: entry.triggerId, dueAt: due.toISOString(), firedAt: new Date(now).toISOString() };
    if ((active.trigger.overlap ?? 'skip') === 'skip' && (await this.previousRunning(entry, now))) {
      const skipped = await this.deps.store.schedules.claim({ ...base, executionId: null, outcome: 'skipped' });
      if (skipped) this.deps.logger.info({ ...base }, 'schedule skipped: its previous run is still running');
      return 0;
    }
    const fire: ScheduleFire = { ...base, executionId: newExecutionId(now), outcome: 'claimed' };
    if (!(await this.deps.store.schedules.claim(fire))) return 0; // another instance has this due time
    try {
      return (await this.startFire(fire, active)) ? 1 : 0;
    } catch (err) {
      // claimed: the restart of claims retries it with a growing delay
      this.retry.failed(fireKey(fire), now);
      this.deps.logger.error({ err, ...base }, 'scheduled run did not start; retrying');
      return 0;
    }
  }

  private async previousRunning(entry: ScheduleEntry, now: number): Promise<boolean> {
    const last = await this.deps.store.schedules.lastRun(entry.workflowId, entry.triggerId);
    if (last === null || last.executionId === null) return false;
    // being started right now (unless its instance died long ago)
    if (last.outcome === 'claimed') return now - Date.parse(last.firedAt) < CLAIM_STALE_MS;
    const rec = await this.deps.store.executions.get(last.executionId);
    if (rec === null || !RUNNING.has(rec.status)) return false;
    if (this.deps.executions.runsHere(rec.id)) return true;
    // a run past its time limit was left `running` by an instance that died: it blocks nothing
    // (a resumed run's limit counts from its resumption: docs/operations.md)
    const since = resumedMark(rec.context)?.at ?? Date.parse(rec.startedAt ?? last.firedAt);
    return now - since < this.deps.executionTimeoutMs + 60_000;
  }

  /** false when it could not start now (no capacity: it stays claimed and a later tick starts it) */
  private async startFire(fire: ScheduleFire, active: ActiveSchedule): Promise<boolean> {
    const executionId = fire.executionId ?? newExecutionId();
    const trigger = { type: 'schedule' as const, triggerId: fire.triggerId, dueAt: fire.dueAt };
    const queued = this.deps.executions.queued;
    if (!queued && !this.deps.executions.hasCapacity()) return false;
    // in a cluster the fire goes through the work queue, to whichever instance has room; its
    // message id is the fire's own key, so a fire published twice (a restarted claim) runs once
    const dedupeKey = `${fire.workflowId}|${fire.triggerId}|${fire.dueAt}`;
    try {
      if (queued) await this.deps.executions.enqueue(active.loaded, active.trigger.input ?? {}, trigger, executionId, dedupeKey);
      else await this.deps.executions.start(active.loaded, active.trigger.input ?? {}, trigger, { executionId, awaitRecord: true });
    } catch (err) {
      if (!(err instanceof TroupeError) || err.code !== 'CONFLICT') throw err;
      // its record exists: a leader that died between writing it and publishing left it queued
      if (queued) await this.deps.executions.requeue(executionId, dedupeKey);
    }
    await this.deps.store.schedules.markStarted(fire.workflowId, fire.triggerId, fire.dueAt);
    this.retry.forget(fireKey(fire));
    return true;
  }

  /** Claims whose instance died or found no capacity; one that cannot start holds up nothing. */
  private async restartClaimed(now: number): Promise<number> {
    let started = 0;
    for (const fire of await this.deps.store.schedules.listClaimed(new Date(now - CLAIM_GRACE_MS).toISOString(), 100)) {
      if (this.ticker.stopped) break;
      if (this.retry.waiting(fireKey(fire), now)) continue;
      try {
        if (await this.restartOne(fire)) started += 1;
      } catch (err) {
        const retryInMs = this.retry.failed(fireKey(fire), now);
        this.deps.logger.error({ err, workflowId: fire.workflowId, triggerId: fire.triggerId, dueAt: fire.dueAt, retryInMs }, 'claimed scheduled run did not start');
      }
    }
    return started;
  }

  private async restartOne(fire: ScheduleFire): Promise<boolean> {
    const entry = (await this.deps.store.schedules.listByWorkflow(fire.workflowId)).find((e) => e.triggerId === fire.triggerId);
    const active = entry === undefined ? null : await this.activeSchedule(entry);
    if (active !== null) return this.startFire(fire, active);
    // undeployed since: what it was claimed for no longer runs (GET /schedules shows it `missed`)
    await this.deps.store.schedules.markStarted(fire.workflowId, fire.triggerId, fire.dueAt);
    return false;
  }

  private async loadVersion(workflowId: string, version: number, stamp: string): Promise<LoadedWorkflow | null> {
    const hit = this.cache.peek(workflowId, version, stamp);
    if (hit !== undefined) return hit;
    const stored = await this.deps.store.workflows.getVersion(workflowId, version);
    return stored === null ? null : this.cache.load(stored, stamp);
  }

  private async purge(now: number): Promise<void> {
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    await this.deps.store.schedules.purgeFires(new Date(now - KEEP_FIRES_MS).toISOString());
  }
}

function fireKey(f: ScheduleFire): string {
  return `${f.workflowId}\u0000${f.triggerId}\u0000${f.dueAt}`;
}
