/** A workflow's stored versions (SPEC §4.1): the list, with the deployed one marked, and one version. */
import { TroupeError } from '../errors.js';
import type { Page, PageOptions, Store, StoredWorkflow } from '../store/types.js';
import { workflowNotFound } from './keys.js';

export interface VersionView {
  version: number;
  createdAt: string;
  /** the version the deployment pins */
  deployed: boolean;
}

export class VersionService {
  constructor(private readonly store: Store) {}

  /** Newest first; 404 NOT_FOUND when the workflow does not exist. */
  async list(workflowId: string, opts: PageOptions): Promise<Page<VersionView>> {
    if ((await this.store.workflows.get(workflowId)) === null) throw workflowNotFound(workflowId);
    const [page, deployment] = await Promise.all([this.store.workflows.listVersions(workflowId, opts), this.store.deployments.get(workflowId)]);
    return {
      items: page.items.map((v) => ({ version: v.version, createdAt: v.createdAt, deployed: deployment?.version === v.version })),
      nextCursor: page.nextCursor,
    };
  }

  /** 404 NOT_FOUND for an unknown workflow or version (details say which). */
  async get(workflowId: string, version: number): Promise<StoredWorkflow> {
    const found = await this.store.workflows.getVersion(workflowId, version);
    if (found !== null) return found;
    if ((await this.store.workflows.get(workflowId)) === null) throw workflowNotFound(workflowId);
    throw versionNotFound(workflowId, version);
  }
}

export function versionNotFound(workflowId: string, version: number): TroupeError {
  return new TroupeError('NOT_FOUND', `workflow ${workflowId} has no version ${version}`, { details: { workflowId, version } });
}
