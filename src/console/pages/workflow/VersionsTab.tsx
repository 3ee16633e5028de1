/** Every stored version (SPEC §4.1): compare any two side by side, deploy any one (a rollback), undeploy. */
import { useState } from 'react';
import { ApiError, api, enc, explain } from '../../api';
import { Compare } from '../../editor/Compare';
import { formatTime, useLoad } from '../../hooks';
import { asWorkflow, type Page, type VersionInfo, type Workflow } from '../../types';
import { editable } from './EditTab';

export interface Deployed {
  deployment: { version: number; endpoint: string; deployedAt: string };
  apiKey?: { id: string; key: string; prefix: string };
}

export function KeyOnce({ deployed }: { deployed: Deployed | undefined }): React.JSX.Element | null {
  if (deployed?.apiKey === undefined) return null;
  return (
    <div className="once" role="status">
      Deployed version {deployed.deployment.version}. Its new API key, shown only now (copy it): <code id="new-key">{deployed.apiKey.key}</code>
    </div>
  );
}

function CompareRow({ id, versions, onCompare }: { id: string; versions: VersionInfo[]; onCompare: (l: string, r: string) => void }): React.JSX.Element {
  const [left, setLeft] = useState(String(versions[1]?.version ?? versions[0]?.version ?? 1));
  const [right, setRight] = useState(String(versions[0]?.version ?? 1));
  const [problem, setProblem] = useState<string | undefined>();
  const read = (n: string): Promise<string> => api<unknown>('GET', `/api/workflows/${enc(id)}/versions/${enc(n)}`).then((w) => editable(asWorkflow(w)));
  const go = (): void => {
    Promise.all([read(left), read(right)]).then(([a, b]) => onCompare(a, b), (err: unknown) => setProblem(explain(err)));
  };
  const pick = (value: string, set: (v: string) => void, label: string): React.JSX.Element => (
    <label>{label} <select value={value} onChange={(e) => set(e.target.value)} id={`compare-${label.toLowerCase()}`}>
      {versions.map((v) => <option key={v.version} value={v.version}>version {v.version}</option>)}
    </select></label>
  );
  return (
    <div className="toolbar">
      {pick(left, setLeft, 'Left')}{pick(right, setRight, 'Right')}
      <button type="button" id="compare" onClick={go}>Compare</button>
      {problem !== undefined && <span className="error" role="alert">{problem}</span>}
    </div>
  );
}

function VersionTable({ versions, onDeploy }: { versions: VersionInfo[]; onDeploy: (n: number) => void }): React.JSX.Element {
  return (
    <table className="list" aria-label="Versions">
      <thead><tr><th>Version</th><th>Saved</th><th>Deployed</th><th /></tr></thead>
      <tbody>
        {versions.map((v) => (
          <tr key={v.version} data-version={v.version}>
            <td>version {v.version}</td>
            <td>{formatTime(v.createdAt)}</td>
            <td>{v.deployed ? <span className="pill live">deployed</span> : ''}</td>
            <td><button type="button" className="deploy-version" onClick={() => onDeploy(v.version)} disabled={v.deployed}>Deploy version {v.version}</button></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function VersionsTab({ workflow, onDeployed }: { workflow: Workflow; onDeployed: () => void }): React.JSX.Element {
  const list = useLoad(() => api<Page<VersionInfo>>('GET', `/api/workflows/${enc(workflow.id)}/versions`), `${workflow.id}@${workflow.version}`);
  const [diff, setDiff] = useState<[string, string] | undefined>();
  const [deployed, setDeployed] = useState<Deployed | undefined>();
  const [note, setNote] = useState<string | undefined>();
  const act = (p: Promise<unknown>, done: string): void => {
    p.then((r) => { setNote(done); if (r !== undefined) setDeployed(r as Deployed); list.reload(); onDeployed(); }, (err: unknown) => setNote(explain(err)));
  };
  const deploy = (version?: number): void => act(api('POST', `/api/workflows/${enc(workflow.id)}/deploy`, version === undefined ? undefined : { version }), `Deployed ${version === undefined ? 'the current version' : `version ${version}`}.`);
  const missing = list.failure instanceof ApiError && list.failure.missingRoute;
  return (
    <div className="versions-tab">
      <div className="toolbar">
        <button type="button" id="deploy-current" onClick={() => deploy()}>Deploy current version ({workflow.version})</button>
        <button type="button" id="undeploy" onClick={() => act(api('DELETE', `/api/workflows/${enc(workflow.id)}/deploy`), 'Undeployed: the endpoint answers 403 NOT_DEPLOYED until deployed again.')}>Undeploy</button>
        {note !== undefined && <span role="status" id="deploy-status">{note}</span>}
      </div>
      <KeyOnce deployed={deployed} />
      {missing && <p className="error" role="alert">This server cannot list versions yet (no GET /api/workflows/{'{id}'}/versions): update Troupe to compare versions and roll back. Deploying the current version works.</p>}
      {!missing && list.error !== undefined && <p className="error" role="alert">{list.error}</p>}
      {list.data !== undefined && (
        <>
          <VersionTable versions={list.data.items} onDeploy={deploy} />
          <CompareRow id={workflow.id} versions={list.data.items} onCompare={(a, b) => setDiff([a, b])} />
        </>
      )}
      {diff !== undefined && <Compare left={diff[0]} right={diff[1]} />}
    </div>
  );
}
