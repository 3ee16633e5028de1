import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A local HTTP server (127.0.0.1, port 0) that misbehaves on request. Each path plays a script
 * of steps, one per request, the last step repeating. An unscripted path echoes the request as
 * JSON. Every request is recorded (method, url, headers, body) for assertions.
 */
export type FaultStep =
  | { status?: number; headers?: Record<string, string | string[]>; body?: string | Buffer | object; delayMs?: number }
  /** destroy the connection without answering */
  | { reset: true }
  /** accept the request and never answer */
  | { hang: true }
  /** answer headers, then send the body slowly, or forever when totalBytes is absent */
  | { stream: { chunkBytes: number; intervalMs: number; totalBytes?: number; contentType?: string } }
  /** send half a body, then destroy the connection */
  | { resetMidBody: true }
  | { redirect: string; status?: number };

export interface RecordedRequest {
  method: string;
  /** path and query as received */
  url: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface FaultServer {
  port: number;
  origin: string;
  url(path: string): string;
  script(path: string, steps: FaultStep[]): void;
  requests: RecordedRequest[];
  requestsTo(path: string): RecordedRequest[];
  /** bytes written by stream steps, per path */
  bytesStreamed: Map<string, number>;
  /** connections whose client went away before a stream step finished */
  streamsCutByClient: number;
  /** requests being answered right now, and the most there ever were at once */
  inflight: number;
  maxInflight: number;
  close(): Promise<void>;
}

export async function startFaultServer(): Promise<FaultServer> {
  const scripts = new Map<string, { steps: FaultStep[]; next: number }>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const state: FaultServer = {
    port: 0,
    origin: '',
    url: (path) => state.origin + path,
    script: (path, steps) => void scripts.set(path, { steps, next: 0 }),
    requests: [],
    requestsTo: (path) => state.requests.filter((r) => r.path === path),
    bytesStreamed: new Map(),
    streamsCutByClient: 0,
    inflight: 0,
    maxInflight: 0,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const server = http.createServer((req, res) => {
    state.inflight += 1;
    state.maxInflight = Math.max(state.maxInflight, state.inflight);
    res.once('close', () => (state.inflight -= 1));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      state.requests.push(recorded);
      const script = scripts.get(path);
      if (!script) return answer(res, { status: 200, body: { method: recorded.method, url: recorded.url, headers: req.headers, body: recorded.body } });
      const step = script.steps[Math.min(script.next, script.steps.length - 1)];
      script.next += 1;
      if (step) play(step, req, res, path);
    });
  });

  function play(step: FaultStep, req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    if ('reset' in step) return void req.socket.destroy();
    if ('hang' in step) return;
    if ('redirect' in step) {
      res.writeHead(step.status ?? 302, { Location: step.redirect, 'Content-Length': '0' });
      return void res.end();
    }
    if ('resetMidBody' in step) {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '1000' });
      res.write('x'.repeat(500));
      return later(5, () => req.socket.destroy());
    }
    if ('stream' in step) return streamBody(step.stream, res, path);
    if (step.delayMs) return later(step.delayMs, () => answer(res, step));
    answer(res, step);
  }

  function streamBody(spec: { chunkBytes: number; intervalMs: number; totalBytes?: number; contentType?: string }, res: http.ServerResponse, path: string): void {
    res.writeHead(200, { 'Content-Type': spec.contentType ?? 'application/octet-stream' });
    let sent = 0;
    const total = spec.totalBytes ?? Infinity;
    res.on('close', () => {
      if (sent < total) state.streamsCutByClient += 1;
    });
    const tick = (): void => {
      if (res.destroyed) return;
      const size = Math.min(spec.chunkBytes, total - sent);
      if (size <= 0) return void res.end();
      res.write(Buffer.alloc(size, 0x61));
      sent += size;
      state.bytesStreamed.set(path, sent);
      later(spec.intervalMs, tick);
    };
    tick();
  }

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  state.port = (server.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${state.port}`;
  return state;
}

function answer(res: http.ServerResponse, step: { status?: number; headers?: Record<string, string | string[]>; body?: string | Buffer | object }): void {
  const headers: Record<string, string | string[]> = { ...(step.headers ?? {}) };
  let payload: string | Buffer = '';
  const hasType = Object.keys(headers).some((k) => k.toLowerCase() === 'content-type');
  if (typeof step.body === 'string' || Buffer.isBuffer(step.body)) {
    payload = step.body;
    if (!hasType) headers['Content-Type'] = 'text/plain; charset=utf-8';
  } else if (step.body !== undefined) {
    payload = JSON.stringify(step.body);
    if (!hasType) headers['Content-Type'] = 'application/json';
  }
  headers['Content-Length'] = String(Buffer.byteLength(payload));
  res.writeHead(step.status ?? 200, headers);
  res.end(payload);
}

/** A port that nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
