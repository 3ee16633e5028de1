import { completeAnthropic } from './anthropic.js';
import { completeOpenAi } from './openai.js';
import { ProviderTransport, type TransportOptions } from './transport.js';
import type { ModelPort } from './types.js';

export { ANTHROPIC_BASE_URL } from './anthropic.js';
export { OPENAI_BASE_URL } from './openai.js';
export type * from './types.js';

/** The model client of a process: one transport (address policy, pooled connections) for both providers. */
export function createModelClient(options: TransportOptions): ModelPort & { close(): void } {
  const transport = new ProviderTransport(options);
  return {
    complete(request, signal, onToken) {
      return request.provider === 'anthropic' ? completeAnthropic(transport, request, signal, onToken) : completeOpenAi(transport, request, signal, onToken);
    },
    close() {
      transport.close();
    },
  };
}
