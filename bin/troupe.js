#!/usr/bin/env node
// Runs the TypeScript CLI through tsx so a checkout works after `make setup`, with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
