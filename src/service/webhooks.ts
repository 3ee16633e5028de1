/**
 * Webhook triggers (SPEC §4.3). An accepted delivery is written to the store before the answer
 * (the durable part), announced on the bus, then started. Its execution id is chosen when it is
 * accepted, so starting it is creating that execution record, which can happen once only: the
 * instance that accepted it, a restarted one or another instance's sweep may all try, and one
 * wins. Pending events left by a crash or by back-pressure are started by the sweep.
 */
import type { Logger } from 'pino';
import { webhookEvents } from '../bus/subjects.js';
import type { Bus } from '../bus/types.js';
import { TroupeError } from '../errors.js';
import type { CompiledWorkflow } from '../model/graph.js';
import type { WebhookTrigger } from '../model/types.js';
import { deliveryIdOf, starterHeaders, verifySignature, type WebhookProvider } from '../model/webhook-signature.js';
import type { ExecutionHandle } from '../engine/engine.js';
import { newExecutionId } from '../runtime/ids.js';
import { redactionValues } from '../model/secret-forms.js';
import { redactInput } from '../model/redaction.js';
import type { SecretSource } from '../runtime/types.js';
import type { Store, WebhookEvent } from '../store/types.js';
import type { CompiledCache, LoadedWorkflow } from './compiled-cache.js';
import type { DeploymentService } from './deployments.js';
import type { ExecutionService } from './executions.js';
import { PeriodicWork, RetryBackoff, withTimeout } from './background.js';
import { parseWebhookBody } from './webhook-body.js';

/** SPEC §4.3: the same delivery id within 24 h starts nothing */
export const DEDUP_WINDOW_MS = 24 * 60 * 60 * 1000;
/** a pending event younger than this is left to the instance that accepted it */
const SWEEP_GRACE_MS = 5_000;
const SWEEP_BATCH = 100;
const ANNOUNCE_TIMEOUT_MS = 1_000;

export interface WebhookRequest {
  path: string;
  rawBody: Buffer;
  /** lower-case names; repeated headers joined with ", " */
  headers: Record<string, string | undefined>;
  query: Record<string, unknown>;
  method: string;
}

export type WebhookOutcome =
  | { mode: 'accepted'; eventId: string; executionId: string; duplicate: boolean }
  | { mode: 'sync'; eventId: string; handle: ExecutionHandle }
  /** Slack's signed URL verification: answered with its challenge, nothing stored or started */
  | { mode: 'challenge'; challenge: string };

export interface WebhookServiceDeps {
  store: Store;
  deployments: DeploymentService;
  executions: ExecutionService;
  cache: CompiledCache;
  /** where a trigger's `{{NAME}}` signing secret is read */
  secrets: SecretSource;
  /** the secrets a run of `workflow` redacts (the engine's: named, stored and the process's model keys) */
  runSecrets: (workflow: CompiledWorkflow) => Map<string, string> | Promise<Map<string, string>>;
  logger: Logger;
  now: () => number;
  bus?: { bus: Bus; prefix: string };
  newId?: () => string;
}

interface Target {
  loaded: LoadedWorkflow;
  trigger: WebhookTrigger;
}

/** the engine's `{{NAME}}` grammar (validation refuses any other text holding `{{`) */
const SECRET_REF = /^\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}$/;

export class WebhookService {
  /** events this instance is starting now: the sweep leaves them alone */
  private readonly starting = new Set<string>();
  private lastPurge = 0;
  private readonly retry = new RetryBackoff();
  private readonly sweeper: PeriodicWork;
  /** a cluster: an announced async event is started by whichever instance's consumer takes it */
  private shared = false;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.sweeper = new PeriodicWork((err) => deps.logger.error({ err }, 'webhook sweep failed'));
  }

  async receive(req: WebhookRequest): Promise<WebhookOutcome> {
    const { loaded, trigger } = await this.resolve(req.path);
    const provider: WebhookProvider = trigger.provider ?? 'generic';
    await this.checkSignature(trigger, provider, req);
    const body = parseWebhookBody(req.rawBody, req.headers['content-type'] ?? '');
    const challenge = provider === 'slack' ? slackChallenge(body) : undefined;
    if (challenge !== undefined) return { mode: 'challenge', challenge };
    const input = { body, headers: starterHeaders(provider, req.headers), query: req.query, method: req.method };
    this.deps.executions.validateInput(loaded, input);
    const sync = trigger.responseMode === 'sync';
    if (sync) this.deps.executions.ensureCapacity();
    const accepted = await this.accept(loaded, trigger, input, deliveryIdOf(provider, req.headers, body));
    const ev = accepted.event;
    if (accepted.duplicate) return { mode: 'accepted', eventId: ev.id, executionId: ev.executionId, duplicate: true };
    // from here the event is stored: whatever happens next, the answer is not an error
    this.starting.add(ev.id);
    try {
      const announced = await this.announce(ev, loaded);
      // announced in a cluster: the shared consumer starts it (here or on another instance)
      if (announced && this.shared && !sync) return { mode: 'accepted', eventId: ev.id, executionId: ev.executionId, duplicate: false };
      const handle = this.deps.executions.hasCapacity() ? await this.startEvent(ev, loaded) : null;
      if (sync && handle !== null) return { mode: 'sync', eventId: ev.id, handle };
    } catch (err) {
      this.deps.logger.error({ err, eventId: ev.id }, 'accepted webhook event did not start; the sweep retries it');
    } finally {
      this.starting.delete(ev.id);
    }
    return { mode: 'accepted', eventId: ev.id, executionId: ev.executionId, duplicate: false };
  }

  /** From now on announced async events are left to the cluster's shared consumer (startAnnounced). */
  shareStarts(on: boolean): void {
    this.shared = on;
  }

  /**
   * Starts an announced event taken from the cluster's shared consumer: `done` when it is
   * started (or was before, or cannot run any more), `busy` when this instance has no room now.
   */
  async startAnnounced(eventId: string): Promise<'done' | 'busy'> {
    const ev = await this.deps.store.webhooks.get(eventId);
    if (ev === null || ev.status !== 'pending' || this.starting.has(ev.id)) return 'done';
    if (!this.deps.executions.hasCapacity()) return 'busy';
    this.starting.add(ev.id);
    try {
      await this.startEvent(ev);
      return 'done';
    } finally {
      this.starting.delete(ev.id);
    }
  }

  /** Starts pending events (crash leftovers, back-pressure) now and then; forgets old delivery ids. */
  startSweeper(intervalMs = 1_000): void {
    // the grace applies at start-up too: another instance may be starting a fresh event right now
    this.sweeper.start(intervalMs, () => this.sweepOnce(SWEEP_GRACE_MS));
  }

  /** No new starts from the sweep; resolves once a sweep in progress has ended. */
  stopSweeper(): Promise<void> {
    return this.sweeper.stop();
  }

  /** Starts pending events received at least `graceMs` ago; one sweep at a time. */
  sweep(graceMs = SWEEP_GRACE_MS): Promise<number> {
    return this.sweeper.run(() => this.sweepOnce(graceMs));
  }

  private async sweepOnce(graceMs: number): Promise<number> {
    const now = this.deps.now();
    if (now - this.lastPurge > 60_000) {
      this.lastPurge = now;
      await this.deps.store.webhooks.purgeStarted(new Date(now - DEDUP_WINDOW_MS).toISOString());
    }
    await this.announceLeftovers(now, graceMs);
    const pending = await this.deps.store.webhooks.listPending(new Date(now - graceMs).toISOString(), SWEEP_BATCH);
    let started = 0;
    for (const ev of pending) {
      if (this.sweeper.stopped) break;
      if (this.starting.has(ev.id) || this.retry.waiting(ev.id, now)) continue;
      if (!this.deps.executions.hasCapacity()) break;
      if (await this.sweepOne(ev, now)) started += 1;
    }
    return started;
  }

  /** One event's failure (a version that no longer compiles, say) must not hold up the others. */
  private async sweepOne(ev: WebhookEvent, now: number): Promise<boolean> {
    this.starting.add(ev.id);
    try {
      const handle = await this.startEvent(ev);
      this.retry.forget(ev.id);
      return handle !== null;
    } catch (err) {
      const delayMs = this.retry.failed(ev.id, now);
      this.deps.logger.error({ err, eventId: ev.id, retryInMs: delayMs }, 'pending webhook event did not start');
      return false;
    } finally {
      this.starting.delete(ev.id);
    }
  }

  private async resolve(path: string): Promise<Target> {
    const notFound = (): TroupeError => new TroupeError('NOT_FOUND', `no webhook at /webhooks/${path}`, { details: { path } });
    const route = await this.deps.store.webhooks.findRoute(path);
    if (route === null) throw notFound();
    const deployment = await this.deps.deployments.get(route.workflowId);
    if (deployment === null) throw notFound();
    const loaded = await this.deps.deployments.loadDeployed(deployment);
    // the index may lag a redeploy: the pinned version's own triggers decide
    const trigger = (loaded.def.triggers ?? []).find((t): t is WebhookTrigger => t.type === 'webhook' && t.path === path);
    if (trigger === undefined) throw notFound();
    return { loaded, trigger };
  }

  private async checkSignature(trigger: WebhookTrigger, provider: WebhookProvider, req: WebhookRequest): Promise<void> {
    if (trigger.secret === undefined) return;
    const ref = SECRET_REF.exec(trigger.secret);
    const secret = ref?.[1] === undefined ? trigger.secret : await this.deps.secrets.get(ref[1]);
    if (secret === undefined) {
      this.deps.logger.error({ path: req.path, secret: ref?.[1] }, 'webhook secret is not set');
      // the name goes to the log, not to an anonymous caller
      throw new TroupeError('MISSING_SECRET', `the secret of webhook /webhooks/${req.path} is not set`);
    }
    const check = verifySignature(provider, secret, req.rawBody, req.headers, this.deps.now(), { requireTimestamp: trigger.requireTimestamp });
    if (!check.ok) throw new TroupeError('UNAUTHORIZED', `invalid webhook signature: ${check.reason}`);
  }

  private accept(loaded: LoadedWorkflow, trigger: WebhookTrigger, input: unknown, deliveryId: string | null): Promise<{ event: WebhookEvent; duplicate: boolean }> {
    const now = this.deps.now();
    const event: WebhookEvent = {
      id: this.deps.newId?.() ?? newExecutionId(now),
      workflowId: loaded.workflowId,
      triggerId: trigger.id,
      version: loaded.version,
      deliveryId,
      payload: input,
      receivedAt: new Date(now).toISOString(),
      status: 'pending',
      executionId: newExecutionId(now),
      announced: false,
    };
    return this.deps.store.webhooks.accept(event, new Date(now - DEDUP_WINDOW_MS).toISOString());
  }

  /**
   * SPEC §4.3, §5: one message per accepted event, stored by the bus before the answer (over
   * NATS, acknowledged by a JetStream stream; see Bus.publishDurable). Recorded once stored; the
   * sweep publishes what was not (a bus outage, a crash before it), so every accepted event is
   * announced at least once, and JetStream keeps one copy per event id.
   */
  private async announce(ev: WebhookEvent, loaded?: LoadedWorkflow): Promise<boolean> {
    const target = this.deps.bus;
    if (target === undefined) return false;
    try {
      const { id: eventId, workflowId, triggerId, executionId, deliveryId, receivedAt } = ev;
      // kept by JetStream for a day and read by anyone on the bus: secrets redacted as in records
      const message = { eventId, workflowId, triggerId, executionId, deliveryId, receivedAt, input: await this.redacted(ev, loaded) };
      // kept on the bus (a JetStream stream over NATS), once per event id however often it is
      // announced; a bus that is reconnecting must not hold the answer: the store has it already
      const publish = (m: typeof message & { inputOmitted?: true }): Promise<void> =>
        withTimeout(target.bus.publishDurable(webhookEvents(target.prefix, workflowId, triggerId), m, { msgId: eventId }), ANNOUNCE_TIMEOUT_MS);
      try {
        await publish(message);
      } catch (err) {
        // a stream keeps messages whole, up to the server's max_payload: an input over it (headers
        // and JSON escapes can take a body at the size limit past 1 MiB) is announced without it,
        // else the sweep would retry it forever; the execution record has the input
        if (!(err instanceof TroupeError) || err.code !== 'BUS_MESSAGE_TOO_LARGE') throw err;
        this.deps.logger.warn({ eventId: ev.id, reason: err.message }, 'webhook event announced without its input: too large for the bus');
        await publish({ ...message, input: null, inputOmitted: true });
      }
      await this.deps.store.webhooks.markAnnounced(ev.id);
      return true;
    } catch (err) {
      // the event is already durable in the store and will run: a bus outage must not lose it
      this.deps.logger.warn({ err, eventId: ev.id }, 'webhook event could not be announced on the bus yet');
      return false;
    }
  }

  /** The event's input with secret values as `***`, as a run of its workflow redacts them in its record. */
  private async redacted(ev: WebhookEvent, loaded?: LoadedWorkflow): Promise<unknown> {
    const workflow = loaded ?? (await this.loadVersion(ev));
    if (workflow === null) return ev.payload;
    const values = redactionValues(await this.deps.runSecrets(workflow.compiled));
    return redactInput(ev.payload, values, 'webhook');
  }

  private async announceLeftovers(now: number, graceMs: number): Promise<void> {
    if (this.deps.bus === undefined) return;
    for (const ev of await this.deps.store.webhooks.listUnannounced(new Date(now - graceMs).toISOString(), SWEEP_BATCH)) {
      if (this.starting.has(ev.id)) continue;
      if (!(await this.announce(ev))) return; // the bus is still down: next sweep
    }
  }

  /** null when it was started before (here, elsewhere, or before a crash) or cannot run any more */
  private async startEvent(ev: WebhookEvent, loaded?: LoadedWorkflow): Promise<ExecutionHandle | null> {
    try {
      const workflow = loaded ?? (await this.loadVersion(ev));
      if (workflow === null) {
        this.deps.logger.warn({ eventId: ev.id, workflowId: ev.workflowId, version: ev.version }, 'webhook event dropped: its workflow version is gone');
        await this.deps.store.webhooks.markStarted(ev.id);
        return null;
      }
      const trigger = { type: 'webhook' as const, triggerId: ev.triggerId, eventId: ev.id };
      const handle = await this.deps.executions.start(workflow, ev.payload, trigger, { executionId: ev.executionId, awaitRecord: true });
      await this.deps.store.webhooks.markStarted(ev.id);
      return handle;
    } catch (err) {
      if (!(err instanceof TroupeError) || err.code !== 'CONFLICT') throw err;
      await this.deps.store.webhooks.markStarted(ev.id);
      return null;
    }
  }

  private async loadVersion(ev: WebhookEvent): Promise<LoadedWorkflow | null> {
    const stored = await this.deps.store.workflows.getVersion(ev.workflowId, ev.version);
    return stored === null ? null : this.deps.cache.load(stored, stored.updatedAt);
  }
}

/** Slack checks a new Events API URL with a signed `{ type: "url_verification", challenge }`. */
function slackChallenge(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as { type?: unknown; challenge?: unknown };
  return b.type === 'url_verification' && typeof b.challenge === 'string' ? b.challenge : undefined;
}
