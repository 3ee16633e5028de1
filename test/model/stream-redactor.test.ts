import { expect } from 'chai';
import { StreamRedactor } from '../../src/model/references.js';

describe('model/secrets: StreamRedactor', () => {
  const run = (secrets: string[], pieces: string[]): string[] => {
    const out: string[] = [];
    const r = new StreamRedactor(secrets, (t) => out.push(t));
    for (const p of pieces) r.write(p);
    r.flush();
    return out;
  };

  it('passes text with no secret straight through, piece by piece', () => {
    expect(run(['sk-123456'], ['hello ', 'world'])).to.deep.equal(['hello ', 'world']);
  });

  it('hides a secret split over pieces, holding back only what could still become one', () => {
    const out = run(['sk-123456'], ['key: s', 'k-12', '3456 done']);
    expect(out.join('')).to.equal('key: *** done');
    expect(out[0]).to.equal('key: ');
  });

  it('releases a held-back start that turned out not to be a secret', () => {
    expect(run(['sk-123456'], ['ask', '-me']).join('')).to.equal('ask-me');
    expect(run(['sk-123456'], ['the end: sk-12']).join('')).to.equal('the end: sk-12');
  });

  it('hides every occurrence and the longer of two overlapping secrets whole', () => {
    expect(run(['abc', 'abcdef'], ['x abcd', 'ef y abc z']).join('')).to.equal('x *** y *** z');
  });
});
