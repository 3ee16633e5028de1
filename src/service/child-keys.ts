/**
 * The keys that tie a child execution to its parent (workflow block, SPEC §2.1), apart from the
 * child service so that the execution service can name them without importing it.
 */
import { createHash } from 'node:crypto';

/** The waits-index key a child's end leaves for its parent. */
export const childNudgeKey = (childId: string): string => `child|${childId}`;

/** The child's id follows from its parent's block run, so a woken or resumed parent finds the same child. */
export function childExecutionId(parentExecutionId: string, key: string): string {
  return `${parentExecutionId}-${createHash('sha256').update(key).digest('hex').slice(0, 10)}`;
}
