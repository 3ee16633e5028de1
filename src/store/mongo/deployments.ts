import type { Collection, Db } from 'mongodb';
import { iso } from '../shared.js';
import type { Deployment, DeploymentRepo } from '../types.js';
import { COLLECTIONS } from './collections.js';
import type { DeploymentDoc } from './collections.js';

function toDeployment(doc: DeploymentDoc): Deployment {
  const d: Deployment = { workflowId: doc._id, version: doc.version, deployedAt: doc.deployedAt };
  if (doc.endpoint !== null) d.endpoint = doc.endpoint;
  return d;
}

export class MongoDeployments implements DeploymentRepo {
  private readonly coll: Collection<DeploymentDoc>;

  constructor(db: Db) {
    this.coll = db.collection<DeploymentDoc>(COLLECTIONS.deployments);
  }

  async put(d: Deployment): Promise<Deployment> {
    const doc: DeploymentDoc = { _id: d.workflowId, version: d.version, deployedAt: iso(d.deployedAt), endpoint: d.endpoint ?? null };
    const { _id, ...fields } = doc;
    await this.coll.replaceOne({ _id }, fields, { upsert: true });
    return toDeployment(doc);
  }

  async get(workflowId: string): Promise<Deployment | null> {
    const doc = await this.coll.findOne({ _id: workflowId });
    return doc ? toDeployment(doc) : null;
  }

  async delete(workflowId: string): Promise<boolean> {
    return (await this.coll.deleteOne({ _id: workflowId })).deletedCount > 0;
  }
}
