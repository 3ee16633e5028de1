import { randomFillSync } from 'node:crypto';

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const TWO_32 = 2 ** 32;

/**
 * Execution ids are UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Ids of
 * executions started close together sort together, so the store's indexes keyed by execution
 * id (the record, its logs, its events) take each new id at their right edge instead of at a
 * random page: with random (v4) ids, one SQLite commit for 20 executions rewrote a hundred or
 * more scattered pages, which was most of the cost of writing a record. 74 random bits keep ids
 * unguessable; the creation time they reveal is in the record anyway.
 */
export function newExecutionId(now: number = Date.now()): string {
  const b = randomFillSync(new Uint8Array(16));
  const high = Math.floor(now / TWO_32);
  const low = now % TWO_32;
  b[0] = (high >>> 8) & 0xff;
  b[1] = high & 0xff;
  b[2] = (low >>> 24) & 0xff;
  b[3] = (low >>> 16) & 0xff;
  b[4] = (low >>> 8) & 0xff;
  b[5] = low & 0xff;
  b[6] = ((b[6] as number) & 0x0f) | 0x70;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  let out = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) out += '-';
    out += HEX[b[i] as number];
  }
  return out;
}
