/**
 * Request/reply for the NATS adapter: one inbox subscription (`_INBOX.<id>.*`) for all of a
 * bus's requests, as the client's own request() has, but reading replies the way the bus's
 * subscriptions do. The client's request() settles on the first message to its inbox, which
 * for a reply larger than max_payload is only its first piece.
 */
import { createInbox } from 'nats';
import type { Msg, NatsConnection, NatsError, Subscription as NatsSubscription } from 'nats';
import { TroupeError, type ErrorCode } from '../errors.js';
import { noRespondersError, timeoutError } from './checks.js';
import { ERROR_HEADER, Reassembly, type PartialBudget } from './nats-chunks.js';
import { receive } from './nats-codec.js';
import type { BusMsg } from './types.js';

interface Pending {
  subject: string;
  resolve: (msg: BusMsg) => void;
  reject: (err: TroupeError) => void;
  timer: NodeJS.Timeout;
}

/** sends the request with `reply` as its reply subject: the bus's own publish path, which splits what is too large */
export type SendRequest = (reply: string) => void;

/** the codes a queue-group member may answer with instead of a reply (see NatsBus) */
const REPLY_ERRORS: ReadonlySet<string> = new Set<ErrorCode>(['BUS_MESSAGE_TOO_LARGE']);

export class RequestMux {
  private readonly prefix = createInbox();
  private sub: NatsSubscription | null = null;
  private seq = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly reassembly: Reassembly;

  constructor(
    private readonly nc: NatsConnection,
    budget: PartialBudget,
    private readonly report: (err: unknown, msg: BusMsg) => void,
  ) {
    this.reassembly = new Reassembly(budget, (err) => this.report(err, { subject: this.prefix, data: undefined }));
  }

  request(subject: string, timeoutMs: number, send: SendRequest): Promise<BusMsg> {
    // subscribed before the request goes out: the server reads one connection's commands in order
    this.sub ??= this.nc.subscribe(`${this.prefix}.*`, { callback: (err, m) => this.onReply(err, m) });
    const token = String(++this.seq);
    return new Promise<BusMsg>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(token)?.reject(timeoutError(subject, timeoutMs)), timeoutMs);
      this.pending.set(token, { subject, resolve, reject, timer });
      try {
        send(`${this.prefix}.${token}`);
      } catch (err) {
        this.settle(token);
        reject(err);
      }
    });
  }

  /** Rejects every request still waiting (the bus closes). */
  rejectAll(err: TroupeError): void {
    for (const token of [...this.pending.keys()]) this.settle(token)?.reject(err);
    this.reassembly.clear();
  }

  private onReply(err: NatsError | null, m: Msg): void {
    if (err !== null) return; // the subscription ends with the connection; rejectAll has run
    const token = m.subject.slice(this.prefix.length + 1);
    const pending = this.pending.get(token);
    // a reply after its request timed out: dropped, pieces included
    if (pending === undefined) return;
    // the server's answer when nobody subscribes to the request's subject
    if (m.data.length === 0 && m.headers?.code === 503) {
      this.settle(token)?.reject(noRespondersError(pending.subject));
      return;
    }
    const refused = m.headers?.get(ERROR_HEADER);
    if (refused !== undefined && REPLY_ERRORS.has(refused)) {
      const said = (receive(m, this.reassembly, () => undefined)?.data as { message?: unknown } | undefined)?.message;
      const message = typeof said === 'string' ? said : `the request on "${pending.subject}" was refused`;
      this.settle(token)?.reject(new TroupeError(refused as ErrorCode, message, { details: { subject: pending.subject } }));
      return;
    }
    const msg = receive(m, this.reassembly, (e) => this.report(e, { subject: m.subject, data: undefined }));
    if (msg !== null) this.settle(token)?.resolve(msg);
  }

  private settle(token: string): Pending | undefined {
    const pending = this.pending.get(token);
    if (pending === undefined) return undefined;
    this.pending.delete(token);
    clearTimeout(pending.timer);
    return pending;
  }
}
