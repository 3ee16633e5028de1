/**
 * The cluster's work queue (SPEC §9): a JetStream stream with work-queue retention that every
 * instance consumes through one shared durable consumer, so each message is taken by exactly
 * one instance. A message names a `queued` execution record (written before the message, so
 * the 202 already points at a record); its taker starts the execution and acknowledges the
 * message only once the record says `running` (or has moved on): a taker that dies before
 * leaves the message to be redelivered to another. The message id (`Nats-Msg-Id`) is the
 * execution id, so JetStream drops a message published twice for one execution.
 */
import { AckPolicy, DeliverPolicy, JSONCodec, nanos, NatsError, RetentionPolicy } from 'nats';
import type { ConsumerMessages, JsMsg, NatsConnection } from 'nats';
import type { Logger } from 'pino';
import { isTroupeError, TroupeError } from '../../errors.js';
import type { BlockTypeRegistry } from '../../model/types.js';
import { loadWorkflow } from '../../runtime/workflows.js';
import type { ExecutionRecord, Store } from '../../store/types.js';
import { startAgain, type ResumeDeps } from '../resumption.js';

const json = JSONCodec<WorkMessage>();
/** how long JetStream waits for an acknowledgement before delivering a message again */
const ACK_WAIT_MS = 10_000;
/** how long a message waits before it is offered again when its taker is full */
const BUSY_DELAY_MS = 500;
/** JetStream's API error code for "stream not found" */
const STREAM_NOT_FOUND = 10059;

export interface WorkMessage {
  executionId: string;
}

export interface WorkQueueDeps {
  nc: NatsConnection;
  prefix: string;
  store: Store;
  registry: BlockTypeRegistry;
  start: NonNullable<ResumeDeps['start']>;
  /** whether this instance may start one more execution now */
  hasCapacity: () => boolean;
  /** how many messages this instance holds at once */
  concurrency: number;
  logger: Logger;
}

export class WorkQueue {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly stream: string;
  private readonly subject: string;

  constructor(private readonly deps: WorkQueueDeps) {
    const name = deps.prefix.replace(/[^A-Za-z0-9_-]/g, '_');
    this.stream = `${name}_work`;
    this.subject = `${deps.prefix}.work.execution`;
  }

  /** Makes (or updates) the stream and the shared consumer. */
  async open(): Promise<void> {
    const jsm = await this.deps.nc.jetstreamManager();
    const config = { name: this.stream, subjects: [this.subject], retention: RetentionPolicy.Workqueue, duplicate_window: nanos(120_000) };
    const existing = await jsm.streams.info(this.stream).catch((err: unknown) => {
      if (err instanceof NatsError && err.api_error?.err_code === STREAM_NOT_FOUND) return null;
      throw err;
    });
    if (existing === null) await jsm.streams.add(config);
    else await jsm.streams.update(this.stream, config);
    await jsm.consumers.add(this.stream, {
      durable_name: 'workers', ack_policy: AckPolicy.Explicit, ack_wait: nanos(ACK_WAIT_MS), deliver_policy: DeliverPolicy.All, max_deliver: -1,
    });
  }

  /** Publishes the execution of a `queued` record; resolves once JetStream has stored it. */
  async enqueue(executionId: string): Promise<void> {
    await this.deps.nc.jetstream().publish(this.subject, json.encode({ executionId }), { msgID: executionId });
  }

  /** Starts taking messages. */
  async consume(): Promise<void> {
    const consumer = await this.deps.nc.jetstream().consumers.get(this.stream, 'workers');
    this.messages = await consumer.consume({ max_messages: this.deps.concurrency });
    const messages = this.messages;
    this.loop = (async () => {
      for await (const m of messages) {
        const p = this.take(m).catch((err: unknown) => {
          this.deps.logger.error({ err }, 'work queue: a message could not be handled');
          m.nak(BUSY_DELAY_MS);
        });
        this.pending.add(p);
        void p.finally(() => this.pending.delete(p));
      }
    })();
  }

  /** Stops taking messages; the ones being handled finish (or are redelivered elsewhere). */
  async stop(): Promise<void> {
    if (this.messages === undefined) return;
    this.messages.stop();
    this.messages = undefined;
    await this.loop?.catch(() => undefined);
    await Promise.allSettled([...this.pending]);
  }

  private async take(m: JsMsg): Promise<void> {
    const { executionId } = json.decode(m.data);
    const rec = await this.deps.store.executions.get(executionId);
    // gone, or started already (a message delivered again after its taker started it)
    if (rec === null || rec.status !== 'queued') {
      m.ack();
      return;
    }
    if (!this.deps.hasCapacity()) {
      m.nak(BUSY_DELAY_MS);
      return;
    }
    try {
      await this.startQueued(rec);
    } catch (err) {
      // another instance started it meanwhile: its record is no longer queued
      if (isTroupeError(err) && err.code === 'CONFLICT') {
        m.ack();
        return;
      }
      throw err;
    }
    m.ack();
  }

  private async startQueued(rec: ExecutionRecord): Promise<void> {
    const stored = await this.deps.store.workflows.getVersion(rec.workflowId, rec.version);
    if (stored === null) throw new TroupeError('NOT_FOUND', `workflow ${rec.workflowId} version ${rec.version} no longer exists`);
    const { compiled } = loadWorkflow(stored.definition, this.deps.registry);
    const handle = await this.deps.start(compiled, { ...startAgain(rec), awaitRecord: true });
    handle.done.catch((err: unknown) => this.deps.logger.error({ err, executionId: rec.id }, 'queued execution failed to finish'));
    await handle.recorded;
  }
}
