/** Which value is a chat's answer, and its text (SPEC §4.4 `output?: { block, path }`). */
import { navigate } from '../model/resolve.js';
import type { ExecutionResult } from '../runtime/types.js';
import type { ChatDeployment } from '../store/types.js';

/**
 * The configured block's output at its path (null when the path holds nothing); without one, or
 * when that block did not run, the execution's output.
 */
export function answerOf(chat: ChatDeployment, result: ExecutionResult, blockOutputs: ReadonlyMap<string, unknown>): unknown {
  if (chat.output !== undefined && blockOutputs.has(chat.output.block)) {
    const path = chat.output.path;
    // the references' own walk: own properties only, array indexes, anything missing is null
    return path === undefined || path === '' ? (blockOutputs.get(chat.output.block) ?? null) : navigate(blockOutputs.get(chat.output.block), pathSegments(path));
  }
  // a response block's answer is its data, not the HTTP envelope around it
  if (result.response !== null) return result.response.data;
  return result.output;
}

/**
 * `items[0].text` as well as `items.0.text`: paths are written as in references (SPEC §1.2).
 * Split on dots only, so a key may hold any other character.
 */
export function pathSegments(path: string): string[] {
  return path.split('.').flatMap((part) => {
    const indexed = /^(.*?)((?:\[\d+\])+)$/.exec(part);
    if (indexed === null) return [part];
    const indexes = [...(indexed[2] ?? '').matchAll(/\[(\d+)\]/g)].map((m) => m[1] ?? '');
    return indexed[1] === '' ? indexes : [indexed[1] ?? '', ...indexes];
  });
}

const TEXT_FIELDS = ['content', 'text', 'answer', 'message', 'result', 'output'];

/** Text for the conversation: strings as they are, the usual text field of an object, else JSON. */
export function answerText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && !Array.isArray(value)) {
    for (const f of TEXT_FIELDS) {
      const v = (value as Record<string, unknown>)[f];
      if (typeof v === 'string') return v;
    }
  }
  return JSON.stringify(value) ?? '';
}
