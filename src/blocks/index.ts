import { z } from 'zod';
import { isWholePlaceholder, parseReference } from '../model/ref-parse.js';
import type { BlockTypeInfo, BlockTypeRegistry } from '../model/types.js';
import { apiBlock } from './api.js';
import { conditionBlock } from './condition.js';
import { functionBlock } from './function.js';
import { loopBlock } from './loop.js';
import { parallelBlock } from './parallel.js';
import { responseBlock } from './response.js';
import { routerBlock } from './router.js';
import { toPointer, zodIssues } from './schemas.js';
import { starterBlock } from './starter.js';
import type { AnyBlockType } from './types.js';

export { apiBlock, conditionBlock, functionBlock, loopBlock, parallelBlock, responseBlock, routerBlock, starterBlock };
export { validateStarterInput, checkStarterInput } from './starter.js';

/** Every block type by its `type` name: runnable ones and containers (run by container actors). */
export const blockTypes: Record<string, AnyBlockType> = {
  starter: starterBlock,
  api: apiBlock,
  function: functionBlock,
  condition: conditionBlock,
  router: routerBlock,
  response: responseBlock,
  loop: loopBlock,
  parallel: parallelBlock,
};

/** What the pure model needs to validate workflows: the block types seen through BlockTypeInfo. */
export function blockTypeRegistry(types: Readonly<Record<string, AnyBlockType>> = blockTypes): BlockTypeRegistry {
  const registry: Record<string, BlockTypeInfo> = {};
  for (const [name, type] of Object.entries(types)) registry[name] = blockTypeInfo(type);
  return Object.freeze(registry);
}

/**
 * A config value that is exactly one reference or `{{SECRET}}` is known only at run time, where
 * the resolved config is checked against the schema again (INVALID_CONFIG). Validation does not
 * hold the placeholder's text against its field's type: any string may hold a reference (SPEC
 * §1.2), so `"timeoutMs": "<start.timeout>"` is as valid as `"status": "<api.status>"`.
 *
 * That leniency holds only where the config stands without the value (an optional field, or one
 * with a default): a field the config cannot do without (a loop's `kind`, a condition's branch
 * ids, its `branches`) is structure, needed now, and keeps its issue. The starter gets none: its
 * config is read unresolved, before the run, to check the input (422 INVALID_INPUT).
 */
interface Judged {
  issues: z.core.$ZodIssue[];
  /** the parsed config (defaults standing in for run-time values), when it is acceptable */
  data?: unknown;
}

function judgeConfig(type: AnyBlockType, config: unknown): Judged {
  const parsed = type.configSchema.safeParse(config);
  if (parsed.success) return { issues: [], data: parsed.data };
  const all = parsed.error.issues;
  const candidates = all.filter((i) => mayWait(type, config, i));
  const waiting = new Set(candidates.filter((c) => standsWithout(type, config, c, all)).map((c) => toPointer(c.path)));
  const issues = all.filter((i) => !waiting.has(toPointer(i.path)));
  if (issues.length > 0 || waiting.size === 0) return { issues };
  const reparsed = type.configSchema.safeParse(withoutValuesAt(config, candidates.filter((c) => waiting.has(toPointer(c.path)))));
  return reparsed.success ? { issues: [], data: reparsed.data } : { issues: reparsed.error.issues };
}

/**
 * Whether the value at an issue may be one known only at run time: a whole reference (it keeps
 * the referenced value's type), or a whole `{{NAME}}` where text fits (a secret is text). Never
 * in the starter, a code field (not resolved as text) or a field that decides the block's shape
 * or handles.
 */
function mayWait(type: AnyBlockType, config: unknown, issue: z.core.$ZodIssue): boolean {
  const top = issue.path[0];
  if (type.type === 'starter' || typeof top !== 'string') return false;
  if (type.codeFields?.includes(top) === true || type.literalFields?.includes(top) === true) return false;
  const value = valueAt(config, issue.path);
  if (typeof value !== 'string' || !isWholePlaceholder(value)) return false;
  if (parseReference(value) !== null) return true;
  const asText = type.configSchema.safeParse(withValueAt(config, issue.path, '1'));
  return asText.success || asText.error.issues.every((i) => toPointer(i.path) !== toPointer(issue.path));
}

/** Removing the value raises no issue the config did not have already (a required field would). */
function standsWithout(type: AnyBlockType, config: unknown, issue: z.core.$ZodIssue, all: readonly z.core.$ZodIssue[]): boolean {
  const reparsed = type.configSchema.safeParse(withoutValuesAt(config, [issue]));
  if (reparsed.success) return true;
  const known = new Set(all.map((i) => toPointer(i.path)));
  const own = toPointer(issue.path);
  return reparsed.error.issues.every((i) => toPointer(i.path) !== own && known.has(toPointer(i.path)));
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/** The config with one value replaced. */
function withValueAt(config: unknown, path: readonly PropertyKey[], value: unknown): unknown {
  const copy = structuredClone(config);
  const parent = valueAt(copy, path.slice(0, -1));
  const key = path[path.length - 1];
  if (parent !== null && typeof parent === 'object' && key !== undefined) (parent as Record<PropertyKey, unknown>)[key] = value;
  return copy;
}

/** The config without the values at these issues' paths, so defaults can stand in for them. */
function withoutValuesAt(config: unknown, issues: readonly z.core.$ZodIssue[]): unknown {
  const copy = structuredClone(config);
  for (const issue of issues) {
    const parent = valueAt(copy, issue.path.slice(0, -1));
    const key = issue.path[issue.path.length - 1];
    if (parent !== null && typeof parent === 'object' && key !== undefined) delete (parent as Record<PropertyKey, unknown>)[key];
  }
  return copy;
}

function blockTypeInfo(type: AnyBlockType): BlockTypeInfo {
  const info: BlockTypeInfo = {
    validateConfig: (config) => zodIssues(new z.ZodError(judgeConfig(type, config).issues)),
    handles(config) {
      // handles() expects a parsed config (defaults applied); an invalid one has none to offer
      const judged = judgeConfig(type, config);
      return judged.data === undefined ? [] : type.handles(judged.data as Parameters<typeof type.handles>[0]);
    },
  };
  if (type.codeFields !== undefined) info.codeFields = type.codeFields;
  return info;
}
