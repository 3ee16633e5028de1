/**
 * Cron expressions of schedule triggers (SPEC §4.5): 5 fields (minute hour day-of-month month
 * day-of-week) or 6 with seconds first. Each field is a comma list of `*`, `n`, `a-b`, `*\/n`,
 * `a-b/n` or `n/s` (from n every s); months and weekdays also by English three-letter names.
 * Day-of-week 7 is Sunday, like 0. The day fields also take the Quartz forms that Spring,
 * croner and cron-parser read, since schedules are often copied from those: `?` (any, alone),
 * `L` (last day of the month), `nW` / `LW` (the weekday nearest day n / the last weekday) and,
 * for weekdays, `nL` (the last one of the month) and `n#k` (the k-th one). The parsed form lists
 * the allowed values of each field, so the scheduler and validation share one grammar.
 */
export interface CronFields {
  second: number[];
  minute: number[];
  hour: number[];
  dayOfMonth: number[];
  month: number[];
  /** 0 = Sunday; 7 is folded into 0 */
  dayOfWeek: number[];
  /** the day fields' Quartz forms, matched by `dayMatches` */
  daySpecials: DaySpecials;
  /** whether the day fields were `*`: cron's OR rule applies only when both are restricted */
  dayOfMonthAny: boolean;
  dayOfWeekAny: boolean;
}

export interface DaySpecials {
  /** `L` in the day of month */
  lastDayOfMonth: boolean;
  /** `LW` */
  lastWeekdayOfMonth: boolean;
  /** n of each `nW` */
  nearestWeekday: number[];
  /** weekday of each `nL` */
  lastOfMonth: number[];
  /** each `n#k` */
  nth: { day: number; nth: number }[];
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const SPECS: readonly FieldSpec[] = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 7, names: DAYS },
];

export type CronParse = { ok: true; fields: CronFields } | { ok: false; message: string };

class CronFieldError extends Error {}

function atom(text: string, spec: FieldSpec): number {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n < spec.min || n > spec.max) throw new CronFieldError(`${spec.name} value ${n} is outside ${spec.min}-${spec.max}`);
    return n;
  }
  const index = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  if (index < 0) throw new CronFieldError(`${spec.name}: "${text}" is not a number${spec.names ? ' or name' : ''}`);
  return spec.name === 'month' ? index + 1 : index;
}

function part(text: string, spec: FieldSpec, into: Set<number>): void {
  const m = /^([^/]+)(?:\/(\d+))?$/.exec(text);
  if (!m) throw new CronFieldError(`${spec.name}: "${text}" is not valid`);
  const [, range = '', stepText] = m;
  const step = stepText === undefined ? 1 : Number(stepText);
  if (step < 1) throw new CronFieldError(`${spec.name}: step must be at least 1`);
  let from: number;
  let to: number;
  if (range === '*') {
    [from, to] = [spec.min, spec.max];
  } else if (range.includes('-')) {
    const [a = '', b = '', ...extra] = range.split('-');
    if (extra.length > 0) throw new CronFieldError(`${spec.name}: "${range}" is not a range`);
    [from, to] = [atom(a, spec), atom(b, spec)];
    if (from > to) throw new CronFieldError(`${spec.name}: range ${range} goes backwards`);
  } else {
    from = atom(range, spec);
    to = stepText === undefined ? from : spec.max;
  }
  for (let v = from; v <= to; v += step) into.add(v);
}

const DAY_OF_MONTH = SPECS[3] as FieldSpec;
const DAY_OF_WEEK = SPECS[5] as FieldSpec;

/** a Quartz day form (`L`, `LW`, `15W`, `5L`, `FRI#2`) added to `into`; false for any other text */
function daySpecial(text: string, spec: FieldSpec, into: DaySpecials): boolean {
  const upper = text.toUpperCase();
  if (spec === DAY_OF_MONTH) {
    if (upper === 'L') into.lastDayOfMonth = true;
    else if (upper === 'LW') into.lastWeekdayOfMonth = true;
    else if (/^\d+W$/.test(upper)) into.nearestWeekday.push(atom(upper.slice(0, -1), spec));
    // Quartz's offset from the month's end: not supported, said so rather than "not a number"
    else if (/^L-\d+$/.test(upper)) throw new CronFieldError(`day of month: "${text}" (days before the last) is not supported; use L, LW or a day number`);
    else return false;
    return true;
  }
  if (spec !== DAY_OF_WEEK) return false;
  // `L` alone means Saturday in Quartz's 1-7 numbering and is read otherwise elsewhere: refused
  if (upper === 'L') throw new CronFieldError('day of week: "L" alone is ambiguous; use SAT, or nL for the last weekday n of the month');
  const last = /^(\w+)L$/.exec(upper);
  if (last) {
    into.lastOfMonth.push(atom(last[1] ?? '', spec) % 7);
    return true;
  }
  const nth = /^(\w+)#(\d+)$/.exec(upper);
  if (!nth) return false;
  const k = Number(nth[2]);
  if (k < 1 || k > 5) throw new CronFieldError(`day of week: "${text}": the occurrence after # is 1-5`);
  into.nth.push({ day: atom(nth[1] ?? '', spec) % 7, nth: k });
  return true;
}

function field(text: string, spec: FieldSpec, specials: DaySpecials): number[] {
  const values = new Set<number>();
  // `?` is Quartz's "no specific value" for the day field the other one decides: like `*`
  if (text === '?' && (spec === DAY_OF_MONTH || spec === DAY_OF_WEEK)) text = '*';
  for (const piece of text.split(',')) {
    if (!daySpecial(piece, spec, specials)) part(piece, spec, values);
  }
  if (spec.name === 'day of week' && values.delete(7)) values.add(0);
  return [...values].sort((a, b) => a - b);
}

/** The usual nicknames (Vixie cron); `@reboot` has no due times, so it is not one of them. */
const ALIASES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

export function parseCron(expression: string): CronParse {
  const trimmed = expression.trim();
  const parts = (ALIASES[trimmed.toLowerCase()] ?? trimmed).split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    return { ok: false, message: `a cron expression has 5 fields (or 6 with seconds) or is one of ${Object.keys(ALIASES).join(', ')}; got ${trimmed === '' ? 0 : parts.length} fields` };
  }
  const texts = parts.length === 5 ? ['0', ...parts] : parts;
  try {
    const daySpecials: DaySpecials = { lastDayOfMonth: false, lastWeekdayOfMonth: false, nearestWeekday: [], lastOfMonth: [], nth: [] };
    const [second, minute, hour, dayOfMonth, month, dayOfWeek] = SPECS.map((spec, i) => field(texts[i] ?? '', spec, daySpecials)) as [
      number[], number[], number[], number[], number[], number[],
    ];
    // as Vixie cron: a day field starting with `*` (`*`, `*/1`, `*/2`), or Quartz's `?`, leaves the choice to the other
    const dayOfMonthAny = /^[*?]/.test(texts[3] ?? '');
    const dayOfWeekAny = /^[*?]/.test(texts[5] ?? '');
    return { ok: true, fields: { second, minute, hour, dayOfMonth, month, dayOfWeek, daySpecials, dayOfMonthAny, dayOfWeekAny } };
  } catch (err) {
    if (err instanceof CronFieldError) return { ok: false, message: err.message };
    throw err;
  }
}

/** The number of days of month `mo` (1-12) of year `y`. */
export function daysIn(y: number, mo: number): number {
  return new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

function weekday(y: number, mo: number, d: number): number {
  return new Date(Date.UTC(y, mo - 1, d)).getUTCDay();
}

/** Quartz's `nW`: the Monday-Friday day nearest day n, never leaving the month; null when n is past its end */
function nearestWeekdayTo(y: number, mo: number, n: number): number | null {
  const last = daysIn(y, mo);
  if (n > last) return null;
  const wd = weekday(y, mo, n);
  if (wd === 6) return n === 1 ? 3 : n - 1;
  if (wd === 0) return n === last ? n - 2 : n + 1;
  return n;
}

function dayOfMonthMatches(f: CronFields, y: number, mo: number, d: number): boolean {
  const s = f.daySpecials;
  if (f.dayOfMonth.includes(d)) return true;
  const last = daysIn(y, mo);
  if (s.lastDayOfMonth && d === last) return true;
  if (s.lastWeekdayOfMonth && d === nearestWeekdayTo(y, mo, last)) return true;
  return s.nearestWeekday.some((n) => nearestWeekdayTo(y, mo, n) === d);
}

function dayOfWeekMatches(f: CronFields, y: number, mo: number, d: number): boolean {
  const wd = weekday(y, mo, d);
  if (f.dayOfWeek.includes(wd)) return true;
  const s = f.daySpecials;
  if (s.lastOfMonth.includes(wd) && d + 7 > daysIn(y, mo)) return true;
  return s.nth.some((x) => x.day === wd && Math.ceil(d / 7) === x.nth);
}

/**
 * Whether a calendar day matches the day fields. When both are restricted a day matches either
 * (cron's OR rule); when one is unrestricted the other decides.
 */
export function dayMatches(f: CronFields, y: number, mo: number, d: number): boolean {
  const dom = dayOfMonthMatches(f, y, mo, d);
  const dow = dayOfWeekMatches(f, y, mo, d);
  return f.dayOfMonthAny || f.dayOfWeekAny ? dom && dow : dom || dow;
}

/** Whether the IANA time zone is known to this runtime's Intl data. */
export function isValidTimeZone(timeZone: string): boolean {
  if (timeZone.trim() === '') return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
    return true;
  } catch {
    return false;
  }
}
