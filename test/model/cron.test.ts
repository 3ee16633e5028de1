import { expect } from 'chai';
import { isValidTimeZone, parseCron } from '../../src/model/cron.js';

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
