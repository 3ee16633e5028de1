import { parseArgs } from 'node:util';
import { blockTypeRegistry } from '../blocks/index.js';
import { validateWorkflow } from '../model/validate.js';
import { readJsonFile } from './files.js';

export async function validateCommand(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write('usage: troupe validate <workflow.json>\n');
    return 2;
  }
  const result = validateWorkflow(await readJsonFile(file), blockTypeRegistry());
  if (result.ok) {
    process.stdout.write(`${file}: valid (${result.workflow.blocks.length} blocks, ${result.workflow.connections.length} connections)\n`);
    return 0;
  }
  process.stdout.write(`${file}: ${result.issues.length} issue(s)\n`);
  for (const issue of result.issues) process.stdout.write(`  ${issue.path || '/'}: ${issue.message}\n`);
  return 1;
}
