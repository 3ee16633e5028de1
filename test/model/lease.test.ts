import { expect } from 'chai';
import { DEFAULT_LEASE_TIMING, mayTakeOver, parseLease } from '../../src/model/lease.js';

const timing = DEFAULT_LEASE_TIMING;

describe('model: execution leases', () => {
  it('keeps a renewed lease and frees it once not renewed for the expiry', () => {
    const lease = { owner: 'a', renewedAt: 1_000 };
    expect(mayTakeOver(lease, 0, 1_000 + timing.expireMs - 1, timing)).to.equal(false);
    expect(mayTakeOver(lease, 0, 1_000 + timing.expireMs, timing)).to.equal(true);
  });

  it('frees a released lease at once', () => {
    expect(mayTakeOver({ owner: 'a', renewedAt: 5_000, released: true }, 5_000, 5_000, timing)).to.equal(true);
  });

  it('gives a record without a lease the expiry from its last claim (a run that has not renewed yet)', () => {
    expect(mayTakeOver(null, 2_000, 2_000 + timing.expireMs - 1, timing)).to.equal(false);
    expect(mayTakeOver(null, 2_000, 2_000 + timing.expireMs, timing)).to.equal(true);
  });

  it('reads back only well-formed entries', () => {
    expect(parseLease({ owner: 'a', renewedAt: 3 })).to.deep.equal({ owner: 'a', renewedAt: 3 });
    expect(parseLease({ owner: 'a', renewedAt: 3, released: true })).to.deep.equal({ owner: 'a', renewedAt: 3, released: true });
    expect(parseLease({ owner: 1, renewedAt: 3 })).to.equal(null);
    expect(parseLease('lease')).to.equal(null);
    expect(parseLease(null)).to.equal(null);
  });
});
