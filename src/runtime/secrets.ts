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
 * are those of the first source that lists its own (the secrets API; the environment's
 * TROUPE_VAR_* may be plain settings, redacted only where a workflow names them).
 */
export function chainSecrets(...sources: SecretSource[]): SecretSource {
  const chained: SecretSource = {
    async get(name) {
      for (const source of sources) {
        const value = await source.get(name);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
  const listing = sources.find((s) => s.values !== undefined);
  if (listing?.values !== undefined) chained.values = listing.values.bind(listing);
  return chained;
}

export const NO_SECRET_VALUES: ReadonlyMap<string, string> = new Map();

/** the shortest value of a stored secret a run does not name that is still redacted */
const MIN_UNNAMED_SECRET = 4;

/**
 * A run's secrets before those it names: the process's own keys and every stored secret's
 * value (SPEC §3: every occurrence of a secret's value), under names no `{{NAME}}` can spell (a
 * ':'), so they are redacted and never readable. A value too short to redact where the run does
 * not name it is left out: a secret `1` would blank unrelated text, and one of blanks (`"    "`)
 * every run of spaces; so it is measured without its surrounding whitespace.
 */
export function unnamedSecrets(processKeys: readonly string[] | undefined, stored: ReadonlyMap<string, string>): Map<string, string> {
  const found = new Map<string, string>();
  processKeys?.forEach((value, i) => {
    if (redactedUnnamed(value)) found.set(`process:${i}`, value);
  });
  for (const [name, value] of stored) if (redactedUnnamed(value)) found.set(`stored:${name}`, value);
  return found;
}

function redactedUnnamed(value: string): boolean {
  return value.trim().length >= MIN_UNNAMED_SECRET;
}

/** A run's secrets: those above, and the ones its workflow names, read from `source`. */
export async function runSecrets(
  names: readonly string[],
  source: SecretSource,
  processKeys?: readonly string[],
  stored: ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>> = source.values?.() ?? NO_SECRET_VALUES,
): Promise<Map<string, string>> {
  const found = unnamedSecrets(processKeys, await stored);
  await Promise.all(
    names.map(async (name) => {
      const value = await source.get(name);
      if (value !== undefined) found.set(name, value);
    }),
  );
  return found;
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
