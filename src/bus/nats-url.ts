/**
 * NATS_URL: its forms, its credentials, and how it is shown.
 *
 * The `nats` client for Node takes `host:port` strings: it drops any scheme and ignores
 * credentials written into the URL (a server that requires them answers "Authorization
 * Violation"), and a comma-separated string is one unparseable server. So the URL is read here:
 * a comma-separated list of `nats://`, `tls://` or schemeless `host:port` servers, whose
 * `user:password@` or `token@` becomes the client's `user`/`pass` or `token`, and `tls://`
 * makes TLS required. WebSocket URLs are refused: this client speaks TCP only.
 *
 * Every message and log line shows the URL through `maskNatsUrl`: passwords and tokens as `***`.
 */
import { TroupeError } from '../errors.js';

export interface NatsTarget {
  /** `host:port` of each server, without credentials */
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
  /** a `tls://` URL: the connection must be encrypted */
  tls: boolean;
}

const HOST = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\])$/;
const FORMS = 'nats://host:port, tls://host:port or host:port (a comma-separated list for a cluster)';

interface Entry {
  server: string;
  tls: boolean;
  credentials: { user?: string; pass?: string; token?: string };
}

/** Why `raw` is not a NATS_URL the client can use, or undefined when it is one. */
export function natsUrlProblem(raw: string): string | undefined {
  try {
    parseNatsUrl(raw);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Throws INVALID_CONFIG, with a message that shows no password, when `raw` is not usable. */
export function parseNatsUrl(raw: string): NatsTarget {
  const entries = raw.split(',').map((s) => s.trim());
  if (entries.some((s) => s === '')) throw invalid(`the list has an empty entry: each must be ${FORMS}`);
  const parsed = entries.map(parseEntry);
  if (new Set(parsed.map((e) => e.tls)).size > 1) throw invalid('the list mixes tls:// with other servers (the client has one TLS setting for all of them)');
  const withCredentials = parsed.map((e) => e.credentials).filter((c) => Object.keys(c).length > 0);
  const credentials = withCredentials[0] ?? {};
  if (withCredentials.some((c) => c.user !== credentials.user || c.pass !== credentials.pass || c.token !== credentials.token)) {
    throw invalid('the servers of the list have different credentials (the client sends one set to every server)');
  }
  return { servers: parsed.map((e) => e.server), tls: parsed[0]?.tls === true, ...credentials };
}

function parseEntry(entry: string): Entry {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(entry)?.[1]?.toLowerCase();
  if (scheme === 'ws' || scheme === 'wss') {
    throw invalid(`"${maskNatsUrl(entry)}" is a WebSocket URL; this client connects over TCP: give the server's client port as ${FORMS}`);
  }
  if (scheme !== undefined && scheme !== 'nats' && scheme !== 'tls') throw invalid(`"${maskNatsUrl(entry)}" must be ${FORMS}`);
  let url: URL;
  try {
    url = new URL(scheme === undefined ? `nats://${entry}` : entry);
  } catch {
    throw invalid(`"${maskNatsUrl(entry)}" must be ${FORMS}`);
  }
  // without a scheme the port is required: `not-a-url` is a mistake, not a host on port 4222
  const portGiven = scheme !== undefined || url.port !== '';
  if (!HOST.test(url.hostname) || !portGiven || url.port === '0' || (url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    throw invalid(`"${maskNatsUrl(entry)}" must be ${FORMS}`);
  }
  return { server: `${url.hostname}:${url.port === '' ? '4222' : url.port}`, tls: scheme === 'tls', credentials: credentialsOf(url) };
}

/** `user:password@` → user and password; `token@` alone → a token (the NATS convention). */
function credentialsOf(url: URL): Entry['credentials'] {
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  if (user === '' && pass === '') return {};
  if (pass === '') return { token: user };
  return { user, pass };
}

/** `raw` with the password of every `user:password@` and every `token@` written as `***`. */
export function maskNatsUrl(raw: string): string {
  return raw.split(',').map(maskEntry).join(',');
}

function maskEntry(entry: string): string {
  // the last `@` ends the userinfo: a password may hold `@`, `/` or `:` that were not escaped
  const at = entry.lastIndexOf('@');
  if (at < 0) return entry;
  const head = /^\s*(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?/.exec(entry)?.[0] ?? '';
  const userinfo = entry.slice(head.length, at);
  const colon = userinfo.indexOf(':');
  return `${head}${colon < 0 ? '***' : `${userinfo.slice(0, colon)}:***`}${entry.slice(at)}`;
}

function invalid(message: string): TroupeError {
  return new TroupeError('INVALID_CONFIG', message);
}
