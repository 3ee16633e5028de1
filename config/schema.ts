import { z } from 'zod';
import { natsUrlProblem } from '../src/bus/nats-url.js';
import { allowListProblem } from '../src/outbound/address-policy.js';
import { DEFAULTS } from './defaults.js';

/** Decimal digits only: `0x50`, `1e3` or ` 12abc` are mistakes, not numbers. A number out of range says its range. */
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    // a signed number is read so its message gives the range ("-5" is below it, not malformed)
    (v) => (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v),
    z
      .number({ error: 'must be a whole number in decimal digits' })
      .int({ error: 'must be a whole number in decimal digits' })
      .min(min, { error: `must be at least ${min}` })
      .max(max, { error: `must be at most ${max}` }),
  );
/** A positive number in decimal digits, a fraction allowed (`0.5`), as `int` refuses other forms. */
const positiveDecimal = () =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v),
    z.number({ error: 'must be a number in decimal digits' }).positive({ error: 'must be greater than 0' }),
  );
/** Any case: TRUE, Yes and 1 all mean true. */
const bool = z
  .preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(['true', 'false', '1', '0', 'yes', 'no']))
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const optionalString = z.string().min(1).optional();
const httpUrl = z.string().regex(/^https?:\/\/[^\s]+$/, 'must be an http:// or https:// URL');

/** Raw env → typed settings. Each key is an env var name so errors name the variable. */
export const envSchema = z.object({
  TROUPE_PORT: int(0, 65535).default(DEFAULTS.port),
  TROUPE_HOST: z.string().min(1).default(DEFAULTS.host),
  TROUPE_DATA_DIR: z.string().min(1).default(DEFAULTS.dataDir),
  // the form the NATS client can use (src/bus/nats-url.ts); a message never shows a password
  NATS_URL: z
    .string()
    .superRefine((v, ctx) => {
      const problem = natsUrlProblem(v);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  MONGODB_URL: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// or mongodb+srv:// URL')
    .optional(),
  // the PostgreSQL store (shared by several instances); with MONGODB_URL as well, load.ts stops the start
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  // a client's Authorization header cannot carry the spaces: every admin request would get 401
  TROUPE_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').regex(/^\S+$/, 'must not contain spaces or other whitespace').optional(),
  TROUPE_SECRET_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  TROUPE_CHAT_HOST: z
    .string()
    .regex(/^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/, 'must be a host name (no scheme, port or path), e.g. chat.example.com')
    // host names are case-insensitive: kept in the form the chat URLs are shown in
    .transform((host) => host.toLowerCase())
    .default(DEFAULTS.chatHost),
  TROUPE_ALLOW_PRIVATE_NETWORK: bool.default(false),
  // refused at start, naming the variable: a typo would otherwise only show as blocked requests
  TROUPE_ALLOW_HOSTS: z
    .string()
    .superRefine((v, ctx) => {
      const problem = allowListProblem(v);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${problem} (comma-separated entries)` });
    })
    .default(''),
  // any case, as the switches: LOG_LEVEL=INFO is a common habit, and pino wants lowercase
  TROUPE_LOG_LEVEL: z
    .preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .default('info'),
  // at most the longest timer delay (2^31 − 1 ms, ~24.8 days): a longer one would fire at once
  TROUPE_EXECUTION_TIMEOUT_MS: int(1, 2_147_483_647).default(DEFAULTS.executionTimeoutMs),
  TROUPE_CHAT_IDLE_MS: int(1_000, 2_147_483_647).default(DEFAULTS.chatIdleMs),
  TROUPE_SHUTDOWN_GRACE_MS: int(0, 2_147_483_647).default(DEFAULTS.shutdownGraceMs),
  TROUPE_MAX_BODY_BYTES: int(1).default(DEFAULTS.maxBodyBytes),
  TROUPE_KEY_RATE_LIMIT: int(1).default(DEFAULTS.keyRateLimit),
  TROUPE_MAX_INFLIGHT: int(1).default(DEFAULTS.maxInflight),
  TROUPE_HOST_RPS: positiveDecimal().default(DEFAULTS.hostRps),
  TROUPE_HOST_MAX_INFLIGHT: int(1).default(DEFAULTS.hostMaxInflight),
  TROUPE_FUNCTION_TIMEOUT_MS: int(1, 2_147_483_647).default(DEFAULTS.functionTimeoutMs),
  TROUPE_FUNCTION_MEMORY_MB: int(8, 4096).default(DEFAULTS.functionMemoryMb),
  TROUPE_SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  TROUPE_SMTP_FROM: z.string().regex(/^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/, 'must be an address, or "Name <address>"').optional(),
  TROUPE_TRUST_PROXY: int(0, 10).default(0),
  // 0 keeps executions forever; at most 100 years
  TROUPE_EXECUTION_RETENTION_DAYS: int(0, 36_500).default(DEFAULTS.executionRetentionDays),
  TROUPE_BUS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be one subject token').default(DEFAULTS.busPrefix),
  // shown by GET /api/cluster and in logs: printable, and short enough to read in a table
  TROUPE_INSTANCE_ID: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_", ":" or "-"').optional(),
  TROUPE_MAX_LIVE_BRANCHES: int(1).default(DEFAULTS.maxLiveBranches),
  // a loop's maxIterations goes up to 1 000 000: a higher limit would change nothing
  TROUPE_MAX_ITERATIONS: int(1, 1_000_000).default(DEFAULTS.maxIterations),
  TROUPE_MAX_RESULTS_BYTES: int(1).default(DEFAULTS.maxResultsBytes),
  TROUPE_MAX_RUN_MEMORY_MB: int(1, 1_048_576).default(DEFAULTS.maxRunMemoryMb),
  TROUPE_MAX_LOG_BYTES: int(0).default(DEFAULTS.maxLogBytes),
  TROUPE_MAX_RESUME_ATTEMPTS: int(1, 1000).default(DEFAULTS.maxResumeAttempts),
  TROUPE_CONSOLE: bool.default(true),
  // a console session longer than a month is a forgotten one
  TROUPE_CONSOLE_SESSION_HOURS: int(1, 720).default(DEFAULTS.consoleSessionHours),
  // a sync caller is answered 202 waiting when its execution parks on a wait longer than this (SPEC §2.1)
  TROUPE_SYNC_WAIT_MS: int(0, 2_147_483_647).default(DEFAULTS.syncWaitMs),
  TROUPE_MAX_WAIT_DAYS: int(1, 3650).default(DEFAULTS.maxWaitDays),
  // how often the waker looks for waits that fell due (docs/waiting.md)
  TROUPE_WAIT_POLL_MS: int(50, 3_600_000).default(DEFAULTS.waitPollMs),
  TROUPE_MAX_CALL_DEPTH: int(1, 100).default(DEFAULTS.maxCallDepth),
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: httpUrl.optional(),
  ANTHROPIC_API_KEY: optionalString,
  ANTHROPIC_BASE_URL: httpUrl.optional(),
});

export type Env = z.infer<typeof envSchema>;
