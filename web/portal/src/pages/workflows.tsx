import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { dateTime } from '../format.js';
import { href } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import type { List, Workflow, WorkflowSummary } from '../types.js';
import { useLoad } from '../use-load.js';

export async function allWorkflows(): Promise<WorkflowSummary[]> {
  const out: WorkflowSummary[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 20; pages++) {
    const page: List<WorkflowSummary> = await api(
      'GET',
      `/api/v1/workflows${query({ limit: 250, cursor, fields: 'id,name,active,tags,updatedAt' })}`,
    );
    out.push(...page.data);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return out;
}

/** The active switch of one workflow: activation registers its webhooks, so it can fail in words. */
export function ActiveToggle(props: {
  workflow: Pick<Workflow, 'id' | 'name' | 'active'>;
  onChanged: (w: Workflow) => void;
  disabled?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const w = props.workflow;
  const toggle = async () => {
    setBusy(true);
    setError(null);
    try {
      const action = w.active ? 'deactivate' : 'activate';
      props.onChanged(
        await api<Workflow>('POST', `/api/v1/workflows/${encodeURIComponent(w.id)}/${action}`, { body: {} }),
      );
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="toggle">
      <button
        type="button"
        role="switch"
        aria-checked={w.active}
        aria-label={`Active: ${w.name}`}
        title={props.disabled}
        disabled={busy || Boolean(props.disabled)}
        onClick={toggle}
      >
        <span aria-hidden="true" class="knob" />
        {w.active ? 'Active' : 'Inactive'}
      </button>
      <ErrorNote error={error} />
    </span>
  );
}

export function WorkflowsPage() {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const list = useLoad(allWorkflows, []);
  const [changed, setChanged] = useState<Record<string, Workflow>>({});
  const [filter, setFilter] = useState('');
  const rows = (list.data ?? [])
    .map((w) => ({ ...w, ...(changed[w.id] ? { active: changed[w.id]?.active ?? w.active } : {}) }))
    .filter((w) => w.name.toLowerCase().includes(filter.trim().toLowerCase()));
  return (
    <section aria-labelledby="workflows-title">
      <div class="title-row">
        <h1 id="workflows-title">Workflows</h1>
        {writable && (
          <a class="button primary" href={href('workflows', 'new')}>
            New or import
          </a>
        )}
      </div>
      <div class="filters">
        <label>
          Filter by name
          <input
            type="search"
            name="filter"
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
          />
        </label>
      </div>
      {!writable && <p class="notice">{refusal(session.member.role, 'activate or retry workflows')}</p>}
      <ErrorNote error={list.error} />
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Tags</th>
              <th scope="col">Updated</th>
              <th scope="col">Active</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((w) => (
              <tr key={w.id}>
                <th scope="row">
                  <a href={href('workflows', w.id)}>{w.name}</a>
                </th>
                <td>{(w.tags ?? []).map((t) => t.name).join(', ') || '—'}</td>
                <td>{dateTime(w.updatedAt)}</td>
                <td>
                  <ActiveToggle
                    workflow={w}
                    disabled={writable ? undefined : refusal(session.member.role, 'activate workflows')}
                    onChanged={(next) => setChanged((c) => ({ ...c, [w.id]: next }))}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && rows.length === 0 && <p>No workflows.</p>}
    </section>
  );
}
