/** Sign-in (SPEC §8): the admin token is posted once, never put in a URL nor kept by the page. */
import { useState } from 'react';
import { api, explain } from '../api';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }): React.JSX.Element {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = (e: React.FormEvent): void => {
    e.preventDefault();
    setBusy(true);
    api('POST', '/api/console/session', { token: token.trim() }).then(
      () => {
        setToken('');
        onSignedIn();
      },
      (err: unknown) => {
        setBusy(false);
        setProblem(explain(err).startsWith('Your session')
          ? 'That is not the admin token. Use TROUPE_ADMIN_TOKEN, or the token `troupe serve` printed at its first start (kept in the data dir, .troupe/admin-token).'
          : explain(err));
      },
    );
  };
  return (
    <main className="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Troupe console</h1>
        <p>Sign in with the admin token.</p>
        <label htmlFor="token">Admin token</label>
        <input id="token" type="password" autoComplete="current-password" value={token} onChange={(e) => setToken(e.target.value)} required autoFocus />
        {problem !== undefined && <p className="error" role="alert" id="signin-error">{problem}</p>}
        <button type="submit" id="signin-submit" disabled={busy || token.trim() === ''}>Sign in</button>
      </form>
    </main>
  );
}
