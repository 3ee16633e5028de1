import { readFile } from 'node:fs/promises';
import { TroupeError } from '../errors.js';

export async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new TroupeError('NOT_FOUND', `cannot read ${path}: ${(err as Error).message}`);
  }
  return parseJson(text, path);
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new TroupeError('INVALID_JSON', `${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * The value of `run --input`: JSON text, or `@path` for a file of JSON and `@-` for stdin (curl's
 * convention). No JSON text starts with `@`, so the two forms cannot be mistaken for each other.
 */
export async function readInput(value: string): Promise<unknown> {
  if (!value.startsWith('@')) return parseJson(value, '--input');
  const path = value.slice(1);
  if (path === '-') return parseJson(await readStdin(), '--input @- (stdin)');
  return readJsonFile(path);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
