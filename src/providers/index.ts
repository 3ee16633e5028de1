import { completeAnthropic } from './anthropic.js';
import { completeOpenAi } from './openai.js';
import { ProviderTransport, type TransportOptions } from './transport.js';
import type { ModelPort, ModelRequest, ProviderName } from './types.js';

import { ANTHROPIC_BASE_URL } from './anthropic.js';
import { OPENAI_BASE_URL } from './openai.js';

export { ANTHROPIC_BASE_URL, OPENAI_BASE_URL };
export type * from './types.js';

export type ProviderDefaults = Partial<Record<ProviderName, { apiKey?: string | undefined; baseUrl?: string | undefined }>>;

/**
 * The model client of a process: one transport (address policy, pooled connections) for both
 * providers. A request with no base URL goes to the process's default for its provider
 * (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, else the provider's own), and only such a request
 * gets the process's key: a workflow that names its own server never receives it.
 */
export function createModelClient(options: TransportOptions & { defaults?: ProviderDefaults }): ModelPort & { close(): void } {
  const transport = new ProviderTransport(options);
  return {
    complete(request, signal, onToken) {
      const filled = withDefaults(request, options.defaults?.[request.provider]);
      return filled.provider === 'anthropic' ? completeAnthropic(transport, filled, signal, onToken) : completeOpenAi(transport, filled, signal, onToken);
    },
    close() {
      transport.close();
    },
  };
}

function withDefaults(request: ModelRequest, defaults: { apiKey?: string | undefined; baseUrl?: string | undefined } | undefined): ModelRequest & { baseUrl: string } {
  const own = request.baseUrl !== undefined;
  const baseUrl = request.baseUrl ?? defaults?.baseUrl ?? (request.provider === 'anthropic' ? ANTHROPIC_BASE_URL : OPENAI_BASE_URL);
  const filled = { ...request, baseUrl };
  if (filled.apiKey === undefined && !own && defaults?.apiKey !== undefined) filled.apiKey = defaults.apiKey;
  return filled;
}
