/**
 * Run the current version with a form built from the starter's inputFormat (SPEC §8), then watch
 * it live on the execution's page.
 */
import { useState } from 'react';
import { ApiError, api, enc, explain } from '../../api';
import { navigate } from '../../router';
import type { InputField, Workflow } from '../../types';

/** The named fields of an `inputFormat` (a starter's or an approval block's). */
export function fieldsIn(format: unknown): InputField[] {
  return Array.isArray(format) ? (format as InputField[]).filter((f) => typeof f?.name === 'string') : [];
}

function fieldsOf(w: Workflow): InputField[] {
  return fieldsIn(w.blocks.find((b) => b.type === 'starter')?.config?.inputFormat);
}

export function valueOf(field: InputField, raw: string | boolean | undefined): unknown {
  if (field.type === 'boolean') return raw === true;
  if (raw === undefined || raw === '') return undefined;
  if (field.type === 'number') return Number(raw);
  if (field.type === 'object' || field.type === 'array' || field.type === 'json') {
    try {
      return JSON.parse(String(raw));
    } catch {
      throw new Error(`“${field.name}” must be JSON (${field.type}): fix it and try again.`);
    }
  }
  return raw;
}

export function Field({ f, value, set, idPrefix = 'input-' }: {
  f: InputField; value: string | boolean | undefined; set: (v: string | boolean) => void; idPrefix?: string;
}): React.JSX.Element {
  const id = `${idPrefix}${f.name}`;
  const label = <label htmlFor={id}>{f.name}{f.required ? ' *' : ''} <small>{f.type ?? 'string'}{f.description ? ` · ${f.description}` : ''}</small></label>;
  if (f.type === 'boolean') return <div className="field">{label}<input id={id} type="checkbox" checked={value === true} onChange={(e) => set(e.target.checked)} /></div>;
  if (f.type === 'object' || f.type === 'array' || f.type === 'json') {
    return <div className="field">{label}<textarea id={id} rows={4} value={String(value ?? '')} onChange={(e) => set(e.target.value)} required={f.required} /></div>;
  }
  return <div className="field">{label}<input id={id} type={f.type === 'number' ? 'number' : 'text'} value={String(value ?? '')} onChange={(e) => set(e.target.value)} required={f.required} /></div>;
}

export function RunTab({ workflow }: { workflow: Workflow }): React.JSX.Element {
  const fields = fieldsOf(workflow);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [problem, setProblem] = useState<string | undefined>();
  const run = (e: React.FormEvent): void => {
    e.preventDefault();
    let input: Record<string, unknown>;
    try {
      input = Object.fromEntries(fields.map((f) => [f.name, valueOf(f, values[f.name])]).filter(([, v]) => v !== undefined));
    } catch (err) {
      setProblem((err as Error).message);
      return;
    }
    api<{ executionId: string }>('POST', `/api/workflows/${enc(workflow.id)}/run`, { input, async: true }).then(
      (r) => navigate('executions', r.executionId),
      (err: unknown) => setProblem(err instanceof ApiError && err.issues.length > 0
        ? `Not run: the input does not fit the starter's inputFormat (${err.issues.map((i) => `${i.path || '/'}: ${i.message}`).join('; ')}). Fix the fields and run again.`
        : explain(err)),
    );
  };
  return (
    <form className="run-form" onSubmit={run} aria-label="Run input">
      <p>Runs version {workflow.version} (the current one) with this input, then shows the run live.</p>
      {fields.length === 0 && <p className="empty">The starter declares no input fields: the run gets an empty input.</p>}
      {fields.map((f) => <Field key={f.name} f={f} value={values[f.name]} set={(v) => setValues({ ...values, [f.name]: v })} />)}
      {problem !== undefined && <p className="error" role="alert">{problem}</p>}
      <button type="submit" id="run">Run</button>
    </form>
  );
}
