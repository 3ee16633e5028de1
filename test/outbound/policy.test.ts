import { expect } from 'chai';
import { createAddressPolicy } from '../../src/outbound/address-policy.js';
import { decodeResponseBody, encodeRequestBody, isJsonContentType } from '../../src/outbound/body.js';
import { cidrContains, nonPublicReason, parseCidr, parseIp } from '../../src/outbound/ip.js';
import { backoffDelay, classifyNetworkError, parseRetryAfter } from '../../src/outbound/retry-policy.js';
import { TroupeError } from '../../src/errors.js';

describe('ip ranges', () => {
  const reason = (ip: string): string | null => nonPublicReason(parseIp(ip)!);

  it('flags private, loopback, link-local, unspecified and their IPv4-mapped forms', () => {
    for (const ip of ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '100.64.0.1', '127.0.0.1', '127.9.9.9', '169.254.169.254', '0.0.0.0', '::', '::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'febf::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '[::1]', 'fe80::1%eth0']) {
      expect(reason(ip), ip).to.be.a('string');
    }
  });

  it('flags every IPv6 address outside global unicast 2000::/3, IPv4-compatible ::a.b.c.d too', () => {
    for (const ip of ['::127.0.0.1', '::7f00:1', '::a9fe:a9fe', '::2', '::ffff:0:7f00:1', '100::1', '1::1', 'fbff::1', '4000::1', 'e000::1']) {
      expect(reason(ip), ip).to.match(/reserved/);
    }
  });

  it('passes public addresses, including the edges of private ranges', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.255.255', '11.0.0.0', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2000::1', '3fff:ffff::1']) {
      expect(reason(ip), ip).to.equal(null);
    }
  });

  it('parses CIDRs and matches IPv4 ranges against mapped IPv6', () => {
    const net = parseCidr('10.1.0.0/16')!;
    expect(cidrContains(net, parseIp('10.1.200.3')!)).to.equal(true);
    expect(cidrContains(net, parseIp('10.2.0.1')!)).to.equal(false);
    expect(cidrContains(net, parseIp('::ffff:10.1.0.9')!)).to.equal(true);
    expect(cidrContains(parseCidr('2001:db8::/32')!, parseIp('2001:db8:ffff::1')!)).to.equal(true);
    expect(cidrContains(parseCidr('10.0.0.0/9')!, parseIp('10.128.0.1')!)).to.equal(false);
    for (const bad of ['10.0.0.0/33', '10.0.0.0/x', 'host/8', '1.2.3.4/8/9', '::/129']) expect(parseCidr(bad), bad).to.equal(null);
  });
});

describe('address policy', () => {
  it('refuses non-public addresses unless allowed by IP, CIDR, name or *.suffix', () => {
    const strict = createAddressPolicy({ allowPrivateNetwork: false, allowHosts: [] });
    expect(strict.refusal('x', '10.0.0.1')).to.match(/private/);
    expect(strict.refusal('x', '169.254.169.254')).to.match(/metadata/);
    expect(strict.refusal('x', '93.184.216.34')).to.equal(null);
    const allow = createAddressPolicy({ allowPrivateNetwork: false, allowHosts: ['10.0.0.0/8', '127.0.0.1', 'Vault.Internal.', '*.svc.local'] });
    expect(allow.refusal('x', '10.9.9.9')).to.equal(null);
    expect(allow.refusal('x', '127.0.0.1')).to.equal(null);
    expect(allow.refusal('x', '127.0.0.2')).to.be.a('string');
    expect(allow.refusal('vault.internal', '192.168.1.1')).to.equal(null);
    expect(allow.refusal('db.svc.local', '192.168.1.1')).to.equal(null);
    expect(allow.refusal('svc.local.evil.test', '192.168.1.1')).to.be.a('string');
    expect(createAddressPolicy({ allowPrivateNetwork: true, allowHosts: [] }).refusal('x', '127.0.0.1')).to.equal(null);
  });

  it('rejects an unreadable allow-list entry at start', () => {
    expect(() => createAddressPolicy({ allowPrivateNetwork: false, allowHosts: ['10.0.0.0/99'] })).to.throw(TroupeError);
    // "*." would be the empty suffix, which every host name ends with: it would open every address
    for (const entry of ['*.', '*', 'a b', 'http://x.example']) {
      expect(() => createAddressPolicy({ allowPrivateNetwork: false, allowHosts: [entry] }), entry).to.throw(TroupeError, /is not an IP address, a CIDR, a host name or \*\.domain/);
    }
  });
});

describe('retry policy', () => {
  it('backs off exponentially with full jitter, capped by retryMaxMs', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, 500, 3000, () => 1))).to.deep.equal([500, 1000, 2000, 3000, 3000]);
    expect(backoffDelay(3, 500, 3000, () => 0)).to.equal(0);
    expect(backoffDelay(2, 500, 3000, () => 0.25)).to.equal(250);
  });

  it('reads Retry-After as seconds or an HTTP-date', () => {
    const now = Date.UTC(2025, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('7', now)).to.equal(7000);
    expect(parseRetryAfter('0', now)).to.equal(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 12:00:30 GMT', now)).to.equal(30_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 11:00:00 GMT', now)).to.equal(0);
    expect(parseRetryAfter('soon', now)).to.equal(undefined);
    expect(parseRetryAfter(undefined, now)).to.equal(undefined);
  });

  it('classifies transport errors', () => {
    const coded = (code: string): Error => Object.assign(new Error(code), { code });
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN']) {
      expect(classifyNetworkError(coded(code)), code).to.include({ code: 'CONNECTION_FAILED', retryable: true });
    }
    expect(classifyNetworkError(coded('DEPTH_ZERO_SELF_SIGNED_CERT'))).to.include({ code: 'CONNECTION_FAILED', retryable: false });
    expect(classifyNetworkError(coded('ERR_INVALID_CHAR'))).to.include({ code: 'INVALID_CONFIG', retryable: false });
    const aggregate = Object.assign(new AggregateError([coded('ECONNREFUSED')], ''), {});
    expect(classifyNetworkError(aggregate)).to.include({ retryable: true });
  });
});

describe('bodies', () => {
  it('encodes per method and value type', () => {
    expect(encodeRequestBody('GET', { a: 1 }, {}).data).to.equal(undefined);
    expect(encodeRequestBody('DELETE', 'x', {}).data).to.equal(undefined);
    expect(encodeRequestBody('POST', null, {}).data).to.equal(undefined);
    expect(encodeRequestBody('POST', 0, {})).to.deep.equal({ data: '0', headers: { 'Content-Type': 'application/json' } });
    expect(encodeRequestBody('PUT', true, {}).data).to.equal('true');
    expect(encodeRequestBody('PATCH', 'x', { 'CONTENT-TYPE': 'text/csv' })).to.deep.equal({ data: 'x', headers: { 'CONTENT-TYPE': 'text/csv' } });
  });

  it('recognises JSON content types', () => {
    expect(isJsonContentType('application/json')).to.equal(true);
    expect(isJsonContentType('Application/JSON; charset=utf-8')).to.equal(true);
    expect(isJsonContentType('application/ld+json')).to.equal(true);
    expect(isJsonContentType('text/html')).to.equal(false);
    expect(isJsonContentType(undefined)).to.equal(false);
  });

  it('decodes JSON, text, a BOM and broken JSON', () => {
    expect(decodeResponseBody(Buffer.from('\uFEFF{"a":1}'), 'application/json')).to.deep.equal({ a: 1 });
    expect(decodeResponseBody(Buffer.from('null'), 'application/json')).to.equal(null);
    expect(decodeResponseBody(Buffer.from('[1'), 'application/json')).to.equal('[1');
    expect(decodeResponseBody(Buffer.from('héllo'), undefined)).to.equal('héllo');
  });
});
