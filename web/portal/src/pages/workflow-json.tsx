import { useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { href, navigate } from '../route.js';
import type { Workflow } from '../types.js';

/** A problem the API or the JSON parser found, with the editor line it points at when known. */
export interface Problem {
  where: string;
  message: string;
  line: number | null;
}

/** The fields of a workflow that make it up (n8n's export), in n8n's order. */
export function exportOf(w: Workflow): Record<string, unknown> {
  const { name, nodes, connections, settings, pinData, tags } = w as Workflow & { pinData?: unknown };
  return { name, nodes, connections, settings, ...(pinData ? { pinData } : {}), tags };
}

const lineAt = (text: string, position: number) => text.slice(0, position).split('\n').length;

/** JSON text → value, or the parser's complaint with its line (V8 names a position or a line). */
export function parseJson(text: string): { value: unknown } | { problem: Problem } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const byLine = /line (\d+)/.exec(message);
    const byPosition = /position (\d+)/.exec(message);
    const line = byLine ? Number(byLine[1]) : byPosition ? lineAt(text, Number(byPosition[1])) : null;
    return { problem: { where: 'JSON', message, line } };
  }
}

/**
 * The API's problems (`nodes[2].parameters.x: …`) placed on the editor's line: the line of that
 * node's `"name"` in the text, else the first line naming the top-level field.
 */
export function problemsOf(error: unknown, text: string, value: unknown): Problem[] {
  if (!(error instanceof ApiError)) return [];
  const listed = (error.details.problems ?? error.details.fields) as
    | Array<{ path?: string; field?: string; message?: string }>
    | undefined;
  if (!Array.isArray(listed)) return [];
  const nodes = (value as { nodes?: Array<{ name?: unknown }> } | null)?.nodes;
  const lines = text.split('\n');
  return listed.slice(0, 50).map((p) => {
    const where = String(p.path ?? p.field ?? '').replace(/^body\./, '');
    const index = /^nodes\[(\d+)\]/.exec(where);
    const name = index && Array.isArray(nodes) ? nodes[Number(index[1])]?.name : undefined;
    const needle =
      typeof name === 'string' ? `"name": ${JSON.stringify(name)}` : `"${where.split(/[.[]/)[0] ?? ''}"`;
    const at = lines.findIndex((l) => l.includes(needle));
    return { where, message: String(p.message ?? ''), line: at >= 0 ? at + 1 : null };
  });
}

/** Selects a line of a textarea and scrolls it into view. */
function selectLine(area: HTMLTextAreaElement | null, line: number) {
  if (!area) return;
  const lines = area.value.split('\n');
  const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
  area.focus();
  area.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
  const lineHeight = area.scrollHeight / Math.max(lines.length, 1);
  area.scrollTop = Math.max(0, (line - 3) * lineHeight);
}

/** A JSON editor for a workflow: saves with PUT (or creates with POST), shows problems on their lines. */
export function WorkflowJsonEditor(props: {
  initial: string;
  workflowId?: string;
  label: string;
  onSaved: (w: Workflow) => void;
  onCancel?: () => void;
  allowFile?: boolean;
}) {
  const [text, setText] = useState(props.initial);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const parsed = parseJson(text);
    if ('problem' in parsed) {
      setProblems([parsed.problem]);
      if (parsed.problem.line) selectLine(area.current, parsed.problem.line);
      return;
    }
    setProblems([]);
    setBusy(true);
    try {
      const saved = props.workflowId
        ? await api<Workflow>('PUT', `/api/v1/workflows/${encodeURIComponent(props.workflowId)}`, {
            body: parsed.value,
          })
        : await api<Workflow>('POST', '/api/v1/workflows', { body: parsed.value });
      props.onSaved(saved);
    } catch (e) {
      const found = problemsOf(e, text, parsed.value);
      setProblems(found);
      setError(e);
      const first = found.find((p) => p.line !== null);
      if (first?.line) selectLine(area.current, first.line);
    } finally {
      setBusy(false);
    }
  };
  const readFile = async (event: Event) => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0];
    if (!file) return;
    if (file.size > 5_000_000) {
      setError(new Error('The file is larger than 5 MB: not a workflow export.'));
      return;
    }
    setText(await file.text());
    setProblems([]);
    setError(null);
  };
  return (
    <form onSubmit={save} class="json-editor">
      {props.allowFile && (
        <label>
          Upload an n8n export (.json)
          <input type="file" name="workflowFile" accept=".json,application/json" onChange={readFile} />
        </label>
      )}
      <label>
        {props.label}
        <textarea
          ref={area}
          name="workflowJson"
          rows={24}
          spellcheck={false}
          value={text}
          aria-invalid={problems.length > 0}
          aria-describedby="workflow-json-problems"
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
      <div id="workflow-json-problems">
        {problems.length > 0 ? (
          <ul class="problems" role="alert">
            {problems.map((p, i) => (
              // Problems have no identity besides their place in the answer.
              <li key={`${p.where}-${i}`}>
                {p.line !== null ? (
                  <button type="button" class="link" onClick={() => selectLine(area.current, p.line ?? 1)}>
                    line {p.line}
                  </button>
                ) : null}{' '}
                <code>{p.where}</code>: {p.message}
              </li>
            ))}
          </ul>
        ) : (
          <ErrorNote error={error} />
        )}
      </div>
      <div class="actions">
        {props.onCancel && (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {props.workflowId ? 'Save' : 'Create workflow'}
        </button>
      </div>
    </form>
  );
}

const BLANK = JSON.stringify(
  {
    name: 'My workflow',
    nodes: [
      {
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
    ],
    connections: {},
    settings: {},
  },
  null,
  2,
);

/** `#/workflows/new`: paste or upload an n8n export (or start from a blank one). */
export function WorkflowImportPage() {
  return (
    <section aria-labelledby="new-workflow-title">
      <p>
        <a href={href('workflows')}>← Workflows</a>
      </p>
      <h1 id="new-workflow-title">New workflow</h1>
      <p class="hint">
        Paste a workflow exported from n8n (or this portal), upload its file, or edit the blank one. Read-only
        fields of an export (id, active, createdAt…) are ignored.
      </p>
      <WorkflowJsonEditor
        initial={BLANK}
        label="Workflow JSON"
        allowFile
        onSaved={(w) => navigate(href('workflows', w.id))}
      />
    </section>
  );
}
