import { useState } from 'preact/hooks';
import { ErrorNote } from '../components/error-note.js';
import { instant, More, TimeFilters, usePages } from '../components/paged-list.js';
import { dateTime, duration } from '../format.js';
import { href, navigate } from '../route.js';
import type { Execution } from '../types.js';
import { useLoad } from '../use-load.js';
import { StatusBadge } from './workflow.js';
import { allWorkflows } from './workflows.js';

/** n8n's status names, as the executions API filters on them. */
const STATUSES = ['success', 'error', 'crashed', 'running', 'waiting', 'canceled'];
/** How an execution started: the engine's modes. */
const MODES = ['manual', 'trigger', 'webhook', 'retry', 'integrated', 'error', 'flow', 'agent', 'mcp'];

/** Every execution of the account across its workflows, filtered, newest first; the filters live in the URL. */
export function ExecutionsPage({ params }: { params: URLSearchParams }) {
  const [filters, setFilters] = useState({
    status: params.get('status') ?? '',
    workflowId: params.get('workflowId') ?? '',
    mode: params.get('mode') ?? '',
    from: params.get('from') ?? '',
    to: params.get('to') ?? '',
  });
  const [searchId, setSearchId] = useState('');
  const workflows = useLoad(allWorkflows, []);
  const names = new Map((workflows.data ?? []).map((w) => [w.id, w.name]));
  const rows = usePages<Execution>('/api/v1/executions', {
    status: filters.status || undefined,
    workflowId: filters.workflowId || undefined,
    mode: filters.mode || undefined,
    startedAfter: instant(filters.from),
    startedBefore: instant(filters.to),
  });
  const set = (next: Partial<typeof filters>) => setFilters((f) => ({ ...f, ...next }));
  const open = (event: Event) => {
    event.preventDefault();
    const id = searchId.trim();
    if (id) navigate(href('executions', id));
  };
  return (
    <section aria-labelledby="executions-title">
      <div class="title-row">
        <h1 id="executions-title">Executions</h1>
        <button type="button" onClick={rows.reload}>
          Refresh
        </button>
      </div>
      <form class="filters" onSubmit={open} aria-label="Open an execution by id">
        <label>
          Execution id
          <input
            type="search"
            name="executionId"
            value={searchId}
            onInput={(e) => setSearchId(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Open</button>
      </form>
      <div class="filters">
        <label>
          Status
          <select
            name="status"
            value={filters.status}
            onChange={(e) => set({ status: e.currentTarget.value })}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Workflow
          <select
            name="workflowId"
            value={filters.workflowId}
            onChange={(e) => set({ workflowId: e.currentTarget.value })}
          >
            <option value="">any</option>
            {(workflows.data ?? []).map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Mode
          <select name="mode" value={filters.mode} onChange={(e) => set({ mode: e.currentTarget.value })}>
            <option value="">any</option>
            {MODES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <TimeFilters from={filters.from} to={filters.to} set={(from, to) => set({ from, to })} />
      </div>
      <ErrorNote error={rows.error ?? workflows.error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Execution</th>
              <th scope="col">Workflow</th>
              <th scope="col">Status</th>
              <th scope="col">Mode</th>
              <th scope="col">Started</th>
              <th scope="col">Duration</th>
            </tr>
          </thead>
          <tbody>
            {rows.rows.map((e) => (
              <tr key={e.id} data-status={e.status}>
                <th scope="row">
                  <a href={href('executions', e.id)}>{e.id}</a>
                </th>
                <td>
                  <a href={href('workflows', e.workflowId)}>{names.get(e.workflowId) ?? e.workflowId}</a>
                </td>
                <td>
                  <StatusBadge status={e.status} />
                </td>
                <td>{e.mode}</td>
                <td title={e.startedAt}>{dateTime(e.startedAt)}</td>
                <td>{duration(e.startedAt, e.stoppedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!rows.busy && rows.rows.length === 0 && !rows.error && <p>No executions match.</p>}
      <More next={rows.next} busy={rows.busy} more={rows.more} count={rows.rows.length} noun="executions" />
    </section>
  );
}
