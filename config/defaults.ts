import { DEFAULT_LIMITS } from '../src/model/limits.js';

/** Defaults of SPEC §6 (and a few settings the SPEC leaves to us, documented in docs/config.md). */
export const DEFAULTS = {
  port: 3000,
  host: '127.0.0.1',
  dataDir: './.troupe',
  chatHost: 'chat.localhost',
  executionTimeoutMs: 300_000,
  maxBodyBytes: 1_048_576,
  keyRateLimit: 600,
  maxInflight: 1000,
  hostRps: 50,
  hostMaxInflight: 20,
  functionTimeoutMs: 5000,
  functionMemoryMb: 64,
  busPrefix: 'troupe',
  maxLiveBranches: DEFAULT_LIMITS.maxLiveBranches,
  maxIterations: DEFAULT_LIMITS.maxIterations,
  maxResultsBytes: DEFAULT_LIMITS.maxResultsBytes,
  maxRunMemoryMb: DEFAULT_LIMITS.maxRunBytes / (1024 * 1024),
  maxLogBytes: DEFAULT_LIMITS.maxLogBytes,
  maxResumeAttempts: 3,
  consoleSessionHours: 12,
  executionRetentionDays: 30,
} as const;
