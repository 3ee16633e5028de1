import { z } from 'zod';
import { TroupeError } from '../errors.js';
import { MAX_JSON_DEPTH, jsonTextNestsTooDeep } from '../model/json.js';
import { isPlainObject } from './schemas.js';

/**
 * Structured output of the agent: `responseFormat` is a JSON Schema for an object, given as is
 * or as `{ name?, schema }`. The answer must parse as JSON and match it; its fields are added to
 * the block's output.
 */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The schema may also come as JSON text (as editors store it). */
function parsedText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

export const responseFormatSchema = z.preprocess(parsedText, z
  .record(z.string(), z.unknown(), 'a response format is a JSON Schema object (or its JSON text)')
  .transform((value, ctx) => {
    const wrapped = isPlainObject(value['schema']);
    const schema = (wrapped ? value['schema'] : value) as Record<string, unknown>;
    const name = nameOf(value);
    if (!NAME.test(name)) ctx.addIssue({ code: 'custom', path: ['name'], message: 'a response format name is 1-64 letters, digits, _ or -' });
    if (schema['type'] !== undefined && schema['type'] !== 'object') {
      ctx.addIssue({ code: 'custom', path: wrapped ? ['schema', 'type'] : ['type'], message: 'a response format describes an object ("type": "object")' });
    }
    return { name, schema: { type: 'object', ...schema } };
  }));

/** `{ name, schema }` names itself; a bare schema is "response". */
function nameOf(format: Record<string, unknown>): string {
  return isPlainObject(format['schema']) && typeof format['name'] === 'string' ? format['name'] : 'response';
}

/**
 * The name of a response format as written (object or JSON text), or undefined when it is no
 * format: for checks that run on a config whose other fields may have failed their type.
 */
export function responseFormatName(raw: unknown): string | undefined {
  const value = parsedText(raw);
  return isPlainObject(value) ? nameOf(value) : undefined;
}

/** Models often wrap JSON in a Markdown fence even when asked not to. */
export function unfenced(content: string): string {
  const fenced = /^\s*```[A-Za-z]*\s*\n([\s\S]*?)\n?```\s*$/.exec(content);
  return fenced?.[1] ?? content;
}

export function structuredFields(content: string, schema: Record<string, unknown>): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(unfenced(content));
  } catch {
    throw new TroupeError('INVALID_MODEL_OUTPUT', 'the model was asked for JSON and answered with text that is not JSON', { details: { content: content.slice(0, 500) } });
  }
  if (!isPlainObject(parsed)) throw new TroupeError('INVALID_MODEL_OUTPUT', 'the model was asked for a JSON object and answered with another value');
  if (jsonTextNestsTooDeep(content, parsed)) throw new TroupeError('INVALID_MODEL_OUTPUT', `the model's answer nests deeper than ${MAX_JSON_DEPTH} levels`);
  const problems = schemaProblems(parsed, schema);
  if (problems.length > 0) {
    throw new TroupeError('INVALID_MODEL_OUTPUT', `the model's answer does not match the response format: ${problems.join('; ')}`, { details: { issues: problems } });
  }
  return parsed;
}

/** Checked with zod's JSON Schema reader; a schema it cannot read is not held against the answer. */
function schemaProblems(value: unknown, schema: Record<string, unknown>): string[] {
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return [];
  }
  const result = validator.safeParse(value);
  if (result.success) return [];
  return result.error.issues.slice(0, 10).map((i) => (i.path.length === 0 ? i.message : `${i.path.join('.')}: ${i.message}`));
}
