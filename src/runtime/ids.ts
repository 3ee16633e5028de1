import { randomFillSync } from 'node:crypto';

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const TWO_32 = 2 ** 32;

/** Random bytes are drawn 4 KiB at a time: one call into the CSPRNG per 256 ids, not per id. */
const POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let poolOffset = 0;

/** 16 fresh bytes of the pool (never handed out twice), copied so callers may write them. */
function randomBytes16(): Uint8Array {
  if (poolOffset + 16 > pool.length) {
    pool = randomFillSync(new Uint8Array(POOL_BYTES));
    poolOffset = 0;
  }
  const b = pool.slice(poolOffset, poolOffset + 16);
  poolOffset += 16;
  return b;
}

/**
 * Execution ids are UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Ids of
 * executions started close together sort together, so the store's indexes keyed by execution
 * id (the record, its logs, its events) take each new id at their right edge instead of at a
 * random page: with random (v4) ids, one SQLite commit for 20 executions rewrote a hundred or
 * more scattered pages, which was most of the cost of writing a record. 74 random bits keep ids
 * unguessable; the creation time they reveal is in the record anyway.
 */
export function newExecutionId(now: number = Date.now()): string {
  const b = randomBytes16();
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
