/**
 * Deploy as API (SPEC §4.1): a deployment pins the workflow's current version, or a stored one
 * the caller names (a rollback). Every deploy issues a new API key (the response shape always
 * carries one); earlier keys stay valid until revoked, across undeploy and redeploy.
 */
import { TroupeError } from '../errors.js';
import type { ScheduleTrigger, WebhookTrigger, WorkflowDef } from '../model/types.js';
import type { Deployment, Store, StoredWorkflow } from '../store/types.js';
import type { CompiledCache, LoadedWorkflow } from './compiled-cache.js';
import type { LookupCache } from './lookup-cache.js';
import { workflowNotFound, type ApiKeyService, type IssuedKey } from './keys.js';
import { versionNotFound } from './versions.js';

export interface DeploymentView {
  version: number;
  endpoint: string;
  deployedAt: string;
}

export function executeEndpoint(workflowId: string): string {
  return `/api/workflows/${encodeURIComponent(workflowId)}/execute`;
}

export class DeploymentService {
  constructor(
    private readonly store: Store,
    private readonly keys: ApiKeyService,
    private readonly cache: CompiledCache,
    private readonly now: () => number,
    private readonly lookups: LookupCache,
  ) {}

  /**
   * Pins `version` (a stored one: a rollback) or, without it, the current version. 404
   * NOT_FOUND for an unknown workflow or version.
   */
  async deploy(workflowId: string, version?: number): Promise<{ deployment: DeploymentView; apiKey: IssuedKey }> {
    const wf = await this.pinnable(workflowId, version);
    const deployedAt = new Date(this.now()).toISOString();
    // compile before pinning: a version that no longer compiles is never deployed, and the
    // first execute does not pay for compiling
    const loaded = this.cache.load(wf, deployedAt);
    // the path index first: a path another deployed workflow holds refuses the deploy (CONFLICT)
    await indexTriggers(this.store, workflowId, { def: loaded.def, version: wf.version, deployedAt });
    const saved = await this.store.deployments.put({ workflowId, version: wf.version, deployedAt, endpoint: executeEndpoint(workflowId) });
    this.lookups.changed(workflowId);
    const apiKey = await this.keys.issue(workflowId);
    return { deployment: deploymentView(saved), apiKey };
  }

  private async pinnable(workflowId: string, version: number | undefined): Promise<StoredWorkflow> {
    const current = await this.store.workflows.get(workflowId);
    if (current === null) throw workflowNotFound(workflowId);
    if (version === undefined || version === current.version) return current;
    const stored = await this.store.workflows.getVersion(workflowId, version);
    if (stored === null) throw versionNotFound(workflowId, version);
    return stored;
  }

  /** Idempotent; NOT_FOUND only when the workflow does not exist. */
  async undeploy(workflowId: string): Promise<void> {
    if ((await this.store.workflows.get(workflowId)) === null) throw workflowNotFound(workflowId);
    await this.store.deployments.delete(workflowId);
    await indexTriggers(this.store, workflowId, null);
    this.lookups.changed(workflowId);
  }

  /** From the lookup cache when this instance read it lately (see LookupCache for freshness). */
  async get(workflowId: string): Promise<Deployment | null> {
    const cached = this.lookups.deployment(workflowId);
    if (cached !== undefined) return cached;
    const found = await this.store.deployments.get(workflowId);
    if (found !== null) this.lookups.rememberDeployment(found);
    return found;
  }

  /** The pinned version, compiled (cached by workflow, version and deployment time). */
  async loadDeployed(d: Deployment): Promise<LoadedWorkflow> {
    const hit = this.cache.peek(d.workflowId, d.version, d.deployedAt);
    if (hit !== undefined) return hit;
    const stored = await this.store.workflows.getVersion(d.workflowId, d.version);
    if (stored === null) {
      throw new TroupeError('NOT_DEPLOYED', `the deployed version ${d.version} of workflow ${d.workflowId} no longer exists`);
    }
    return this.cache.load(stored, d.deployedAt);
  }
}

/** Keeps webhook paths and schedules in step with what is deployed (`def` null: undeployed). */
async function indexTriggers(store: Store, workflowId: string, pinned: { def: WorkflowDef; version: number; deployedAt: string } | null): Promise<void> {
  const triggers = pinned?.def.triggers ?? [];
  const hooks = triggers.filter((t): t is WebhookTrigger => t.type === 'webhook');
  if (hooks.length === 0) await store.webhooks.deleteRoutes(workflowId);
  else await store.webhooks.putRoutes(workflowId, hooks.map((t) => ({ path: t.path, triggerId: t.id })));
  const schedules = triggers.filter((t): t is ScheduleTrigger => t.type === 'schedule');
  if (pinned === null || schedules.length === 0) await store.schedules.deleteByWorkflow(workflowId);
  else await store.schedules.put(workflowId, schedules.map((t) => ({ triggerId: t.id, version: pinned.version, spec: scheduleSpec(t) })), pinned.deployedAt);
}

/** what decides a schedule's due times: a change starts its window afresh */
export function scheduleSpec(t: ScheduleTrigger): string {
  return `${t.cron.trim()}|${t.timezone ?? 'UTC'}`;
}

export function deploymentView(d: Deployment): DeploymentView {
  return { version: d.version, endpoint: d.endpoint ?? executeEndpoint(d.workflowId), deployedAt: d.deployedAt };
}
