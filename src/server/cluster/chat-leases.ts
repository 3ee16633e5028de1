/**
 * Chat session placement in a cluster (SPEC §9; docs/architecture.md "Chat session actors"):
 * a conversation's session actor runs on the instance holding its lease, an entry of the
 * `{prefix}_chat_sessions` bucket keyed by conversation id. The holder renews the leases of
 * its active sessions with a compare-and-set at the revision it last wrote (a lease another
 * instance took meanwhile is found lost, and the session stops here) and deletes one when its
 * session passivates. A message arriving elsewhere is sent on to the holder over the bus
 * (`{prefix}.chat.session.{instance}`, request/reply), or, when the lease expired or was
 * released, the instance takes the lease and activates the session itself.
 */
import type { KV } from 'nats';
import type { Logger } from 'pino';
import type { Bus, Subscription } from '../../bus/types.js';
import { encodeToken } from '../../bus/subjects.js';
import { placement } from '../../model/chat-turn.js';
import { parseLease, type Lease, type LeaseTiming } from '../../model/lease.js';
import type { ChatPlacement, ForwardedMessage, ForwardReply } from '../../service/chat-sessions.js';
import { decodeEntry, encodeEntry, kvKey } from './nats-kv.js';

/** how long a forwarded message waits for its turn to begin at the owner before it is placed again */
const FORWARD_TIMEOUT_MS = 10_000;

export interface ChatLeasesDeps {
  bucket: KV;
  bus: Bus;
  prefix: string;
  instanceId: string;
  timing: LeaseTiming;
  now: () => number;
  /** the conversations whose session is active here */
  activeIds: () => string[];
  /** the session of this conversation went to another instance: it stops here */
  lost: (conversationId: string) => void;
  /** a message another instance sent on */
  serve: (msg: ForwardedMessage) => Promise<ForwardReply>;
  logger: Logger;
}

export class ChatLeases implements ChatPlacement {
  private timer: NodeJS.Timeout | undefined;
  private sub: Subscription | undefined;
  /** the lease entries this instance wrote, by conversation id: the revision of its last write */
  private readonly held = new Map<string, number>();
  /** conversations taken from an expired or released lease since the start */
  takenOver = 0;

  constructor(private readonly deps: ChatLeasesDeps) {}

  get heldCount(): number {
    return this.held.size;
  }

  start(): void {
    this.sub = this.deps.bus.subscribe<ForwardedMessage>(subjectOf(this.deps.prefix, this.deps.instanceId), (msg) => {
      this.deps.serve(msg.data).then(
        (reply) => this.deps.bus.reply(msg, reply),
        (err: unknown) => {
          this.deps.logger.error({ err }, 'chat: a forwarded message failed');
          this.deps.bus.reply(msg, { kind: 'error', code: 'INTERNAL', message: 'the message could not be answered' } satisfies ForwardReply);
        },
      );
    });
    this.timer = setInterval(() => void this.renew().catch((err: unknown) => this.deps.logger.error({ err }, 'chat session leases: renewal failed')), this.deps.timing.renewMs);
    this.timer.unref();
  }

  /** Takes no more forwarded messages and stops renewing (the leases expire, or were released). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sub?.unsubscribe();
    this.sub = undefined;
  }

  async place(conversationId: string): Promise<{ kind: 'here' } | { kind: 'owner'; owner: string }> {
    const key = kvKey(conversationId);
    const entry = await this.deps.bucket.get(key);
    const lease = parseLease(decodeEntry(entry));
    const where = placement(lease, this.deps.instanceId, this.deps.now(), this.deps.timing);
    if (where.kind === 'owner') return where;
    if (where.kind === 'here' && this.held.has(conversationId)) return where;
    // free, expired, released, or ours from an earlier start of this instance: taken by compare-and-set
    const mine = encodeEntry({ owner: this.deps.instanceId, renewedAt: this.deps.now() } satisfies Lease);
    try {
      this.held.set(conversationId, entry === null ? await this.deps.bucket.create(key, mine) : await this.deps.bucket.update(key, mine, entry.revision));
    } catch {
      // another instance took it first: ask again, it is theirs now
      const now = parseLease(decodeEntry(await this.deps.bucket.get(key)));
      return now === null || now.owner === this.deps.instanceId ? { kind: 'owner', owner: '' } : { kind: 'owner', owner: now.owner };
    }
    if (lease !== null && lease.owner !== this.deps.instanceId) {
      this.takenOver += 1;
      this.deps.logger.warn({ conversationId, from: lease.owner, released: lease.released === true }, 'took over a chat session');
    }
    return { kind: 'here' };
  }

  async release(conversationId: string): Promise<void> {
    const revision = this.held.get(conversationId);
    this.held.delete(conversationId);
    // only the entry this instance last wrote: one another instance took meanwhile stays
    if (revision !== undefined) await this.deps.bucket.delete(kvKey(conversationId), { previousSeq: revision });
  }

  async forward(owner: string, msg: ForwardedMessage): Promise<ForwardReply> {
    if (owner === '') return { kind: 'moved' };
    const reply = await this.deps.bus.request<ForwardReply>(subjectOf(this.deps.prefix, owner), msg, { timeoutMs: FORWARD_TIMEOUT_MS });
    return reply.data;
  }

  /** Renews the lease of each session active here; a lease found taken stops its session here. */
  async renew(): Promise<void> {
    const lease = encodeEntry({ owner: this.deps.instanceId, renewedAt: this.deps.now() } satisfies Lease);
    await Promise.all(this.deps.activeIds().map(async (id) => {
      const revision = this.held.get(id);
      if (revision === undefined) return;
      try {
        this.held.set(id, await this.deps.bucket.update(kvKey(id), lease, revision));
      } catch (err) {
        const now = parseLease(decodeEntry(await this.deps.bucket.get(kvKey(id)).catch(() => null)));
        if (now === null || now.owner === this.deps.instanceId) throw err;
        this.held.delete(id);
        this.deps.logger.warn({ conversationId: id, owner: now.owner }, 'another instance took this chat session: it stops here');
        this.deps.lost(id);
      }
    }));
  }

  /** Marks every lease held here released (an orderly stop): the next message activates the session elsewhere at once. */
  async handOver(): Promise<void> {
    const released = encodeEntry({ owner: this.deps.instanceId, renewedAt: this.deps.now(), released: true } satisfies Lease);
    await Promise.all([...this.held.entries()].map(([id, revision]) => this.deps.bucket.update(kvKey(id), released, revision).catch(() => undefined)));
    this.held.clear();
  }
}

function subjectOf(prefix: string, instanceId: string): string {
  return `${prefix}.chat.session.${encodeToken(instanceId)}`;
}
