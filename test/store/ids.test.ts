/** Execution ids: UUIDv7, so that the store's indexes keyed by execution id grow at one edge. */
import { expect } from 'chai';
import { newExecutionId } from '../../src/runtime/ids.js';

describe('execution ids', () => {
  it('are RFC 9562 version-7 UUIDs carrying the creation time in milliseconds', () => {
    const now = Date.UTC(2026, 10, 22, 18, 30, 0, 123);
    const id = newExecutionId(now);
    expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).to.equal(now);
  });

  it('sort by creation time and stay distinct within one millisecond', () => {
    const ids = [1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000].map((t) => newExecutionId(t));
    expect([...ids].sort()).to.deep.equal(ids);
    const same = new Set(Array.from({ length: 10_000 }, () => newExecutionId(1_700_000_000_000)));
    expect(same.size).to.equal(10_000);
  });
});
