import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { CopyButton } from '../components/copy-button.js';
import { ErrorNote } from '../components/error-note.js';
import { dateTime, duration } from '../format.js';
import { href, navigate } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import type { Connections, Execution, ExecutionDetail, NodeRun } from '../types.js';
import { useLoad } from '../use-load.js';
import { StatusBadge } from './workflow.js';

type Items = Array<{ json: Record<string, unknown> }>;

/** A node's input: what its parents output into it on their last run (n8n's runData keeps outputs). */
function inputsOf(node: string, connections: Connections, runData: Record<string, NodeRun[]>): Items {
  const items: Items = [];
  for (const [from, kinds] of Object.entries(connections ?? {}))
    for (const outputs of Object.values(kinds ?? {}))
      outputs?.forEach((targets, output) => {
        if (!(targets ?? []).some((t) => t.node === node)) return;
        const runs = runData[from];
        const last = runs?.[runs.length - 1];
        items.push(...(last?.data.main[output] ?? []));
      });
  return items;
}

/** A cell: strings as they are, everything else as compact JSON, cut so one cell never floods the table. */
function cell(value: unknown): string {
  const text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** The items' top-level fields as columns, n8n's table view; the first 100 rows. */
function ItemsTable({ items }: { items: Items }) {
  const rows = items.slice(0, 100);
  const columns = [...new Set(rows.flatMap((i) => Object.keys(i.json ?? {})))].slice(0, 30);
  if (columns.length === 0) return <p class="hint">The items have no fields.</p>;
  return (
    <div class="table-wrap">
      <table class="items-table">
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((item, i) => (
            // Items have no identity of their own: their position is it.
            <tr key={i}>
              {columns.map((c) => (
                <td key={c}>{cell(item.json?.[c])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {items.length > rows.length && (
        <p class="hint">
          The first {rows.length} of {items.length} items.
        </p>
      )}
    </div>
  );
}

function ItemsView({ label, items }: { label: string; items: Items }) {
  const [view, setView] = useState<'table' | 'json'>('table');
  return (
    <div class="items">
      <div class="title-row">
        <h4>
          {label} ({items.length} {items.length === 1 ? 'item' : 'items'})
        </h4>
        {items.length > 0 && (
          <span class="segmented">
            <button type="button" aria-pressed={view === 'table'} onClick={() => setView('table')}>
              Table
            </button>
            <button type="button" aria-pressed={view === 'json'} onClick={() => setView('json')}>
              JSON
            </button>
          </span>
        )}
      </div>
      {items.length > 0 &&
        (view === 'table' ? (
          <ItemsTable items={items} />
        ) : (
          <pre>
            {JSON.stringify(
              items.map((i) => i.json),
              null,
              2,
            )}
          </pre>
        ))}
    </div>
  );
}

/** Moves to a node's panel without touching the hash (the router owns it). */
function jumpTo(event: Event, node: string) {
  event.preventDefault();
  const panel = document.getElementById(`node-${encodeURIComponent(node)}`);
  if (!panel) return;
  (panel as HTMLDetailsElement).open = true;
  panel.querySelector('summary')?.focus();
  panel.scrollIntoView({ block: 'start' });
}

/** The node whose run failed: its name on the error, else the last run that carries an error. */
function failingNode(
  runData: Record<string, NodeRun[]>,
  error: { node?: { name?: string } } | null | undefined,
) {
  if (error?.node?.name) return error.node.name;
  for (const [node, runs] of Object.entries(runData)) if (runs.some((r) => r.error)) return node;
  return null;
}

export function ExecutionPage({ id }: { id: string }) {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const execution = useLoad(
    () => api<ExecutionDetail>('GET', `/api/v1/executions/${encodeURIComponent(id)}?includeData=true`),
    [id],
  );
  const [retryError, setRetryError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // The last load's data stays while the next loads: never show one execution under another's id.
  const e = execution.data?.id === id ? execution.data : null;
  // A run still going is read again every 2 s until it stops, so its nodes appear as they finish.
  const going = e !== null && !e.finished && (e.status === 'running' || e.status === 'new');
  useEffect(() => {
    if (!going) return;
    const timer = setTimeout(execution.reload, 2_000);
    return () => clearTimeout(timer);
  }, [going, execution.data]);
  const retry = async () => {
    setBusy(true);
    setRetryError(null);
    try {
      const next = await api<Execution>('POST', `/api/v1/executions/${encodeURIComponent(id)}/retry`, {
        body: {},
      });
      navigate(href('executions', next.id));
    } catch (error) {
      setRetryError(error);
    } finally {
      setBusy(false);
    }
  };
  const runData = e?.data?.resultData.runData ?? {};
  const connections = e?.workflowData?.connections ?? {};
  const error = e?.data?.resultData.error as
    | { message?: string; description?: string; node?: { name?: string } }
    | null
    | undefined;
  const failed = failingNode(runData, error);
  return (
    <section aria-labelledby="execution-title">
      {e && (
        <p>
          <a href={href('workflows', e.workflowId)}>← Workflow</a>
        </p>
      )}
      <div class="title-row">
        <h1 id="execution-title">Execution {id}</h1>
        <CopyButton value={id} label="Copy id" name="Copy the execution id" />
      </div>
      <ErrorNote error={execution.error} />
      {e && (
        <>
          <dl class="facts">
            <dt>Workflow</dt>
            <dd>{e.workflowData?.name ?? e.workflowId}</dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={e.status} />
            </dd>
            <dt>Mode</dt>
            <dd>{e.mode}</dd>
            <dt>Started</dt>
            <dd>{dateTime(e.startedAt)}</dd>
            <dt>Duration</dt>
            <dd>{duration(e.startedAt, e.stoppedAt)}</dd>
            {e.retryOf && (
              <>
                <dt>Retry of</dt>
                <dd>
                  <a href={href('executions', e.retryOf)}>{e.retryOf}</a>
                </dd>
              </>
            )}
          </dl>
          {error?.message && (
            <p class="error" role="alert">
              The execution failed
              {failed ? (
                <>
                  {' in '}
                  <a href={`#node-${encodeURIComponent(failed)}`} onClick={(ev) => jumpTo(ev, failed)}>
                    {failed}
                  </a>
                </>
              ) : null}
              : {error.message}
              {error.description ? ` (${error.description})` : ''}
            </p>
          )}
          {e.status === 'error' && (
            <div class="actions">
              <button
                type="button"
                class="primary"
                onClick={retry}
                disabled={busy || !writable}
                title={writable ? undefined : refusal(session.member.role, 'retry executions')}
              >
                Retry execution
              </button>
            </div>
          )}
          <ErrorNote error={retryError} />
          <h2>Nodes</h2>
          {Object.keys(runData).length === 0 && <p>No node ran.</p>}
          {Object.entries(runData).map(([node, runs]) => (
            <details
              key={node}
              id={`node-${encodeURIComponent(node)}`}
              class={node === failed ? 'node-run failed' : 'node-run'}
              open={node === failed || Object.keys(runData).length <= 3}
            >
              <summary>
                {node}: {runs.length} {runs.length === 1 ? 'run' : 'runs'},{' '}
                {runs.some((r) => r.error || r.executionStatus === 'error') ? (
                  <span class="badge error">error</span>
                ) : (
                  'success'
                )}
              </summary>
              {runs.map((run, i) => (
                <div key={`${node}-${run.startTime}-${i}`} class="run">
                  {runs.length > 1 && <h3>Run {i + 1}</h3>}
                  <p>
                    {run.executionTime} ms
                    {run.error ? `, error: ${(run.error as { message?: string }).message ?? 'see data'}` : ''}
                  </p>
                  {i === runs.length - 1 && (
                    <ItemsView label="Input" items={inputsOf(node, connections, runData)} />
                  )}
                  {run.data.main.map((items, output) => (
                    <ItemsView
                      key={output}
                      label={run.data.main.length > 1 ? `Output ${output}` : 'Output'}
                      items={items ?? []}
                    />
                  ))}
                </div>
              ))}
            </details>
          ))}
        </>
      )}
    </section>
  );
}
