import { expect } from 'chai';
import { isValidTimeZone, parseCron } from '../../src/model/cron.js';
import { dueBetween } from '../../src/model/cron-next.js';

function fields(expr: string) {
  const r = parseCron(expr);
  if (!r.ok) throw new Error(r.message);
  return r.fields;
}

describe('model/cron', () => {
  it('parses 5 fields with second 0', () => {
    const f = fields('*/15 3 * * *');
    expect(f.second).to.deep.equal([0]);
    expect(f.minute).to.deep.equal([0, 15, 30, 45]);
    expect(f.hour).to.deep.equal([3]);
    expect(f.dayOfMonth).to.have.length(31);
    expect(f.dayOfMonthAny && f.dayOfWeekAny).to.equal(true);
  });

  it('parses 6 fields, ranges with steps, lists and names', () => {
    const f = fields('30 0 9-17/4 1,15 JAN-mar mon-FRI');
    expect(f.second).to.deep.equal([30]);
    expect(f.hour).to.deep.equal([9, 13, 17]);
    expect(f.dayOfMonth).to.deep.equal([1, 15]);
    expect(f.month).to.deep.equal([1, 2, 3]);
    expect(f.dayOfWeek).to.deep.equal([1, 2, 3, 4, 5]);
    expect(f.dayOfWeekAny).to.equal(false);
  });

  it('folds day-of-week 7 into Sunday and reads n/step', () => {
    expect(fields('0 0 * * 7').dayOfWeek).to.deep.equal([0]);
    expect(fields('5/20 * * * *').minute).to.deep.equal([5, 25, 45]);
  });

  for (const bad of ['', '* * * *', '* * * * * * *', '60 * * * *', '* 24 * * *', '* * 0 * *', '* * * 13 *', '* * * * 8', '5-1 * * * *', '*/0 * * * *', 'a * * * *', '1-2-3 * * * *', '* * * FOO *', '1,,2 * * * *']) {
    it(`rejects "${bad}"`, () => expect(parseCron(bad).ok).to.equal(false));
  }

  describe('Quartz day forms (?, L, W, nL, n#k)', () => {
    /** the days of a month (2026, 1-based) on which the expression (at midnight UTC) is due */
    function days(expr: string, month: number): number[] {
      const from = new Date(Date.UTC(2026, month - 1, 1) - 1000);
      const to = new Date(Date.UTC(2026, month, 1) - 1000);
      return dueBetween(fields(expr), 'UTC', from, to, 100).map((d) => d.getUTCDate());
    }

    it('reads ? as "any" in either day field, so the other one decides', () => {
      // March 2026: Mondays are the 2nd, 9th, 16th, 23rd and 30th
      expect(days('0 0 ? * MON', 3)).to.deep.equal([2, 9, 16, 23, 30]);
      expect(days('0 0 12 15 * ?', 3)).to.deep.equal([15]);
      expect(fields('0 0 12 ? * MON-FRI').dayOfMonthAny).to.equal(true);
    });

    it('L is the last day of the month; LW and nW the nearest Monday-Friday, inside the month', () => {
      expect(days('0 0 L * *', 2)).to.deep.equal([28]);
      expect(days('0 0 L * *', 4)).to.deep.equal([30]);
      // May 31st 2026 is a Sunday: the last weekday is Friday the 29th
      expect(days('0 0 LW * *', 5)).to.deep.equal([29]);
      // Feb 15th 2026 is a Sunday (→ Monday 16th); Aug 1st a Saturday (→ Monday 3rd, not July 31st)
      expect(days('0 0 15W * *', 2)).to.deep.equal([16]);
      expect(days('0 0 1W * *', 8)).to.deep.equal([3]);
      expect(days('0 0 31W * *', 4), 'no 31st in April').to.deep.equal([]);
      expect(days('0 0 1,L * *', 4)).to.deep.equal([1, 30]);
    });

    it('nL is the last such weekday of the month, n#k the k-th one', () => {
      // March 2026: Fridays are the 6th, 13th, 20th and 27th
      expect(days('0 0 * * 5L', 3)).to.deep.equal([27]);
      expect(days('0 0 * * FRIL', 3)).to.deep.equal([27]);
      expect(days('0 0 * * 5#2', 3)).to.deep.equal([13]);
      expect(days('0 0 * * mon#1,fri#3', 3)).to.deep.equal([2, 20]);
      expect(days('0 0 * * 7#1', 3), '7 is Sunday').to.deep.equal([1]);
      expect(days('0 0 * * 5#5', 3)).to.deep.equal([]);
    });

    it('keeps the OR rule when both day fields are restricted', () => {
      expect(days('0 0 L * 5#2', 3)).to.deep.equal([13, 31]);
    });

    for (const bad of ['0 0 * * L', '0 0 * * 1#6', '0 0 * * 1#0', '0 0 ?,1 * *', '? * * * *', '0 0 * ? *', '0 0 L-2 * *', '0 0 0W * *', '0 0 32W * *', '0 0 * * 8L', '0 0 5L * *', '0 0 * * LW']) {
      it(`rejects "${bad}"`, () => expect(parseCron(bad).ok).to.equal(false));
    }

    it('says why L-n is refused (an offset from the month\'s end is not supported), not "not a number"', () => {
      const parsed = parseCron('0 0 L-2 * *');
      expect(parsed.ok).to.equal(false);
      expect(JSON.stringify(parsed)).to.include('(days before the last) is not supported');
    });
  });

  it('says what is wrong in our terms (croner counts days and months from 0)', () => {
    const message = (expr: string): string => {
      const r = parseCron(expr);
      return r.ok ? '' : r.message;
    };
    expect(message('* * 0 * *')).to.equal('day of month value 0 is outside 1-31');
    expect(message('* * * 13 *')).to.equal('month value 13 is outside 1-12');
    expect(message('0 0 32W * *')).to.equal('day of month (nW) value 32 is outside 1-31');
    expect(message('60 * * * *')).to.equal('minute value 60 is outside 0-59');
    expect(message('? * * * *')).to.equal('minute: "?" stands alone, and only in a day field');
    expect(message('0 0 * * L')).to.include('"L" alone is ambiguous');
    expect(message('* * *')).to.include('a cron expression has 5 fields (or 6 with seconds)');
  });

  it('checks IANA time zones', () => {
    expect(isValidTimeZone('Europe/Paris')).to.equal(true);
    expect(isValidTimeZone('UTC')).to.equal(true);
    expect(isValidTimeZone('Europe/Atlantis')).to.equal(false);
    expect(isValidTimeZone('')).to.equal(false);
  });

  it('knows the usual nicknames, and a day field starting with * leaves the choice to the other', () => {
    const daily = parseCron('@daily');
    expect(daily.ok && daily.fields.hour).to.deep.equal([0]);
    expect(daily.ok && daily.fields.minute).to.deep.equal([0]);
    const weekly = parseCron('@WEEKLY');
    expect(weekly.ok && weekly.fields.dayOfWeek).to.deep.equal([0]);
    expect(parseCron('@reboot').ok).to.equal(false);
    const stepped = parseCron('0 9 */1 * 1-5');
    expect(stepped.ok && stepped.fields.dayOfMonthAny, '*/1 is unrestricted').to.equal(true);
    const listed = parseCron('0 9 1-31 * 1-5');
    expect(listed.ok && listed.fields.dayOfMonthAny, 'a range is a restriction').to.equal(false);
  });
});
