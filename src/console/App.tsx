/** The console's frame: sign-in until a session exists, then the pages under a navigation bar. */
import { useEffect, useState } from 'react';
import { api, explain, sessionEnded } from './api';
import { href, useRoute } from './router';
import { ExecutionPage } from './pages/ExecutionPage';
import { ExecutionsPage } from './pages/ExecutionsPage';
import { InstancesPage } from './pages/InstancesPage';
import { SecretsPage } from './pages/SecretsPage';
import { SignIn } from './pages/SignIn';
import { WorkflowPage } from './pages/WorkflowPage';
import { WorkflowsPage } from './pages/WorkflowsPage';

type Session = 'checking' | 'out' | 'in';

function Page({ route }: { route: string[] }): React.JSX.Element {
  const [first, second] = route;
  if (first === 'workflows' && second !== undefined) return <WorkflowPage key={second} id={second} tab={route[2] ?? 'graph'} />;
  if (first === 'executions' && second !== undefined) return <ExecutionPage key={second} id={second} />;
  if (first === 'executions') return <ExecutionsPage />;
  if (first === 'secrets') return <SecretsPage />;
  if (first === 'instances') return <InstancesPage />;
  return <WorkflowsPage />;
}

function Nav({ route, onSignOut }: { route: string[]; onSignOut: () => void }): React.JSX.Element {
  const current = route[0] ?? 'workflows';
  const link = (to: string, label: string): React.JSX.Element => (
    <a href={href(to)} aria-current={current === to ? 'page' : undefined}>{label}</a>
  );
  return (
    <header className="topbar">
      <strong className="brand">Troupe</strong>
      <nav aria-label="Main">{link('workflows', 'Workflows')}{link('executions', 'Executions')}{link('secrets', 'Secrets')}{link('instances', 'Instances')}</nav>
      <button type="button" id="sign-out" onClick={onSignOut}>Sign out</button>
    </header>
  );
}

export function App(): React.JSX.Element {
  const [session, setSession] = useState<Session>('checking');
  const [problem, setProblem] = useState<string | undefined>();
  const route = useRoute();
  useEffect(() => {
    api('GET', '/api/console/session').then(() => setSession('in'), () => setSession('out'));
    const onEnded = (): void => setSession('out');
    sessionEnded.addEventListener('ended', onEnded);
    return () => sessionEnded.removeEventListener('ended', onEnded);
  }, []);
  const signOut = (): void => {
    api('DELETE', '/api/console/session').then(() => setSession('out'), (err: unknown) => setProblem(explain(err)));
  };
  if (session === 'checking') return <p className="loading">Loading…</p>;
  if (session === 'out') return <SignIn onSignedIn={() => setSession('in')} />;
  return (
    <>
      <Nav route={route} onSignOut={signOut} />
      {problem !== undefined && <p className="error" role="alert">{problem}</p>}
      <main><Page route={route} /></main>
    </>
  );
}
