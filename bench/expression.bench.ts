/**
 * An expression's cost in-process (src/model/expression) and in the sandbox, for the expressions
 * conditions, routers and loops usually hold (docs/expressions.md):
 *   npx tsx bench/expression.bench.ts
 * Each figure is the median of five rounds of sequential calls, references bound as blocks bind
 * them (bindCode, counted in both columns, as a block pays it); the sandbox's is a call of the
 * isolated-vm sandbox as it runs today.
 */
import { performance } from 'node:perf_hooks';
import { bindCode, type ReferenceScope } from '../src/model/references.js';
import { compiledExpression, evaluateInProcess } from '../src/model/expression/index.js';
import { IsolatedVmSandbox } from '../src/sandbox/isolated.js';
import { runMain } from './lib/run-main.js';

const EXPRESSIONS = [
  '<api.status> === 200',
  '<api.body.tags>.includes("vip") && <api.status> < 300',
  '<api.body.name>.toLowerCase().startsWith("ada") ? "greet" : "skip"',
  '`${<api.body.name>}: ${<api.body.tags>.length} tags`',
];

const scope: ReferenceScope = {
  outputs: { api: { status: 200, body: { name: 'Ada Lovelace', tags: ['vip', 'beta'], items: Array.from({ length: 20 }, (_, i) => ({ id: i })) } } },
  blockNames: new Set(['api']),
  variables: {},
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function usPerCall(calls: number, fn: () => unknown): Promise<number> {
  const rounds: number[] = [];
  for (let round = 0; round < 5; round += 1) {
    const started = performance.now();
    for (let i = 0; i < calls; i += 1) await fn();
    rounds.push(((performance.now() - started) * 1000) / calls);
  }
  return median(rounds);
}

async function main(): Promise<void> {
  const sandbox = new IsolatedVmSandbox({ poolSize: 1 });
  const limits = { timeoutMs: 1000, memoryMb: 32 };
  console.log(`${'expression'.padEnd(70)} ${'in-process'.padStart(12)} ${'sandbox'.padStart(12)}  ratio`);
  try {
    for (const expression of EXPRESSIONS) {
      const { source, bindings } = bindCode(expression, scope);
      const quick = evaluateInProcess(source, bindings);
      if (!quick.done) throw new Error(`not in the subset: ${expression}`);
      const slow = await sandbox.evaluate(source, bindings, limits);
      if (JSON.stringify(slow) !== JSON.stringify(quick.value)) throw new Error(`answers differ for ${expression}`);
      const inProcess = await usPerCall(20_000, () => {
        const bound = bindCode(expression, scope);
        return evaluateInProcess(bound.source, bound.bindings);
      });
      const inSandbox = await usPerCall(300, () => {
        const bound = bindCode(expression, scope);
        return sandbox.evaluate(bound.source, bound.bindings, limits);
      });
      console.log(`${expression.padEnd(70)} ${`${inProcess.toFixed(2)} µs`.padStart(12)} ${`${inSandbox.toFixed(1)} µs`.padStart(12)}  ${(inSandbox / inProcess).toFixed(0)}×`);
    }
    // the first call of a source text parses it; later calls find it in the cache
    let n = 0;
    const parse = await usPerCall(2000, () => compiledExpression(`__ref0.status === ${(n += 1)}`));
    console.log(`${'first call of a new source text: acorn parse + compile'.padEnd(70)} ${`${parse.toFixed(2)} µs`.padStart(12)}`);
  } finally {
    await sandbox.dispose();
  }
}

runMain(main);
