/** One workflow: its graph, definition, versions, runs and deployment (SPEC §8), one tab each. */
import { api, enc } from '../api';
import { Graph } from '../graph/Graph';
import { useLoad } from '../hooks';
import { href } from '../router';
import type { Workflow } from '../types';
import { DeployTab } from './workflow/DeployTab';
import { EditTab } from './workflow/EditTab';
import { RunTab } from './workflow/RunTab';
import { VersionsTab } from './workflow/VersionsTab';

const TABS: [string, string][] = [['graph', 'Graph'], ['edit', 'Definition'], ['versions', 'Versions'], ['run', 'Run'], ['deploy', 'Deployment']];

function Tab({ id, tab, w, reload }: { id: string; tab: string; w: Workflow; reload: () => void }): React.JSX.Element {
  if (tab === 'edit') return <EditTab workflow={w} onSaved={reload} />;
  if (tab === 'versions') return <VersionsTab workflow={w} onDeployed={reload} />;
  if (tab === 'run') return <RunTab workflow={w} />;
  if (tab === 'deploy') return <DeployTab workflow={w} />;
  return <Graph key={`${id}-${w.version}`} blocks={w.blocks} connections={w.connections} />;
}

export function WorkflowPage({ id, tab }: { id: string; tab: string }): React.JSX.Element {
  const wf = useLoad(() => api<Workflow>('GET', `/api/workflows/${enc(id)}`), id);
  const w = wf.data;
  return (
    <section className="workflow">
      <p className="crumbs"><a href={href('workflows')}>Workflows</a> / {id}</p>
      {wf.error !== undefined && <p className="error" role="alert">{wf.error}</p>}
      {w !== undefined && (
        <>
          <h1>{w.name} <span className="version" id="current-version">version {w.version}</span></h1>
          <nav className="tabs" aria-label="Workflow">
            {TABS.map(([key, label]) => (
              <a key={key} href={href('workflows', id, key)} aria-current={tab === key ? 'page' : undefined} id={`tab-${key}`}>{label}</a>
            ))}
            <a href={`${href('executions')}?workflowId=${enc(id)}`}>Executions</a>
          </nav>
          <Tab id={id} tab={tab} w={w} reload={wf.reload} />
        </>
      )}
    </section>
  );
}
