/**
 * What the profiling aids of this folder share (engine-probe.ts, record-probe.ts, profile.ts):
 * the compiled build they load (PROFILE_ROOT, default this checkout, so two builds compare by
 * alternating them), their numeric settings from the environment, and S1's engine path in
 * process (the ExecutionService on a TrackedEngine over the memory bus, no HTTP) on a store of
 * the caller's.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SCENARIO_INPUT, scenarioWorkflows } from '../lib/scenarios.js';

export const ROOT = process.env['PROFILE_ROOT'] ?? new URL('../../', import.meta.url).pathname;

/** a positive number from the environment, `fallback` when unset or not one */
export function envNum(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/** A module of ROOT's compiled build: its types are this checkout's at best, so it is read loosely. */
export const loadBuild = async (path: string): Promise<any> => import(pathToFileURL(join(ROOT, 'dist', path)).href);

export interface S1Handle {
  done: Promise<{ status: string }>;
}

/** Starts S1 executions as the execute route does for a sync request (its record not awaited). */
export type StartS1 = () => Promise<S1Handle>;

/** S1's engine path on ROOT's build, recording through `repo` (its `saveBoundaries` alone). */
export async function s1Engine(repo: { saveBoundaries(items: unknown[]): Promise<unknown[]> }): Promise<StartS1> {
  const { blockTypeRegistry, blockTypes } = await loadBuild('src/blocks/index.js');
  const { MemoryBus } = await loadBuild('src/bus/memory.js');
  const { systemClock } = await loadBuild('src/runtime/clock.js');
  const { TrackedEngine } = await loadBuild('src/server/tracked-engine.js');
  const { ExecutionService } = await loadBuild('src/service/executions.js');
  const { loadWorkflow } = await loadBuild('src/runtime/workflows.js');
  const { default: pino } = await import('pino');
  const engine = new TrackedEngine({
    bus: new MemoryBus(), blockTypes, secrets: { get: async () => undefined }, busPrefix: 'probe', executionTimeoutMs: 600_000, executions: repo,
    services: { sandbox: undefined, clock: systemClock, functionTimeoutMs: 5000, functionMemoryMb: 64 },
  });
  const service = new ExecutionService({
    store: {}, engine, logger: pino({ level: 'silent' }), maxInflight: 100_000, observer: { blockSettled: () => undefined, executionEnded: () => undefined },
  });
  const workflow = scenarioWorkflows(0).s1;
  const loaded = { compiled: loadWorkflow(workflow, blockTypeRegistry(blockTypes)).compiled, workflowId: workflow['id'], version: 1, starterConfig: {} };
  const trigger = { type: 'api', keyId: 'key_578d10e4ae501987' };
  return () => service.start(loaded, SCENARIO_INPUT, trigger, { awaitRecord: false });
}
