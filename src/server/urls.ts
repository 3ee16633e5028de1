import type { Config } from '../../config/load.js';

/** A host clients can dial: a wildcard bind address is reached through loopback. */
export function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The base URL of a service configured like this one. */
export function serviceUrl(config: Pick<Readonly<Config>, 'host'>, port: number): string {
  return `http://${displayHost(config.host)}:${port}`;
}
