/** Workflows CRUD with versions (SPEC §4.1): validated on every write, ids generated when absent. */
import { randomUUID } from 'node:crypto';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { capabilitiesOf } from '../model/capabilities.js';
import type { BlockTypeRegistry, WorkflowDef } from '../model/types.js';
import { isWholePlaceholder } from '../model/ref-parse.js';
import { loadWorkflow } from '../runtime/workflows.js';
import type { Page, PageOptions, Store, StoredWorkflow } from '../store/types.js';
import type { CompiledCache } from './compiled-cache.js';
import { workflowNotFound } from './keys.js';
import type { LookupCache } from './lookup-cache.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A workflow block naming a workflow that does not exist is refused when saved (SPEC §2.1), when
 * the name is literal; a reference is checked when the block runs. A workflow may call itself.
 */
async function checkCalledWorkflows(store: Store, def: WorkflowDef): Promise<void> {
  const issues: ValidationIssue[] = [];
  for (const [index, block] of def.blocks.entries()) {
    const called = capabilitiesOf(block.type).startsWorkflow ? (block.config as { workflowId?: unknown } | undefined)?.workflowId : undefined;
    if (typeof called !== 'string' || isWholePlaceholder(called) || called === def.id) continue;
    if ((await store.workflows.get(called)) === null) issues.push({ path: `/blocks/${index}/config/workflowId`, message: `workflow "${called}" does not exist` });
  }
  if (issues.length > 0) throw new ValidationError('INVALID_WORKFLOW', `workflow is invalid (${issues.length} issue(s))`, issues);
}

export class WorkflowService {
  constructor(
    private readonly store: Store,
    private readonly registry: BlockTypeRegistry,
    private readonly cache: CompiledCache,
    private readonly lookups: LookupCache,
  ) {}

  /** 422 INVALID_WORKFLOW with every issue; CONFLICT when the id is taken. */
  async create(doc: unknown): Promise<StoredWorkflow> {
    const withId = isObject(doc) && doc['id'] === undefined ? { ...doc, id: randomUUID() } : doc;
    const { def } = loadWorkflow(withId, this.registry);
    await checkCalledWorkflows(this.store, def);
    return this.store.workflows.create({ ...def, id: def.id ?? randomUUID() });
  }

  async get(id: string): Promise<StoredWorkflow> {
    const found = await this.store.workflows.get(id);
    if (found === null) throw workflowNotFound(id);
    return found;
  }

  async list(opts: PageOptions): Promise<Page<StoredWorkflow>> {
    return this.store.workflows.list(opts);
  }

  /**
   * Writes version+1. The document may omit `id`; when it names one, it must be this one (a
   * replace never renames).
   */
  async replace(id: string, doc: unknown): Promise<StoredWorkflow> {
    // PUT never creates: an unknown id is 404 whatever the document holds
    await this.get(id);
    if (isObject(doc) && doc['id'] !== undefined && doc['id'] !== id) {
      throw new ValidationError('INVALID_WORKFLOW', 'workflow is invalid (1 issue(s))', [
        { path: '/id', message: `must be "${id}" (the id in the URL) or absent` },
      ]);
    }
    const { def } = loadWorkflow(isObject(doc) ? { ...doc, id } : doc, this.registry);
    await checkCalledWorkflows(this.store, def);
    const stored = await this.store.workflows.replace(id, def);
    if (stored === null) throw workflowNotFound(id);
    return stored;
  }

  /** Deletes the workflow with its versions, deployment and keys; its executions stay readable. */
  async delete(id: string): Promise<void> {
    const deleted = await this.store.workflows.delete(id);
    this.cache.forget(id);
    if (!deleted) throw workflowNotFound(id);
    this.lookups.changed(id);
  }
}
