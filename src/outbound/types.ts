/** The request the api block hands to the outbound client, after references are resolved. */
export interface OutboundRequest {
  url: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  retries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxResponseBytes: number;
}

export interface AttemptInfo {
  attempt: number;
  status?: number;
  errorCode?: string;
  delayMs?: number;
}

export interface OutboundResult {
  status: number;
  headers: Record<string, string>;
  data: unknown;
  attempts: AttemptInfo[];
}
