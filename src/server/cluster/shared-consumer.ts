/**
 * A durable JetStream consumer shared by the instances of a cluster (the work queue, the
 * webhook starters): each message goes to one instance, which handles up to `max` at a time.
 * Stopping lets the messages being handled finish; the others are redelivered elsewhere.
 */
import { NatsError } from 'nats';
import type { ConsumerMessages, JetStreamManager, JsMsg, NatsConnection } from 'nats';

/** JetStream's API error code for "stream not found" */
const STREAM_NOT_FOUND = 10059;

/** Whether the stream exists (any other error is thrown). */
export async function streamExists(jsm: JetStreamManager, name: string): Promise<boolean> {
  return jsm.streams.info(name).then(() => true, (err: unknown) => {
    if (err instanceof NatsError && err.api_error?.err_code === STREAM_NOT_FOUND) return false;
    throw err;
  });
}

export interface SharedConsumerOptions {
  nc: NatsConnection;
  stream: string;
  durable: string;
  /** messages this instance holds at once */
  max: number;
  handle(m: JsMsg): Promise<void>;
  /** a handler that threw: log it and give the message back */
  failed(err: unknown, m: JsMsg): void;
}

export class SharedConsumer {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly opts: SharedConsumerOptions) {}

  async start(): Promise<void> {
    const consumer = await this.opts.nc.jetstream().consumers.get(this.opts.stream, this.opts.durable);
    const messages = await consumer.consume({ max_messages: this.opts.max });
    this.messages = messages;
    this.loop = (async () => {
      for await (const m of messages) {
        const p = this.opts.handle(m).catch((err: unknown) => this.opts.failed(err, m));
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
}
