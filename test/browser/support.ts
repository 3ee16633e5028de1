/**
 * A real browser for tests: Debian's Chromium (`make setup` installs it at /usr/bin/chromium)
 * driven by playwright-core, headless, with a fresh profile directory removed on close.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface TestBrowser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Launches Chromium with its own throw-away `--user-data-dir` (playwright passes it from userDataDir). */
export async function launchBrowser(): Promise<TestBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'troupe-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: 30_000,
    });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
  let closed = false;
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await context.close();
      } finally {
        await rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
      }
    },
  };
}
