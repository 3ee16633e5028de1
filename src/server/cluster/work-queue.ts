/**
 * The cluster's work queue (SPEC §9): a JetStream stream with work-queue retention that every
 * instance consumes through one shared durable consumer, so each message is taken by exactly
 * one instance. A message names a `queued` execution record (written before the message, so
 * the 202 already points at a record); its taker starts the execution and acknowledges the
 * message only once the record says `running` (or has moved on): a taker that dies before
 * leaves the message to be redelivered to another. The message id (`Nats-Msg-Id`) is the
 * execution id (a schedule fire's: workflow|trigger|due time), so JetStream drops a message
 * published twice for one piece of work. Wake-ups of waiting executions whose wait fell due
 * come the same way on their own subject (`{prefix}.work.resume`, id execution|wait key): every
 * instance's waker publishes what it finds due, and the one taker resumes it (waker.ts wakeDue;
 * the record's guarded claim still decides, should two ever try).
 */
import { AckPolicy, DeliverPolicy, JSONCodec, nanos, RetentionPolicy } from 'nats';
import type { JsMsg, NatsConnection } from 'nats';
import type { Logger } from 'pino';
import { isTroupeError, TroupeError } from '../../errors.js';
import type { BlockTypeRegistry } from '../../model/types.js';
import { loadWorkflow } from '../../runtime/workflows.js';
import type { ExecutionRecord, Store } from '../../store/types.js';
import { startAgain, type ResumeDeps } from '../resumption.js';
import { SharedConsumer, streamExists } from './shared-consumer.js';

const json = JSONCodec<WorkMessage>();
/** how long JetStream waits for an acknowledgement before delivering a message again */
const ACK_WAIT_MS = 10_000;
/** how long a message waits before it is offered again when its taker is full */
const BUSY_DELAY_MS = 500;

export interface WorkMessage {
  executionId: string;
  /** a wake-up: the wait entry's key (its block run) */
  waitKey?: string;
}

/** what became of a wake-up taken from the queue (waker.ts wakeDue) */
export type WakeOutcome = 'resumed' | 'taken' | 'skipped' | 'cannot' | 'error';

/** how long a wake-up that failed waits before it is tried again */
const WAKE_RETRY_MS = 5_000;

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
  /** resumes a waiting execution whose wait fell due, here */
  wake: (executionId: string) => Promise<WakeOutcome>;
  logger: Logger;
}

export class WorkQueue {
  private readonly stream: string;
  private readonly consumer: SharedConsumer;
  private readonly subject: string;
  private readonly resumeSubject: string;

  constructor(private readonly deps: WorkQueueDeps) {
    const name = deps.prefix.replace(/[^A-Za-z0-9_-]/g, '_');
    this.stream = `${name}_work`;
    this.subject = `${deps.prefix}.work.execution`;
    this.resumeSubject = `${deps.prefix}.work.resume`;
    this.consumer = new SharedConsumer({
      nc: deps.nc, stream: this.stream, durable: 'workers', max: deps.concurrency,
      handle: (m) => this.take(m),
      failed: (err, m) => {
        deps.logger.error({ err }, 'work queue: a message could not be handled');
        m.nak(BUSY_DELAY_MS);
      },
    });
  }

  /** Makes (or updates) the stream and the shared consumer. */
  async open(): Promise<void> {
    const jsm = await this.deps.nc.jetstreamManager();
    const config = { name: this.stream, subjects: [this.subject, this.resumeSubject], retention: RetentionPolicy.Workqueue, duplicate_window: nanos(120_000) };
    if (!(await streamExists(jsm, this.stream))) await jsm.streams.add(config);
    else await jsm.streams.update(this.stream, config);
    await jsm.consumers.add(this.stream, {
      durable_name: 'workers', ack_policy: AckPolicy.Explicit, ack_wait: nanos(ACK_WAIT_MS), deliver_policy: DeliverPolicy.All, max_deliver: -1,
    });
  }

  /** Publishes the execution of a `queued` record; resolves once JetStream has stored it. */
  async enqueue(executionId: string, dedupeKey = executionId): Promise<void> {
    await this.deps.nc.jetstream().publish(this.subject, json.encode({ executionId }), { msgID: dedupeKey });
  }

  /** Publishes the wake-up of a waiting execution whose wait fell due; one per (execution, wait) within the dedupe window. */
  async resume(executionId: string, waitKey: string): Promise<void> {
    await this.deps.nc.jetstream().publish(this.resumeSubject, json.encode({ executionId, waitKey }), { msgID: `${executionId}|${waitKey}` });
  }

  /** Starts taking messages. */
  consume(): Promise<void> {
    return this.consumer.start();
  }

  /** Stops taking messages; the ones being handled finish (or are redelivered elsewhere). */
  stop(): Promise<void> {
    return this.consumer.stop();
  }

  private async take(m: JsMsg): Promise<void> {
    const { executionId, waitKey } = json.decode(m.data);
    if (m.subject === this.resumeSubject) return this.wake(m, executionId, waitKey);
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

  /** A wake-up: resumed here unless this instance is full; one that failed is tried again a little later. */
  private async wake(m: JsMsg, executionId: string, waitKey: string | undefined): Promise<void> {
    if (!this.deps.hasCapacity()) {
      m.nak(BUSY_DELAY_MS);
      return;
    }
    const outcome = await this.deps.wake(executionId);
    this.deps.logger.info({ executionId, waitKey, outcome }, 'wake-up taken from the work queue');
    if (outcome === 'error') m.nak(WAKE_RETRY_MS);
    else m.ack();
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
