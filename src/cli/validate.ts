import { loadConfig } from '../../config/load.js';
import { blockTypeRegistry, blockTypes } from '../blocks/index.js';
import { validateWorkflow } from '../model/validate.js';
import { withName } from '../runtime/workflows.js';
import { commandLine } from './args.js';
import { readJsonFile } from './files.js';

export async function validateCommand(args: string[]): Promise<number> {
  const { positionals } = commandLine(args, {}, 1);
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write('usage: troupe validate <workflow.json>\n');
    return 2;
  }
  // checked as the service and `troupe run` check it (a missing name is the id), within the
  // execution limits of this environment (TROUPE_MAX_ITERATIONS...)
  const registry = blockTypeRegistry(blockTypes, loadConfig().limits);
  const result = validateWorkflow(withName(await readJsonFile(file)), registry);
  if (result.ok) {
    const { blocks, connections } = result.workflow;
    process.stdout.write(`${file}: valid (${plural(blocks.length, 'block')}, ${plural(connections.length, 'connection')})\n`);
    return 0;
  }
  process.stdout.write(`${file}: ${result.issues.length} issue(s)\n`);
  for (const issue of result.issues) process.stdout.write(`  ${issue.path || '/'}: ${issue.message}\n`);
  return 1;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
