/**
 * The console's only way to the service: the same HTTP API as any client (SPEC §4), with the
 * session cookie the browser holds and the header that proves the request comes from this page.
 */
export interface ApiIssue {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** the validation issues of a 422 (JSON Pointers into the submitted document) */
  get issues(): ApiIssue[] {
    const d = this.details as { issues?: unknown } | null;
    return Array.isArray(d?.issues) ? (d.issues as ApiIssue[]) : [];
  }

  /** the server has no such route: it is older than this console */
  get missingRoute(): boolean {
    return this.status === 404 && this.message.startsWith('no route for');
  }
}

export const CONSOLE_HEADERS = { 'X-Troupe-Console': '1' } as const;

/** Fired when the session has ended (401): the app shows the sign-in again. */
export const sessionEnded = new EventTarget();

async function errorOf(res: Response): Promise<ApiError> {
  let body: { error?: { code?: string; message?: string; details?: unknown } } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // not JSON: the status says enough
  }
  const e = body.error ?? {};
  return new ApiError(res.status, e.code ?? `HTTP_${res.status}`, e.message ?? res.statusText, e.details ?? null);
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { ...CONSOLE_HEADERS };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method, headers, credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && !path.startsWith('/api/console/session')) sessionEnded.dispatchEvent(new Event('ended'));
    throw err;
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** A sentence a person can act on, for any error the API gave. */
export function explain(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.missingRoute) return `This server does not offer that yet (${err.message}): update Troupe to use it.`;
    if (err.status === 401) return 'Your session has ended: sign in again with the admin token.';
    if (err.status === 422 && err.issues.length > 0) return `${err.message}: ${err.issues.length} issue(s), shown in place.`;
    return `${err.message} (${err.code})`;
  }
  if (err instanceof TypeError) return 'The service did not answer: check that `troupe serve` is running, then retry.';
  return err instanceof Error ? err.message : String(err);
}

export const enc = encodeURIComponent;
