import type { Logger } from 'pino';
import type { Config } from '../../config/load.js';
import type { Bus } from '../bus/types.js';
import type { BlockTypeRegistry } from '../model/types.js';
import type { Engine } from '../runtime/engine.js';
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
  /** injected clock for rate limits and timestamps */
  now?: () => number;
}
