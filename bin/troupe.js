#!/usr/bin/env node
// Runs the compiled CLI (`make setup` builds dist/ with tsc): no TypeScript loader at run time.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/index.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('troupe: dist/ is missing; build it with `make setup` (or `make build`)\n');
  process.exit(1);
}
await import(entry.href);
