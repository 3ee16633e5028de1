import { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { getOwn, setOwn } from '../model/own.js';
import { EVERY_ISSUE, isPlainObject, toPointer } from './schemas.js';
import type { BlockType } from './types.js';

const FIELD_TYPES = ['string', 'number', 'boolean', 'object', 'array', 'any'] as const;
type FieldType = (typeof FIELD_TYPES)[number];

const fieldSchema = z.object({
  name: z.string().min(1, 'a field name is required'),
  type: z.enum(FIELD_TYPES).default('any'),
  required: z.boolean().optional(),
  description: z.string().optional(),
  default: z.unknown().optional(),
});

export const starterConfigSchema = z
  .object({ inputFormat: z.array(fieldSchema).optional() })
  .superRefine((config, ctx) => {
    // runs on a partly broken config too (EVERY_ISSUE): a field may be any value here
    const fields: unknown[] = Array.isArray(config.inputFormat) ? config.inputFormat : [];
    const seen = new Set<string>();
    fields.forEach((field, index) => {
      if (!isPlainObject(field)) return;
      const { name, type } = field;
      if (typeof name === 'string' && seen.has(name)) ctx.addIssue({ code: 'custom', path: ['inputFormat', index, 'name'], message: `duplicate field "${name}"` });
      if (typeof name === 'string') seen.add(name);
      const fieldType = (FIELD_TYPES as readonly unknown[]).includes(type) ? (type as FieldType) : undefined;
      if (field['default'] !== undefined && fieldType !== undefined && !matchesType(field['default'], fieldType)) {
        ctx.addIssue({ code: 'custom', path: ['inputFormat', index, 'default'], message: `the default must be ${article(fieldType)}` });
      }
    });
  }, EVERY_ISSUE);

export type StarterConfig = z.infer<typeof starterConfigSchema>;

function matchesType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'any':
      return true;
  }
}

function article(type: FieldType): string {
  return type === 'any' ? 'any value' : type === 'object' || type === 'array' ? `an ${type}` : `a ${type}`;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export interface StarterInputCheck {
  issues: ValidationIssue[];
  /** the input with defaults filled in (the input unchanged when it is not an object) */
  value: unknown;
}

/**
 * Checks a trigger's input against `inputFormat`: required fields present, types as declared
 * (no coercion: "3" is not a number), defaults filled in for missing optional fields. Fields
 * not in `inputFormat` pass through. A missing input (undefined/null) counts as `{}`.
 */
export function checkStarterInput(config: StarterConfig | Record<string, unknown>, input: unknown): StarterInputCheck {
  const fields = inputFields(config);
  if (fields.length === 0) return { issues: [], value: input };
  const source = input === undefined || input === null ? {} : input;
  if (!isPlainObject(source)) {
    const names = fields.map((f) => f.name).join(', ');
    return { issues: [{ path: '', message: `input must be a JSON object with the fields ${names}, got ${kindOf(source)}` }], value: input };
  }
  const value: Record<string, unknown> = { ...source };
  const issues: ValidationIssue[] = [];
  for (const field of fields) {
    const path = toPointer([field.name]);
    // own properties only: a field named constructor or __proto__ is data like any other
    const given = getOwn(value, field.name);
    if (given === undefined) {
      if (field.default !== undefined) setOwn(value, field.name, structuredClone(field.default));
      else if (field.required === true) issues.push({ path, message: `${field.name} is required` });
      continue;
    }
    if (!matchesType(given, field.type)) {
      issues.push({ path, message: `${field.name} must be ${article(field.type)}, got ${kindOf(given)}` });
    }
  }
  return { issues, value };
}

type InputField = NonNullable<StarterConfig['inputFormat']>[number];

/**
 * The declared fields of a starter config, parsed once per config object: every execution checks
 * its input against them (the HTTP layer before starting, then the starter block), and configs
 * are the compiled workflow's, shared and never changed.
 */
const fieldsOf = new WeakMap<object, readonly InputField[]>();

function inputFields(config: StarterConfig | Record<string, unknown>): readonly InputField[] {
  let fields = fieldsOf.get(config);
  if (fields === undefined) {
    const parsed = starterConfigSchema.safeParse(config);
    fields = parsed.success ? (parsed.data.inputFormat ?? []) : [];
    fieldsOf.set(config, fields);
  }
  return fields;
}

/** The HTTP layer's check before it starts an execution: the issues, empty when the input is fine. */
export function validateStarterInput(config: StarterConfig | Record<string, unknown>, input: unknown): ValidationIssue[] {
  return checkStarterInput(config, input).issues;
}

export const starterBlock: BlockType<StarterConfig> = {
  type: 'starter',
  configSchema: starterConfigSchema,
  handles: () => ['success'],
  async run(ctx) {
    const { issues, value } = checkStarterInput(ctx.config, ctx.input);
    if (issues.length > 0) {
      const summary = issues.map((i) => i.message).join('; ');
      throw new ValidationError('INVALID_INPUT', `the input does not match the starter's inputFormat: ${summary}`, issues);
    }
    // Spread fields first so `input` and `trigger` always mean the same thing downstream.
    const output: Record<string, unknown> = { ...(isPlainObject(value) ? value : {}), input: value ?? null, trigger: ctx.trigger };
    if (ctx.conversationId !== undefined) output.conversationId = ctx.conversationId;
    return { output, handles: ['success'] };
  },
};
