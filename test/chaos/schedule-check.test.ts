/**
 * The chaos test's schedule check (schedule-check.ts) on made-up histories: it must catch a due
 * time fired twice, one lost while an instance led, and a failover without its catch-up fire,
 * and excuse what the documented rule allows (the window's edges, a killed leader's last
 * moments, the due times of a leaderless stretch but its latest).
 */
import { expect } from 'chai';
import { checkFires, FIRST_TICK_MS, KILL_MARGIN_MS, type Term } from './schedule-check.js';

const T0 = Date.parse('2026-11-27T10:00:00.000Z');
const s = (n: number): number => T0 + n * 1_000;
/** seconds a..b inclusive */
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => s(a + i));

// A leads from before the window until killed at 20.4 s; B leads from 31.2 s (its lease take) on
const terms: Term[] = [
  { from: s(-5), to: s(20) + 400, killed: true },
  { from: s(31) + 200, to: null, killed: false },
];
const window = { from: s(0) + 300, to: s(50) + 500 };

describe('the chaos schedule check', () => {
  it('accepts a history by the rule: every led second once, the failover caught up by its latest due time', () => {
    // A fired up to 19 (its last tick before the kill), B caught up 31 (the latest before its start) then on
    const fired = [...range(1, 19), ...range(31, 52)];
    const v = checkFires(fired, terms, window);
    expect(v).to.deep.include({ twice: [], lost: [], noCatchUp: [] });
    expect(v.checked).to.equal(48);
  });

  it('finds a due time fired twice', () => {
    const v = checkFires([...range(1, 19), s(7), ...range(31, 52)], terms, window);
    expect(v.twice).to.deep.equal([new Date(s(7)).toISOString()]);
  });

  it('finds a due time lost while an instance led, but excuses a killed leader\'s last moments', () => {
    const lastSure = Math.floor((s(20) + 400 - KILL_MARGIN_MS) / 1_000) - Math.floor(T0 / 1_000);
    const fired = [...range(1, lastSure), ...range(31, 44), ...range(46, 52)].filter((d) => d !== s(9));
    const v = checkFires(fired, terms, window);
    expect(v.lost).to.deep.equal([new Date(s(9)).toISOString(), new Date(s(45)).toISOString()]);
  });

  it('finds a failover without its catch-up fire', () => {
    const v = checkFires([...range(1, 19), ...range(32, 52)], terms, window);
    expect(v.noCatchUp).to.have.length(1);
    expect(v.lost).to.deep.equal([]);
  });

  it('checks nothing at the window\'s first and last seconds', () => {
    const v = checkFires([...range(2, 19), ...range(31, 49)], terms, window);
    expect(v.lost).to.deep.equal([]);
  });

  it('passes a history recorded in a chaos run (every leader killed within seconds; each failover caught up)', () => {
    // times relative to the deployment; the leaders' "leads" log lines and their kills
    const R = 1795789160045;
    const recorded: Term[] = [{ from: R - 4031, to: R + 3001, killed: true }, { from: R + 12028, to: R + 15162, killed: true }, { from: R + 25097, to: R + 27235, killed: true }, { from: R + 37212, to: R + 42304, killed: true }];
    const fired = [-45, 955, 1955, 2955, 11955, 12955, 13955, 14955, 24955, 25955, 26955, 36955, 37955, 38955, 39955, 40955, 41955].map((ms) => R + ms);
    const v = checkFires(fired, recorded, { from: R, to: R + 45000 });
    expect(v).to.deep.include({ twice: [], lost: [], noCatchUp: [], failovers: 3 });
    expect(v.required, 'the last leader lived long enough to owe its seconds').to.be.above(0);
  });

  it('counts a leader killed before its first tick as no leader: the next one catches the stretch up', () => {
    const short: Term[] = [terms[0] as Term, { from: s(31) + 200, to: s(31) + 200 + FIRST_TICK_MS - 500, killed: true }, { from: s(42) + 100, to: null, killed: false }];
    const v = checkFires([...range(1, 19), ...range(42, 52)], short, window);
    expect(v).to.deep.include({ twice: [], lost: [], noCatchUp: [], failovers: 1 });
  });
});
