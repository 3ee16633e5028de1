/**
 * The fence around executions this instance handed over (SIGTERM) or lost: a view of the
 * executions repo that refuses every further write of theirs, so a run being stopped here
 * cannot write over the record another instance has resumed it into.
 */
import { TroupeError } from '../../errors.js';
import type { ExecutionRepo } from '../../store/types.js';

export interface FencedExecutions extends ExecutionRepo {
  /** from now on, writes of these executions are refused */
  fence(ids: Iterable<string>): void;
}

function refused(id: string): TroupeError {
  return new TroupeError('CONFLICT', `execution ${id} was handed over to another instance`, { details: { id } });
}

export function fencedExecutions(repo: ExecutionRepo): FencedExecutions {
  const fenced = new Set<string>();
  const check = (id: string): void => {
    if (fenced.has(id)) throw refused(id);
  };
  return {
    fence(ids) {
      for (const id of ids) fenced.add(id);
    },
    async create(rec) {
      check(rec.id);
      return repo.create(rec);
    },
    async update(id, patch) {
      check(id);
      return repo.update(id, patch);
    },
    async saveBoundary(id, batch) {
      check(id);
      return repo.saveBoundary(id, batch);
    },
    async saveBoundaries(items) {
      const open = items.filter((item) => !fenced.has(item.id));
      const written = open.length === 0 ? [] : await repo.saveBoundaries(open);
      let next = 0;
      return items.map((item) => (fenced.has(item.id) ? refused(item.id) : (written[next++] ?? null)));
    },
    get: (id) => repo.get(id),
    list: (workflowId, opts) => repo.list(workflowId, opts),
    listAll: (query) => repo.listAll(query),
    listEvents: (id, afterSeq) => repo.listEvents(id, afterSeq),
    listByStatus: (statuses, limit, after) => repo.listByStatus(statuses, limit, after),
    // only ended executions go: none a fence protects is among them
    purgeEnded: (endedBefore, limit) => repo.purgeEnded(endedBefore, limit),
  };
}
