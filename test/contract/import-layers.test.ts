/**
 * The lint step that keeps the layers one way (scripts/import-cycles.mjs, run by `make lint`):
 * it refuses an import from src/runtime into actors/ (type-only too) and passes this repository.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const script = join(process.cwd(), 'scripts', 'import-cycles.mjs');

function check(root: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'troupe-layers-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('lint: imports follow the layer order', () => {
  const roots: string[] = [];
  after(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  it('refuses src/runtime importing actors/, a type-only import included, and names both files', () => {
    const root = tree({
      'src/model/m.ts': 'export const m = 1;\n',
      'actors/a.ts': "import { m } from '../src/model/m.js';\nexport type A = { n: typeof m };\n",
      'src/runtime/r.ts': "import type { A } from '../../actors/a.js';\nexport type R = A;\n",
    });
    roots.push(root);
    const r = check(root);
    expect(r.status).to.equal(1);
    expect(r.out).to.match(/layer order.*src\/runtime\/r\.ts imports actors\/a\.ts/);
  });

  it('accepts the same files importing downward only', () => {
    const root = tree({
      'src/model/m.ts': 'export const m = 1;\n',
      'src/runtime/r.ts': "import { m } from '../model/m.js';\nexport const r = m;\n",
      'actors/a.ts': "import { r } from '../src/runtime/r.js';\nexport const a = r;\n",
      'src/engine/e.ts': "import { a } from '../../actors/a.js';\nexport const e = a;\n",
    });
    roots.push(root);
    expect(check(root).status).to.equal(0);
  });

  it('refuses src/http importing the composition root (createApp is given its services)', () => {
    const root = tree({
      'src/compose.ts': "export const services = 1;\n",
      'src/http/app.ts': "import { services } from '../compose.js';\nexport const app = services;\n",
    });
    roots.push(root);
    const r = check(root);
    expect(r.status).to.equal(1);
    expect(r.out).to.match(/layer order.*src\/http\/app\.ts imports src\/compose\.ts/);
  });

  it('passes on this repository', () => {
    const r = check(process.cwd());
    expect(r.status, r.out).to.equal(0);
  });
});
