import { expect } from 'chai';
import { DAY_MS, durationMs, parseIsoDuration, waitDue } from '../../src/model/wait.js';

describe('wait block time arithmetic (src/model/wait.ts)', () => {
  it('reads ISO 8601 durations of weeks, days, hours, minutes and seconds', () => {
    expect(parseIsoDuration('PT5M')).to.equal(300_000);
    expect(parseIsoDuration('P2D')).to.equal(2 * DAY_MS);
    expect(parseIsoDuration('P1W')).to.equal(7 * DAY_MS);
    expect(parseIsoDuration('P1DT2H3M4.5S')).to.equal(DAY_MS + 2 * 3_600_000 + 3 * 60_000 + 4500);
    expect(parseIsoDuration('pt1s')).to.equal(1000);
  });

  it('refuses what has no fixed length or is not a duration', () => {
    for (const bad of ['P1M', 'P1Y', 'P', 'PT', '5M', 'P1DT', 'soon']) expect(parseIsoDuration(bad), bad).to.equal(null);
    expect(durationMs(-1)).to.equal(null);
    expect(durationMs('1500')).to.equal(1500);
  });

  it('decides the due time: duration, until, the longest wait, and an until in the past', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(waitDue({ duration: 'PT1M' }, now, 30 * DAY_MS)).to.deep.equal({ dueAt: now + 60_000 });
    expect(waitDue({ until: '2026-01-02T00:00:00Z' }, now, 30 * DAY_MS)).to.deep.equal({ dueAt: now + DAY_MS });
    expect(waitDue({ duration: 'P31D' }, now, 30 * DAY_MS)).to.deep.equal({ problem: 'a wait lasts at most 30 days' });
    expect(waitDue({ until: '2025-12-31T00:00:00Z' }, now, 30 * DAY_MS)).to.deep.equal({ problem: 'until 2025-12-31T00:00:00Z is in the past' });
    // when the block runs again after its time has passed, it falls due at once
    expect(waitDue({ until: '2025-12-31T00:00:00Z' }, now, 30 * DAY_MS, true)).to.deep.equal({ dueAt: now - DAY_MS });
    expect(waitDue({ until: 'tomorrow' }, now, 30 * DAY_MS)).to.have.property('problem');
  });
});
