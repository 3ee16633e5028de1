/**
 * The least an execute can do under DESIGN.md and SPEC §4.2, written with none of Troupe's code
 * (see floor-probe.ts): an XState machine per execution that spawns one XState actor per block,
 * and one SQLite row per execution committed on a writer thread before the answer. Everything
 * here is as cheap as those libraries allow, so what it measures is a ceiling, not a target.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { createActor, setup, type ActorLogic, type AnyActorRef, type Snapshot } from 'xstate';

// ---- the record: one row per execution, group-committed by a writer thread -------------------

/** The executions table with the two indexes SPEC features need (history newest first, status). */
const WRITER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(\`CREATE TABLE IF NOT EXISTS executions (id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL,
  status TEXT NOT NULL, created_at TEXT NOT NULL, body TEXT NOT NULL) STRICT;
  CREATE INDEX IF NOT EXISTS by_workflow ON executions (workflow_id, created_at DESC, id DESC);
  CREATE INDEX IF NOT EXISTS by_status ON executions (status, created_at, id);\`);
const insert = db.prepare('INSERT INTO executions (id, workflow_id, status, created_at, body) VALUES (?, ?, ?, ?, ?)');
const write = db.transaction((rows) => { for (const r of rows) insert.run(r[0], r[1], r[2], r[3], r[4]); });
parentPort.on('message', (m) => {
  if (m.stop) { db.close(); parentPort.close(); return; }
  write(m.rows);
  parentPort.postMessage(m.id);
});
`;

export type Row = [id: string, workflowId: string, status: string, createdAt: string, body: string];

/**
 * Rows added in one turn of the event loop go to the thread as one transaction; while one is
 * being committed the next turns' rows wait and go together (as Troupe's persister does).
 */
export class GroupCommit {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, (() => void)[]>();
  private rows: Row[] = [];
  private waiters: (() => void)[] = [];
  private nextId = 1;
  private scheduled = false;
  private busy = false;

  constructor(path: string) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WRITER_SOURCE, { eval: true, workerData: { path, driver } });
    this.worker.on('message', (id: number) => this.committed(id));
  }

  /** Resolves once the row is committed. */
  add(row: Row): Promise<void> {
    return new Promise((resolve) => {
      this.rows.push(row);
      this.waiters.push(resolve);
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.postMessage({ stop: true });
    await exited;
  }

  private flush(): void {
    this.scheduled = false;
    if (this.busy || this.rows.length === 0) return;
    const id = this.nextId++;
    this.busy = true;
    this.waiting.set(id, this.waiters);
    this.worker.postMessage({ id, rows: this.rows });
    this.rows = [];
    this.waiters = [];
  }

  private committed(id: number): void {
    const waiters = this.waiting.get(id) ?? [];
    this.waiting.delete(id);
    this.busy = false;
    for (const w of waiters) w();
    this.flush();
  }
}

// ---- the run: an execution machine spawning one actor per block ------------------------------

export interface FloorBlock {
  id: string;
  /** the block's whole work: its output from its input */
  run(input: unknown): Record<string, unknown>;
  next: string | null;
}

export interface BlockLog {
  blockId: string;
  status: 'completed';
  startedAt: string;
  endedAt: string;
  output: Record<string, unknown>;
}

interface RunContext {
  input: unknown;
  blocks: readonly FloorBlock[];
  actors: Map<string, AnyActorRef>;
  logs: BlockLog[];
  output: Record<string, unknown> | null;
  settled(log: BlockLog, last: boolean): void;
}

type BlockState = Snapshot<undefined> & { context: { block: FloorBlock; run: RunContext } };
type BlockEvent = { type: 'INPUT'; value: unknown };

/** A block actor as XState actor logic without a statechart: the cheapest actor XState runs. */
const blockActor: ActorLogic<BlockState, BlockEvent, { block: FloorBlock; run: RunContext }> = {
  transition(state, event) {
    const { block, run } = state.context;
    const at = new Date().toISOString();
    const output = block.run(event.value);
    run.settled({ blockId: block.id, status: 'completed', startedAt: at, endedAt: new Date().toISOString(), output }, block.next === null);
    if (block.next !== null) run.actors.get(block.next)?.send({ type: 'INPUT', value: output });
    return state;
  },
  getInitialSnapshot: (_scope, input) => ({ status: 'active', output: undefined, error: undefined, context: input }),
  getPersistedSnapshot: (state) => state,
};

type ExecutionEvent = { type: 'ENDED'; output: Record<string, unknown> };
interface RunOutput {
  output: Record<string, unknown> | null;
  logs: BlockLog[];
}

/** The execution machine: running until its last block settles; its blocks are its children. */
const executionMachine = setup({
  types: {
    context: {} as RunContext,
    input: {} as { input: unknown; blocks: readonly FloorBlock[] },
    events: {} as ExecutionEvent,
    output: {} as RunOutput,
  },
}).createMachine({
  id: 'execution',
  context: ({ input, self }) => {
    const logs: BlockLog[] = [];
    return {
      input: input.input,
      blocks: input.blocks,
      actors: new Map<string, AnyActorRef>(),
      logs,
      output: null,
      settled(log: BlockLog, last: boolean) {
        logs.push(log);
        if (last) self.send({ type: 'ENDED', output: log.output });
      },
    };
  },
  initial: 'running',
  states: {
    running: {
      entry: ({ context, self }) => {
        for (const block of context.blocks) {
          const actor = createActor(blockActor, { parent: self, input: { block, run: context } });
          context.actors.set(block.id, actor);
          actor.start();
        }
        context.actors.get(context.blocks[0]?.id ?? '')?.send({ type: 'INPUT', value: context.input });
      },
      on: { ENDED: { target: 'completed', actions: ({ context, event }) => void (context.output = event.output) } },
    },
    completed: { type: 'final' },
  },
  output: ({ context }) => ({ output: context.output, logs: context.logs }),
});

/** Runs one execution of `blocks` (a chain) and resolves with the last block's output and every log. */
export function runExecution(blocks: readonly FloorBlock[], input: unknown): Promise<RunOutput> {
  return new Promise((resolve, reject) => {
    const actor = createActor(executionMachine, { input: { input, blocks } });
    actor.subscribe({
      complete: () => resolve(actor.getSnapshot().output ?? { output: null, logs: [] }),
      error: reject,
    });
    actor.start();
  });
}
