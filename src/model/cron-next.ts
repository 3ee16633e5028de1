/**
 * Due times of a cron schedule (SPEC §4.5) in an IANA time zone. A schedule matches wall-clock
 * time in the zone; daylight-saving transitions follow the classic cron convention:
 *
 * - When the hour field allows all 24 hours, matching follows the real passage of time: every
 *   instant whose wall time matches is due. In a repeated (fall-back) hour the wall times occur
 *   twice and fire twice, so `*\/15 * * * *` keeps firing every 15 real minutes; a skipped
 *   (spring-forward) hour has no instants, so nothing fires for it.
 * - Otherwise (fixed hours, e.g. `30 2 * * *`) a wall time fires once a day as the user meant it:
 *   a repeated wall time fires only at its first occurrence, and wall times that do not exist
 *   (inside the spring-forward gap) fire once, at the first instant after the gap (03:00 local
 *   in Europe/Paris on 2025-03-30 for `30 2 * * *`). Several gap times, and a matching wall time
 *   right at the gap's end, collapse into that one instant.
 *
 * Due instants are whole seconds and strictly increasing: never two equal. The search skips
 * through wall time with calendar arithmetic (no time zone needed), converts a candidate to an
 * instant with the offset in force, and re-checks the offset at the candidate: when it differs a
 * transition lies in between, found by bisection, and the search resumes from it. This assumes
 * no zone changes its offset twice within a few hours, which holds for the tz database.
 */
import { dayMatches, daysIn, type CronFields } from './cron.js';

const SECOND = 1000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** past ~5 years a schedule is taken as never due: `0 0 30 2 *`, but also leap days (4 years) */
const HORIZON = 5 * 366 * DAY;
/** no zone is more than 14 hours from UTC: bounds the wall-time search from an instant bound */
const MAX_OFFSET = 15 * HOUR;
/** far enough back to see the start of any fall-back repetition still in effect */
const REPEAT_LOOKBACK = 6 * HOUR;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** wall time minus UTC at a whole-second instant, in ms */
function offsetAt(timeZone: string, instant: number): number {
  const p = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
  for (const part of formatter(timeZone).formatToParts(instant)) {
    if (part.type in p) p[part.type as keyof typeof p] = Number(part.value);
  }
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - instant;
}

/** transitions are weeks apart: a bracket this short holds at most one */
const SCAN_STEP = 7 * DAY;

/**
 * Where the offset changes in (lo, hi], whose ends have different offsets: the first change
 * after lo, or with `latest` the last one before hi, as the first whole second of the new
 * offset. Narrowed to a week before bisecting, since bisection over a span holding several
 * transitions could land on any of them.
 */
function transitionIn(timeZone: string, lo: number, hi: number, latest: boolean): number {
  if (latest) {
    const end = offsetAt(timeZone, hi);
    while (hi - lo > SCAN_STEP && offsetAt(timeZone, hi - SCAN_STEP) === end) hi -= SCAN_STEP;
    lo = Math.max(lo, hi - SCAN_STEP);
  } else {
    const start = offsetAt(timeZone, lo);
    while (hi - lo > SCAN_STEP && offsetAt(timeZone, lo + SCAN_STEP) === start) lo += SCAN_STEP;
    hi = Math.min(hi, lo + SCAN_STEP);
  }
  const before = offsetAt(timeZone, lo);
  while (hi - lo > SECOND) {
    const mid = lo + Math.floor((hi - lo) / (2 * SECOND)) * SECOND;
    if (offsetAt(timeZone, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

function nextIn(values: readonly number[], v: number): number | undefined {
  return values.find((x) => x >= v);
}

function prevIn(values: readonly number[], v: number): number | undefined {
  return values.findLast((x) => x <= v);
}

/** wall times are ms with the calendar fields read as UTC, so calendar arithmetic needs no zone */
function wallParts(wall: number): [number, number, number, number, number, number] {
  const t = new Date(wall);
  return [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()];
}

/** the first matching wall time at or after `from`, or null past `until` */
function nextWallMatch(f: CronFields, from: number, until: number): number | null {
  let [y, mo, d, h, mi, s] = wallParts(from);
  for (;;) {
    if (Date.UTC(y, mo - 1, d) > until) return null;
    const m = nextIn(f.month, mo);
    if (m === undefined) {
      [y, mo, d, h, mi, s] = [y + 1, 1, 1, 0, 0, 0];
      continue;
    }
    if (m !== mo) [mo, d, h, mi, s] = [m, 1, 0, 0, 0];
    if (d > daysIn(y, mo)) {
      [mo, d, h, mi, s] = [mo + 1, 1, 0, 0, 0];
      continue;
    }
    const hh = dayMatches(f, y, mo, d) ? nextIn(f.hour, h) : undefined;
    if (hh === undefined) {
      [d, h, mi, s] = [d + 1, 0, 0, 0];
      continue;
    }
    if (hh !== h) [h, mi, s] = [hh, 0, 0];
    const mm = nextIn(f.minute, mi);
    if (mm === undefined) {
      [h, mi, s] = [h + 1, 0, 0];
      continue;
    }
    if (mm !== mi) [mi, s] = [mm, 0];
    const ss = nextIn(f.second, s);
    if (ss !== undefined) return Date.UTC(y, mo - 1, d, h, mi, ss);
    [mi, s] = [mi + 1, 0];
  }
}

/** the last matching wall time at or before `from`, or null before `floor` */
function prevWallMatch(f: CronFields, from: number, floor: number): number | null {
  let [y, mo, d, h, mi, s] = wallParts(from);
  for (;;) {
    if (Date.UTC(y, mo - 1, d + 1) <= floor) return null;
    const m = prevIn(f.month, mo);
    if (m === undefined) {
      [y, mo, d, h, mi, s] = [y - 1, 12, 31, 23, 59, 59];
      continue;
    }
    if (m !== mo) [mo, d, h, mi, s] = [m, daysIn(y, m), 23, 59, 59];
    if (d < 1) {
      // month 0 is picked up above as December of the year before
      [mo, h, mi, s] = [mo - 1, 23, 59, 59];
      d = mo >= 1 ? daysIn(y, mo) : 31;
      continue;
    }
    const hh = dayMatches(f, y, mo, d) ? prevIn(f.hour, h) : undefined;
    if (hh === undefined) {
      [d, h, mi, s] = [d - 1, 23, 59, 59];
      continue;
    }
    if (hh !== h) [h, mi, s] = [hh, 59, 59];
    const mm = prevIn(f.minute, mi);
    if (mm === undefined) {
      [h, mi, s] = [h - 1, 59, 59];
      continue;
    }
    if (mm !== mi) [mi, s] = [mm, 59];
    const ss = prevIn(f.second, s);
    if (ss !== undefined) return Date.UTC(y, mo - 1, d, h, mi, ss);
    [mi, s] = [mi - 1, 59];
  }
}

interface Schedule {
  fields: CronFields;
  timeZone: string;
  /** every hour allowed: due by the real passage of time, repeated wall times included */
  realTime: boolean;
}

function scheduleOf(fields: CronFields, timeZone: string): Schedule {
  return { fields, timeZone, realTime: fields.hour.length === 24 };
}

/**
 * For fixed hours, the wall time below which wall times in effect at `instant` are repeats of
 * ones already passed before a recent fall-back; null when no fall-back is that recent.
 */
function repeatedBelow(s: Schedule, instant: number, offset: number): { transition: number; wall: number } | null {
  const back = instant - REPEAT_LOOKBACK;
  const earlier = offsetAt(s.timeZone, back);
  if (earlier <= offset) return null;
  const transition = transitionIn(s.timeZone, back, instant, true);
  return { transition, wall: transition + offsetAt(s.timeZone, transition - SECOND) };
}

/** the first due instant strictly after `after`; may return one past `until`, or null */
function dueAfter(s: Schedule, after: number, until: number): number | null {
  let t = Math.floor(after / SECOND) * SECOND + SECOND;
  while (t <= until) {
    const offset = offsetAt(s.timeZone, t);
    let low = t + offset;
    if (!s.realTime) {
      // when t itself ends a spring-forward gap, the gap's wall times are still due, at t
      low = Math.min(low, t + offsetAt(s.timeZone, t - SECOND));
      low = Math.max(low, repeatedBelow(s, t, offset)?.wall ?? low);
    }
    const wall = nextWallMatch(s.fields, low, until + MAX_OFFSET);
    if (wall === null) return null;
    if (wall < t + offset) return t;
    const candidate = wall - offset;
    if (offsetAt(s.timeZone, candidate) === offset) {
      // the same offset at both ends can hide a whole summer between them (a fall-back on the
      // candidate's day repeats its wall time): look again from close by
      if (!s.realTime && candidate - t > DAY) {
        t = candidate - DAY;
        continue;
      }
      return candidate;
    }
    // the offset changed before the candidate: resume from the transition with the new offset
    const transition = transitionIn(s.timeZone, t, candidate, false);
    const next = offsetAt(s.timeZone, transition);
    // fixed hours: a match inside the skipped wall times fires when the gap ends
    if (!s.realTime && next > offset && wall < transition + next) return transition;
    t = transition;
  }
  return null;
}

/** the last due instant at or before `atOrBefore`, or null when none is after `floor` */
function dueAtOrBefore(s: Schedule, atOrBefore: number, floor: number): number | null {
  let t = Math.floor(atOrBefore / SECOND) * SECOND;
  while (t > floor) {
    const offset = offsetAt(s.timeZone, t);
    const wall = prevWallMatch(s.fields, t + offset, floor - MAX_OFFSET);
    if (wall === null) return null;
    const candidate = wall - offset;
    const candidateOffset = offsetAt(s.timeZone, candidate);
    if (candidateOffset === offset) {
      const repeat = s.realTime ? null : repeatedBelow(s, candidate, offset);
      if (repeat === null || wall >= repeat.wall) return candidate;
      // a repeat of a wall time that first occurred before the fall-back: look there
      t = repeat.transition - SECOND;
      continue;
    }
    // t's offset period starts after the candidate
    const start = transitionIn(s.timeZone, candidate, t, true);
    const before = offsetAt(s.timeZone, start - SECOND);
    // fixed hours: a match inside the skipped wall times fired when the gap ended
    if (!s.realTime && before < offset && wall >= start + before) return start;
    t = start - SECOND;
  }
  return null;
}

/** the first due instant strictly after `after`, or null when none within ~5 years (e.g. Feb 30) */
export function nextDue(fields: CronFields, timeZone: string, after: Date): Date | null {
  const from = after.getTime();
  if (!Number.isFinite(from)) return null;
  const until = from + HORIZON;
  const due = dueAfter(scheduleOf(fields, timeZone), from, until);
  return due === null || due > until ? null : new Date(due);
}

/** due instants in (from, to], oldest first, at most `limit` of them */
export function dueBetween(fields: CronFields, timeZone: string, from: Date, to: Date, limit: number): Date[] {
  const schedule = scheduleOf(fields, timeZone);
  const end = to.getTime();
  const out: Date[] = [];
  let cursor = from.getTime();
  if (!Number.isFinite(cursor) || !Number.isFinite(end)) return out;
  while (out.length < limit) {
    const due = dueAfter(schedule, cursor, end);
    if (due === null || due > end) break;
    out.push(new Date(due));
    cursor = due;
  }
  return out;
}

/**
 * The last due instant in (from, to], or null: catch-up after downtime needs only the latest
 * missed run, so this searches backwards from `to` instead of enumerating the whole range.
 */
export function lastDueBetween(fields: CronFields, timeZone: string, from: Date, to: Date): Date | null {
  const lo = from.getTime();
  const hi = to.getTime();
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi <= lo) return null;
  const due = dueAtOrBefore(scheduleOf(fields, timeZone), hi, lo);
  return due === null || due <= lo ? null : new Date(due);
}
