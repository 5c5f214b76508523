import { useRef, useState } from 'preact/hooks';
import { ApiError, api, query } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { withoutHidden } from '../components/param-display.js';
import { type FormContext, ObjectFields } from '../components/param-fields.js';
import { type ParamSchema, type Path, pathText, setAt } from '../components/param-schema.js';
import type { Workflow, WorkflowNode } from '../types.js';
import { useLoad } from '../use-load.js';
import { exportOf } from './workflow-json.js';

interface NodeTypeSchema {
  type: string;
  version: number | null;
  trigger: boolean;
  schema: ParamSchema;
}

/**
 * `requestOptions` is n8n's node setting as its exports carry it (always empty here): not a parameter
 * anyone edits, so the form leaves it out.
 */
function withoutExportOnly(found: NodeTypeSchema): NodeTypeSchema {
  const properties = found.schema.properties;
  if (!properties || !('requestOptions' in properties)) return found;
  const { requestOptions: _setting, ...rest } = properties;
  return { ...found, schema: { ...found.schema, properties: rest } };
}

/** Schemas by type and version: they change only with the server's code. */
const schemas = new Map<string, Promise<NodeTypeSchema>>();
function schemaOf(node: WorkflowNode): Promise<NodeTypeSchema> {
  const key = `${node.type}@${node.typeVersion}`;
  let found = schemas.get(key);
  if (!found) {
    found = api<NodeTypeSchema>(
      'GET',
      `/api/v1/node-types/schema${query({ type: node.type, version: node.typeVersion })}`,
    ).then(withoutExportOnly);
    found.catch(() => schemas.delete(key));
    schemas.set(key, found);
  }
  return found;
}

/** The workflow page's parameter editor: choose a node, edit its parameters in a form built from its schema. */
export function NodeParameters(props: {
  workflow: Workflow;
  selected: string | null;
  onSelect: (name: string) => void;
  refused?: string;
  /** Changes when the workflow was changed elsewhere (its JSON editor): the form starts again. */
  revision: number;
  onSaved: (w: Workflow) => void;
}) {
  const { workflow } = props;
  const nodes = workflow.nodes;
  const node = nodes.find((n) => n.name === props.selected) ?? nodes[0];
  const loaded = useLoad(
    () => (node ? schemaOf(node) : Promise.resolve(null)),
    [node?.type, node?.typeVersion],
  );
  if (!node) return null;
  return (
    <section aria-labelledby="node-parameters-title" class="node-parameters">
      <h2 id="node-parameters-title">Node parameters</h2>
      <label for="node-choice">Node</label>
      <select
        id="node-choice"
        name="node"
        value={node.name}
        onChange={(e) => props.onSelect(e.currentTarget.value)}
      >
        {nodes.map((n) => (
          <option key={n.id} value={n.name}>
            {n.name} ({n.type.replace(/^.*\./, '')} v{n.typeVersion})
          </option>
        ))}
      </select>
      {loaded.error instanceof ApiError && loaded.error.status === 404 ? (
        <p class="notice">
          This server has no parameter schema for {node.type} v{node.typeVersion}: edit the node in the
          workflow JSON.
        </p>
      ) : (
        <ErrorNote error={loaded.error} />
      )}
      {loaded.data && (
        <NodeForm
          // A fresh form (and field state) per node, and after the workflow JSON was edited.
          key={`${node.id}-${props.revision}`}
          workflow={workflow}
          node={node}
          schema={loaded.data.schema}
          refused={props.refused}
          onSaved={props.onSaved}
        />
      )}
    </section>
  );
}

/** The API's problems of this node by parameter path; the others (other nodes, the workflow) as text. */
function problemsFrom(error: unknown, index: number) {
  const byPath = new Map<string, string[]>();
  const others: string[] = [];
  if (!(error instanceof ApiError)) return { byPath, others };
  const listed = (error.details.problems ?? []) as Array<{ path?: unknown; message?: unknown }>;
  const prefix = `nodes[${index}].parameters`;
  for (const p of Array.isArray(listed) ? listed.slice(0, 100) : []) {
    const path = String(p.path ?? '');
    const message = String(p.message ?? '');
    if (path.startsWith(prefix)) {
      const at = path.slice(prefix.length).replace(/^\./, '');
      byPath.set(at, [...(byPath.get(at) ?? []), message]);
    } else others.push(`${path}: ${message}`);
  }
  return { byPath, others };
}

function NodeForm(props: {
  workflow: Workflow;
  node: WorkflowNode;
  schema: ParamSchema;
  refused?: string;
  onSaved: (w: Workflow) => void;
}) {
  const { workflow, node } = props;
  const index = workflow.nodes.findIndex((n) => n.name === node.name);
  const [values, setValues] = useState<unknown>(() => structuredClone(node.parameters ?? {}));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const complaints = useRef(new Map<string, string>());
  const form = useRef<HTMLFormElement>(null);
  const { byPath, others } = problemsFrom(error, index);
  const problemList = [
    ...[...byPath].flatMap(([path, messages]) => messages.map((m) => `${path || node.name}: ${m}`)),
    ...others,
  ];
  const ctx: FormContext = {
    values,
    set: (path: Path, value: unknown) => {
      setValues((current: unknown) => setAt(current, path, value) ?? {});
      setSaved(false);
    },
    problems: byPath,
    idBase: `param-${index}`,
    complain: (path, message) => {
      if (message) complaints.current.set(pathText(path), message);
      else complaints.current.delete(pathText(path));
    },
    schema: props.schema,
    version: node.typeVersion ?? 1,
    tool: node.type.endsWith('Tool'),
  };
  const save = async (event: Event) => {
    event.preventDefault();
    if (complaints.current.size > 0) {
      const [first] = complaints.current.keys();
      document.getElementById(`${ctx.idBase}-${(first ?? '').replace(/[^\w-]/g, '_')}`)?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const body = exportOf(workflow) as { nodes: WorkflowNode[] };
      // What the form hides is not saved, as n8n's editor leaves hidden parameters out.
      const parameters = withoutHidden(values, props.schema, { version: ctx.version, tool: ctx.tool });
      body.nodes = workflow.nodes.map((n, i) =>
        i === index ? { ...n, parameters: parameters as typeof n.parameters } : n,
      );
      const next = await api<Workflow>('PUT', `/api/v1/workflows/${encodeURIComponent(workflow.id)}`, {
        body,
      });
      setSaved(true);
      props.onSaved(next);
    } catch (e) {
      setError(e);
      // The first field the API named takes the focus, its message read with it.
      requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
    } finally {
      setBusy(false);
    }
  };
  return (
    <form ref={form} onSubmit={save} aria-label={`Parameters of ${node.name}`} class="param-form" noValidate>
      <p class="hint">
        {node.type} v{node.typeVersion}. A value starting with <code>=</code> is an expression (
        <code>{'={{ $json.field }}'}</code>) evaluated per item; empty fields take their defaults. Only the
        parameters that apply to the values chosen are shown; those hidden are left out when saved, as in n8n.
      </p>
      <fieldset disabled={Boolean(props.refused)} title={props.refused} class="bare">
        <ObjectFields
          ctx={ctx}
          name={node.name}
          label={node.name}
          schema={props.schema}
          path={[]}
          required
          bare
        />
        {Object.keys(props.schema.properties ?? {}).length === 0 && <p>This node has no parameters.</p>}
      </fieldset>
      <div role="alert">
        {error !== null && (
          <>
            <p class="error">{error instanceof Error ? error.message : String(error)}</p>
            {problemList.length > 0 && (
              <ul class="problems">
                {problemList.map((text) => (
                  <li key={text}>{text}</li>
                ))}
              </ul>
            )}
          </>
        )}
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || Boolean(props.refused)} title={props.refused}>
          {busy ? 'Saving…' : `Save ${node.name}`}
        </button>
        {saved && <span role="status">Saved.</span>}
      </div>
    </form>
  );
}
