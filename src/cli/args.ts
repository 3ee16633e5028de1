/**
 * The command line of each command: node's parseArgs, stricter. A value given twice
 * (`--input a --input b`) and an argument the command does not take are refused rather than
 * silently dropped, with exit code 2 and the usage (src/cli/index.ts).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class ArgumentError extends Error {
  override readonly name = 'ArgumentError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

export function commandLine<O extends Options>(args: string[], options: O, maxPositionals: number) {
  const parsed = parseArgs({ args, options, allowPositionals: maxPositionals > 0, tokens: true, strict: true });
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new ArgumentError(`option --${token.name} is given more than once`);
    seen.add(token.name);
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new ArgumentError(`unexpected argument "${parsed.positionals[maxPositionals] ?? ''}"`);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}
