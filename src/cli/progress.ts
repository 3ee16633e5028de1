import { logKey } from '../model/block-run.js';
import type { ExecutionEvent, ExecutionResult, IterationRef } from '../runtime/types.js';

const MARK: Record<string, string> = {
  'block.completed': '✔',
  'block.failed': '✖',
  'block.skipped': '·',
};

function label(name: string, type: string, iteration: IterationRef | null): string {
  if (iteration === null) return `${name} (${type})`;
  const path: string[] = [];
  for (let at: IterationRef | undefined = iteration; at !== undefined; at = at.outer) path.unshift(`${at.container} #${at.index}`);
  return `${name} (${type}) [${path.join(' › ')}]`;
}

/**
 * Blocks started and not ended yet. The run's end cancels whatever is still running without a
 * block event (SPEC §4.2 names none for it), so the CLI says so itself once the run is over.
 */
export class RunningBlocks {
  private readonly running = new Map<string, string>();

  see(event: ExecutionEvent): void {
    if (event.type === 'block.started') {
      const { blockId, blockName, blockType, iteration } = event.data;
      this.running.set(logKey(blockId, iteration), label(blockName, blockType, iteration));
    } else if (event.type === 'block.completed' || event.type === 'block.failed' || event.type === 'block.skipped') {
      this.running.delete(logKey(event.data.blockId, event.data.iteration));
    }
  }

  /** One line per block the run's end cut off. */
  cancelledLines(): string[] {
    return [...this.running.values()].map((name) => `■ ${name} cancelled`);
  }
}

/** One line per block start and end: name, status, duration. */
export function formatEvent(event: ExecutionEvent): string | null {
  switch (event.type) {
    case 'block.started':
      return `▶ ${label(event.data.blockName, event.data.blockType, event.data.iteration)} started`;
    case 'block.completed':
    case 'block.failed':
    case 'block.skipped': {
      const log = event.data;
      const status = event.type.slice('block.'.length);
      const duration = log.durationMs === null ? '' : ` in ${log.durationMs} ms`;
      const handled = log.errorHandled ? ' (error path taken)' : '';
      const line = typeof log.error?.['line'] === 'number' ? ` (line ${log.error['line']})` : '';
      const error = log.error ? ` — ${log.error.code}: ${log.error.message}${line}` : '';
      return `${MARK[event.type] ?? '?'} ${label(log.blockName, log.blockType, log.iteration)} ${status}${duration}${handled}${error}`;
    }
    default:
      return null;
  }
}

/**
 * The line that ends the progress (stderr, with it): id, status, duration, and why a run that did
 * not complete ended. It is not on stdout, which carries the result alone (formatResult).
 */
export function formatSummary(result: ExecutionResult): string {
  const head = `execution ${result.id} ${result.status} in ${result.durationMs} ms`;
  const error = result.error;
  if (result.status === 'completed' || error === null) return `${head}\n`;
  return `${head}: ${error.code}: ${error.message}${error.blockId ? ` (block ${error.blockId})` : ''}\n`;
}

/**
 * The result on stdout, as JSON and nothing else, so `troupe run ... | jq` reads it: the output
 * of a completed run, else `{ "error": { code, message, blockId } }` (the exit code tells which).
 */
export function formatResult(result: ExecutionResult): string {
  const value = result.status === 'completed' ? (result.output ?? null) : { error: result.error };
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Streamed text (agent tokens) shown as it arrives, on lines of its own marked `┆`; the next
 * progress line starts on a fresh line.
 */
export class StreamedText {
  private open = false;

  chunk(text: string): string {
    const out = (this.open ? '' : '  ┆ ') + text.replace(/\n/g, '\n  ┆ ');
    this.open = true;
    return out;
  }

  /** what to write before a progress line (a newline when text was streaming) */
  beforeLine(): string {
    if (!this.open) return '';
    this.open = false;
    return '\n';
  }
}
