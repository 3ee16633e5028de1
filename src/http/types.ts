import type { RouterContext } from '@koa/router';
import type { Logger } from 'pino';
import type { Config } from '../../config/load.js';
import type { Bus } from '../bus/types.js';
import type { BlockTypeRegistry } from '../model/types.js';
import type { Engine } from '../engine/engine.js';
import type { Mailer } from '../service/mailer.js';
import type { Store } from '../store/types.js';

/** What createApp needs; `troupe serve` (src/main.ts) builds it, tests build their own. */
export interface AppDeps {
  config: Readonly<Config>;
  store: Store;
  bus: Bus;
  engine: Engine;
  registry: BlockTypeRegistry;
  logger: Logger;
  /** the admin bearer token in force (from env, or generated into the data dir) */
  adminToken: string;
  /** the key that encrypts secrets at rest (from env, or generated into the data dir) */
  secretKey: string;
  /** where chat sign-in codes are sent (default: the log) */
  mailer?: Mailer;
  /** injected clock for rate limits and timestamps */
  now?: () => number;
  /** how often an event stream polls the store for an execution running elsewhere (ms, default 250) */
  eventPollMs?: number;
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
