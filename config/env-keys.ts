/** Every environment variable Troupe reads, in one list (SPEC §6). */
export const ENV_KEYS = [
  'TROUPE_PORT',
  'TROUPE_HOST',
  'TROUPE_DATA_DIR',
  'NATS_URL',
  'MONGODB_URL',
  'DATABASE_URL',
  'TROUPE_ADMIN_TOKEN',
  'TROUPE_SECRET_KEY',
  'TROUPE_CHAT_HOST',
  'TROUPE_ALLOW_PRIVATE_NETWORK',
  'TROUPE_ALLOW_HOSTS',
  'TROUPE_LOG_LEVEL',
  'TROUPE_EXECUTION_TIMEOUT_MS',
  'TROUPE_MAX_BODY_BYTES',
  'TROUPE_KEY_RATE_LIMIT',
  'TROUPE_MAX_INFLIGHT',
  'TROUPE_HOST_RPS',
  'TROUPE_HOST_MAX_INFLIGHT',
  'TROUPE_FUNCTION_TIMEOUT_MS',
  'TROUPE_FUNCTION_MEMORY_MB',
  'TROUPE_SMTP_URL',
  'TROUPE_SMTP_FROM',
  'TROUPE_TRUST_PROXY',
  'TROUPE_BUS_PREFIX',
  'TROUPE_INSTANCE_ID',
  // execution limits (docs/config.md "Execution limits") and crash-loop protection (docs/operations.md)
  'TROUPE_MAX_LIVE_BRANCHES',
  'TROUPE_MAX_ITERATIONS',
  'TROUPE_MAX_RESULTS_BYTES',
  'TROUPE_MAX_RUN_MEMORY_MB',
  'TROUPE_MAX_LOG_BYTES',
  'TROUPE_MAX_RESUME_ATTEMPTS',
  'TROUPE_CONSOLE',
  'TROUPE_CONSOLE_SESSION_HOURS',
  'TROUPE_EXECUTION_RETENTION_DAYS',
  'TROUPE_SYNC_WAIT_MS',
  'TROUPE_MAX_WAIT_DAYS',
  'TROUPE_WAIT_POLL_MS',
  'TROUPE_MAX_CALL_DEPTH',
  'TROUPE_SHUTDOWN_GRACE_MS',
  // the model providers' own variables (their SDKs read the same): agent and llm-router defaults
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
] as const;

export type EnvKey = (typeof ENV_KEYS)[number];

/** Prefix of process variables that `{{NAME}}` falls back to. */
export const SECRET_ENV_PREFIX = 'TROUPE_VAR_';
