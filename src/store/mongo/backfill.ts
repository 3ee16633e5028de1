/**
 * Deployments made before the webhook and schedule indexes existed (the SQLite migration does
 * the same in SQL): when this start created those collections, fill them from what is deployed,
 * so existing webhooks and schedules go live without a redeploy. Writes are upserts, so two
 * instances starting together do no harm.
 */
import type { Db } from 'mongodb';
import { fromJson } from '../shared.js';
import { COLLECTIONS, isDuplicateKey } from './collections.js';
import type { DeploymentDoc, ScheduleDoc, WebhookRouteDoc, WorkflowVersionDoc } from './collections.js';

interface TriggerLike {
  type?: unknown;
  id?: unknown;
  path?: unknown;
  cron?: unknown;
  timezone?: unknown;
}

export async function backfillTriggerIndexes(db: Db, created: ReadonlySet<string>): Promise<void> {
  const routes = created.has(COLLECTIONS.webhookRoutes);
  const schedules = created.has(COLLECTIONS.schedules);
  if (!routes && !schedules) return;
  const now = new Date().toISOString();
  for await (const d of db.collection<DeploymentDoc>(COLLECTIONS.deployments).find({})) {
    const v = await db.collection<WorkflowVersionDoc>(COLLECTIONS.workflowVersions).findOne({ workflowId: d._id, version: d.version });
    const triggers = ((fromJson(v?.definition) as { triggers?: TriggerLike[] } | null)?.triggers ?? []).filter((t) => typeof t.id === 'string');
    for (const t of triggers) {
      if (routes && t.type === 'webhook' && typeof t.path === 'string') await insertQuietly(db, COLLECTIONS.webhookRoutes, { _id: t.path, workflowId: d._id, triggerId: t.id as string });
      if (schedules && t.type === 'schedule' && typeof t.cron === 'string') {
        const spec = `${t.cron.trim()}|${typeof t.timezone === 'string' ? t.timezone : 'UTC'}`;
        const doc: ScheduleDoc = { _id: JSON.stringify([d._id, t.id]), workflowId: d._id, triggerId: t.id as string, version: d.version, spec, activeFrom: now, lastDueAt: null };
        await insertQuietly(db, COLLECTIONS.schedules, doc);
      }
    }
  }
}

async function insertQuietly(db: Db, name: string, doc: WebhookRouteDoc | ScheduleDoc): Promise<void> {
  try {
    await db.collection<WebhookRouteDoc | ScheduleDoc>(name).insertOne(doc);
  } catch (err) {
    // already there (another instance backfilled it, or a path two workflows claimed)
    if (!isDuplicateKey(err)) throw err;
  }
}
