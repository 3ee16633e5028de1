/**
 * One execution (SPEC §8), live while it runs: block states on the graph, the timeline, the
 * block inspector; what it waits for and the decision of a pending approval; cancel, rerun,
 * rerun from a block.
 */
import { useMemo, useState } from 'react';
import { ApiError, api, enc, explain } from '../api';
import { Graph } from '../graph/Graph';
import { formatMs, formatTime, useLoad } from '../hooks';
import { look } from '../graph/status';
import { href, navigate } from '../router';
import { asWorkflow, type Execution, type Workflow } from '../types';
import { Inspector } from './execution/Inspector';
import { blockStates, useLiveExecution } from './execution/live';
import { Timeline } from './execution/Timeline';
import { WaitingPanel } from './execution/Waiting';

const RUNNING = new Set(['queued', 'running', 'waiting']);

/** The definition the run used: its version when the server keeps versions, else the current one. */
async function definitionOf(e: Execution): Promise<Workflow> {
  try {
    return asWorkflow(await api<unknown>('GET', `/api/workflows/${enc(e.workflowId)}/versions/${e.version}`));
  } catch (err) {
    if (err instanceof ApiError && err.missingRoute) return api<Workflow>('GET', `/api/workflows/${enc(e.workflowId)}`);
    throw err;
  }
}

function Actions({ e, setNote }: { e: Execution; setNote: (s: string) => void }): React.JSX.Element {
  const rerun = (): void => {
    api<{ executionId: string }>('POST', `/api/executions/${enc(e.id)}/rerun`, { async: true }).then((r) => navigate('executions', r.executionId), (err: unknown) => setNote(explain(err)));
  };
  const cancel = (): void => {
    api<{ status: string }>('POST', `/api/executions/${enc(e.id)}/cancel`).then((r) => setNote(`Cancel sent: ${r.status}.`), (err: unknown) => setNote(explain(err)));
  };
  return (
    <div className="toolbar">
      {RUNNING.has(e.status) && <button type="button" id="cancel" onClick={cancel}>Cancel</button>}
      <button type="button" id="rerun" onClick={rerun}>Rerun</button>
    </div>
  );
}

function Summary({ e }: { e: Execution }): React.JSX.Element {
  return (
    <p className="summary">
      <span className="pill" id="execution-status" data-status={e.status} style={{ background: look(e.status).color }}>{look(e.status).icon} {e.status}</span>
      {' '}<a href={href('workflows', e.workflowId)}>{e.workflowId}</a> version {e.version} · trigger {e.trigger.type}
      {typeof e.trigger.of === 'string' && <> of <a href={href('executions', e.trigger.of)}>{e.trigger.of}</a></>}
      {typeof e.trigger.fromBlock === 'string' && <> from block <code>{e.trigger.fromBlock}</code></>}
      {' '}· started {formatTime(e.startedAt)} · {formatMs(e.durationMs)}
      {e.error && <span className="error"> · {e.error.code}: {e.error.message}{e.error.blockId ? ` (block ${e.error.blockId})` : ''}</span>}
    </p>
  );
}

export function ExecutionPage({ id }: { id: string }): React.JSX.Element {
  const live = useLiveExecution(id);
  const e = live.execution;
  const states = useMemo(() => blockStates(live.logs), [live.logs]);
  const def = useLoad(() => (e ? definitionOf(e) : new Promise<Workflow>(() => undefined)), e ? `${e.workflowId}@${e.version}` : '');
  const [selected, setSelected] = useState<string | undefined>();
  const [note, setNote] = useState<string | undefined>();
  const rerunFrom = (blockId: string): void => {
    api<{ executionId: string }>('POST', `/api/executions/${enc(id)}/rerun`, { fromBlock: blockId, async: true })
      .then((r) => navigate('executions', r.executionId), (err: unknown) => setNote(explain(err)));
  };
  return (
    <section className="execution">
      <p className="crumbs"><a href={href('executions')}>Executions</a> / {id}</p>
      {live.error !== undefined && <p className="error" role="alert">{live.error}</p>}
      {e && <><h1>Execution</h1><Summary e={e} /><Actions e={e} setNote={setNote} /></>}
      {note !== undefined && <p role="status" className="note" id="execution-note">{note}</p>}
      {e && def.data && <WaitingPanel execution={e} blocks={def.data.blocks} onDecided={(said) => { setNote(said); live.reload(); }} />}
      {def.error !== undefined && <p className="error">{def.error}</p>}
      <div className="execution-body">
        {def.data && <Graph blocks={def.data.blocks} connections={def.data.connections} states={states} selected={selected} onSelect={setSelected} />}
        {selected !== undefined && <Inspector key={selected} blockId={selected} logs={live.logs} onRerunFrom={rerunFrom} canRerun={e !== undefined && !RUNNING.has(e.status)} />}
      </div>
      {selected === undefined && e && <p className="hint">Select a block on the graph or the timeline to see its input and output.</p>}
      <h2>Timeline</h2>
      <Timeline logs={live.logs} waiting={e?.waiting ?? []} onSelect={setSelected} running={e !== undefined && RUNNING.has(e.status)} />
    </section>
  );
}
