/**
 * The console's browser tests: the real app (makeHarness) on a free port serving the built
 * console (dist/console, `make console`), Chromium, and screenshots of each page written to
 * test-output/console-screenshots/ (the README names the folder) for a person to look at.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_CONSOLE_DIR } from '../../src/http/app.js';
import { makeHarness, type Harness } from '../http/support.js';
import { launchBrowser, type TestBrowser } from './support.js';

export const SCREENSHOTS = join(process.cwd(), 'test-output', 'console-screenshots');

export interface ConsoleRig {
  h: Harness;
  browser: TestBrowser;
  page: Page;
  base: string;
  problems: string[];
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startConsole(): Promise<ConsoleRig> {
  if (!existsSync(join(DEFAULT_CONSOLE_DIR, 'index.html'))) throw new Error('the console is not built: run `make console` (make setup does)');
  await mkdir(SCREENSHOTS, { recursive: true });
  const h = makeHarness();
  const server = http.createServer(h.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await launchBrowser();
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1280, height: 800 });
  // generous for a page on a busy machine, short enough that a missing route fails its step soon
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  return {
    h, browser, page, base, problems,
    shot: (name) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true }).then(() => undefined),
    async close() {
      await browser.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await h.close();
    },
  };
}

/** Polls read() until ok(value), for what a page shows after an event the test does not control. */
export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, tries = 300): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < tries; i++) {
    last = await read();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
