/**
 * Cron expressions of schedule triggers (SPEC §4.5), read by croner: 5 fields (minute hour
 * day-of-month month day-of-week) or 6 with seconds first; `*`, `n`, `a-b`, `*\/n`, `a-b/n`,
 * `n/s` (from n every s) and comma lists; English month and weekday names; day-of-week 7 is
 * Sunday; the Quartz day forms `?`, `L`, `LW`, `nW`, `nL` and `n#k`; the usual nicknames.
 *
 * croner reads a few things otherwise than docs/http.md says, so this is a thin adapter around
 * it rather than croner as it comes (each difference was found by a test of the documented
 * behaviour, test/model/cron*.test.ts):
 * - `?` is croner's "now" in any field; we take it only alone in a day field (Quartz's "any").
 * - A day field starting with `*` (`*\/2`) leaves the choice to the other, as in Vixie cron;
 *   croner ORs such a field with the other one. `domAndDow` carries our rule to croner.
 * - Daylight saving (docs/http.md): a schedule with every hour allowed follows real time, any
 *   other one fires a wall time once (first occurrence; a gap's times at the gap's end).
 *   croner's own rule looks at wildcards in all three time fields, so `toCronerPattern` writes
 *   the time fields so that croner's "no-wildcard" rule says what ours says.
 * - Its messages name fields by its own offsets ("day: -1" for day 0); `describe` restates them.
 * - `L` alone in the day of week and `L-n` in the day of month are refused with our own reasons.
 */
import { CronPattern } from 'croner';

export interface CronFields {
  /** the six fields as croner is to read them: see toCronerPattern */
  pattern: string;
  /** both day fields must match (one of them starts with `*` or `?`), else either may */
  domAndDow: boolean;
  /** the plain values each field allows (the Quartz day forms are in `pattern` only) */
  second: number[];
  minute: number[];
  hour: number[];
  dayOfMonth: number[];
  month: number[];
  /** 0 = Sunday; 7 is folded into 0 */
  dayOfWeek: number[];
  /** whether the day field was `*`, `*\/n` or `?`: cron's OR rule applies only when neither was */
  dayOfMonthAny: boolean;
  dayOfWeekAny: boolean;
}

export type CronParse = { ok: true; fields: CronFields } | { ok: false; message: string };

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

const FIELD_NAMES = ['second', 'minute', 'hour', 'day of month', 'month', 'day of week'];

export function parseCron(expression: string): CronParse {
  const trimmed = expression.trim();
  const parts = (ALIASES[trimmed.toLowerCase()] ?? trimmed).split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    return { ok: false, message: `a cron expression has 5 fields (or 6 with seconds) or is one of ${Object.keys(ALIASES).join(', ')}; got ${trimmed === '' ? 0 : parts.length} fields` };
  }
  const texts = parts.length === 5 ? ['0', ...parts] : parts;
  const refused = ownRules(texts);
  if (refused !== undefined) return { ok: false, message: refused };
  let parsed: CronPattern;
  try {
    parsed = new CronPattern(texts.join(' '), undefined, { mode: '6-part', sloppyRanges: true });
  } catch (err) {
    return { ok: false, message: describe(err) };
  }
  const [, , , dom = '', , dow = ''] = texts;
  const dayOfMonthAny = /^[*?]/.test(dom);
  const dayOfWeekAny = /^[*?]/.test(dow);
  const values = {
    second: set(parsed.second),
    minute: set(parsed.minute),
    hour: set(parsed.hour),
    dayOfMonth: set(parsed.day).map((d) => d + 1),
    month: set(parsed.month).map((m) => m + 1),
    dayOfWeek: set(parsed.dayOfWeek),
  };
  return { ok: true, fields: { pattern: toCronerPattern(texts, values), domAndDow: dayOfMonthAny || dayOfWeekAny, ...values, dayOfMonthAny, dayOfWeekAny } };
}

/** the indexes croner marked in a field */
function set(flags: readonly number[]): number[] {
  return flags.flatMap((on, i) => (on ? [i] : []));
}

/**
 * The fields for croner, with croner's "no-wildcard" DST rule (fixed time when the second,
 * minute and hour fields have no `*` or `/`) made to say ours (fixed time unless every hour is
 * allowed): every hour allowed is written `*`; otherwise the three time fields are written as
 * the lists of values they allow. `?` becomes `*`, as croner reads it in a day field.
 */
function toCronerPattern(texts: readonly string[], v: { second: number[]; minute: number[]; hour: number[] }): string {
  const [second = '', minute = '', , dom = '', month = '', dow = ''] = texts;
  const days = [dom === '?' ? '*' : dom, month, dow === '?' ? '*' : dow];
  if (v.hour.length === 24) return [second, minute, '*', ...days].join(' ');
  return [v.second.join(','), v.minute.join(','), v.hour.join(','), ...days].join(' ');
}

/** what our grammar refuses although croner would read it, with our reasons */
function ownRules(texts: readonly string[]): string | undefined {
  for (const [i, text] of texts.entries()) {
    const name = FIELD_NAMES[i] ?? '';
    const day = i === 3 || i === 5;
    // Quartz's "no specific value" for the day field the other one decides; elsewhere croner reads `?` as "now"
    if (text.includes('?') && !(day && text === '?')) return `${name}: "?" stands alone, and only in a day field`;
    const piece = text.split(',').find((p) => p.startsWith('/') || p.startsWith('+'));
    if (piece !== undefined) return `${name}: "${piece}" is not valid`;
  }
  const dom = (texts[3] ?? '').toUpperCase();
  const dow = (texts[5] ?? '').toUpperCase();
  // Quartz's offset from the month's end: said so rather than a syntax error
  if (dom.split(',').some((p) => /^L-\d+$/.test(p))) return `day of month: "${texts[3] ?? ''}" (days before the last) is not supported; use L, LW or a day number`;
  // `L` alone means Saturday in Quartz's 1-7 numbering and is read otherwise elsewhere: refused
  if (dow.split(',').includes('L')) return 'day of week: "L" alone is ambiguous; use SAT, or nL for the last weekday n of the month';
  return undefined;
}

/** croner's message, with its field names and 0-based day and month values in our terms */
function describe(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  const text = raw.replace(/^CronPattern: /, '');
  const value = /^Invalid value for (\w+): (-?\d+)/.exec(text);
  if (value === null) return text;
  const [, part = '', n = '0'] = value;
  const shown: Record<string, [string, number, string]> = {
    second: ['second', 0, '0-59'],
    minute: ['minute', 0, '0-59'],
    hour: ['hour', 0, '0-23'],
    day: ['day of month', 1, '1-31'],
    nearestWeekdays: ['day of month (nW)', 1, '1-31'],
    month: ['month', 1, '1-12'],
    dayOfWeek: ['day of week', 0, '0-7'],
  };
  const known = shown[part];
  return known === undefined ? text : `${known[0]} value ${Number(n) + known[1]} is outside ${known[2]}`;
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
