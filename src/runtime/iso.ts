/**
 * ISO text of a time in epoch ms, keeping the last one computed: a short execution stamps its
 * record, logs, events and result about a dozen times, nearly all in the same millisecond, and
 * each `toISOString()` was a measurable share of its run (3.5 µs a call on a loaded machine).
 * A new millisecond in the same second reuses that second's text and only writes its
 * milliseconds: the same text as `toISOString()`, which the other cases still use.
 */
let lastMs = Number.NaN;
let lastIso = '';
let secondStart = Number.NaN;
/** `YYYY-MM-DDTHH:mm:ss.` of `secondStart` */
let secondPrefix = '';

/** 10000-01-01T00:00:00.000Z: from there on toISOString writes a six-digit year */
const FOUR_DIGIT_YEARS_END = 253_402_300_800_000;

export function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastIso = format(ms);
    lastMs = ms;
  }
  return lastIso;
}

function format(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= FOUR_DIGIT_YEARS_END) return new Date(ms).toISOString();
  const within = ms % 1000;
  const start = ms - within;
  if (start !== secondStart) {
    secondPrefix = new Date(start).toISOString().slice(0, 20);
    secondStart = start;
  }
  return `${secondPrefix}${within < 10 ? '00' : within < 100 ? '0' : ''}${within}Z`;
}
