import type { RouterContext } from '@koa/router';
import type { Logger } from 'pino';
import type { Config } from '../../config/load.js';
import type { Bus } from '../bus/types.js';
import type { AppMetrics } from './metrics.js';
import type { ConsoleSessions } from './console-sessions.js';

/**
 * What createApp needs besides the services: the settings, and the HTTP layer's own parts that
 * the composition root (src/compose.ts) builds, since the services report to them (metrics).
 */
export interface AppOptions {
  config: Readonly<Config>;
  logger: Logger;
  /** the admin bearer token in force (from env, or generated into the data dir) */
  adminToken: string;
  /** what /readyz checks besides the store */
  bus: Bus;
  metrics: AppMetrics;
  /** the console's sign-in sessions */
  sessions: ConsoleSessions;
  /** the package version the system routes report */
  version: string;
  /** the built console (default: the package's dist/console, built by `make setup`) */
  consoleDir?: string;
  /** how long /readyz waits for the store and the bus (ms, default 2000) */
  readyTimeoutMs?: number;
}

/** Per-request state shared by the middleware and the routes. */
export interface AppState {
  requestId: string;
  /** the route template (OpenAPI form) that matched, for metrics and logs */
  route?: string;
  /** a live console session from the console's pages: the admin, as the bearer token (middleware/auth.ts) */
  consoleSession?: boolean;
  /** the raw request body, once read (kept for webhook signature checks) */
  rawBody?: Buffer;
  /** reads the body (once) with the size limit: 413 PAYLOAD_TOO_LARGE */
  readBody(): Promise<Buffer>;
  /** the body parsed as JSON (undefined when empty): 400 INVALID_JSON */
  readJson(): Promise<unknown>;
}

export type Ctx = RouterContext<AppState>;
