/**
 * Tests that spawn `bin/troupe.js` run the compiled dist/: bring it up to date first (`make
 * build` is a no-op when no source is newer than its stamp), so an edited source is never
 * tested through a stale build.
 */
import { spawnSync } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;
let built = false;

export function ensureBuilt(): void {
  if (built) return;
  const r = spawnSync('make', ['-s', 'build'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`make build failed (${r.status ?? r.signal})\n${r.stdout}\n${r.stderr}`);
  built = true;
}
