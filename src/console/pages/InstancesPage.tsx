/** The service's instances (SPEC §9), when the server offers GET /api/cluster. */
import { ApiError, api } from '../api';
import { formatTime, useLoad } from '../hooks';

interface Instance { id: string; host: string; version: string; startedAt: string; lastSeenAt: string; running: number }

export function InstancesPage(): React.JSX.Element {
  const list = useLoad(() => api<{ items: Instance[] }>('GET', '/api/cluster'), 'cluster');
  const missing = list.failure instanceof ApiError && list.failure.missingRoute;
  return (
    <section>
      <h1>Instances</h1>
      {missing && <p className="note">This server does not list its instances yet (no GET /api/cluster): update Troupe to see them.</p>}
      {!missing && list.error !== undefined && <p className="error" role="alert">{list.error}</p>}
      {list.data && (
        <table className="list" aria-label="Instances">
          <thead><tr><th>Instance</th><th>Host</th><th>Version</th><th>Started</th><th>Last seen</th><th>Running</th></tr></thead>
          <tbody>{list.data.items.map((i) => (
            <tr key={i.id}><td><code>{i.id}</code></td><td>{i.host}</td><td>{i.version}</td><td>{formatTime(i.startedAt)}</td><td>{formatTime(i.lastSeenAt)}</td><td>{i.running}</td></tr>
          ))}</tbody>
        </table>
      )}
    </section>
  );
}
