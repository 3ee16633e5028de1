/** Every workflow, found by name (SPEC §8). */
import { useState } from 'react';
import { api } from '../api';
import { formatTime, useLoad } from '../hooks';
import { href } from '../router';
import type { Page, Workflow } from '../types';

async function allWorkflows(): Promise<Workflow[]> {
  const out: Workflow[] = [];
  let cursor: string | null = null;
  // a few pages at most: past that, the search box narrows the list
  for (let i = 0; i < 20; i++) {
    const page: Page<Workflow> = await api('GET', `/api/workflows?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    out.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === null) break;
  }
  return out;
}

export function WorkflowsPage(): React.JSX.Element {
  const list = useLoad(allWorkflows, 'workflows');
  const [query, setQuery] = useState('');
  const q = query.trim().toLowerCase();
  const shown = (list.data ?? []).filter((w) => q === '' || w.name.toLowerCase().includes(q) || w.id.toLowerCase().includes(q));
  return (
    <section>
      <h1>Workflows</h1>
      <label className="search">Find by name <input id="workflow-search" type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="name or id" /></label>
      {list.error !== undefined && <p className="error" role="alert">{list.error}</p>}
      {list.data === undefined && list.error === undefined && <p className="loading">Loading…</p>}
      {list.data !== undefined && shown.length === 0 && (
        <p className="empty">{q === '' ? 'No workflow yet: create one with POST /api/workflows or `troupe deploy <file>`.' : `No workflow matches “${query}”.`}</p>
      )}
      {shown.length > 0 && (
        <table className="list" aria-label="Workflows">
          <thead><tr><th>Name</th><th>Id</th><th>Version</th><th>Blocks</th><th>Updated</th></tr></thead>
          <tbody>
            {shown.map((w) => (
              <tr key={w.id}>
                <td><a href={href('workflows', w.id)} className="workflow-link">{w.name}</a></td>
                <td><code>{w.id}</code></td>
                <td>{w.version}</td>
                <td>{w.blocks.length}</td>
                <td>{formatTime(w.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
