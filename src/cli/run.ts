import os from 'node:os';
import { loadConfig } from '../../config/load.js';
import { openRuntime } from '../main.js';
import type { ExecutionResult } from '../runtime/types.js';
import { MAX_TIMER_MS } from '../model/schema.js';
import { loadWorkflow } from '../runtime/workflows.js';
import { commandLine } from './args.js';
import { readJsonFile, readInput } from './files.js';
import { formatEvent, formatResult, formatSummary, RunningBlocks, StreamedText } from './progress.js';

export async function runCommand(args: string[]): Promise<number> {
  const { positionals, values } = commandLine(args, { input: { type: 'string' }, timeout: { type: 'string' }, json: { type: 'boolean' } }, 1);
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write("usage: troupe run <workflow.json> [--input '<json>' | @<file> | @-] [--timeout <ms>] [--json]\n");
    return 2;
  }
  const timeoutMs = values.timeout === undefined ? undefined : wholeMs(values.timeout);
  if (timeoutMs === null) {
    process.stderr.write(`troupe: --timeout takes a time limit in ms, a whole number from 1 to ${MAX_TIMER_MS}, got "${values.timeout ?? ''}"\n`);
    return 2;
  }
  const doc = await readJsonFile(file);
  const input = values.input === undefined ? {} : await readInput(values.input);
  const config = loadConfig();
  const runtime = await openRuntime(config);
  try {
    const { def, compiled } = loadWorkflow(doc, runtime.registry);
    const quiet = values.json === true;
    const progress = new RunningBlocks();
    const streamed = new StreamedText();
    // installed before the start: a signal while the record is being written still cancels
    const interrupt = new Interrupt();
    let result: ExecutionResult;
    try {
      const handle = await runtime.engine.start(
        compiled,
        {
          workflowId: def.id ?? 'cli',
          version: 1,
          input,
          trigger: { type: 'manual', source: 'cli' },
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
        },
        (event) => {
          progress.see(event);
          if (quiet) return;
          if (event.type === 'chunk') return void process.stderr.write(streamed.chunk(event.data.text));
          const line = formatEvent(event);
          if (line !== null) process.stderr.write(streamed.beforeLine() + line + '\n');
        },
      );
      result = await interrupt.cancels(handle);
    } finally {
      interrupt.stop();
    }
    if (!quiet) {
      for (const line of progress.cancelledLines()) process.stderr.write(streamed.beforeLine() + line + '\n');
      process.stderr.write(streamed.beforeLine() + formatSummary(result));
    }
    process.stdout.write(quiet ? JSON.stringify(result) + '\n' : formatResult(result));
    if (result.status === 'cancelled' && interrupt.signal !== null) return 128 + (os.constants.signals[interrupt.signal] ?? 2);
    return result.status === 'completed' ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

/**
 * Ctrl-C (SIGINT) or SIGTERM cancels the run, which is then recorded `cancelled` like any cancel
 * instead of staying `running`, and the exit code says which signal (130, 143). The first one
 * removes the handlers, so a second one ends the process as usual.
 */
class Interrupt {
  signal: 'SIGINT' | 'SIGTERM' | null = null;
  private cancel: (() => void) | null = null;
  private readonly onInt = (): void => this.received('SIGINT');
  private readonly onTerm = (): void => this.received('SIGTERM');

  constructor() {
    process.once('SIGINT', this.onInt);
    process.once('SIGTERM', this.onTerm);
  }

  /** Waits for the run, cancelling it on a signal (at once if one came while it was starting). */
  cancels(handle: { done: Promise<ExecutionResult>; cancel(): void }): Promise<ExecutionResult> {
    this.cancel = () => handle.cancel();
    if (this.signal !== null) handle.cancel();
    return handle.done;
  }

  stop(): void {
    process.off('SIGINT', this.onInt);
    process.off('SIGTERM', this.onTerm);
  }

  private received(signal: 'SIGINT' | 'SIGTERM'): void {
    this.signal = signal;
    this.stop();
    this.cancel?.();
  }
}

/** A time limit in decimal digits, 1 ms up to the longest a timer takes; null otherwise. */
function wholeMs(text: string): number | null {
  if (!/^\s*\d+\s*$/.test(text)) return null;
  const ms = Number(text);
  return ms >= 1 && ms <= MAX_TIMER_MS ? ms : null;
}
