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
