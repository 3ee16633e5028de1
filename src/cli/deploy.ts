import { loadConfig } from '../../config/load.js';
import { isTroupeError } from '../errors.js';
import { isEntry } from '../model/capabilities.js';
import { AdminApiError, AdminClient } from '../server/admin-client.js';
import { curlExecute } from './demo.js';
import { adminTokenPath, readSecretFile } from '../server/secrets-at-rest.js';
import { serviceUrl } from '../server/urls.js';
import { commandLine } from './args.js';
import { readJsonFile } from './files.js';

const USAGE = 'usage: troupe deploy <workflow.json> [--url <base url; default from TROUPE_HOST and TROUPE_PORT>] [--token <admin token>] [--json]';

/**
 * `troupe deploy <file>`: create or replace the workflow on a running service, deploy it, print
 * the endpoint and the new API key. Exit code 1 on any refusal, with every validation issue.
 */
export async function deployCommand(args: string[]): Promise<number> {
  const { positionals, values } = commandLine(args, { url: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' } }, 1);
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write(USAGE + '\n');
    return 2;
  }
  if (values.url !== undefined && !/^https?:\/\/[^\s/]+/.test(values.url)) {
    process.stderr.write(`troupe deploy: --url must be the service's base URL with its scheme, like http://127.0.0.1:3000, got "${values.url}"\n`);
    return 2;
  }
  const doc = await readJsonFile(file);
  const config = loadConfig();
  const url = values.url ?? serviceUrl(config, config.port);
  const token = values.token ?? config.adminToken ?? readSecretFile(adminTokenPath(config.dataDir), 'TROUPE_ADMIN_TOKEN');
  if (token === undefined) {
    process.stderr.write(`troupe deploy: no admin token: pass --token, set TROUPE_ADMIN_TOKEN, or run where ${adminTokenPath(config.dataDir)} exists\n`);
    return 1;
  }
  try {
    const r = await new AdminClient(url, token).deployDocument(doc);
    if (values.json === true) {
      process.stdout.write(JSON.stringify(r) + '\n');
      return 0;
    }
    process.stdout.write(
      `workflow ${r.workflowId} ${r.created ? 'created' : 'updated'} and deployed (version ${r.version})\n` +
        `endpoint: ${r.endpoint}\n` +
        `api key:  ${r.apiKey.key}  (shown once; id ${r.apiKey.id})\n` +
        `try:      ${curlExecute(r.endpoint, r.apiKey.key, { input: sampleInput(doc) })}\n` +
        triggerLines(doc, url),
    );
    return 0;
  } catch (err) {
    process.stderr.write(describeFailure(err, file, url, values.url !== undefined) + '\n');
    return 1;
  }
}

function describeFailure(err: unknown, file: string, url: string, explicitUrl: boolean): string {
  if (err instanceof AdminApiError) {
    if (err.status === 401) return `troupe deploy: the service at ${url} refused the admin token (401 ${err.code})`;
    const issues = err.issues;
    if (issues.length > 0) {
      const lines = issues.map((i) => `  ${i.path || '/'}: ${i.message}`);
      return `troupe deploy: ${file} was rejected (${err.status} ${err.code}, ${issues.length} issue(s)):\n${lines.join('\n')}`;
    }
    return `troupe deploy: the service answered ${err.status} ${err.code}: ${err.message}`;
  }
  if (isTroupeError(err) && err.code === 'CONNECTION_FAILED' && !explicitUrl) {
    // the URL came from this shell's TROUPE_HOST/TROUPE_PORT, which need not be the service's
    return `troupe deploy: ${err.message} (a service on another address or port: pass --url, or set TROUPE_HOST/TROUPE_PORT as the service has them)`;
  }
  if (isTroupeError(err)) return `troupe deploy: ${err.message}`;
  throw err;
}

/** What else the deployment made live: webhook URLs and schedules (SPEC §4.3, §4.5). */
function triggerLines(doc: unknown, url: string): string {
  const triggers = (doc as { triggers?: unknown } | null)?.triggers;
  if (!Array.isArray(triggers)) return '';
  const base = url.replace(/\/+$/, '');
  return (triggers as Record<string, unknown>[])
    .map((t) => {
      if (t['type'] === 'webhook') {
        const signed = typeof t['secret'] === 'string' ? `signed ${String(t['provider'] ?? 'generic')}` : 'unsigned';
        return `webhook:  POST ${base}/webhooks/${String(t['path'])}  (${signed}, ${String(t['responseMode'] ?? 'accepted')})\n`;
      }
      if (t['type'] === 'schedule') return `schedule: ${String(t['id'])} "${String(t['cron'])}" ${String(t['timezone'] ?? 'UTC')}\n`;
      return '';
    })
    .join('');
}

const SAMPLE: Record<string, unknown> = { string: 'text', number: 1, boolean: true, object: {}, array: [] };

/** An input the starter accepts, so the printed curl line works as pasted. */
function sampleInput(doc: unknown): Record<string, unknown> {
  const blocks = (doc as { blocks?: unknown } | null)?.blocks;
  const starter = Array.isArray(blocks) ? (blocks as { type?: unknown; config?: unknown }[]).find((b) => typeof b?.type === 'string' && isEntry(b.type)) : undefined;
  const fields = (starter?.config as { inputFormat?: unknown } | undefined)?.inputFormat;
  const input: Record<string, unknown> = {};
  if (!Array.isArray(fields)) return input;
  for (const f of fields as { name?: unknown; type?: unknown; default?: unknown }[]) {
    if (typeof f?.name !== 'string') continue;
    input[f.name] = f.default !== undefined ? f.default : (SAMPLE[String(f.type)] ?? 'value');
  }
  return input;
}
