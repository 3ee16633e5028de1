import type { ExecutionEvent, ExecutionResult } from '../runtime/types.js';

const MARK: Record<string, string> = {
  'block.completed': '✔',
  'block.failed': '✖',
  'block.skipped': '·',
};

function label(name: string, type: string, iteration: { container: string; index: number } | null): string {
  return iteration === null ? `${name} (${type})` : `${name} (${type}) [${iteration.container} #${iteration.index}]`;
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
      const error = log.error ? ` — ${log.error.code}: ${log.error.message}` : '';
      return `${MARK[event.type] ?? '?'} ${label(log.blockName, log.blockType, log.iteration)} ${status}${duration}${handled}${error}`;
    }
    default:
      return null;
  }
}

export function formatResult(result: ExecutionResult): string {
  const head = `execution ${result.id} ${result.status} in ${result.durationMs} ms`;
  const body = result.status === 'completed'
    ? JSON.stringify(result.output, null, 2)
    : `${result.error?.code ?? 'ERROR'}: ${result.error?.message ?? ''}${result.error?.blockId ? ` (block ${result.error.blockId})` : ''}`;
  return `${head}\n${body}\n`;
}
