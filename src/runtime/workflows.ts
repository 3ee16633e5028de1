import { checkStarterInput } from '../blocks/starter.js';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { compileWorkflow, type CompiledWorkflow } from '../model/graph.js';
import type { BlockTypeRegistry, WorkflowDef } from '../model/types.js';
import { validateWorkflow } from '../model/validate.js';

/** Validates a submitted document and compiles it, or throws INVALID_WORKFLOW with every issue. */
export function loadWorkflow(doc: unknown, registry: BlockTypeRegistry): { def: WorkflowDef; compiled: CompiledWorkflow } {
  const checked = validateWorkflow(doc, registry);
  if (!checked.ok) {
    throw new ValidationError('INVALID_WORKFLOW', `workflow is invalid (${checked.issues.length} issue(s))`, checked.issues);
  }
  const compiled = compileWorkflow(checked.workflow, registry);
  const issues = scheduleInputIssues(checked.workflow, compiled.blocks.get(compiled.starterId)?.config ?? {});
  if (issues.length > 0) throw new ValidationError('INVALID_WORKFLOW', `workflow is invalid (${issues.length} issue(s))`, issues);
  return { def: checked.workflow, compiled };
}

/** A schedule's input is the starter's input on every fire: one the starter refuses would fail them all. */
function scheduleInputIssues(def: WorkflowDef, starterConfig: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  (def.triggers ?? []).forEach((t, i) => {
    if (t.type !== 'schedule') return;
    for (const issue of checkStarterInput(starterConfig, t.input ?? {}).issues) {
      issues.push({ path: `/triggers/${i}/input${issue.path}`, message: issue.message });
    }
  });
  return issues;
}
