import { SECRET_ENV_PREFIX } from '../../config/env-keys.js';
import type { CompiledWorkflow } from '../model/graph.js';
import { findSecretNames } from '../model/references.js';
import type { SecretSource } from './types.js';

/** `{{NAME}}` from the process environment as TROUPE_VAR_NAME (SPEC §6). */
export function envSecrets(env: NodeJS.ProcessEnv = process.env): SecretSource {
  return { get: async (name) => env[SECRET_ENV_PREFIX + name] };
}

/**
 * First source that knows the name wins: the secrets API, then the environment. Its `values`
 * are those of the sources that list theirs (the secrets API; the environment's TROUPE_VAR_*
 * may be plain settings, redacted only where a workflow names them).
 */
export function chainSecrets(...sources: SecretSource[]): SecretSource {
  const listing = sources.filter((s) => s.values !== undefined);
  const chained: SecretSource = {
    async get(name) {
      for (const source of sources) {
        const value = await source.get(name);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
  const only = listing[0];
  if (listing.length === 1 && only !== undefined) chained.values = () => only.values?.() ?? NO_VALUES;
  else if (listing.length > 1) chained.values = () => mergeValues(listing);
  return chained;
}

const NO_VALUES: ReadonlyMap<string, string> = new Map();

async function mergeValues(sources: readonly SecretSource[]): Promise<ReadonlyMap<string, string>> {
  const merged = new Map<string, string>();
  for (const source of [...sources].reverse()) for (const [k, v] of await (source.values?.() ?? new Map<string, string>())) merged.set(k, v);
  return merged;
}

const secretNames = new WeakMap<CompiledWorkflow, string[]>();

/** The `{{NAME}}`s a compiled workflow uses, found once per compiled workflow, not per execution. */
export function secretNamesOf(workflow: CompiledWorkflow): string[] {
  let names = secretNames.get(workflow);
  if (names === undefined) {
    const found = new Set<string>(workflow.triggerSecretNames ?? []);
    for (const block of workflow.blocks.values()) for (const n of findSecretNames(block.config)) found.add(n);
    names = [...found];
    secretNames.set(workflow, names);
  }
  return names;
}

/** The values of the secrets a workflow uses that `source` knows, to redact them. */
export async function secretValuesOf(workflow: CompiledWorkflow, source: SecretSource): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const name of secretNamesOf(workflow)) {
    const value = await source.get(name);
    if (value !== undefined) found.set(name, value);
  }
  return found;
}
