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

// a DNS name: labels of letters, digits, '-' or '_' (service records use it), dots between
const HOST_NAME = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;

/** Why `entry` cannot be an allow-list entry, or undefined when it can. */
function entryProblem(entry: string): string | undefined {
  if (parseCidr(entry)) return undefined;
  const wildcard = entry.startsWith('*.');
  const name = normalizeHostname(wildcard ? entry.slice(2) : entry);
  // "*." alone would be the empty suffix, which every host name ends with
  if (name === '' || !HOST_NAME.test(name)) return `"${entry}" is not an IP address, a CIDR, a host name or *.domain`;
  return undefined;
}

/** The first bad entry of a comma-separated allow-list, said so it can name its setting. */
export function allowListProblem(list: string): string | undefined {
  for (const entry of splitAllowList(list)) {
    const problem = entryProblem(entry);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

export function splitAllowList(list: string): string[] {
  return list.split(',').map((s) => s.trim()).filter(Boolean);
}

function parseAllowList(entries: readonly string[]): AllowList {
  const list: AllowList = { names: new Set(), suffixes: [], cidrs: [] };
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new TroupeError('INVALID_CONFIG', `allow-list entry ${problem}`);
    const cidr = parseCidr(entry);
    if (cidr) list.cidrs.push(cidr);
    else if (entry.startsWith('*.')) list.suffixes.push(`.${normalizeHostname(entry.slice(2))}`);
    else list.names.add(normalizeHostname(entry));
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
