/** Timestamp normalization shared by both adapters. */
import { expect } from 'chai';
import { TroupeError } from '../../src/errors.js';
import { iso } from '../../src/store/shared.js';

describe('store: timestamps', () => {
  it('keeps a canonical timestamp as it is and normalizes every other form', () => {
    expect(iso('2026-11-22T18:30:00.123Z')).to.equal('2026-11-22T18:30:00.123Z');
    expect(iso('2026-11-22T18:30:00Z')).to.equal('2026-11-22T18:30:00.000Z');
    expect(iso('2026-11-22T19:30:00.123+01:00')).to.equal('2026-11-22T18:30:00.123Z');
    expect(iso('2026-11-29T23:59:59.999Z')).to.equal('2026-11-29T23:59:59.999Z');
  });

  it('goes through the calendar for days past the 28th and refuses what is not a time', () => {
    expect(iso('2026-02-30T00:00:00.000Z')).to.equal(new Date('2026-02-30T00:00:00.000Z').toISOString());
    expect(() => iso('2026-13-01T00:00:00.000Z')).to.throw(TroupeError, /invalid timestamp/);
    expect(() => iso('yesterday')).to.throw(TroupeError, /invalid timestamp/);
  });
});
