/**
 * The cluster's work queue (SPEC §9): a JetStream stream with work-queue retention that every
 * instance consumes through one shared durable consumer, so each message is taken by exactly
 * one instance. A message names a `queued` execution record (written before the message, so
 * the 202 already points at a record); its taker starts the execution and acknowledges the
 * message only once the record says `running` (or has moved on): a taker that dies before
 * leaves the message to be redelivered to another. The message id (`Nats-Msg-Id`) is the
 * execution id, so JetStream drops a message published twice for one execution.
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
  private readonly stream: string;
  private readonly consumer: SharedConsumer;
  private readonly subject: string;

  constructor(private readonly deps: WorkQueueDeps) {
    const name = deps.prefix.replace(/[^A-Za-z0-9_-]/g, '_');
    this.stream = `${name}_work`;
    this.subject = `${deps.prefix}.work.execution`;
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
    const config = { name: this.stream, subjects: [this.subject], retention: RetentionPolicy.Workqueue, duplicate_window: nanos(120_000) };
    if (!(await streamExists(jsm, this.stream))) await jsm.streams.add(config);
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
  consume(): Promise<void> {
    return this.consumer.start();
  }

  /** Stops taking messages; the ones being handled finish (or are redelivered elsewhere). */
  stop(): Promise<void> {
    return this.consumer.stop();
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
