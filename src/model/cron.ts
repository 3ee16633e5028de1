/**
 * Cron expressions of schedule triggers (SPEC §4.5): 5 fields (minute hour day-of-month month
 * day-of-week) or 6 with seconds first. Each field is a comma list of `*`, `n`, `a-b`, `*\/n`,
 * `a-b/n` or `n/s` (from n every s); months and weekdays also by English three-letter names.
 * Day-of-week 7 is Sunday, like 0. The parsed form lists the allowed values of each field, so
 * the scheduler and validation share one grammar.
 */
export interface CronFields {
  second: number[];
  minute: number[];
  hour: number[];
  dayOfMonth: number[];
  month: number[];
  /** 0 = Sunday; 7 is folded into 0 */
  dayOfWeek: number[];
  /** whether the day fields were `*`: cron's OR rule applies only when both are restricted */
  dayOfMonthAny: boolean;
  dayOfWeekAny: boolean;
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

function field(text: string, spec: FieldSpec): number[] {
  const values = new Set<number>();
  for (const piece of text.split(',')) part(piece, spec, values);
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
    const [second, minute, hour, dayOfMonth, month, dayOfWeek] = SPECS.map((spec, i) => field(texts[i] ?? '', spec)) as [
      number[], number[], number[], number[], number[], number[],
    ];
    // as Vixie cron: a day field starting with `*` (`*`, `*/1`, `*/2`) leaves the choice to the other
    const dayOfMonthAny = (texts[3] ?? '').startsWith('*');
    const dayOfWeekAny = (texts[5] ?? '').startsWith('*');
    return { ok: true, fields: { second, minute, hour, dayOfMonth, month, dayOfWeek, dayOfMonthAny, dayOfWeekAny } };
  } catch (err) {
    if (err instanceof CronFieldError) return { ok: false, message: err.message };
    throw err;
  }
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
