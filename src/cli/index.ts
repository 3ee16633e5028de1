import { ConfigError } from '../../config/load.js';
import { isTroupeError } from '../errors.js';
import { ArgumentError } from './args.js';
import { runCommand } from './run.js';
import { validateCommand } from './validate.js';

const USAGE = `usage:
  troupe run <workflow.json> [--input '<json>' | @<file> | @-] [--timeout <ms>] [--json]
                                         run once: progress on stderr, the result as JSON on stdout
                                         (--input @file reads a file, @- stdin; --json: the whole
                                         execution result, one line, and no progress)
  troupe validate <workflow.json>        print every issue with its JSON path
  troupe serve [--demo]                  the HTTP service (--demo: deploy examples/hello.json)
  troupe deploy <workflow.json> [--url <base url>] [--token <t>] [--json]
                                         create or update, deploy, print endpoint and key
  troupe <command> --help                this text`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  run: runCommand,
  validate: validateCommand,
  // loaded on demand: `run` and `validate` do not pay for Koa and the HTTP app
  serve: async (args) => (await import('./serve.js')).serveCommand(args),
  deploy: async (args) => (await import('./deploy.js')).deployCommand(args),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    // a command line with no command is a usage error: stderr, as for an unknown command
    process.stderr.write(USAGE + '\n');
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const command = commands[name];
  if (command !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (command === undefined) {
    process.stderr.write(`troupe: unknown command "${name}"\n${USAGE}\n`);
    return 2;
  }
  return command(rest);
}

/** A validation failure's issues, one per line with its JSON path, as `troupe validate` prints them. */
function issueLines(details: unknown): string {
  const issues = (details as { issues?: unknown } | null | undefined)?.issues;
  if (!Array.isArray(issues)) return '';
  return issues.map((i: { path?: string; message?: string }) => `  ${i.path || '/'}: ${i.message ?? ''}\n`).join('');
}

/** node:util parseArgs refusing the command line (ERR_PARSE_ARGS_*), or our stricter checks (args.ts). */
function isArgumentError(err: unknown): err is Error {
  if (err instanceof ArgumentError) return true;
  return err instanceof Error && String((err as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS_');
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) process.stderr.write(`troupe: ${err.message}\n`);
    else if (isArgumentError(err)) {
      // a missing option value, an unknown option: what was wrong, then how it is used
      process.stderr.write(`troupe: ${err.message}\n${USAGE}\n`);
      process.exitCode = 2;
      return;
    } else if (isTroupeError(err)) process.stderr.write(`troupe: ${err.code}: ${err.message}\n${issueLines(err.details)}`);
    else process.stderr.write(`troupe: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
