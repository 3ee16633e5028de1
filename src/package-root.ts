/**
 * Files that ship beside the code (package.json, examples/) are found from the package root,
 * not from a fixed number of `../`: the same module runs from `src/` under a TypeScript loader
 * (tests) and from `dist/src/` once compiled, one level deeper.
 */
import { existsSync, readFileSync } from 'node:fs';

function findRoot(from: URL): URL {
  let dir = new URL('./', from);
  for (;;) {
    if (existsSync(new URL('package.json', dir))) return dir;
    const parent = new URL('../', dir);
    if (parent.href === dir.href) throw new Error(`no package.json above ${from.href}`);
    dir = parent;
  }
}

const ROOT = findRoot(new URL(import.meta.url));

/** A file of the package, by its path from the package root (e.g. `examples/hello.json`). */
export function packageFile(path: string): URL {
  return new URL(path, ROOT);
}

/** The package's version (package.json), `0.0.0` when it cannot be read. */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
