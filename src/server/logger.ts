import { pino, type Logger } from 'pino';
import type { Config } from '../../config/load.js';

/**
 * Structured JSON logs on stderr, so stdout stays for the few lines meant for a person (the
 * URL, a generated token, the demo's curl line). Credentials that may sit in logged objects are
 * censored whatever the call site logs.
 */
export function createServiceLogger(config: Readonly<Config>): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'troupe', pid: process.pid },
      redact: {
        paths: [
          'adminToken',
          'secretKey',
          'apiKey.key',
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers.cookie',
          'headers.authorization',
          'headers["x-api-key"]',
          'headers.cookie',
        ],
        censor: '***',
      },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}
