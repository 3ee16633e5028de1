import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/load.js';
import { openRuntime } from '../main.js';
import { loadWorkflow } from '../runtime/workflows.js';
import { readJsonFile, parseJson } from './files.js';
import { formatEvent, formatResult } from './progress.js';

export async function runCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { input: { type: 'string' }, timeout: { type: 'string' }, json: { type: 'boolean' } },
  });
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write("usage: troupe run <workflow.json> [--input '<json>']\n");
    return 2;
  }
  const doc = await readJsonFile(file);
  const input = values.input === undefined ? {} : parseJson(values.input, '--input');
  const config = loadConfig();
  const runtime = await openRuntime(config);
  try {
    const { def, compiled } = loadWorkflow(doc, runtime.registry);
    const handle = await runtime.engine.start(
      compiled,
      {
        workflowId: def.id ?? 'cli',
        version: 1,
        input,
        trigger: { type: 'manual', source: 'cli' },
        ...(values.timeout === undefined ? {} : { timeoutMs: Number(values.timeout) }),
      },
      (event) => {
        const line = formatEvent(event);
        if (line !== null && values.json !== true) process.stderr.write(line + '\n');
      },
    );
    const result = await handle.done;
    process.stdout.write(values.json === true ? JSON.stringify(result) + '\n' : formatResult(result));
    return result.status === 'completed' ? 0 : 1;
  } finally {
    await runtime.close();
  }
}
