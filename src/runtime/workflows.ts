import { ValidationError } from '../errors.js';
import { compileWorkflow, type CompiledWorkflow } from '../model/graph.js';
import type { BlockTypeRegistry, WorkflowDef } from '../model/types.js';
import { validateWorkflow } from '../model/validate.js';

/** Validates a submitted document and compiles it, or throws INVALID_WORKFLOW with every issue. */
export function loadWorkflow(doc: unknown, registry: BlockTypeRegistry): { def: WorkflowDef; compiled: CompiledWorkflow } {
  const checked = validateWorkflow(doc, registry);
  if (!checked.ok) {
    throw new ValidationError('INVALID_WORKFLOW', `workflow is invalid (${checked.issues.length} issue(s))`, checked.issues);
  }
  // A schedule whose input the starter would refuse is not refused here: the SPEC's own example
  // (a required `city`, a nightly schedule with no input) is a valid workflow. Its runs fail
  // with INVALID_INPUT, recorded like any failed run.
  return { def: checked.workflow, compiled: compileWorkflow(checked.workflow, registry) };
}
