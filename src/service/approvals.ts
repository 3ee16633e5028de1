/**
 * Approvals (SPEC §2.1, §4.2; docs/waiting.md): the store side of approval blocks, and the
 * decisions that arrive by the API or by the one-time link. A link's token is an HMAC of the
 * block run under the service's secret key: the store keeps only its hash, and the admin's view
 * of the record derives the link again instead of reading it from anywhere.
 */
import { topLevelRunKey } from '../model/block-run.js';
import { createHash, createHmac } from 'node:crypto';
import { checkStarterInput } from '../blocks/starter.js';
import type { ApprovalPort, ApprovalState } from '../blocks/types.js';
import { TroupeError, ValidationError } from '../errors.js';
import type { ApprovalEntry, ExecutionRecord, Store } from '../store/types.js';

export type DecisionBy = 'admin' | 'apiKey' | 'link';

/** The waits-index key a decision leaves for the waker (it wakes a parked execution at once). */
const nudgeKey = (key: string): string => `decided|${key}`;
const timeoutKey = (key: string): string => `timeout|${key}`;

export class ApprovalService implements ApprovalPort {
  /** the service's URL, known once it listens (the links name it) */
  baseUrl = '';

  constructor(private readonly store: Store, private readonly secretKey: string, private readonly now: () => number = Date.now) {}

  token(executionId: string, key: string, since: string): string {
    return createHmac('sha256', this.secretKey).update(`approval|${executionId}|${key}|${since}`).digest('base64url');
  }

  linkFor(executionId: string, key: string, since: string): string {
    return `${this.baseUrl}/approve/${this.token(executionId, key, since)}`;
  }

  async begin(e: Parameters<ApprovalPort['begin']>[0]): Promise<{ state: ApprovalState; approveUrl: string; created: boolean }> {
    const tokenHash = hashOf(this.token(e.executionId, e.key, e.since));
    const stored = await this.store.approvals.begin({ ...e, tokenHash, decision: null, data: null, decidedAt: null, decidedBy: null });
    // the timeout wakes a parked execution like a wait's due time does
    if (stored.expiresAt !== null && stored.decision === null) {
      await this.store.waits.begin({ executionId: e.executionId, key: timeoutKey(e.key), workflowId: e.workflowId, since: stored.since, dueAt: stored.expiresAt });
    }
    return { state: stateOf(stored), approveUrl: this.linkFor(e.executionId, e.key, stored.since), created: stored.tokenHash === tokenHash };
  }

  async get(executionId: string, key: string): Promise<ApprovalState | null> {
    const stored = await this.store.approvals.get(executionId, key);
    return stored === null ? null : stateOf(stored);
  }

  timeOut(executionId: string, key: string, at: string): Promise<boolean> {
    return this.store.approvals.decide(executionId, key, { decision: 'timeout', data: null, decidedAt: at, decidedBy: 'timeout' });
  }

  async settled(executionId: string, key: string): Promise<void> {
    await this.store.waits.delete(executionId, nudgeKey(key));
    await this.store.waits.delete(executionId, timeoutKey(key));
  }

  /** The approval a link's token opens, while it still works (undecided, not expired); null otherwise. */
  async byToken(token: string): Promise<ApprovalEntry | null> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
    const entry = await this.store.approvals.findByTokenHash(hashOf(token));
    return entry !== null && this.open(entry) ? entry : null;
  }

  /**
   * Records a decision (SPEC §4.2): NOT_WAITING unless the block waits for one, INVALID_INPUT
   * when `data` fails its inputFormat. The execution is then woken through the waits index,
   * by whichever instance polls first; one kept in memory finds the decision itself.
   */
  async decide(rec: ExecutionRecord, blockId: string, body: { decision: 'approved' | 'rejected'; data?: unknown }, by: DecisionBy): Promise<void> {
    const key = topLevelRunKey(blockId);
    const entry = await this.store.approvals.get(rec.id, key);
    if (entry === null || !this.open(entry) || (rec.status !== 'running' && rec.status !== 'waiting')) {
      throw new TroupeError('NOT_WAITING', `block ${blockId} of execution ${rec.id} is not waiting for a decision`, { details: { executionId: rec.id, blockId } });
    }
    const data = await this.checkedData(rec, blockId, body.data);
    const at = new Date(this.now()).toISOString();
    if (!(await this.store.approvals.decide(rec.id, key, { decision: body.decision, data, decidedAt: at, decidedBy: by }))) {
      throw new TroupeError('NOT_WAITING', `block ${blockId} of execution ${rec.id} was decided already`, { details: { executionId: rec.id, blockId } });
    }
    await this.store.waits.begin({ executionId: rec.id, key: nudgeKey(key), workflowId: rec.workflowId, since: at, dueAt: at });
  }

  private open(entry: ApprovalEntry): boolean {
    return entry.decision === null && (entry.expiresAt === null || Date.parse(entry.expiresAt) > this.now());
  }

  /** `data` against the block's inputFormat, as the starter checks its input (defaults applied). */
  private async checkedData(rec: ExecutionRecord, blockId: string, data: unknown): Promise<unknown> {
    const stored = await this.store.workflows.getVersion(rec.workflowId, rec.version);
    const block = stored?.definition.blocks.find((b) => b.id === blockId);
    const config = (block?.config ?? {}) as Record<string, unknown>;
    const { issues, value } = checkStarterInput({ inputFormat: config['inputFormat'] ?? [] } as Record<string, unknown>, data ?? {});
    if (issues.length > 0) throw new ValidationError('INVALID_INPUT', "the data does not match the approval's inputFormat", issues.map((i) => ({ ...i, path: `/data${i.path}` })));
    return value ?? null;
  }
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function stateOf(e: ApprovalEntry): ApprovalState {
  return { since: e.since, expiresAt: e.expiresAt, decision: e.decision, data: e.data, decidedAt: e.decidedAt, decidedBy: e.decidedBy };
}
