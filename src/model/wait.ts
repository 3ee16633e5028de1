/**
 * The wait block's time arithmetic (SPEC §1.1, §2.1; docs/waiting.md). Pure: durations in
 * milliseconds or ISO 8601 (`PT5M`, `P2D`, `P1W`, `PT1.5S`), `until` dates, and the longest wait.
 * Years and months are refused: they have no fixed length, so "P1M" would be a guess.
 */

export const DAY_MS = 86_400_000;
export const DEFAULT_MAX_WAIT_DAYS = 30;

const ISO_DURATION = /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;
const UNIT_MS = [7 * DAY_MS, DAY_MS, 3_600_000, 60_000, 1000] as const;

/** Milliseconds of an ISO 8601 duration, or null when it is not one this block accepts. */
export function parseIsoDuration(text: string): number | null {
  const m = ISO_DURATION.exec(text.trim().toUpperCase());
  if (m === null || text.trim().endsWith('T') || text.trim().toUpperCase() === 'P') return null;
  let total = 0;
  let any = false;
  for (let i = 0; i < UNIT_MS.length; i += 1) {
    const part = m[i + 1];
    if (part === undefined) continue;
    any = true;
    total += Number(part) * (UNIT_MS[i] as number);
  }
  return any ? Math.round(total) : null;
}

/** A duration as configured (ms as a number or numeric string, or ISO 8601), in ms; null when unreadable. */
export function durationMs(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : null;
  if (typeof value !== 'string') return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value));
  return parseIsoDuration(value);
}

/** An ISO date-time with a date and a time (a bare date or a free-form text is refused), in ms. */
export function parseUntil(value: unknown): number | null {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : at;
}

export type WaitDue = { dueAt: number } | { problem: string };

/**
 * When a wait that starts at `now` falls due, or why it cannot wait. An `until` already past is
 * refused when a workflow is saved (`pastOk` false) and falls due at once when the block runs:
 * a run that starts again after the time has passed must not fail for it.
 */
export function waitDue(config: { duration?: unknown; until?: unknown }, now: number, maxMs: number, pastOk = false): WaitDue {
  if (config.duration !== undefined && config.duration !== null) {
    const ms = durationMs(config.duration);
    if (ms === null) return { problem: `duration ${JSON.stringify(config.duration)} is neither milliseconds nor an ISO 8601 duration (PT5M, P2D)` };
    if (ms > maxMs) return { problem: `a wait lasts at most ${maxMs / DAY_MS} days` };
    return { dueAt: now + ms };
  }
  const until = parseUntil(config.until);
  if (until === null) return { problem: `until ${JSON.stringify(config.until ?? null)} is not an ISO date-time` };
  if (until < now && !pastOk) return { problem: `until ${String(config.until)} is in the past` };
  if (until - now > maxMs) return { problem: `a wait lasts at most ${maxMs / DAY_MS} days` };
  return { dueAt: until };
}
