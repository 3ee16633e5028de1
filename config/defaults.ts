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
  shutdownGraceMs: 15_000,
} as const;
