/**
 * Routes live in the hash (#/workflows/echo): the server serves one page, a reload keeps the
 * place, and the browser's back and forward buttons work without any server routing.
 */
import { useEffect, useState } from 'react';

export function currentPath(): string[] {
  return window.location.hash.replace(/^#\/?/, '').replace(/\?.*$/, '').split('/').filter((s) => s !== '').map(decodeURIComponent);
}

export function navigate(...segments: string[]): void {
  window.location.hash = `#/${segments.map(encodeURIComponent).join('/')}`;
}

/** the query part of the hash (#/executions?workflowId=echo) */
export function routeQuery(): URLSearchParams {
  const hash = window.location.hash;
  const at = hash.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : hash.slice(at + 1));
}

export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

export function useRoute(): string[] {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const onChange = (): void => setPath(currentPath());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return path;
}
