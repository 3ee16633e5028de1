import { expect } from 'chai';
import { TroupeError } from '../../src/errors.js';
import { decryptSecret, deriveSecretKey, encryptSecret } from '../../src/store/crypto.js';

describe('store: secret encryption', () => {
  const key = deriveSecretKey('a-long-installation-secret-key');

  it('round-trips, with a fresh IV every time', () => {
    const a = encryptSecret(key, 'hunter2 ünïcode', 'TOKEN');
    const b = encryptSecret(key, 'hunter2 ünïcode', 'TOKEN');
    expect(a).to.match(/^v1\.[A-Za-z0-9_-]+$/);
    expect(a).to.not.equal(b);
    expect(a).to.not.include('hunter2');
    expect(decryptSecret(key, a, 'TOKEN')).to.equal('hunter2 ünïcode');
    expect(decryptSecret(key, b, 'TOKEN')).to.equal('hunter2 ünïcode');
    expect(decryptSecret(key, encryptSecret(key, ''))).to.equal('');
  });

  it('derives the same key from the same secret, a different one otherwise', () => {
    expect(deriveSecretKey('a-long-installation-secret-key').equals(key)).to.equal(true);
    expect(deriveSecretKey('another-installation-secret').equals(key)).to.equal(false);
    expect(key.length).to.equal(32);
  });

  it('refuses a wrong key, a tampered blob, another name or garbage with STORE_ERROR', () => {
    const blob = encryptSecret(key, 'value', 'A');
    const raw = Buffer.from(blob.slice(3), 'base64url');
    raw[raw.length - 1] = (raw[raw.length - 1] as number) ^ 1;
    const attempts: (() => string)[] = [
      () => decryptSecret(deriveSecretKey('wrong-secret-key-xxxxxx'), blob, 'A'),
      () => decryptSecret(key, `v1.${raw.toString('base64url')}`, 'A'),
      () => decryptSecret(key, blob, 'B'),
      () => decryptSecret(key, 'plaintext'),
      () => decryptSecret(key, 'v1.AAAA'),
    ];
    for (const attempt of attempts) {
      let caught: unknown;
      try {
        attempt();
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(TroupeError);
      expect((caught as TroupeError).code).to.equal('STORE_ERROR');
    }
  });
});
