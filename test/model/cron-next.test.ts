import { expect } from 'chai';
import { parseCron, type CronFields } from '../../src/model/cron.js';
import { dueBetween, lastDueBetween, nextDue } from '../../src/model/cron-next.js';

function fields(expr: string): CronFields {
  const r = parseCron(expr);
  if (!r.ok) throw new Error(r.message);
  return r.fields;
}

function next(expr: string, zone: string, after: string): string | null {
  return nextDue(fields(expr), zone, new Date(after))?.toISOString() ?? null;
}

function between(expr: string, zone: string, from: string, to: string, limit = 10_000): string[] {
  return dueBetween(fields(expr), zone, new Date(from), new Date(to), limit).map((d) => d.toISOString());
}

function last(expr: string, zone: string, from: string, to: string): string | null {
  return lastDueBetween(fields(expr), zone, new Date(from), new Date(to))?.toISOString() ?? null;
}

const MINUTE = 60_000;

/**
 * An independent oracle for minute schedules: walks every minute and applies the DST rules
 * literally, remembering the highest wall time seen so repeats and gaps show up as they happen.
 */
function bruteForce(expr: string, zone: string, from: string, to: string): string[] {
  const f = fields(expr);
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric',
  });
  const wallOf = (ms: number): number => {
    const p: Record<string, number> = {};
    for (const part of fmt.formatToParts(ms)) p[part.type] = Number(part.value);
    return Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0);
  };
  const matches = (wall: number): boolean => {
    const d = new Date(wall);
    const dom = f.dayOfMonth.includes(d.getUTCDate());
    const dow = f.dayOfWeek.includes(d.getUTCDay());
    const day = f.dayOfMonthAny || f.dayOfWeekAny ? dom && dow : dom || dow;
    return day && f.month.includes(d.getUTCMonth() + 1) && f.hour.includes(d.getUTCHours()) && f.minute.includes(d.getUTCMinutes());
  };
  const realTime = f.hour.length === 24;
  const start = Date.parse(from);
  let highest = wallOf(start - 6 * 60 * MINUTE);
  for (let t = start - 6 * 60 * MINUTE; t <= start; t += MINUTE) highest = Math.max(highest, wallOf(t));
  const out: string[] = [];
  for (let t = start + MINUTE; t <= Date.parse(to); t += MINUTE) {
    const wall = wallOf(t);
    let due = matches(wall) && (realTime || wall > highest);
    for (let skipped = highest + MINUTE; !realTime && !due && skipped < wall; skipped += MINUTE) due = matches(skipped);
    if (due) out.push(new Date(t).toISOString());
    highest = Math.max(highest, wall);
  }
  return out;
}

describe('model/cron-next', () => {
  describe('in UTC', () => {
    it('steps */5 minutes, strictly after the given instant', () => {
      expect(next('*/5 * * * *', 'UTC', '2025-01-01T00:02:30Z')).to.equal('2025-01-01T00:05:00.000Z');
      expect(next('*/5 * * * *', 'UTC', '2025-01-01T00:05:00Z')).to.equal('2025-01-01T00:10:00.000Z');
      expect(next('*/5 * * * *', 'UTC', '2025-01-01T00:04:59.999Z')).to.equal('2025-01-01T00:05:00.000Z');
    });

    it('skips the weekend for weekdays at 9', () => {
      // 2025-01-03 is a Friday
      expect(next('0 9 * * 1-5', 'UTC', '2025-01-03T09:00:00Z')).to.equal('2025-01-06T09:00:00.000Z');
      expect(next('0 9 * * 1-5', 'UTC', '2025-01-03T08:59:59Z')).to.equal('2025-01-03T09:00:00.000Z');
    });

    it('reads seconds in 6-field expressions', () => {
      expect(next('*/10 * * * * *', 'UTC', '2025-01-01T00:00:05Z')).to.equal('2025-01-01T00:00:10.000Z');
      expect(between('*/10 * * * * *', 'UTC', '2025-01-01T00:00:00Z', '2025-01-01T00:01:00Z')).to.deep.equal(
        ['10', '20', '30', '40', '50'].map((s) => `2025-01-01T00:00:${s}.000Z`).concat('2025-01-01T00:01:00.000Z'),
      );
    });

    it('finds the next Feb 29 and skips months without a 31st', () => {
      expect(next('0 0 29 2 *', 'UTC', '2025-01-01T00:00:00Z')).to.equal('2028-02-29T00:00:00.000Z');
      expect(next('0 0 29 2 *', 'UTC', '2024-02-29T00:00:00Z')).to.equal('2028-02-29T00:00:00.000Z');
      expect(next('0 0 31 * *', 'UTC', '2025-01-31T00:00:00Z')).to.equal('2025-03-31T00:00:00.000Z');
      expect(next('0 0 31 * *', 'UTC', '2025-03-31T00:00:00Z')).to.equal('2025-05-31T00:00:00.000Z');
      expect(next('59 23 31 12 *', 'UTC', '2025-06-01T00:00:00Z')).to.equal('2025-12-31T23:59:00.000Z');
    });

    it('fires on the 13th or on Fridays when both day fields are restricted', () => {
      // July 2025: Fridays are the 4th, 11th, 18th and 25th; the 13th is a Sunday
      expect(between('0 0 13 * 5', 'UTC', '2025-07-01T00:00:00Z', '2025-07-31T23:59:59Z')).to.deep.equal(
        ['04', '11', '13', '18', '25'].map((d) => `2025-07-${d}T00:00:00.000Z`),
      );
      // with day-of-month `*`, only Fridays count
      expect(between('0 0 * * 5', 'UTC', '2025-07-01T00:00:00Z', '2025-07-31T23:59:59Z')).to.have.length(4);
    });

    it('a day field starting with * (*/1, */2) leaves the choice to the other, as in Vixie cron (croner would OR them)', () => {
      // 2025-07-05 and 06 are a Saturday and a Sunday
      expect(between('0 9 */1 * 1-5', 'UTC', '2025-07-01T00:00:00Z', '2025-07-07T23:59:59Z').map((d) => d.slice(8, 10))).to.deep.equal(['01', '02', '03', '04', '07']);
      expect(between('0 9 */2 * 1-5', 'UTC', '2025-07-01T00:00:00Z', '2025-07-10T23:59:59Z').map((d) => d.slice(8, 10))).to.deep.equal(['01', '03', '07', '09']);
      expect(between('0 9 */10 * *', 'UTC', '2025-07-01T00:00:00Z', '2025-07-31T23:59:59Z').map((d) => d.slice(8, 10))).to.deep.equal(['01', '11', '21', '31']);
    });

    it('finds the last day, last Friday and second Monday of each month, and back from a bound', () => {
      expect(between('0 0 L * *', 'UTC', '2026-01-01T00:00:00Z', '2026-04-01T00:00:00Z')).to.deep.equal(
        ['2026-01-31', '2026-02-28', '2026-03-31'].map((d) => `${d}T00:00:00.000Z`),
      );
      expect(between('0 18 * * 5L', 'Europe/Berlin', '2026-02-01T00:00:00Z', '2026-04-01T00:00:00Z')).to.deep.equal(
        ['2026-02-27T17:00:00.000Z', '2026-03-27T17:00:00.000Z'],
      );
      expect(next('0 9 ? * MON#2', 'UTC', '2026-03-01T00:00:00Z')).to.equal('2026-03-09T09:00:00.000Z');
      expect(last('0 0 LW * *', 'UTC', '2026-01-01T00:00:00Z', '2026-06-15T00:00:00Z')).to.equal('2026-05-29T00:00:00.000Z');
    });

    // the bounds below only catch a search that walks minute by minute for years (seconds on
    // any machine); speed itself is measured by benchmarks, never here
    it('returns null for a date that never exists, without walking the years', () => {
      const started = performance.now();
      expect(next('0 0 30 2 *', 'UTC', '2025-01-01T00:00:00Z')).to.equal(null);
      expect(next('0 0 31 4 *', 'Europe/Paris', '2025-01-01T00:00:00Z')).to.equal(null);
      expect(last('0 0 30 2 *', 'UTC', '2020-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).to.equal(null);
      expect(performance.now() - started).to.be.below(5000);
    });

    it('finds a yearly schedule without walking the year', () => {
      expect(next('0 0 1 1 *', 'America/New_York', '2025-01-01T05:00:00Z')).to.equal('2026-01-01T05:00:00.000Z');
      const started = performance.now();
      for (let i = 0; i < 100; i += 1) nextDue(fields('0 0 1 1 *'), 'Europe/Paris', new Date(Date.UTC(2025, 0, 2 + i)));
      expect((performance.now() - started) / 100).to.be.below(50);
    });
  });

  describe('dueBetween', () => {
    it('covers (from, to]: excludes from, includes to', () => {
      expect(between('0 * * * *', 'UTC', '2025-01-01T00:00:00Z', '2025-01-01T03:00:00Z')).to.deep.equal([
        '2025-01-01T01:00:00.000Z', '2025-01-01T02:00:00.000Z', '2025-01-01T03:00:00.000Z',
      ]);
      expect(between('0 * * * *', 'UTC', '2025-01-01T03:00:00Z', '2025-01-01T03:00:00Z')).to.deep.equal([]);
      expect(between('0 * * * *', 'UTC', '2025-01-01T04:00:00Z', '2025-01-01T03:00:00Z')).to.deep.equal([]);
    });

    it('stops at the limit, oldest first', () => {
      expect(between('* * * * *', 'UTC', '2025-01-01T00:00:00Z', '2025-01-02T00:00:00Z', 3)).to.deep.equal([
        '2025-01-01T00:01:00.000Z', '2025-01-01T00:02:00.000Z', '2025-01-01T00:03:00.000Z',
      ]);
      expect(between('* * * * *', 'UTC', '2025-01-01T00:00:00Z', '2025-01-02T00:00:00Z', 0)).to.deep.equal([]);
    });

    it('counts 1440 minutes in a day, 1380 and 1500 on Paris DST days', () => {
      expect(between('* * * * *', 'UTC', '2025-01-01T00:00:00Z', '2025-01-02T00:00:00Z')).to.have.length(1440);
      // local midnight to midnight: CET is UTC+1, CEST UTC+2
      expect(between('* * * * *', 'Europe/Paris', '2025-03-29T23:00:00Z', '2025-03-30T22:00:00Z')).to.have.length(1380);
      expect(between('* * * * *', 'Europe/Paris', '2025-10-25T22:00:00Z', '2025-10-26T23:00:00Z')).to.have.length(1500);
    });
  });

  describe('in time zones', () => {
    it('uses a fixed offset zone without DST', () => {
      // 09:00 JST (UTC+9) is 00:00Z
      expect(next('0 9 * * *', 'Asia/Tokyo', '2024-12-31T12:00:00Z')).to.equal('2025-01-01T00:00:00.000Z');
      expect(next('0 9 * * *', 'Asia/Tokyo', '2025-01-01T00:00:00Z')).to.equal('2025-01-02T00:00:00.000Z');
    });

    it('fires a fixed time inside the New York spring gap once, when the gap ends', () => {
      // 2025-03-09: 02:00 EST (07:00Z) jumps to 03:00 EDT; 02:30 does not exist
      expect(between('30 2 * * *', 'America/New_York', '2025-03-08T00:00:00Z', '2025-03-11T00:00:00Z')).to.deep.equal([
        '2025-03-08T07:30:00.000Z', // 02:30 EST
        '2025-03-09T07:00:00.000Z', // 03:00 EDT, the first instant after the gap
        '2025-03-10T06:30:00.000Z', // 02:30 EDT
      ]);
      expect(next('30 2 * * *', 'America/New_York', '2025-03-09T06:59:59Z')).to.equal('2025-03-09T07:00:00.000Z');
      expect(next('30 2 * * *', 'America/New_York', '2025-03-09T07:00:00Z')).to.equal('2025-03-10T06:30:00.000Z');
    });

    it('collapses several gap times and the gap end into one instant', () => {
      expect(between('0,30 2,3 * * *', 'America/New_York', '2025-03-09T00:00:00Z', '2025-03-09T12:00:00Z')).to.deep.equal([
        '2025-03-09T07:00:00.000Z', // 02:00, 02:30 and 03:00 EDT
        '2025-03-09T07:30:00.000Z', // 03:30 EDT
      ]);
    });

    it('restricted hours with stepped minutes are fixed times too (croner\'s own rule would repeat them)', () => {
      // 2025-11-02: 01:00-01:59 occurs twice in New York; */20 1 fires at 01:00, 01:20, 01:40 EDT only
      expect(between('*/20 1 * * *', 'America/New_York', '2025-11-02T04:00:00Z', '2025-11-02T08:00:00Z')).to.deep.equal([
        '2025-11-02T05:00:00.000Z', '2025-11-02T05:20:00.000Z', '2025-11-02T05:40:00.000Z',
      ]);
      // every hour written as a range is still every hour: real time, so the repeated hour fires again
      expect(between('0 0-23 * * *', 'America/New_York', '2025-11-02T04:30:00Z', '2025-11-02T07:30:00Z')).to.deep.equal([
        '2025-11-02T05:00:00.000Z', '2025-11-02T06:00:00.000Z', '2025-11-02T07:00:00.000Z',
      ]);
    });

    it('fires a fixed time in the repeated New York hour only at its first occurrence', () => {
      // 2025-11-02: 02:00 EDT (06:00Z) falls back to 01:00 EST; 01:30 occurs at 05:30Z and 06:30Z
      expect(between('30 1 * * *', 'America/New_York', '2025-11-01T12:00:00Z', '2025-11-03T12:00:00Z')).to.deep.equal([
        '2025-11-02T05:30:00.000Z', // 01:30 EDT
        '2025-11-03T06:30:00.000Z', // 01:30 EST
      ]);
      expect(next('30 1 * * *', 'America/New_York', '2025-11-02T05:30:00Z')).to.equal('2025-11-03T06:30:00.000Z');
      expect(next('30 1 * * *', 'America/New_York', '2025-11-02T06:10:00Z')).to.equal('2025-11-03T06:30:00.000Z');
    });

    it('keeps wildcard-hour schedules on real time across the New York fall-back', () => {
      expect(between('0,30 * * * *', 'America/New_York', '2025-11-02T04:00:00Z', '2025-11-02T08:00:00Z')).to.deep.equal([
        '2025-11-02T04:30:00.000Z', // 00:30 EDT
        '2025-11-02T05:00:00.000Z', // 01:00 EDT
        '2025-11-02T05:30:00.000Z', // 01:30 EDT
        '2025-11-02T06:00:00.000Z', // 01:00 EST, again
        '2025-11-02T06:30:00.000Z', // 01:30 EST, again
        '2025-11-02T07:00:00.000Z', // 02:00 EST
        '2025-11-02T07:30:00.000Z', // 02:30 EST
        '2025-11-02T08:00:00.000Z', // 03:00 EST
      ]);
    });

    it('skips the New York spring gap for wildcard-hour schedules', () => {
      expect(between('0,30 * * * *', 'America/New_York', '2025-03-09T05:00:00Z', '2025-03-09T08:00:00Z')).to.deep.equal([
        '2025-03-09T05:30:00.000Z', // 00:30 EST
        '2025-03-09T06:00:00.000Z', // 01:00 EST
        '2025-03-09T06:30:00.000Z', // 01:30 EST
        '2025-03-09T07:00:00.000Z', // 03:00 EDT
        '2025-03-09T07:30:00.000Z', // 03:30 EDT
        '2025-03-09T08:00:00.000Z', // 04:00 EDT
      ]);
    });

    it('handles both Paris transitions for a fixed hour', () => {
      // 2025-03-30: 02:00 CET (01:00Z) jumps to 03:00 CEST
      expect(between('30 2 * * *', 'Europe/Paris', '2025-03-29T00:00:00Z', '2025-04-01T00:00:00Z')).to.deep.equal([
        '2025-03-29T01:30:00.000Z', // 02:30 CET
        '2025-03-30T01:00:00.000Z', // 03:00 CEST, the first instant after the gap
        '2025-03-31T00:30:00.000Z', // 02:30 CEST
      ]);
      // 2025-10-26: 03:00 CEST (01:00Z) falls back to 02:00 CET; 02:30 occurs at 00:30Z and 01:30Z
      expect(between('30 2 * * *', 'Europe/Paris', '2025-10-25T00:00:00Z', '2025-10-28T00:00:00Z')).to.deep.equal([
        '2025-10-25T00:30:00.000Z', // 02:30 CEST
        '2025-10-26T00:30:00.000Z', // 02:30 CEST, first occurrence only
        '2025-10-27T01:30:00.000Z', // 02:30 CET
      ]);
    });

    it('handles both Paris transitions for a wildcard hour', () => {
      expect(between('*/15 * * * *', 'Europe/Paris', '2025-10-26T00:00:00Z', '2025-10-26T02:00:00Z')).to.deep.equal(
        ['00:15', '00:30', '00:45', '01:00', '01:15', '01:30', '01:45', '02:00'].map((t) => `2025-10-26T${t}:00.000Z`),
      );
      // 01:45 CET (00:45Z), then 03:00 CEST (01:00Z)
      expect(between('*/15 * * * *', 'Europe/Paris', '2025-03-30T00:30:00Z', '2025-03-30T01:30:00Z')).to.deep.equal(
        ['00:45', '01:00', '01:15', '01:30'].map((t) => `2025-03-30T${t}:00.000Z`),
      );
    });

    const cases: [string, string, string][] = [
      ['America/New_York', '2025-03-08T00:00:00Z', '2025-03-10T12:00:00Z'],
      ['America/New_York', '2025-11-01T00:00:00Z', '2025-11-03T12:00:00Z'],
      ['Europe/Paris', '2025-03-29T00:00:00Z', '2025-03-31T00:00:00Z'],
      ['Europe/Paris', '2025-10-25T00:00:00Z', '2025-10-27T00:00:00Z'],
      // half-hour DST: 02:00 -> 02:30 on 2025-10-05, 02:00 -> 01:30 on 2025-04-06
      ['Australia/Lord_Howe', '2025-10-03T12:00:00Z', '2025-10-05T12:00:00Z'],
      ['Australia/Lord_Howe', '2025-04-04T12:00:00Z', '2025-04-06T12:00:00Z'],
    ];
    const schedules = ['*/7 * * * *', '30 2 * * *', '15,45 1,2 * * *', '*/20 1-3 * * *', '10 * * * 0', '40 0,1 * * *'];
    for (const [zone, from, to] of cases) {
      it(`agrees with a minute-by-minute oracle in ${zone} from ${from}`, () => {
        for (const expr of schedules) {
          const expected = bruteForce(expr, zone, from, to);
          expect(between(expr, zone, from, to), expr).to.deep.equal(expected);
          expect(last(expr, zone, from, to), expr).to.equal(expected.at(-1) ?? null);
          for (const [i, due] of expected.entries()) {
            const at = Date.parse(due);
            expect(next(expr, zone, new Date(at - 1).toISOString()), `${expr} before ${due}`).to.equal(due);
            if (i + 1 < expected.length) expect(next(expr, zone, due), `${expr} after ${due}`).to.equal(expected[i + 1]);
            expect(last(expr, zone, from, new Date(at + 30_000).toISOString()), `${expr} up to ${due}`).to.equal(due);
          }
        }
      });
    }
  });

  describe('lastDueBetween', () => {
    it('finds the last minute of 90 days of a per-minute schedule without walking them', () => {
      const started = performance.now();
      expect(last('* * * * *', 'UTC', '2025-01-01T00:00:00Z', '2025-04-01T00:00:30Z')).to.equal('2025-04-01T00:00:00.000Z');
      expect(last('* * * * *', 'America/New_York', '2025-01-01T00:00:00Z', '2025-04-01T00:00:30Z')).to.equal('2025-04-01T00:00:00.000Z');
      expect(last('*/10 * * * * *', 'Europe/Paris', '2025-01-01T00:00:00Z', '2025-04-01T00:00:35Z')).to.equal('2025-04-01T00:00:30.000Z');
      expect(performance.now() - started).to.be.below(5000);
    });

    it('respects (from, to] and sparse schedules', () => {
      expect(last('0 * * * *', 'UTC', '2025-01-01T00:00:00Z', '2025-01-01T03:00:00Z')).to.equal('2025-01-01T03:00:00.000Z');
      expect(last('0 * * * *', 'UTC', '2025-01-01T00:00:00Z', '2025-01-01T00:59:59Z')).to.equal(null);
      expect(last('0 9 * * 1-5', 'UTC', '2025-01-01T00:00:00Z', '2025-01-05T23:00:00Z')).to.equal('2025-01-03T09:00:00.000Z');
      expect(last('0 0 29 2 *', 'UTC', '2020-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).to.equal('2024-02-29T00:00:00.000Z');
    });

    it('follows the DST rules like dueBetween', () => {
      // 01:30 EST (06:30Z) repeats 01:30 EDT (05:30Z), which already fired
      expect(last('30 1 * * *', 'America/New_York', '2025-11-02T05:00:00Z', '2025-11-02T07:00:00Z')).to.equal('2025-11-02T05:30:00.000Z');
      expect(last('30 2 * * *', 'America/New_York', '2025-03-09T06:00:00Z', '2025-03-09T08:00:00Z')).to.equal('2025-03-09T07:00:00.000Z');
      expect(last('0,30 * * * *', 'America/New_York', '2025-11-02T05:00:00Z', '2025-11-02T06:45:00Z')).to.equal('2025-11-02T06:30:00.000Z');
    });
  });

  it('a fixed-hour time repeated by a fall-back fires at its first occurrence even when searched from far away', () => {
    const f = fields('30 2 31 10 *');
    // from a year before, with the same winter offset at both ends of the search
    expect(nextDue(f, 'Europe/Paris', new Date('2026-11-23T15:00:00Z'))?.toISOString()).to.equal('2027-10-31T00:30:00.000Z');
    expect(nextDue(f, 'Europe/Paris', new Date('2027-10-30T00:00:00Z'))?.toISOString()).to.equal('2027-10-31T00:30:00.000Z');
  });
});
