import { loadConfig } from '../../config/load.js';
import { runDemo } from './demo.js';
import { commandLine } from './args.js';
import { createServiceLogger } from '../server/logger.js';
import { startService, type Service } from '../compose.js';

const out = (line: string): void => {
  process.stdout.write(line + '\n');
};

/** `troupe serve [--demo]`: runs until SIGINT/SIGTERM, then shuts down gracefully. */
export async function serveCommand(args: string[]): Promise<number> {
  const { values } = commandLine(args, { demo: { type: 'boolean' } }, 0);
  const config = loadConfig();
  const logger = createServiceLogger(config);
  const service = await startService(config, { logger });
  printBanner(service, config.console);
  const stopped = untilSignal(service);
  if (values.demo === true) {
    try {
      await runDemo(service, out);
    } catch (err) {
      logger.error({ err }, 'demo set-up failed');
      out(`demo: could not deploy the demo workflow: ${(err as Error).message}`);
    }
  }
  const code = await stopped;
  logger.flush();
  // a stray handle (a client that never hangs up) must not keep a stopped service alive
  setTimeout(() => process.exit(code), 3_000).unref();
  return code;
}

function printBanner(service: Service, console: boolean): void {
  const { adminToken, secretKey } = service.secrets;
  if (adminToken.origin === 'generated') {
    out(`admin token (generated, shown once; stored in ${adminToken.path ?? ''} with mode 0600): ${adminToken.value}`);
  }
  if (secretKey.origin === 'generated') out(`secret key generated in ${secretKey.path ?? ''} (mode 0600): keep it with the data; secrets cannot be read without it`);
  const { interrupted, rerun, resumed } = service.recovery;
  if (interrupted.length + rerun.length + resumed.length > 0) {
    out(
      `recovered executions left by the previous run: ${resumed.length} resumed from their last block boundary, `
        + `${rerun.length} queued run again, ${interrupted.length} failed as interrupted`,
    );
  }
  out(`troupe listening on ${service.url}`);
  if (console) {
    const where = adminToken.path === null ? 'the admin token (TROUPE_ADMIN_TOKEN)' : `the admin token in ${adminToken.path}`;
    out(`console: open ${service.url}/ and sign in with ${where}`);
  }
}

/** Resolves with the exit code once a signal has stopped the service; a second signal forces exit. */
function untilSignal(service: Service): Promise<number> {
  return new Promise((resolve) => {
    let received = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (received) {
        process.stderr.write(`troupe: ${signal} again, exiting now\n`);
        process.exit(1);
      }
      received = true;
      process.stderr.write(`troupe: ${signal} received, shutting down (running executions get up to ${service.runtime.config.shutdownGraceMs / 1000} s)\n`);
      service.stop(signal).then(
        () => resolve(0),
        (err: unknown) => {
          process.stderr.write(`troupe: shutdown failed: ${(err as Error).message}\n`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
