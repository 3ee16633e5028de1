/**
 * The cluster's own NATS connection and its JetStream key-value buckets: the instances that
 * are alive, the execution leases, the scheduler's leader lease and the chat session leases (docs/architecture.md). A
 * connection apart from the bus's keeps the Bus port free of key-value operations.
 */
import { connect, JSONCodec } from 'nats';
import type { ConnectionOptions, KV, NatsConnection } from 'nats';
import { TroupeError } from '../../errors.js';
import { maskNatsUrl, parseNatsUrl } from '../../bus/nats-url.js';

const json = JSONCodec();

export interface ClusterBuckets {
  nc: NatsConnection;
  /** instance id → InstanceView, each entry expiring unless put again */
  instances: KV;
  /** execution id → Lease */
  leases: KV;
  /** "leader" → the scheduler's leader lease */
  leader: KV;
  /** conversation id → the lease of its chat session actor */
  chatSessions: KV;
}

export async function openClusterBuckets(url: string, prefix: string, instanceTtlMs: number): Promise<ClusterBuckets> {
  const target = parseNatsUrl(url);
  const options: ConnectionOptions = {
    servers: target.servers, noAsyncTraces: true, maxReconnectAttempts: -1, reconnectTimeWait: 1000, name: 'troupe-cluster',
    ...(target.user === undefined ? {} : { user: target.user, pass: target.pass ?? '' }),
    ...(target.token === undefined ? {} : { token: target.token }),
    ...(target.tls ? { tls: {} } : {}),
  };
  let nc: NatsConnection;
  try {
    nc = await connect(options);
  } catch (err) {
    throw new TroupeError('CONNECTION_FAILED', `cannot connect to NATS at ${maskNatsUrl(url)}: ${(err as Error).message}`, { cause: err, retryable: true });
  }
  try {
    const js = nc.jetstream();
    const name = prefix.replace(/[^A-Za-z0-9_-]/g, '_');
    return {
      nc,
      instances: await js.views.kv(`${name}_instances`, { history: 1, ttl: instanceTtlMs }),
      leases: await js.views.kv(`${name}_leases`, { history: 1 }),
      leader: await js.views.kv(`${name}_leader`, { history: 1 }),
      chatSessions: await js.views.kv(`${name}_chat_sessions`, { history: 1 }),
    };
  } catch (err) {
    await nc.close();
    throw new TroupeError('CONNECTION_FAILED', `NATS at ${maskNatsUrl(url)}: the cluster needs JetStream (nats-server -js): ${(err as Error).message}`, { cause: err, retryable: true });
  }
}

/** KV keys allow letters, digits and `-/_=.`: any id becomes one, reversibly. */
export function kvKey(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

export function encodeEntry(value: unknown): Uint8Array {
  return json.encode(value);
}

/** The entry's JSON, or null when it was deleted or is not JSON. */
export function decodeEntry(entry: { operation: string; value: Uint8Array } | null): unknown {
  if (entry === null || entry.operation !== 'PUT' || entry.value.length === 0) return null;
  try {
    return json.decode(entry.value);
  } catch {
    return null;
  }
}
