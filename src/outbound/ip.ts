import { isIP } from 'node:net';

/**
 * IP parsing and range matching for the SSRF guard. Addresses are handled as byte arrays so
 * IPv4, IPv6 and IPv4-mapped IPv6 compare the same way, whatever spelling the input used.
 */
export interface ParsedIp {
  family: 4 | 6;
  bytes: Uint8Array;
}

export interface Cidr {
  family: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
}

/** Strips `[...]` (URL host form) and a zone id (`fe80::1%eth0`). */
export function bareHost(host: string): string {
  const unbracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const zone = unbracketed.indexOf('%');
  return zone >= 0 && unbracketed.includes(':') ? unbracketed.slice(0, zone) : unbracketed;
}

export function parseIp(text: string): ParsedIp | null {
  const host = bareHost(text.trim());
  const kind = isIP(host);
  if (kind === 4) return { family: 4, bytes: Uint8Array.from(host.split('.').map(Number)) };
  if (kind === 6) return { family: 6, bytes: parseIpv6(host) };
  return null;
}

function parseIpv6(text: string): Uint8Array {
  const bytes = new Uint8Array(16);
  let head = text;
  let tailV4: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tailV4 = text.slice(lastColon + 1).split('.').map(Number);
    head = text.slice(0, lastColon + 1) + '0:0';
  }
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  const rightGroups = right === undefined || right === '' ? [] : right.split(':');
  const missing = 8 - leftGroups.length - rightGroups.length;
  const groups = [...leftGroups, ...new Array<string>(right === undefined ? 0 : missing).fill('0'), ...rightGroups];
  groups.forEach((g, i) => {
    const value = parseInt(g, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  if (tailV4.length === 4) bytes.set(tailV4, 12);
  return bytes;
}

/** `::ffff:a.b.c.d` and NAT64 `64:ff9b::a.b.c.d` reach an IPv4 host: judge them as that host. */
export function embeddedIpv4(ip: ParsedIp): ParsedIp | null {
  if (ip.family !== 6) return null;
  const b = ip.bytes;
  const mapped = b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  const nat64 = b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.subarray(4, 12).every((x) => x === 0);
  return mapped || nat64 ? { family: 4, bytes: b.slice(12, 16) } : null;
}

/** `10.0.0.0/8`, `fc00::/7`, or a single address (a full-length prefix). */
export function parseCidr(text: string): Cidr | null {
  const [addr = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return null;
  const ip = parseIp(addr);
  if (!ip) return null;
  const max = ip.family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) return null;
  return { family: ip.family, bytes: ip.bytes, prefix };
}

export function cidrContains(cidr: Cidr, ip: ParsedIp): boolean {
  const target = cidr.family === ip.family ? ip : cidr.family === 4 ? embeddedIpv4(ip) : null;
  if (!target) return false;
  const fullBytes = Math.floor(cidr.prefix / 8);
  for (let i = 0; i < fullBytes; i++) if (cidr.bytes[i] !== target.bytes[i]) return false;
  const rest = cidr.prefix % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((cidr.bytes[fullBytes] ?? 0) & mask) === ((target.bytes[fullBytes] ?? 0) & mask);
}

/** Ranges that are not the public internet. Labels end up in BLOCKED_ADDRESS messages. */
const NON_PUBLIC: ReadonlyArray<[string, string]> = [
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'private (shared address space)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved (IETF protocol assignments)'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved (benchmarking)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  // `::a.b.c.d` (IPv4-compatible, deprecated): never a host on the internet
  ['::/96', 'reserved (IPv4-compatible)'],
  ['fc00::/7', 'private (unique local)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

const NON_PUBLIC_CIDRS: ReadonlyArray<[Cidr, string]> = NON_PUBLIC.map(([text, label]) => {
  const cidr = parseCidr(text);
  if (!cidr) throw new Error(`bad built-in range ${text}`);
  return [cidr, label];
});

/**
 * The only IPv6 block handed out for the public internet (IANA). A denylist of IPv6 ranges
 * always misses one (`::127.0.0.1`, `::ffff:0:a.b.c.d`, `100::`), so outside it nothing is public.
 */
const IPV6_GLOBAL_UNICAST = parseCidr('2000::/3')!;

/** null for a public unicast address, else why it is not one. */
export function nonPublicReason(ip: ParsedIp): string | null {
  const judged = embeddedIpv4(ip) ?? ip;
  for (const [cidr, label] of NON_PUBLIC_CIDRS) if (cidrContains(cidr, judged)) return label;
  if (judged.family === 6 && !cidrContains(IPV6_GLOBAL_UNICAST, judged)) return 'reserved (not global unicast)';
  return null;
}
