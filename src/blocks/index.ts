import { z } from 'zod';
import { isWholePlaceholder } from '../model/ref-parse.js';
import type { BlockTypeInfo, BlockTypeRegistry } from '../model/types.js';
import { apiBlock } from './api.js';
import { conditionBlock } from './condition.js';
import { functionBlock } from './function.js';
import { loopBlock } from './loop.js';
import { parallelBlock } from './parallel.js';
import { responseBlock } from './response.js';
import { routerBlock } from './router.js';
import { zodIssues } from './schemas.js';
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
 */
function knownNow(config: unknown, issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.filter((issue) => {
    const value = valueAt(config, issue.path);
    return !(typeof value === 'string' && isWholePlaceholder(value));
  });
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/** The config without the run-time values the schema refused, so its defaults stand in for them. */
function withoutRunTimeValues(config: unknown, issues: readonly z.core.$ZodIssue[]): unknown {
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
    validateConfig(config) {
      const parsed = type.configSchema.safeParse(config);
      if (parsed.success) return [];
      return zodIssues(new z.ZodError(knownNow(config, parsed.error.issues)));
    },
    handles(config) {
      // handles() expects a parsed config (defaults applied); an invalid one has none to offer
      const parsed = type.configSchema.safeParse(config);
      if (parsed.success) return type.handles(parsed.data);
      if (knownNow(config, parsed.error.issues).length > 0) return [];
      const reparsed = type.configSchema.safeParse(withoutRunTimeValues(config, parsed.error.issues));
      return reparsed.success ? type.handles(reparsed.data) : [];
    },
  };
  if (type.codeFields !== undefined) info.codeFields = type.codeFields;
  return info;
}
