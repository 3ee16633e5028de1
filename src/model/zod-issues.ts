/** Turning zod's issues into what validation reports. */
import type { z } from 'zod';

/**
 * Drops the issues that follow a wrong-type issue at the same path. zod runs its length checks on
 * any value that has a length, so `"to": []` for a string field also got "Too small: expected
 * array to have >=1 items", a rule about a type the field never takes.
 */
export function withoutFollowUps<T extends z.core.$ZodIssue>(issues: readonly T[]): T[] {
  const wrongType = new Set<string>();
  return issues.filter((issue) => {
    const at = JSON.stringify(issue.path.map(String));
    if (wrongType.has(at)) return false;
    if (issue.code === 'invalid_type') wrongType.add(at);
    return true;
  });
}
