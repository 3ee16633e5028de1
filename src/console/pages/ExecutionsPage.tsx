/**
 * Executions of every workflow with filters (SPEC §8), refreshed every 2 s so new runs appear.
 * On a server without `GET /api/executions` the list is gathered from each workflow's history.
 */
import { useEffect, useState } from 'react';
import { ApiError, api, enc, explain } from '../api';
import { formatMs, formatTime } from '../hooks';
import { href, routeQuery } from '../router';
import { look } from '../graph/status';
import type { Execution, Page, Workflow } from '../types';

interface Filters { workflowId: string; status: string; trigger: string; since: string; until: string }
const STATUSES = ['', 'queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'];
const TRIGGERS = ['', 'manual', 'api', 'chat', 'webhook', 'schedule', 'workflow', 'rerun'];
const POLL_MS = 2000;

function query(f: Filters, limit: number): string {
  const q = new URLSearchParams({ limit: String(limit) });
  for (const k of ['workflowId', 'status', 'trigger'] as const) if (f[k] !== '') q.set(k, f[k]);
  if (f.since !== '') q.set('since', new Date(f.since).toISOString());
  if (f.until !== '') q.set('until', new Date(f.until).toISOString());
  return q.toString();
}

async function perWorkflow(f: Filters, workflows: Workflow[], limit: number): Promise<Execution[]> {
  const ids = f.workflowId === '' ? workflows.map((w) => w.id) : [f.workflowId];
  const pages = await Promise.all(ids.map((id) => api<Page<Execution>>('GET', `/api/workflows/${enc(id)}/executions?limit=${limit}${f.status ? `&status=${f.status}` : ''}`)));
  const since = f.since === '' ? -Infinity : Date.parse(f.since);
  const until = f.until === '' ? Infinity : Date.parse(f.until);
  return pages.flatMap((p) => p.items)
    .filter((e) => (f.trigger === '' || e.trigger.type === f.trigger) && Date.parse(e.startedAt ?? '') >= since && Date.parse(e.startedAt ?? '') <= until)
    .sort((a, b) => Date.parse(b.startedAt ?? '') - Date.parse(a.startedAt ?? ''))
    .slice(0, limit);
}

function useExecutions(f: Filters, limit: number, workflows: Workflow[]): { items: Execution[]; note?: string; error?: string } {
  const [state, setState] = useState<{ items: Execution[]; note?: string; error?: string }>({ items: [] });
  const key = JSON.stringify([f, limit, workflows.length]);
  useEffect(() => {
    let live = true;
    const load = (): void => {
      api<Page<Execution>>('GET', `/api/executions?${query(f, limit)}`).then(
        (p) => live && setState({ items: p.items }),
        (err: unknown) => {
          if (!(err instanceof ApiError && err.missingRoute)) return live && setState((s) => ({ ...s, error: explain(err) }));
          perWorkflow(f, workflows, limit).then(
            (items) => live && setState({ items, note: 'This server has no GET /api/executions yet: the list is gathered from each workflow’s history.' }),
            (e: unknown) => live && setState((s) => ({ ...s, error: explain(e) })),
          );
        },
      );
    };
    load();
    const timer = setInterval(load, POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [key]);
  return state;
}

function FilterBar({ f, set, workflows }: { f: Filters; set: (f: Filters) => void; workflows: Workflow[] }): React.JSX.Element {
  const select = (k: 'status' | 'trigger', options: string[]): React.JSX.Element => (
    <label>{k} <select id={`filter-${k}`} value={f[k]} onChange={(e) => set({ ...f, [k]: e.target.value })}>{options.map((o) => <option key={o} value={o}>{o || 'any'}</option>)}</select></label>
  );
  return (
    <div className="toolbar filters">
      <label>workflow <select id="filter-workflow" value={f.workflowId} onChange={(e) => set({ ...f, workflowId: e.target.value })}>
        <option value="">any</option>{workflows.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
      </select></label>
      {select('status', STATUSES)}{select('trigger', TRIGGERS)}
      <label>since <input type="datetime-local" value={f.since} onChange={(e) => set({ ...f, since: e.target.value })} /></label>
      <label>until <input type="datetime-local" value={f.until} onChange={(e) => set({ ...f, until: e.target.value })} /></label>
    </div>
  );
}

function Rows({ items, names }: { items: Execution[]; names: Map<string, string> }): React.JSX.Element {
  return (
    <table className="list" aria-label="Executions">
      <thead><tr><th>Status</th><th>Workflow</th><th>Trigger</th><th>Started</th><th>Duration</th><th>Execution</th></tr></thead>
      <tbody>{items.map((e) => (
        <tr key={e.id} data-status={e.status}>
          <td><span className="pill" style={{ background: look(e.status).color }}>{look(e.status).icon} {e.status}</span></td>
          <td>{names.get(e.workflowId) ?? e.workflowId} <small>v{e.version}</small></td>
          <td>{e.trigger.type}</td><td>{formatTime(e.startedAt)}</td><td>{formatMs(e.durationMs)}</td>
          <td><a href={href('executions', e.id)} className="execution-link">{e.id}</a></td>
        </tr>
      ))}</tbody>
    </table>
  );
}

export function ExecutionsPage(): React.JSX.Element {
  const [f, setF] = useState<Filters>(() => ({ workflowId: routeQuery().get('workflowId') ?? '', status: '', trigger: '', since: '', until: '' }));
  const [limit, setLimit] = useState(50);
  const [workflows, setWorkflows] = useState<Workflow[]>([]);
  useEffect(() => {
    api<Page<Workflow>>('GET', '/api/workflows?limit=100').then((p) => setWorkflows(p.items), () => setWorkflows([]));
  }, []);
  const list = useExecutions(f, limit, workflows);
  const names = new Map(workflows.map((w) => [w.id, w.name]));
  return (
    <section>
      <h1>Executions</h1>
      <FilterBar f={f} set={setF} workflows={workflows} />
      {list.note !== undefined && <p className="note">{list.note}</p>}
      {list.error !== undefined && <p className="error" role="alert">{list.error}</p>}
      {list.items.length === 0 ? <p className="empty">No execution matches. Run a workflow from its Run tab.</p> : <Rows items={list.items} names={names} />}
      {list.items.length >= limit && <button type="button" onClick={() => setLimit(limit + 50)}>Show 50 more</button>}
    </section>
  );
}
