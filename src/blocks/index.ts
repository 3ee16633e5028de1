import { z } from 'zod';
import { CAPABILITIES, capabilitiesOf, isEntry } from '../model/capabilities.js';
import { isWholePlaceholder, parseReference } from '../model/ref-parse.js';
import { DEFAULT_LIMITS, type ExecutionLimits } from '../model/limits.js';
import type { BlockTypeInfo, BlockTypeRegistry } from '../model/types.js';
import { agentBlock } from './agent.js';
import { apiBlock } from './api.js';
import { conditionBlock } from './condition.js';
import { functionBlock } from './function.js';
import { loopBlock } from './loop.js';
import { memoryBlock } from './memory.js';
import { parallelBlock } from './parallel.js';
import { responseBlock } from './response.js';
import { routerBlock } from './router.js';
import { isPlainObject, toPointer, zodIssues } from './schemas.js';
import { starterBlock } from './starter.js';
import { waitBlock } from './wait.js';
import { approvalBlock } from './approval.js';
import { workflowBlock } from './workflow.js';
import { isContainerType, type AnyBlockType } from './types.js';

export { agentBlock, apiBlock, conditionBlock, functionBlock, loopBlock, memoryBlock, parallelBlock, responseBlock, routerBlock, starterBlock, waitBlock };
export { setMaxWaitDays } from './wait.js';
export { validateStarterInput, checkStarterInput } from './starter.js';

/** Every block type by its `type` name: runnable ones and containers (run by container actors). */
export const blockTypes: Record<string, AnyBlockType> = {
  starter: starterBlock,
  api: apiBlock,
  function: functionBlock,
  condition: conditionBlock,
  router: routerBlock,
  response: responseBlock,
  agent: agentBlock,
  memory: memoryBlock,
  loop: loopBlock,
  parallel: parallelBlock,
  wait: waitBlock,
  approval: approvalBlock,
  workflow: workflowBlock,
};

/**
 * Where the registry and src/model/capabilities.ts disagree: a type registered without declared
 * capabilities, capabilities declared for no registered type, or a container flag that differs.
 */
export function capabilityMismatches(types: Readonly<Record<string, AnyBlockType>> = blockTypes): string[] {
  const out: string[] = [];
  for (const [name, type] of Object.entries(types)) {
    if (!Object.hasOwn(CAPABILITIES, name)) out.push(`block type "${name}" has no capabilities declared in src/model/capabilities.ts`);
    else if (capabilitiesOf(name).contains !== isContainerType(type)) out.push(`block type "${name}": contains children in one of the registry and capabilities.ts only`);
  }
  for (const name of Object.keys(CAPABILITIES)) if (!Object.hasOwn(types, name)) out.push(`capabilities declared for "${name}", which is no registered block type`);
  return out;
}

// a disagreement is a programming error: it must stop the process before it runs anything
const mismatches = capabilityMismatches();
if (mismatches.length > 0) throw new Error(`block registry: ${mismatches.join('; ')}`);

/**
 * What the pure model needs to validate workflows: the block types seen through BlockTypeInfo,
 * refusing literal container settings that cannot fit `limits` (the service's configured ones).
 */
export function blockTypeRegistry(types: Readonly<Record<string, AnyBlockType>> = blockTypes, limits: ExecutionLimits = DEFAULT_LIMITS): BlockTypeRegistry {
  const registry: Record<string, BlockTypeInfo> = {};
  for (const [name, type] of Object.entries(types)) registry[name] = blockTypeInfo(type, limits);
  return Object.freeze(registry);
}

/**
 * Validation of a block config. A value known only at run time (see mayWait) is not held against
 * its field's type: the resolved config is checked against the schema again when the block runs
 * (INVALID_CONFIG). Any string may hold a reference (SPEC §1.2), so `"timeoutMs": "<start.t>"` is
 * as valid as `"status": "<api.status>"`. That holds only where the config stands without the
 * value (standsWithout): a field it cannot do without is needed when the workflow is saved.
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
  const known = new Set(all.map((i) => toPointer(i.path)));
  const waiting = all.filter((i) => mayWait(type, config, i) && standsWithout(type, config, i, known));
  const waitingAt = new Set(waiting.map((i) => toPointer(i.path)));
  const issues = all.filter((i) => !waitingAt.has(toPointer(i.path)));
  if (issues.length > 0 || waiting.length === 0) return { issues };
  const reparsed = type.configSchema.safeParse(edited(config, waiting, DELETE));
  return reparsed.success ? { issues: [], data: reparsed.data } : { issues: reparsed.error.issues };
}

/**
 * Whether the value at an issue may be one known only at run time: a whole reference (it keeps
 * the referenced value's type), or a whole `{{NAME}}` where text fits (a secret is text). Never
 * in the starter (its config is read unresolved to check the input before the run), a code field
 * (not resolved as text) or a field that decides the block's shape or handles.
 */
function mayWait(type: AnyBlockType, config: unknown, issue: z.core.$ZodIssue): boolean {
  const top = issue.path[0];
  if (isEntry(type.type) || typeof top !== 'string') return false;
  if (type.codeFields?.includes(top) === true || type.literalFields?.includes(top) === true) return false;
  const value = valueAt(config, issue.path);
  if (typeof value !== 'string' || !isWholePlaceholder(value)) return false;
  if (parseReference(value) !== null) return true;
  return !hasIssueAt(type.configSchema.safeParse(edited(config, [issue], '1')), issue);
}

/** Removing the value raises no issue the config did not have already (a required field would). */
function standsWithout(type: AnyBlockType, config: unknown, issue: z.core.$ZodIssue, known: ReadonlySet<string>): boolean {
  const reparsed = type.configSchema.safeParse(edited(config, [issue], DELETE));
  return !hasIssueAt(reparsed, issue) && (reparsed.success || reparsed.error.issues.every((i) => known.has(toPointer(i.path))));
}

function hasIssueAt(result: z.ZodSafeParseResult<unknown>, issue: z.core.$ZodIssue): boolean {
  const at = toPointer(issue.path);
  return !result.success && result.error.issues.some((i) => toPointer(i.path) === at);
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

const DELETE = Symbol('delete');

/** A copy of the config with the values at these issues' paths replaced, or removed (DELETE). */
function edited(config: unknown, at: readonly z.core.$ZodIssue[], value: unknown): unknown {
  const copy = structuredClone(config);
  for (const { path } of at) {
    const parent = valueAt(copy, path.slice(0, -1));
    const key = path[path.length - 1];
    if (parent === null || typeof parent !== 'object' || key === undefined) continue;
    if (value === DELETE) delete (parent as Record<PropertyKey, unknown>)[key];
    else (parent as Record<PropertyKey, unknown>)[key] = value;
  }
  return copy;
}

function blockTypeInfo(type: AnyBlockType, limits: ExecutionLimits): BlockTypeInfo {
  const info: BlockTypeInfo = {
    validateConfig(config) {
      const judged = judgeConfig(type, config);
      const issues = zodIssues(new z.ZodError(judged.issues));
      const saved = judged.data !== undefined && 'validateSaved' in type && type.validateSaved !== undefined ? type.validateSaved(judged.data) : [];
      const all = [...issues, ...saved.map((i) => ({ path: toPointer(i.path), message: i.message }))];
      // only a config that is otherwise valid: a bad one already says what is wrong with it
      if (all.length > 0 || !isContainerType(type) || type.limitIssues === undefined || !isPlainObject(config)) return all;
      return type.limitIssues(config, limits);
    },
    handles(config) {
      // handles() expects a parsed config (defaults applied); an invalid one has none to offer
      const judged = judgeConfig(type, config);
      return judged.data === undefined ? [] : type.handles(judged.data as Parameters<typeof type.handles>[0]);
    },
  };
  if (type.codeFields !== undefined) info.codeFields = type.codeFields;
  return info;
}

