/** The shapes of SPEC §1 and §4 the console reads. */
export interface InputField {
  name: string;
  type?: string;
  required?: boolean;
  description?: string;
  default?: unknown;
}

export interface Block {
  id: string;
  type: string;
  name: string;
  config?: Record<string, unknown>;
  enabled?: boolean;
  parent?: string;
}

export interface Connection {
  from: string;
  to: string;
  handle?: string;
}

export interface Trigger {
  id: string;
  type: string;
  path?: string;
  cron?: string;
  timezone?: string;
  provider?: string;
}

export interface Workflow {
  id: string;
  name: string;
  version: number;
  blocks: Block[];
  connections: Connection[];
  triggers?: Trigger[];
  variables?: Record<string, unknown>;
  createdAt?: string;
  updatedAt?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type ExecutionStatus = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';
export type BlockStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'skipped' | 'cancelled';

export interface ErrorInfo {
  code: string;
  message: string;
  blockId?: string;
}

export interface BlockLog {
  blockId: string;
  blockName?: string;
  blockType?: string;
  status: BlockStatus;
  order?: number;
  startedAt?: string | null;
  endedAt?: string | null;
  durationMs?: number | null;
  input?: unknown;
  output?: unknown;
  error?: ErrorInfo | null;
  errorHandled?: boolean;
  attempts?: number;
  iteration?: unknown;
  /** on a rerun from a block: the execution this log was kept from (the block did not run again) */
  carriedFrom?: string;
}

export interface Execution {
  id: string;
  workflowId: string;
  version: number;
  status: ExecutionStatus;
  trigger: { type: string; [k: string]: unknown };
  input?: unknown;
  output?: unknown;
  error?: ErrorInfo | null;
  startedAt?: string | null;
  endedAt?: string | null;
  durationMs?: number | null;
  logs?: BlockLog[];
  /** what a `waiting` execution waits for (SPEC §2.1); `approveUrl` only in the admin's view */
  waiting?: WaitingEntry[];
}

export interface WaitingEntry {
  blockId: string;
  iteration?: unknown;
  kind: string;
  since?: string;
  until?: string | null;
  message?: string;
  approveUrl?: string;
  childExecutionId?: string;
}

export interface VersionInfo {
  version: number;
  createdAt: string;
  deployed: boolean;
}

/**
 * A stored version as a workflow document: SPEC §4.1 says "one version's definition"; taken
 * whether the server sends the definition itself or wraps it as `{ version, definition }`.
 */
export function asWorkflow(body: unknown): Workflow {
  const b = (body ?? {}) as Partial<Workflow> & { definition?: unknown };
  if (b.definition !== null && typeof b.definition === 'object' && !Array.isArray(b.definition)) {
    const d = b.definition as Workflow;
    return { ...d, id: d.id ?? b.id, version: b.version ?? d.version };
  }
  return b as Workflow;
}
