import { ValidationError } from '../errors.js';
import { compileWorkflow, type CompiledWorkflow } from '../model/graph.js';
import type { BlockTypeRegistry, WorkflowDef } from '../model/types.js';
import { validateWorkflow } from '../model/validate.js';

/** Validates a submitted document and compiles it, or throws INVALID_WORKFLOW with every issue. */
export function loadWorkflow(doc: unknown, registry: BlockTypeRegistry): { def: WorkflowDef; compiled: CompiledWorkflow } {
  const checked = validateWorkflow(withName(doc), registry);
  if (!checked.ok) {
    throw new ValidationError('INVALID_WORKFLOW', `workflow is invalid (${checked.issues.length} issue(s))`, checked.issues);
  }
  // A schedule whose input the starter would refuse is not refused here: the SPEC's own example
  // (a required `city`, a nightly schedule with no input) is a valid workflow. Its runs fail
  // with INVALID_INPUT, recorded like any failed run.
  return { def: checked.workflow, compiled: compileWorkflow(checked.workflow, registry) };
}

/**
 * The SPEC requires no workflow `name` (only its example has one): a document without one is
 * named after its id (after the generated one on create), or `workflow` when it has none.
 */
export function withName(doc: unknown): unknown {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return doc;
  const fields = doc as Record<string, unknown>;
  if (fields['name'] !== undefined) return doc;
  return { ...fields, name: typeof fields['id'] === 'string' && fields['id'] !== '' ? fields['id'] : 'workflow' };
}
