/**
 * `troupe serve --demo` (what `make run` starts): make sure a small workflow is deployed and
 * print a curl line that calls it. Creation and deployment go through the service's own admin
 * API, so the demo exercises exactly what a client would.
 */
import { readFile } from 'node:fs/promises';
import { packageFile } from '../package-root.js';
import { AdminClient } from '../server/admin-client.js';
import type { Service } from '../compose.js';

export const DEMO_WORKFLOW_ID = 'hello';
export const DEMO_INPUT = { input: { name: 'ada' } };
const DEMO_FILE = packageFile('examples/hello.json');

export type DemoOutcome = 'created' | 'deployed' | 'already-deployed';

export async function runDemo(service: Service, out: (line: string) => void): Promise<DemoOutcome> {
  const { store } = service.runtime;
  const client = new AdminClient(service.url, service.secrets.adminToken.value);
  const existing = await store.workflows.get(DEMO_WORKFLOW_ID);
  const deployment = existing === null ? null : await store.deployments.get(DEMO_WORKFLOW_ID);
  if (existing !== null && deployment !== null) {
    printAlreadyDeployed(service, deployment.version, out);
    return 'already-deployed';
  }
  const outcome = existing === null
    ? await client.deployDocument(JSON.parse(await readFile(DEMO_FILE, 'utf8')) as unknown)
    : { ...(await client.deploy(DEMO_WORKFLOW_ID)), created: false };
  out(`demo: workflow "${DEMO_WORKFLOW_ID}" ${outcome.created ? 'created and ' : ''}deployed (version ${outcome.version}) at ${outcome.endpoint}`);
  out(`demo: API key (shown once): ${outcome.apiKey.key}`);
  out('demo: call it with');
  out(`  ${curlExecute(outcome.endpoint, outcome.apiKey.key, DEMO_INPUT)}`);
  return existing === null ? 'created' : 'deployed';
}

function printAlreadyDeployed(service: Service, version: number, out: (line: string) => void): void {
  const endpoint = `${service.url}/api/workflows/${DEMO_WORKFLOW_ID}/execute`;
  const token = service.secrets.adminToken;
  const bearer = token.path === null ? '$TROUPE_ADMIN_TOKEN' : `$(cat ${shellQuote(token.path)})`;
  out(`demo: workflow "${DEMO_WORKFLOW_ID}" is already deployed (version ${version}) at ${endpoint}`);
  out('demo: its API key was shown once, when it was deployed; add a new key with');
  out(`  curl -s -X POST ${service.url}/api/workflows/${DEMO_WORKFLOW_ID}/keys -H "Authorization: Bearer ${bearer}"`);
  out(token.path === null ? 'demo: (the admin token is TROUPE_ADMIN_TOKEN)' : `demo: (the admin token is in ${token.path})`);
  out('demo: then call it with');
  out(`  ${curlExecute(endpoint, 'trp_…', DEMO_INPUT)}`);
}

export function curlExecute(endpoint: string, key: string, body: unknown): string {
  return `curl -s -X POST ${endpoint} -H ${shellQuote(`X-API-Key: ${key}`)} -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(body))}`;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
