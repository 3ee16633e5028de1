/**
 * Webhook events in a cluster (SPEC §9): the events the instances announce on the webhook
 * stream before their 202 are started through one durable consumer shared by every instance,
 * so each is taken by one instance with room, whichever accepted it. The message is
 * acknowledged once the event's execution exists (or it is known started or gone); the store's
 * sweep stays as the fallback for an event whose announcement failed.
 */
import { AckPolicy, DeliverPolicy, JSONCodec, nanos } from 'nats';
import type { JsMsg, NatsConnection } from 'nats';
import type { Logger } from 'pino';
import { webhookStream } from '../../bus/subjects.js';
import type { WebhookService } from '../../service/webhooks.js';
import { SharedConsumer, streamExists } from './shared-consumer.js';

const json = JSONCodec<{ eventId?: unknown }>();
const ACK_WAIT_MS = 10_000;
const RETRY_DELAY_MS = 500;
const CONSUMER = 'starters';
/** the bus's (nats.ts): how long JetStream remembers a message id */
const DUPLICATE_WINDOW_MS = 2 * 60_000;

export class WebhookStarts {
  private readonly stream: string;
  private readonly consumer: SharedConsumer;

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly webhooks: WebhookService,
    private readonly concurrency: number,
    private readonly logger: Logger,
  ) {
    this.stream = webhookStream(prefix).name;
    this.consumer = new SharedConsumer({
      nc, stream: this.stream, durable: CONSUMER, max: concurrency,
      handle: (m) => this.take(m),
      failed: (err, m) => {
        this.logger.error({ err }, 'webhook event from the shared consumer did not start; it comes again');
        m.nak(RETRY_DELAY_MS);
      },
    });
  }

  /** The shared consumer, and the bus's stream (main.ts) when no event has made it yet. */
  async open(): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    const stream = webhookStream(this.prefix);
    if (!(await streamExists(jsm, stream.name))) {
      await jsm.streams.add({ name: stream.name, subjects: [...stream.subjects], max_age: nanos(stream.maxAgeMs), duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
    }
    await jsm.consumers.add(this.stream, {
      durable_name: CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(ACK_WAIT_MS), deliver_policy: DeliverPolicy.New, max_deliver: -1,
    });
  }

  consume(): Promise<void> {
    return this.consumer.start();
  }

  stop(): Promise<void> {
    return this.consumer.stop();
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
