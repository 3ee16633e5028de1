import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/load.js';
import { openRuntime } from '../main.js';
import { loadWorkflow } from '../runtime/workflows.js';
import { readJsonFile, parseJson } from './files.js';
import { formatEvent, formatResult, RunningBlocks } from './progress.js';

export async function runCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { input: { type: 'string' }, timeout: { type: 'string' }, json: { type: 'boolean' } },
  });
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write("usage: troupe run <workflow.json> [--input '<json>']\n");
    return 2;
  }
  const doc = await readJsonFile(file);
  const input = values.input === undefined ? {} : parseJson(values.input, '--input');
  const config = loadConfig();
  const runtime = await openRuntime(config);
  try {
    const { def, compiled } = loadWorkflow(doc, runtime.registry);
    const quiet = values.json === true;
    const progress = new RunningBlocks();
    const handle = await runtime.engine.start(
      compiled,
      {
        workflowId: def.id ?? 'cli',
        version: 1,
        input,
        trigger: { type: 'manual', source: 'cli' },
        ...(values.timeout === undefined ? {} : { timeoutMs: Number(values.timeout) }),
      },
      (event) => {
        progress.see(event);
        const line = formatEvent(event);
        if (line !== null && !quiet) process.stderr.write(line + '\n');
      },
    );
    const interrupted = cancelOnSignals(() => handle.cancel());
    const result = await handle.done.finally(interrupted.stop);
    if (!quiet) for (const line of progress.cancelledLines()) process.stderr.write(line + '\n');
    process.stdout.write(quiet ? JSON.stringify(result) + '\n' : formatResult(result));
    if (interrupted.received) return 130;
    return result.status === 'completed' ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

/**
 * Ctrl-C (or SIGTERM) cancels the run, which is then recorded `cancelled` like any cancel,
 * instead of leaving its record `running`; the exit code is then 130. A second one, once the
 * handlers are gone, ends the process as usual.
 */
function cancelOnSignals(cancel: () => void): { readonly received: boolean; stop(): void } {
  const state = { received: false };
  const onSignal = (): void => {
    state.received = true;
    cancel();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    get received() {
      return state.received;
    },
    stop: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
