/**
 * ISO text of a time in epoch ms, keeping the last one computed: a short execution stamps its
 * record, logs, events and result about a dozen times, nearly all in the same millisecond, and
 * each `toISOString()` was a measurable share of its run.
 */
let lastMs = Number.NaN;
let lastIso = '';

export function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
