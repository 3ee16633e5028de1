/**
 * A clock that tests can drive (DESIGN example 3). Declared here, below every layer, so the
 * block contract and the outbound client can both name it without importing each other.
 */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
