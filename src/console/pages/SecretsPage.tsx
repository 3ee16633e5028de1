/** Workflow secrets (SPEC §4.1): set and delete by name; values are never shown nor read back. */
import { useState } from 'react';
import { api, enc, explain } from '../api';
import { formatTime, useLoad } from '../hooks';
import type { Page } from '../types';

export function SecretsPage(): React.JSX.Element {
  const list = useLoad(() => api<Page<{ name: string; updatedAt: string }>>('GET', '/api/secrets'), 'secrets');
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [note, setNote] = useState<string | undefined>();
  const set = (e: React.FormEvent): void => {
    e.preventDefault();
    api('PUT', `/api/secrets/${enc(name.trim())}`, { value }).then(() => {
      setNote(`Secret ${name.trim()} saved: use it as {{${name.trim()}}}.`);
      setName('');
      setValue('');
      list.reload();
    }, (err: unknown) => setNote(explain(err)));
  };
  const remove = (n: string): void => {
    api('DELETE', `/api/secrets/${enc(n)}`).then(() => { setNote(`Secret ${n} deleted.`); list.reload(); }, (err: unknown) => setNote(explain(err)));
  };
  return (
    <section>
      <h1>Secrets</h1>
      <form className="toolbar" onSubmit={set} aria-label="Set a secret">
        <label>Name <input id="secret-name" value={name} onChange={(e) => setName(e.target.value)} required pattern="[A-Za-z_][A-Za-z0-9_]*" /></label>
        <label>Value <input id="secret-value" type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} required /></label>
        <button type="submit" id="secret-save">Set secret</button>
      </form>
      {note !== undefined && <p role="status">{note}</p>}
      {list.error !== undefined && <p className="error" role="alert">{list.error}</p>}
      <table className="list" aria-label="Secrets">
        <thead><tr><th>Name</th><th>Updated</th><th /></tr></thead>
        <tbody>{(list.data?.items ?? []).map((s) => (
          <tr key={s.name}><td><code>{s.name}</code></td><td>{formatTime(s.updatedAt)}</td><td><button type="button" onClick={() => remove(s.name)}>Delete {s.name}</button></td></tr>
        ))}</tbody>
      </table>
    </section>
  );
}
