/** How a workflow is reached (SPEC §8): endpoint and API keys, webhook URLs, schedules, chat. */
import { useState } from 'react';
import { ApiError, api, enc, explain } from '../../api';
import { formatTime, useLoad } from '../../hooks';
import type { Page, Workflow } from '../../types';

interface KeyView { id: string; prefix: string; createdAt: string; revokedAt: string | null; lastUsedAt: string | null }
interface ScheduleView { id: string; cron: string; timezone: string; nextRuns: string[]; lastResult: { at?: string; status?: string; executionId?: string } | null }
interface ChatView { subdomain: string; url?: string; auth?: { mode: string } }

function Keys({ id }: { id: string }): React.JSX.Element {
  const keys = useLoad(() => api<Page<KeyView>>('GET', `/api/workflows/${enc(id)}/keys`), id);
  const [fresh, setFresh] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const add = (): void => {
    api<{ key: string }>('POST', `/api/workflows/${enc(id)}/keys`).then((k) => { setFresh(k.key); keys.reload(); }, (e: unknown) => setProblem(explain(e)));
  };
  const revoke = (keyId: string): void => {
    api('DELETE', `/api/workflows/${enc(id)}/keys/${enc(keyId)}`).then(() => keys.reload(), (e: unknown) => setProblem(explain(e)));
  };
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <button type="button" id="add-key" onClick={add}>Add a key</button>
      {fresh !== undefined && <p className="once" role="status">New key, shown only now (copy it): <code id="fresh-key">{fresh}</code></p>}
      {(problem ?? keys.error) !== undefined && <p className="error" role="alert">{problem ?? keys.error}</p>}
      <table className="list" aria-label="API keys">
        <thead><tr><th>Key</th><th>Created</th><th>Last used</th><th /></tr></thead>
        <tbody>{(keys.data?.items ?? []).map((k) => (
          <tr key={k.id}><td><code>{k.prefix}…</code></td><td>{formatTime(k.createdAt)}</td><td>{formatTime(k.lastUsedAt)}</td>
            <td>{k.revokedAt ? `revoked ${formatTime(k.revokedAt)}` : <button type="button" onClick={() => revoke(k.id)}>Revoke {k.prefix}…</button>}</td></tr>
        ))}</tbody>
      </table>
    </section>
  );
}

function Schedules({ id }: { id: string }): React.JSX.Element {
  const list = useLoad(() => api<Page<ScheduleView>>('GET', `/api/workflows/${enc(id)}/schedules`), id);
  const items = list.data?.items ?? [];
  return (
    <section aria-labelledby="schedules-title">
      <h2 id="schedules-title">Schedules</h2>
      {list.error !== undefined && <p className="error">{list.error}</p>}
      {items.length === 0 ? <p className="empty">No schedule trigger.</p> : (
        <table className="list"><thead><tr><th>Trigger</th><th>Cron</th><th>Next runs</th><th>Last result</th></tr></thead>
          <tbody>{items.map((s) => (
            <tr key={s.id}><td>{s.id}</td><td><code>{s.cron}</code> {s.timezone}</td>
              <td>{s.nextRuns.length === 0 ? 'inactive (not deployed)' : s.nextRuns.slice(0, 3).map(formatTime).join(', ')}</td>
              <td>{s.lastResult ? `${s.lastResult.status ?? ''} ${formatTime(s.lastResult.at)}` : '—'}</td></tr>
          ))}</tbody></table>
      )}
    </section>
  );
}

function Chat({ id }: { id: string }): React.JSX.Element {
  const chat = useLoad(() => api<ChatView>('GET', `/api/workflows/${enc(id)}/chat`), id);
  const none = chat.failure instanceof ApiError && chat.failure.status === 404;
  return (
    <section aria-labelledby="chat-title">
      <h2 id="chat-title">Chat</h2>
      {none && <p className="empty">No chat deployment (PUT /api/workflows/{'{id}'}/chat makes one).</p>}
      {!none && chat.error !== undefined && <p className="error">{chat.error}</p>}
      {chat.data && <p>Chat <code>{chat.data.subdomain}</code>: <a href={`/chat/${enc(chat.data.subdomain)}/`}>{`${location.origin}/chat/${chat.data.subdomain}/`}</a> ({chat.data.auth?.mode ?? 'public'})</p>}
    </section>
  );
}

export function DeployTab({ workflow }: { workflow: Workflow }): React.JSX.Element {
  const endpoint = `${location.origin}/api/workflows/${enc(workflow.id)}/execute`;
  const hooks = (workflow.triggers ?? []).filter((t) => t.type === 'webhook');
  return (
    <div className="deploy-tab">
      <section aria-labelledby="endpoint-title">
        <h2 id="endpoint-title">Endpoint</h2>
        <p><code id="endpoint">POST {endpoint}</code> with <code>X-API-Key</code>; deploy or roll back on the Versions tab.</p>
      </section>
      <section aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Webhooks</h2>
        {hooks.length === 0 ? <p className="empty">No webhook trigger.</p> : (
          <ul>{hooks.map((t) => <li key={t.id}><code>POST {location.origin}/webhooks/{t.path}</code> ({t.provider ?? 'generic'})</li>)}</ul>
        )}
      </section>
      <Schedules id={workflow.id} />
      <Chat id={workflow.id} />
      <Keys id={workflow.id} />
    </div>
  );
}
