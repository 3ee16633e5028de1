/**
 * Profiling aid for the S1 gap (not part of `make bench` or `make bench-peers`): the cost of
 * recording S1 executions on SQLite, without HTTP and on a quiet thread, so that a change of the
 * schema, the statements or the row building shows without the noise of a live load.
 *
 * 1. Capture: N (12,000) S1 executions run through the engine (as engine-probe.ts), INFLIGHT 12
 *    at a time, onto a store that keeps every `saveBoundaries` call and answers it after HOLD_MS
 *    (2 ms, the writer's round trip under load): ~7 executions per commit, as S1's 20 connections
 *    give live on main. ONCE % of the records are then written once, ended (`writtenOnce`).
 * 2. Replay, ROUNDS (5) times, each on a fresh database file: every captured call becomes the
 *    write ops of PROFILE_ROOT's adapter (timed: the service's thread), their message to the
 *    writer is cloned as `postMessage` would (timed, sending and receiving), and the ops run
 *    on a second connection as the writer thread runs them (timed, with a PASSIVE checkpoint
 *    every CHECKPOINT_EVERY (20) commits, about 100 ms of a live S1 load). The first third of
 *    the commits is warm-up and not counted.
 * 3. WAL pages: the same commits once more without checkpoints; the WAL's frames are counted
 *    per commit and named by the B-tree their page belongs to (dbstat).
 *
 * It loads the compiled build of PROFILE_ROOT (default: this checkout): compare two builds by
 * alternating them (`PROFILE_ROOT=/tmp/before npx tsx bench/peers/record-probe.ts`, then without).
 * CPU figures are the process's (one thread does all the work here), min and median of the rounds.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { runMain } from '../lib/run-main.js';
import { envNum, loadBuild, ROOT, s1Engine } from './build-under-test.js';

const requireRoot = createRequire(join(ROOT, 'dist', 'src', 'store', 'sqlite', 'writer.js'));

type Op = { sql: string; params: unknown[]; expect?: string; code?: string; message?: string; exec?: true };
type Calls = unknown[][];

/** Every saveBoundaries call of N S1 executions, in order. */
async function capture(n: number): Promise<Calls> {
  const calls: Calls = [];
  const holdMs = envNum('HOLD_MS', 2);
  const repo = {
    saveBoundaries: (items: unknown[]) => {
      calls.push(items);
      return new Promise<unknown[]>((resolve) => setTimeout(() => resolve(items.map(() => null)), holdMs));
    },
  };
  const start = await s1Engine(repo);
  let left = n;
  const worker = async (): Promise<void> => {
    while (left-- > 0) {
      await (await start()).done;
    }
  };
  await Promise.all(Array.from({ length: envNum('INFLIGHT', 12) }, worker));
  await new Promise((resolve) => setTimeout(resolve, holdMs * 5));
  return calls;
}

interface Round {
  ops: number;
  send: number;
  receive: number;
  sqlite: number;
}

/**
 * In process every run starts in one turn and ends in the next, so each record is an insert, then
 * an update; live, a share of them (41 % on main under S1) starts and ends between two writes
 * and is written once, ended (the persister merges the create with the end). ONCE (%, 41) of the
 * executions are merged so: their create leaves its commit, their end becomes the create.
 */
function writtenOnce(calls: Calls, percent: number): Calls {
  const creates = new Map<string, any>();
  let k = 0;
  const merged = new Set<string>();
  for (const items of calls) {
    for (const item of items as any[]) {
      if (item.batch.create === undefined || item.batch.create.status !== 'running') continue;
      if ((k++ % 100) < percent) merged.add(item.id);
      creates.set(item.id, item.batch.create);
    }
  }
  return calls.map((items) => (items as any[]).flatMap((item) => {
    if (!merged.has(item.id)) return [item];
    if (item.batch.create !== undefined) return [];
    const { patch, ...rest } = item.batch;
    return [{ id: item.id, batch: { ...rest, create: { ...creates.get(item.id), ...patch } } }];
  })).filter((items) => items.length > 0);
}

type Build = (items: unknown[]) => Op[][];

/** The compiled build's pieces the replay uses. */
async function adapter(): Promise<{
  open: (dir: string) => { writer: any; build: Build };
  runItems: (db: unknown, cache: Map<string, unknown>, items: Op[][]) => unknown[];
  unflatten: ((flat: unknown[], sqls: Map<number, string>) => Op[][]) | undefined;
  ThreadWriter: any;
}> {
  const { openDb } = await loadBuild('src/store/sqlite/db.js');
  const { SqliteExecutions } = await loadBuild('src/store/sqlite/executions.js');
  const { ThreadWriter } = await loadBuild('src/store/sqlite/writer.js');
  const { runItems, unflatten } = requireRoot('./write-ops.cjs') as {
    runItems: (db: unknown, cache: Map<string, unknown>, items: Op[][]) => unknown[];
    unflatten?: (flat: unknown[], sqls: Map<number, string>) => Op[][];
  };
  const Database = requireRoot('better-sqlite3') as new (path: string) => any;
  /** A fresh database, the writer's connection to it, and the adapter that builds the ops. */
  const open = (dir: string): { writer: any; build: Build } => {
    const file = join(dir, 'troupe.db');
    const db = openDb(file);
    const writer = new Database(file);
    for (const pragma of ['synchronous = NORMAL', 'busy_timeout = 5000', 'journal_size_limit = 67108864', 'wal_autocheckpoint = 0']) writer.pragma(pragma);
    let built: Op[][] = [];
    const repo = new SqliteExecutions(db, () => new Date(), { run: (items: Op[][]) => ((built = items), Promise.resolve(items.map((ops) => ({ changes: ops.map(() => 1) })))) });
    return { writer, build: (items) => (repo.saveBoundaries(items), built) };
  };
  return { open, runItems, unflatten, ThreadWriter };
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** One timed replay of the calls on a fresh database; the first `skip` calls are not counted. */
function replay(calls: Calls, skip: number, a: Awaited<ReturnType<typeof adapter>>): Round {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-record-probe-'));
  const { writer, build } = a.open(dir);
  // the writer thread's wire form (ThreadWriter.wire): the SQL text once, then its number
  const threadWriter = new a.ThreadWriter(join(dir, 'unused.db'), { synchronous: 'NORMAL' });
  const { port1, port2 } = new MessageChannel();
  const cache = new Map<string, unknown>();
  const sqls = new Map<number, string>();
  const every = envNum('CHECKPOINT_EVERY', 20);
  const round: Round = { ops: 0, send: 0, receive: 0, sqlite: 0 };
  calls.forEach((items, i) => {
    const timed = i >= skip;
    let t = cpu();
    const ops = build(items);
    const learned: [number, string][] = [];
    // a build with the flat wire (one array per message) or the one before it (an array per op)
    const sent = typeof threadWriter.flat === 'function' ? threadWriter.flat(ops, learned) : ops.map((item) => item.map((op) => threadWriter.wire(op, learned)));
    let t2 = cpu();
    if (timed) round.ops += t2 - t;
    t = t2;
    port1.postMessage({ id: i, items: sent, sqls: learned });
    t2 = cpu();
    if (timed) round.send += t2 - t;
    t = t2;
    const message = receiveMessageOnPort(port2)?.message as { items: unknown[]; sqls: [number, string][] };
    for (const [k, sql] of message.sqls) sqls.set(k, sql);
    const received = a.unflatten !== undefined && typeof threadWriter.flat === 'function'
      ? a.unflatten(message.items, sqls)
      : (message.items as unknown[][][]).map((item) => item.map((w) => ({ sql: sqls.get(w[0] as number) as string, params: w[1] as unknown[], expect: w[2], code: w[3], message: w[4], exec: w[5] }) as Op));
    t2 = cpu();
    if (timed) round.receive += t2 - t;
    t = cpu();
    a.runItems(writer, cache, received);
    if (i % every === 0) writer.pragma('wal_checkpoint(PASSIVE)');
    if (timed) round.sqlite += cpu() - t;
  });
  port1.close();
  writer.close();
  rmSync(dir, { recursive: true, force: true });
  return round;
}

/** WAL frames of the calls after `skip`, with no checkpoint in between, by the B-tree of their page. */
function walFrames(calls: Calls, skip: number, a: Awaited<ReturnType<typeof adapter>>): { frames: number; pageSize: number; byTree: Map<string, number> } {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-record-probe-'));
  const { writer, build } = a.open(dir);
  const cache = new Map<string, unknown>();
  calls.slice(0, skip).forEach((items) => a.runItems(writer, cache, build(items)));
  writer.pragma('wal_checkpoint(TRUNCATE)');
  calls.slice(skip).forEach((items) => a.runItems(writer, cache, build(items)));
  const wal = readFileSync(join(dir, 'troupe.db-wal'));
  const pageSize = wal.readUInt32BE(8);
  const names = new Map<number, string>((writer.prepare('SELECT pageno, name FROM dbstat').all() as { pageno: number; name: string }[]).map((p) => [p.pageno, p.name]));
  const byTree = new Map<string, number>();
  let frames = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const name = names.get(wal.readUInt32BE(at)) ?? 'pointer map or free page';
    byTree.set(name, (byTree.get(name) ?? 0) + 1);
    frames += 1;
  }
  writer.close();
  rmSync(dir, { recursive: true, force: true });
  return { frames, pageSize, byTree };
}

async function main(): Promise<void> {
  const once = Number(process.env['ONCE'] ?? 41);
  const calls = writtenOnce(await capture(envNum('N', 12_000)), Number.isFinite(once) ? once : 41);
  const a = await adapter();
  const skip = Math.floor(calls.length / 3);
  // executions ended in the counted commits: the unit of the figures
  const counted = calls.slice(skip).flat().filter((i: any) => i.batch.patch !== undefined || i.batch.create?.status !== 'running').length;
  const items = calls.flat() as { id: string; batch: { create?: { status: string }; patch?: unknown } }[];
  const ended = items.filter((i) => i.batch.create !== undefined && i.batch.create.status !== 'running').length;
  const split = items.filter((i) => i.batch.patch !== undefined).length;
  const rounds = Array.from({ length: envNum('ROUNDS', 5) }, () => replay(calls, skip, a));
  const stat = (key: keyof Round): string => {
    const v = rounds.map((r) => r[key] / counted).sort((x, y) => x - y);
    return `min ${(v[0] ?? 0).toFixed(1)} median ${(v[Math.floor(v.length / 2)] ?? 0).toFixed(1)}`;
  };
  const executions = new Set(items.map((i) => i.id)).size;
  console.log(`${executions} S1 executions in ${calls.length} commits (${(executions / calls.length).toFixed(1)} per commit); ${ended} written once, ended; ${split} as an insert then an update`);
  console.log(`µs per execution (${rounds.length} rounds; the service's thread: ops, message send; the writer's: receive, SQLite with checkpoints)`);
  console.log(`  ops ${stat('ops')}  send ${stat('send')}  receive ${stat('receive')}  SQLite ${stat('sqlite')}`);
  const { frames, pageSize, byTree } = walFrames(calls, skip, a);
  const commits = calls.length - skip;
  console.log(`WAL frames: ${(frames / commits).toFixed(1)} per commit, ${(frames / counted).toFixed(2)} per execution (page ${pageSize} B); per commit by B-tree:`);
  for (const [name, count] of [...byTree].sort((x, y) => y[1] - x[1])) console.log(`  ${(count / commits).toFixed(2).padStart(6)}  ${name}${name === 'sqlite_schema' ? ' (page 1: the file grew)' : ''}`);
}

runMain(main);
