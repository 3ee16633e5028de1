/**
 * Due times of a cron schedule (SPEC §4.5) in an IANA time zone, computed by croner. A schedule
 * matches wall-clock time in the zone; daylight-saving transitions follow the classic cron
 * convention (docs/http.md):
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
 * croner's fixed-time and interval jobs are these two cases once cron.ts has written the
 * pattern for its "no-wildcard" rule. Due instants are whole seconds and strictly increasing.
 */
import { Cron } from 'croner';
import type { CronFields } from './cron.js';

const DAY = 86_400_000;
/** past ~5 years a schedule is taken as never due: `0 0 30 2 *`, but also leap days (4 years) */
const HORIZON = 5 * 366 * DAY;

interface Schedule {
  cron: Cron;
  /** the last answer of `after`: every instant in [after, due) has the same next due time */
  last?: { after: number; due: Date };
}

/** parsed schedules by pattern and zone: the scheduler asks for the same few every second */
const schedules = new Map<string, Schedule>();
const MAX_CACHED = 1000;

function scheduleOf(fields: CronFields, timeZone: string): Schedule {
  const key = `${fields.pattern}\u0000${String(fields.domAndDow)}\u0000${timeZone}`;
  let schedule = schedules.get(key);
  if (schedule === undefined) {
    // paused and without a function: croner only computes, it never sets a timer
    const cron = new Cron(fields.pattern, { timezone: timeZone, paused: true, mode: '6-part', sloppyRanges: true, domAndDow: fields.domAndDow, fixedTimeRule: 'no-wildcard' });
    schedule = { cron };
    if (schedules.size >= MAX_CACHED) schedules.clear();
    schedules.set(key, schedule);
  }
  return schedule;
}

/**
 * croner's next run strictly after `after`. The scheduler asks each schedule every second from
 * its last due time, and croner's search costs a few hundred microseconds; the answer holds for
 * any instant up to the due time it found, so it is kept.
 */
function after(schedule: Schedule, instant: Date): Date | null {
  const t = instant.getTime();
  const last = schedule.last;
  if (last !== undefined && last.after <= t && t < last.due.getTime()) return last.due;
  const due = schedule.cron.nextRun(instant);
  if (due !== null) schedule.last = { after: t, due };
  return due;
}

/** the first due instant strictly after `after`, or null when none within ~5 years (e.g. Feb 30) */
export function nextDue(fields: CronFields, timeZone: string, afterInstant: Date): Date | null {
  const from = afterInstant.getTime();
  if (!Number.isFinite(from)) return null;
  const due = after(scheduleOf(fields, timeZone), new Date(from));
  return due === null || due.getTime() > from + HORIZON ? null : new Date(due);
}

/** due instants in (from, to], oldest first, at most `limit` of them */
export function dueBetween(fields: CronFields, timeZone: string, from: Date, to: Date, limit: number): Date[] {
  const end = to.getTime();
  const out: Date[] = [];
  if (!Number.isFinite(from.getTime()) || !Number.isFinite(end) || from.getTime() >= end) return out;
  const schedule = scheduleOf(fields, timeZone);
  let cursor = from;
  while (out.length < limit) {
    const due = after(schedule, cursor);
    if (due === null || due.getTime() > end) break;
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
  // croner counts a run earlier in the reference's second: 1 ms into `to`'s second includes it
  const [due] = scheduleOf(fields, timeZone).cron.previousRuns(1, new Date(Math.floor(hi / 1000) * 1000 + 1));
  return due === undefined || due.getTime() <= lo ? null : due;
}
