import { expect } from 'chai';
import fc from 'fast-check';
import { isoAt } from '../../src/runtime/iso.js';

describe('isoAt', () => {
  it('writes what toISOString writes, for any time and in any order (the per-second text reused)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -8.64e15, max: 8.64e15 }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 2_000 }), (times, step) => {
        // runs of nearby times too, so the cached second is hit, left and met again
        for (const t of times) for (const ms of [t, t + step, t + 1, t - step, t]) {
          if (Math.abs(ms) > 8.64e15) continue;
          expect(isoAt(ms), String(ms)).to.equal(new Date(ms).toISOString());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps toISOString for what it does not write: fractions of a millisecond and invalid times', () => {
    expect(isoAt(1_800_000_000_000.7)).to.equal(new Date(1_800_000_000_000.7).toISOString());
    expect(() => isoAt(Number.NaN)).to.throw(RangeError);
  });
});
