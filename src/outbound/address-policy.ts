import { TroupeError } from '../errors.js';
import { bareHost, cidrContains, nonPublicReason, parseCidr, parseIp, type Cidr } from './ip.js';

/**
 * Which addresses the API block may contact (SPEC §3 safety). The decision is taken on the
 * address actually connected to; a hostname on the allow-list vouches for whatever it resolves to.
 */
export interface AddressPolicy {
  /** null when `address` (reached through `hostname`) may be contacted, else why not */
  refusal(hostname: string, address: string): string | null;
}

export interface AddressPolicyOptions {
  allowPrivateNetwork: boolean;
  allowHosts: readonly string[];
}

interface AllowList {
  names: Set<string>;
  /** `*.corp.example` entries, kept as `.corp.example` */
  suffixes: string[];
  cidrs: Cidr[];
}

export function normalizeHostname(host: string): string {
  return bareHost(host).toLowerCase().replace(/\.$/, '');
}

function parseAllowList(entries: readonly string[]): AllowList {
  const list: AllowList = { names: new Set(), suffixes: [], cidrs: [] };
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const cidr = parseCidr(entry);
    if (cidr) {
      list.cidrs.push(cidr);
    } else if (entry.includes('/') || entry.includes(':')) {
      throw new TroupeError('INVALID_CONFIG', `allow-list entry "${entry}" is not a valid IP, CIDR or hostname`);
    } else if (entry.startsWith('*.')) {
      list.suffixes.push(normalizeHostname(entry.slice(1)));
    } else {
      list.names.add(normalizeHostname(entry));
    }
  }
  return list;
}

export function createAddressPolicy(options: AddressPolicyOptions): AddressPolicy {
  const allow = parseAllowList(options.allowHosts);
  const hostAllowed = (hostname: string): boolean => {
    const name = normalizeHostname(hostname);
    return allow.names.has(name) || allow.suffixes.some((s) => name.endsWith(s));
  };
  return {
    refusal(hostname, address) {
      if (options.allowPrivateNetwork) return null;
      const ip = parseIp(address);
      if (!ip) return `"${address}" is not an IP address`;
      const reason = nonPublicReason(ip);
      if (reason === null) return null;
      if (hostAllowed(hostname) || allow.cidrs.some((c) => cidrContains(c, ip))) return null;
      return `${address} is ${/^[aeiou]/.test(reason) ? 'an' : 'a'} ${reason} address`;
    },
  };
}
