/**
 * validateWorkflow (SPEC §1): structure first, element by element so that every broken block,
 * connection or trigger is reported, then the rules that need the whole document. All issues
 * are collected; paths are JSON Pointers into the submitted document. Pure: the caller turns
 * issues into ValidationError('INVALID_WORKFLOW', ...).
 */
import type { z } from 'zod';
import { isPlainObject, toPointer, type PathSegment } from './json.js';
import { assignOwn } from './own.js';
import { blockSchema, connectionSchema, triggerSchema, workflowSchema, workflowShellSchema } from './schema.js';
import type { BlockTypeRegistry, WorkflowDef } from './types.js';
import { checkBlocks, registerBlocks } from './validate-blocks.js';
import { ValidationContext, type ValidationIssue } from './validate-context.js';
import { checkConnections } from './validate-graph.js';
import { checkReferences } from './validate-refs.js';
import { checkTriggers } from './validate-triggers.js';
import { withoutFollowUps } from './zod-issues.js';

export type { ValidationIssue } from './validate-context.js';
export type ValidationResult = { ok: true; workflow: WorkflowDef } | { ok: false; issues: ValidationIssue[] };

function zodIssues(ctx: ValidationContext, prefix: PathSegment[], error: z.ZodError): void {
  for (const issue of withoutFollowUps(error.issues)) {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    ctx.add(toPointer([...prefix, ...path]), issue.message);
  }
}

/** Parses each element on its own; returns the valid ones with their positions. */
function elements<T>(ctx: ValidationContext, key: string, raw: unknown, schema: z.ZodType<T>): { index: number; def: T }[] {
  if (!Array.isArray(raw)) return [];
  const out: { index: number; def: T }[] = [];
  raw.forEach((item: unknown, index) => {
    const parsed = schema.safeParse(item);
    if (parsed.success) out.push({ index, def: parsed.data });
    else zodIssues(ctx, [key, index], parsed.error);
  });
  return out;
}

function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path}\n${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function validateWorkflow(doc: unknown, registry: BlockTypeRegistry): ValidationResult {
  const ctx = new ValidationContext(registry);
  if (!isPlainObject(doc)) return { ok: false, issues: [{ path: '', message: 'a workflow must be a JSON object' }] };
  const shell = workflowShellSchema.safeParse(doc);
  if (!shell.success) zodIssues(ctx, [], shell.error);
  const rawBlocks = Array.isArray(doc['blocks']) ? (doc['blocks'] as unknown[]) : [];
  for (const raw of rawBlocks) {
    if (isPlainObject(raw) && typeof raw['id'] === 'string') ctx.rawIds.add(raw['id']);
  }
  registerBlocks(ctx, elements(ctx, 'blocks', doc['blocks'], blockSchema));
  const connections = elements(ctx, 'connections', doc['connections'], connectionSchema);
  const triggers = elements(ctx, 'triggers', doc['triggers'], triggerSchema);
  if (Array.isArray(doc['blocks'])) {
    checkBlocks(ctx);
    checkConnections(ctx, connections);
    checkReferences(ctx);
  }
  checkTriggers(ctx, triggers);
  if (ctx.issues.length > 0) return { ok: false, issues: dedupe(ctx.issues) };
  const parsed = workflowSchema.safeParse(doc);
  if (!parsed.success) {
    zodIssues(ctx, [], parsed.error);
    return { ok: false, issues: dedupe(ctx.issues) };
  }
  const workflow = parsed.data;
  // zod rebuilds a record by assignment, which makes a `__proto__` key the prototype: keep the given keys
  if (workflow.variables !== undefined && isPlainObject(doc['variables'])) {
    const variables: Record<string, unknown> = {};
    assignOwn(variables, doc['variables']);
    workflow.variables = variables;
  }
  return { ok: true, workflow };
}

/** Pointer-prefixed issue list as one readable line per issue (CLI `validate`, error messages). */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((i) => `${i.path || '/'}: ${i.message}`).join('\n');
}
