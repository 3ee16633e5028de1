/**
 * A small client of the admin API (SPEC §4.1) for `troupe deploy` and the `--demo` start: it
 * talks to a running service over HTTP, like any other client would.
 */
import { TroupeError } from '../errors.js';

export interface IssuedKey {
  id: string;
  key: string;
  prefix: string;
}

export interface DeployOutcome {
  workflowId: string;
  version: number;
  /** true when the workflow did not exist before */
  created: boolean;
  /** absolute URL of the execute endpoint */
  endpoint: string;
  apiKey: IssuedKey;
}

/** A non-2xx answer of the service, with its error envelope. */
export class AdminApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
    this.name = 'AdminApiError';
  }

  /** `/connections/3/to: ...` lines, when the service answered with validation issues */
  get issues(): { path: string; message: string }[] {
    const issues = (this.details as { issues?: unknown } | null | undefined)?.issues;
    return Array.isArray(issues) ? (issues as { path: string; message: string }[]) : [];
  }
}

export class AdminClient {
  private readonly base: string;

  constructor(baseUrl: string, private readonly token: string) {
    this.base = baseUrl.replace(/\/+$/, '');
  }

  get baseUrl(): string {
    return this.base;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers: {
          Authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      const reason = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new TroupeError('CONNECTION_FAILED', `the service is not reachable at ${this.base} (${reason}); is \`troupe serve\` running?`, { cause: err });
    }
    const text = await res.text();
    const parsed = parseBody(text);
    if (res.status >= 400) throw toApiError(res.status, parsed, text);
    return { status: res.status, body: parsed as T };
  }

  /** The stored workflow, or null when the service does not know the id. */
  async getWorkflow(id: string): Promise<{ id: string; version: number } | null> {
    try {
      return (await this.request<{ id: string; version: number }>('GET', `/api/workflows/${encodeURIComponent(id)}`)).body;
    } catch (err) {
      if (err instanceof AdminApiError && err.status === 404) return null;
      throw err;
    }
  }

  /** Creates the workflow (POST), or replaces it (PUT) when its id already exists; then deploys. */
  async deployDocument(doc: unknown): Promise<DeployOutcome> {
    const id = workflowIdOf(doc);
    const existing = id === undefined ? null : await this.getWorkflow(id);
    const saved = existing === null
      ? (await this.request<{ id: string; version: number }>('POST', '/api/workflows', doc)).body
      : (await this.request<{ id: string; version: number }>('PUT', `/api/workflows/${encodeURIComponent(existing.id)}`, doc)).body;
    const deployed = await this.deploy(saved.id);
    return { ...deployed, created: existing === null };
  }

  async deploy(workflowId: string): Promise<Omit<DeployOutcome, 'created'>> {
    const { body } = await this.request<{ deployment: { version: number; endpoint?: string }; apiKey: IssuedKey }>(
      'POST',
      `/api/workflows/${encodeURIComponent(workflowId)}/deploy`,
    );
    return {
      workflowId,
      version: body.deployment.version,
      endpoint: this.absolute(body.deployment.endpoint ?? `/api/workflows/${encodeURIComponent(workflowId)}/execute`),
      apiKey: body.apiKey,
    };
  }

  absolute(endpoint: string): string {
    return /^https?:\/\//.test(endpoint) ? endpoint : this.base + (endpoint.startsWith('/') ? '' : '/') + endpoint;
  }
}

function workflowIdOf(doc: unknown): string | undefined {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  const id = (doc as { id?: unknown }).id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}

function parseBody(text: string): unknown {
  if (text.length === 0) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function toApiError(status: number, body: unknown, text: string): AdminApiError {
  const envelope = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  if (envelope && typeof envelope === 'object') {
    return new AdminApiError(status, String(envelope.code ?? 'ERROR'), String(envelope.message ?? `HTTP ${status}`), envelope.details);
  }
  return new AdminApiError(status, 'HTTP_ERROR', `HTTP ${status}: ${text.slice(0, 200)}`, undefined);
}
