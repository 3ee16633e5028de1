import { expect } from 'chai';
import { emptySlots, getSlot, slotValues, withoutSlot, withSlot, type Slots } from '../../src/model/slots.js';

describe('slots (immutable map by branch index)', () => {
  it('matches a Map through random sets and removals, and never changes an earlier version', () => {
    for (const capacity of [1, 5, 32, 33, 1000, 1024, 1025, 40_000]) {
      let seed = capacity;
      const random = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      let slots: Slots<string> = emptySlots(capacity);
      const model = new Map<number, string>();
      const history: { slots: Slots<string>; model: Map<number, string> }[] = [];
      for (let step = 0; step < 600; step++) {
        const i = random(capacity);
        if (random(3) === 0) {
          slots = withoutSlot(slots, i);
          model.delete(i);
        } else {
          slots = withSlot(slots, i, `v${step}`);
          model.set(i, `v${step}`);
        }
        if (step % 50 === 0) history.push({ slots, model: new Map(model) });
      }
      for (const { slots: then, model: expected } of [...history, { slots, model }]) {
        expect(then.size).to.equal(expected.size);
        for (const [i, v] of expected) expect(getSlot(then, i)).to.equal(v);
        const ordered = [...expected.keys()].sort((a, b) => a - b).map((k) => expected.get(k));
        expect(slotValues(then)).to.deep.equal(ordered);
      }
    }
  });

  it('reads nothing outside its range and refuses to write there', () => {
    const slots = withSlot(emptySlots<number>(10), 3, 1);
    expect(getSlot(slots, -1)).to.equal(undefined);
    expect(getSlot(slots, 32)).to.equal(undefined);
    expect(getSlot(slots, 1.5)).to.equal(undefined);
    expect(() => withSlot(slots, 32, 1)).to.throw(RangeError);
    expect(withoutSlot(slots, 4)).to.equal(slots);
    expect(withoutSlot(slots, 3).size).to.equal(0);
  });
});
