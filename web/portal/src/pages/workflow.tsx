import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorNote } from '../components/error-note.js';
import { WorkflowGraph } from '../components/workflow-graph.js';
import { download } from '../download.js';
import { dateTime, duration } from '../format.js';
import { href, navigate } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import type { Execution, List, Workflow } from '../types.js';
import { useLoad } from '../use-load.js';
import { NodeParameters } from './node-parameters.js';
import { ListenForTestWebhook } from './test-webhook.js';
import { exportOf, WorkflowJsonEditor } from './workflow-json.js';
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
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const [revision, setRevision] = useState(0);
  const w = workflow.data;
  const refused = writable ? undefined : refusal(session.member.role, 'change or run workflows');
  const act = async (name: string, action: () => Promise<void>) => {
    setBusy(name);
    setActionError(null);
    try {
      await action();
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy('');
    }
  };
  // A manual run from the trigger (pinned data stands in where the workflow pins it); the execution
  // page shows the result per node.
  const test = () =>
    act('test', async () => {
      const run = await api<{ id: string }>('POST', `/api/v1/workflows/${encodeURIComponent(id)}/run`, {
        body: {},
      });
      navigate(href('executions', run.id));
    });
  const duplicate = () =>
    act('duplicate', async () => {
      if (!w) return;
      const copy = await api<{ id: string }>('POST', '/api/v1/workflows', {
        body: { ...exportOf(w), name: `${w.name} (copy)`.slice(0, 128) },
      });
      navigate(href('workflows', copy.id));
    });
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
          <div class="actions">
            <button
              type="button"
              class="primary"
              onClick={test}
              disabled={Boolean(busy) || !writable}
              title={refused}
            >
              {busy === 'test' ? 'Running…' : 'Test workflow'}
            </button>
            <ListenForTestWebhook workflowId={id} disabled={refused} />
            <button
              type="button"
              onClick={() => setEditing(true)}
              disabled={editing || !writable}
              title={refused}
            >
              Edit JSON
            </button>
            <button
              type="button"
              onClick={() =>
                download(
                  `${w.name.replace(/[^\w.-]+/g, '_')}.json`,
                  JSON.stringify(exportOf(w), null, 2),
                  'application/json',
                )
              }
            >
              Export
            </button>
            <button type="button" onClick={duplicate} disabled={Boolean(busy) || !writable} title={refused}>
              Duplicate
            </button>
            <button
              type="button"
              class="danger"
              onClick={() => setDeleting(true)}
              disabled={!writable}
              title={refused}
            >
              Delete
            </button>
          </div>
          <ErrorNote error={actionError} />
          {deleting && (
            <ConfirmDialog
              title={`Delete ${w.name}?`}
              confirmLabel="Delete workflow"
              onClose={() => setDeleting(false)}
              onConfirm={async () => {
                await api('DELETE', `/api/v1/workflows/${encodeURIComponent(id)}`);
                navigate(href('workflows'));
              }}
            >
              <p>The workflow and its executions are deleted. This cannot be undone.</p>
            </ConfirmDialog>
          )}
          {editing && (
            <WorkflowJsonEditor
              initial={JSON.stringify(exportOf(w), null, 2)}
              workflowId={id}
              label="Workflow JSON"
              onCancel={() => setEditing(false)}
              onSaved={() => {
                setEditing(false);
                setRevision((r) => r + 1);
                workflow.reload();
              }}
            />
          )}
          <h2>Graph</h2>
          <WorkflowGraph
            nodes={w.nodes}
            connections={w.connections}
            title={w.name}
            selected={selected ?? w.nodes[0]?.name}
          />
          <NodeParameters
            workflow={w}
            selected={selected}
            onSelect={setSelected}
            refused={refused}
            revision={revision}
            onSaved={() => workflow.reload()}
          />
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
