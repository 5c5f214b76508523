import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { WorkflowGraph } from '../components/workflow-graph.js';
import { dateTime, duration } from '../format.js';
import { href } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import type { Execution, List, Workflow } from '../types.js';
import { useLoad } from '../use-load.js';
import { ActiveToggle } from './workflows.js';

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge ${status}`}>{status}</span>;
}

export function WorkflowPage({ id }: { id: string }) {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const workflow = useLoad(() => api<Workflow>('GET', `/api/v1/workflows/${encodeURIComponent(id)}`), [id]);
  const [cursor, setCursor] = useState<string | null>(null);
  const executions = useLoad(
    () => api<List<Execution>>('GET', `/api/v1/executions${query({ workflowId: id, limit: 20, cursor })}`),
    [id, cursor],
  );
  const [active, setActive] = useState<boolean | null>(null);
  const w = workflow.data;
  return (
    <section aria-labelledby="workflow-title">
      <p>
        <a href={href('workflows')}>← Workflows</a>
      </p>
      <h1 id="workflow-title">{w ? w.name : 'Workflow'}</h1>
      <ErrorNote error={workflow.error} />
      {w && (
        <>
          <ActiveToggle
            workflow={{ ...w, active: active ?? w.active }}
            disabled={writable ? undefined : refusal(session.member.role, 'activate workflows')}
            onChanged={(next) => setActive(next.active)}
          />
          <h2>Graph</h2>
          <WorkflowGraph nodes={w.nodes} connections={w.connections} title={w.name} />
        </>
      )}
      <h2>Executions</h2>
      <ErrorNote error={executions.error} />
      {executions.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Execution</th>
                <th scope="col">Status</th>
                <th scope="col">Mode</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {executions.data.data.map((e) => (
                <tr key={e.id}>
                  <th scope="row">
                    <a href={href('executions', e.id)}>{e.id}</a>
                  </th>
                  <td>
                    <StatusBadge status={e.status} />
                  </td>
                  <td>{e.mode}</td>
                  <td>{dateTime(e.startedAt)}</td>
                  <td>{duration(e.startedAt, e.stoppedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {executions.data.data.length === 0 && <p>No executions yet.</p>}
          <div class="actions">
            {cursor && (
              <button type="button" onClick={() => setCursor(null)}>
                Newest
              </button>
            )}
            {executions.data.nextCursor && (
              <button type="button" onClick={() => setCursor(executions.data?.nextCursor ?? null)}>
                Older executions
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}
