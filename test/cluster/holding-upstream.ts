/**
 * The local upstream of takeover tests and of the several-instances benchmark: `GET /?n=`
 * answers `{ ok, n }` at once (the benchmark's throughput workflow), and `POST /hold` with
 * `{ n }` holds the first call of each Idempotency-Key unanswered (an execution that runs long on
 * the instance about to be killed) and answers a repeat of a key at once: the repeat is the
 * instance that took the execution over running its API block again, so its arrival time is the
 * takeover's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HeldCall {
  key: string;
  /** how many times this key came (the first call is held, the next ones answered at once) */
  calls: number;
  firstAt: number;
  /** when the same key came again (the execution taken over), undefined until then */
  repeatAt?: number;
}

export interface HoldingUpstream {
  port: number;
  url: string;
  /** the held calls, by the request's `n` */
  held: Map<number, HeldCall>;
  close(): Promise<void>;
}

function answer(res: http.ServerResponse, body: unknown): void {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

function onHold(req: http.IncomingMessage, res: http.ServerResponse, held: Map<number, HeldCall>): void {
  let body = '';
  req.setEncoding('utf8').on('data', (d: string) => (body += d));
  req.on('end', () => {
    const n = Number((JSON.parse(body || '{}') as { n?: unknown }).n);
    const key = String(req.headers['idempotency-key'] ?? '');
    const call = held.get(n);
    if (call === undefined || call.key !== key) {
      // the first call of this execution's block run: left unanswered (the socket closes with its instance)
      held.set(n, { key, calls: 1, firstAt: Date.now() });
      return;
    }
    call.calls += 1;
    call.repeatAt ??= Date.now();
    answer(res, { n, held: true });
  });
}

export async function startHoldingUpstream(): Promise<HoldingUpstream> {
  const held = new Map<number, HeldCall>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/hold') onHold(req, res, held);
    else answer(res, { ok: true, n: Number(url.searchParams.get('n')) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    held,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** start → an API block POST /hold (held until the execution is taken over) → response. */
export function holdWorkflow(port: number, id = 'bench-takeover'): unknown {
  return {
    id,
    name: `hold ${id}`,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'n', type: 'number', required: true }] } },
      { id: 'hold', type: 'api', name: 'Hold', config: { url: `http://127.0.0.1:${port}/hold`, method: 'POST', body: { n: '<start.n>' }, timeoutMs: 120_000 } },
      { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { n: '<hold.data.n>' } } },
    ],
    connections: [
      { from: 'start', to: 'hold' },
      { from: 'hold', to: 'reply' },
    ],
  };
}
