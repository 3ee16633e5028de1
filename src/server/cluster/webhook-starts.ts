/**
 * Webhook events in a cluster (SPEC §9): the events the instances announce on the webhook
 * stream before their 202 are started through one durable consumer shared by every instance,
 * so each is taken by one instance with room, whichever accepted it. The message is
 * acknowledged once the event's execution exists (or it is known started or gone); the store's
 * sweep stays as the fallback for an event whose announcement failed.
 */
import { AckPolicy, DeliverPolicy, JSONCodec, nanos, NatsError } from 'nats';
import type { ConsumerMessages, JsMsg, NatsConnection } from 'nats';
import type { Logger } from 'pino';
import { webhookStream } from '../../bus/subjects.js';
import type { WebhookService } from '../../service/webhooks.js';

const json = JSONCodec<{ eventId?: unknown }>();
const ACK_WAIT_MS = 10_000;
const RETRY_DELAY_MS = 500;
const CONSUMER = 'starters';
/** the bus's (nats.ts): how long JetStream remembers a message id */
const DUPLICATE_WINDOW_MS = 2 * 60_000;
/** JetStream's API error code for "stream not found" */
const STREAM_NOT_FOUND = 10059;

export class WebhookStarts {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly stream: string;

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly webhooks: WebhookService,
    private readonly concurrency: number,
    private readonly logger: Logger,
  ) {
    this.stream = webhookStream(prefix).name;
  }

  /** The shared consumer, and the bus's stream (main.ts) when no event has made it yet. */
  async open(): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    const stream = webhookStream(this.prefix);
    const found = await jsm.streams.info(stream.name).then(() => true, (err: unknown) => {
      if (err instanceof NatsError && err.api_error?.err_code === STREAM_NOT_FOUND) return false;
      throw err;
    });
    if (!found) {
      await jsm.streams.add({ name: stream.name, subjects: [...stream.subjects], max_age: nanos(stream.maxAgeMs), duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
    }
    await jsm.consumers.add(this.stream, {
      durable_name: CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(ACK_WAIT_MS), deliver_policy: DeliverPolicy.New, max_deliver: -1,
    });
  }

  async consume(): Promise<void> {
    const consumer = await this.nc.jetstream().consumers.get(this.stream, CONSUMER);
    const messages = await consumer.consume({ max_messages: this.concurrency });
    this.messages = messages;
    this.loop = (async () => {
      for await (const m of messages) {
        const p = this.take(m).catch((err: unknown) => {
          this.logger.error({ err }, 'webhook event from the shared consumer did not start; it comes again');
          m.nak(RETRY_DELAY_MS);
        });
        this.pending.add(p);
        void p.finally(() => this.pending.delete(p));
      }
    })();
  }

  async stop(): Promise<void> {
    if (this.messages === undefined) return;
    this.messages.stop();
    this.messages = undefined;
    await this.loop?.catch(() => undefined);
    await Promise.allSettled([...this.pending]);
  }

  private async take(m: JsMsg): Promise<void> {
    const { eventId } = json.decode(m.data);
    if (typeof eventId !== 'string') {
      m.term();
      return;
    }
    if ((await this.webhooks.startAnnounced(eventId)) === 'busy') m.nak(RETRY_DELAY_MS);
    else m.ack();
  }
}
