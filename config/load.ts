import type { ExecutionLimits } from '../src/model/limits.js';
import { splitAllowList } from '../src/outbound/address-policy.js';
import { ENV_KEYS } from './env-keys.js';
import { envSchema, type Env } from './schema.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  natsUrl: string | undefined;
  mongodbUrl: string | undefined;
  /** PostgreSQL store (`postgres://…`); never set together with mongodbUrl */
  databaseUrl: string | undefined;
  adminToken: string | undefined;
  secretKey: string | undefined;
  chatHost: string;
  allowPrivateNetwork: boolean;
  /** hosts or CIDRs reachable even when private networks are refused */
  allowHosts: readonly string[];
  logLevel: Env['TROUPE_LOG_LEVEL'];
  executionTimeoutMs: number;
  /** how long a chat session actor stays active without a message before it passivates */
  chatIdleMs: number;
  maxBodyBytes: number;
  keyRateLimit: number;
  maxInflight: number;
  hostRps: number;
  hostMaxInflight: number;
  functionTimeoutMs: number;
  functionMemoryMb: number;
  smtpUrl: string | undefined;
  /** the sender of chat sign-in codes; default troupe@<SMTP host> */
  smtpFrom: string | undefined;
  /** reverse proxies in front (X-Forwarded-For/-Proto hops to trust); 0: none */
  trustProxy: number;
  busPrefix: string;
  /** this process's name among the service's instances (GET /api/cluster); unset: generated per start */
  instanceId: string | undefined;
  /** what one execution may hold and run at once (docs/config.md "Execution limits") */
  limits: Readonly<ExecutionLimits>;
  /** resumptions of one execution that may end with the process gone before recovery fails it (RESUME_LIMIT) */
  maxResumeAttempts: number;
  /** serve the web console (SPEC §8) and its sign-in */
  console: boolean;
  /** how long a console session lasts after sign-in */
  consoleSessionHours: number;
  /** ended executions older than this many days are deleted; 0: kept forever */
  executionRetentionDays: number;
  /** waits longer than this park the execution and answer a sync caller 202 waiting (SPEC §2.1) */
  syncWaitMs: number;
  maxWaitDays: number;
  /** how often waits that fell due are looked for */
  waitPollMs: number;
  /** how deep workflow blocks may nest */
  maxCallDepth: number;
  /** how long a stopping instance waits for its running executions before cancelling them (or, in a cluster, handing them over) */
  shutdownGraceMs: number;
  /** defaults of agent and llm-router blocks that name no key or base URL of their own */
  models: Readonly<Record<'openai' | 'anthropic', { apiKey: string | undefined; baseUrl: string | undefined }>>;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Raw env → zod → frozen Config. Throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const raw: Record<string, string> = {};
  for (const key of ENV_KEYS) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = envSchema.safeParse(raw);
  const lines = parsed.success ? [] : parsed.error.issues.map((i) => `${String(i.path[0] ?? '?')}: ${i.message}`);
  // two shared stores: which one the instances share would be a guess
  if (raw.DATABASE_URL !== undefined && raw.MONGODB_URL !== undefined) {
    lines.push('DATABASE_URL and MONGODB_URL: both are set, but the service uses one store: unset one of them');
  }
  if (!parsed.success || lines.length > 0) {
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return Object.freeze(toConfig(parsed.data));
}

function toConfig(e: Env): Config {
  return {
    port: e.TROUPE_PORT,
    host: e.TROUPE_HOST,
    dataDir: e.TROUPE_DATA_DIR,
    natsUrl: e.NATS_URL,
    mongodbUrl: e.MONGODB_URL,
    databaseUrl: e.DATABASE_URL,
    adminToken: e.TROUPE_ADMIN_TOKEN,
    secretKey: e.TROUPE_SECRET_KEY,
    chatHost: e.TROUPE_CHAT_HOST,
    allowPrivateNetwork: e.TROUPE_ALLOW_PRIVATE_NETWORK,
    allowHosts: Object.freeze(splitAllowList(e.TROUPE_ALLOW_HOSTS)),
    logLevel: e.TROUPE_LOG_LEVEL,
    executionTimeoutMs: e.TROUPE_EXECUTION_TIMEOUT_MS,
    chatIdleMs: e.TROUPE_CHAT_IDLE_MS,
    maxBodyBytes: e.TROUPE_MAX_BODY_BYTES,
    keyRateLimit: e.TROUPE_KEY_RATE_LIMIT,
    maxInflight: e.TROUPE_MAX_INFLIGHT,
    hostRps: e.TROUPE_HOST_RPS,
    hostMaxInflight: e.TROUPE_HOST_MAX_INFLIGHT,
    functionTimeoutMs: e.TROUPE_FUNCTION_TIMEOUT_MS,
    functionMemoryMb: e.TROUPE_FUNCTION_MEMORY_MB,
    smtpUrl: e.TROUPE_SMTP_URL,
    smtpFrom: e.TROUPE_SMTP_FROM,
    trustProxy: e.TROUPE_TRUST_PROXY,
    busPrefix: e.TROUPE_BUS_PREFIX,
    instanceId: e.TROUPE_INSTANCE_ID,
    limits: Object.freeze({
      maxLiveBranches: e.TROUPE_MAX_LIVE_BRANCHES,
      maxIterations: e.TROUPE_MAX_ITERATIONS,
      maxResultsBytes: e.TROUPE_MAX_RESULTS_BYTES,
      maxRunBytes: e.TROUPE_MAX_RUN_MEMORY_MB * 1024 * 1024,
      maxLogBytes: e.TROUPE_MAX_LOG_BYTES,
    }),
    maxResumeAttempts: e.TROUPE_MAX_RESUME_ATTEMPTS,
    console: e.TROUPE_CONSOLE,
    consoleSessionHours: e.TROUPE_CONSOLE_SESSION_HOURS,
    executionRetentionDays: e.TROUPE_EXECUTION_RETENTION_DAYS,
    syncWaitMs: e.TROUPE_SYNC_WAIT_MS,
    maxWaitDays: e.TROUPE_MAX_WAIT_DAYS,
    waitPollMs: e.TROUPE_WAIT_POLL_MS,
    maxCallDepth: e.TROUPE_MAX_CALL_DEPTH,
    shutdownGraceMs: e.TROUPE_SHUTDOWN_GRACE_MS,
    models: Object.freeze({
      openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
      anthropic: { apiKey: e.ANTHROPIC_API_KEY, baseUrl: e.ANTHROPIC_BASE_URL },
    }),
  };
}
