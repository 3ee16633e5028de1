import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { AddressPolicy } from './address-policy.js';
import type { LookupFn, ResolvedAddress } from './types.js';

/**
 * Connection agents whose DNS lookup is also the address check. Node calls `lookup` when it
 * opens a socket and connects to exactly the address the lookup returns, so the address judged
 * is the address connected to: there is no second resolution an attacker could rebind.
 * (IP-literal hosts skip lookup; the caller checks those before sending.)
 */
export const BLOCKED_ADDRESS_CODE = 'ERR_TROUPE_BLOCKED_ADDRESS';

export class BlockedAddressError extends Error {
  readonly code = BLOCKED_ADDRESS_CODE;
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

export interface GuardedAgents {
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
  destroy(): void;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export const systemLookup: LookupFn = async (hostname) => {
  const found = await dns.lookup(hostname, { all: true, order: 'verbatim' });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Resolve, refuse the host if ANY of its addresses is refused, else hand the addresses to net. */
export function guardedLookup(policy: AddressPolicy, resolve: LookupFn) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        for (const a of wanted) {
          const reason = policy.refusal(hostname, a.address);
          if (reason !== null) return callback(new BlockedAddressError(`refused to connect to ${hostname}: ${reason}`), '');
        }
        const first: ResolvedAddress | undefined = wanted[0];
        if (!first) return callback(Object.assign(new Error(`no address found for ${hostname}`), { code: 'ENOTFOUND' }), '');
        if (options.all) return callback(null, wanted.map((a) => ({ address: a.address, family: a.family })));
        return callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

export function createGuardedAgents(policy: AddressPolicy, resolve: LookupFn): GuardedAgents {
  const lookup = guardedLookup(policy, resolve);
  // keep-alive: a pooled socket was checked when it was opened and stays bound to that address
  const httpAgent = new http.Agent({ keepAlive: true, lookup });
  const httpsAgent = new https.Agent({ keepAlive: true, lookup });
  return {
    httpAgent,
    httpsAgent,
    destroy() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
