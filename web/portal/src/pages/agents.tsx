import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { More, usePages } from '../components/paged-list.js';
import { dateTime } from '../format.js';
import { href, navigate } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import type { Model } from '../types.js';
import { useLoad } from '../use-load.js';

export interface Agent {
  id: string;
  name: string;
  instructions: string;
  model: string;
  knowledgeTopics: string[];
  tools: Array<string | { name: string }>;
  requiresApproval: string[];
  maxToolCalls: number;
  updatedAt: string;
}

export const toolName = (t: Agent['tools'][number]): string => (typeof t === 'string' ? t : t.name);

/** The models a key of this member may call (the gateway's list). */
export const modelList = () => api<{ data: Model[] }>('GET', '/v1/models').then((r) => r.data);

function NewAgent() {
  const models = useLoad(modelList, []);
  const [name, setName] = useState('');
  const [model, setModel] = useState('');
  const [instructions, setInstructions] = useState('');
  const [topics, setTopics] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const chosen = model || models.data?.[0]?.id || '';
  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const knowledgeTopics = topics
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const agent = await api<Agent>('POST', '/api/agents', {
        body: {
          name: name.trim(),
          model: chosen,
          ...(instructions.trim() ? { instructions } : {}),
          ...(knowledgeTopics.length ? { knowledgeTopics } : {}),
        },
      });
      navigate(href('agents', agent.id));
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={create} aria-labelledby="new-agent-title">
      <h2 id="new-agent-title">New agent</h2>
      <div class="filters">
        <label>
          Name
          <input
            name="name"
            required
            maxLength={200}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <label>
          Model
          <select name="model" value={chosen} onChange={(e) => setModel(e.currentTarget.value)}>
            {(models.data ?? []).map((m) => (
              <option key={m.id} value={m.id}>
                {m.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Knowledge topics (comma-separated)
          <input name="topics" value={topics} onInput={(e) => setTopics(e.currentTarget.value)} />
        </label>
      </div>
      <label>
        Instructions
        <textarea
          name="instructions"
          rows={3}
          value={instructions}
          onInput={(e) => setInstructions(e.currentTarget.value)}
        />
      </label>
      <ErrorNote error={error ?? models.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || !chosen}>
          Create agent
        </button>
      </div>
    </form>
  );
}

/** The account's agents; each opens on its settings, memory and a chat. */
export function AgentsPage() {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const list = usePages<Agent>('/api/agents', {});
  return (
    <section aria-labelledby="agents-title">
      <div class="title-row">
        <h1 id="agents-title">Agents</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      {writable ? <NewAgent /> : <p class="notice">{refusal(session.member.role, 'create agents')}</p>}
      <ErrorNote error={list.error} />
      <div class="table-wrap">
        <table aria-label="Agents">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Model</th>
              <th scope="col">Topics</th>
              <th scope="col">Tools</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.rows.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  <a href={href('agents', a.id)}>{a.name}</a>
                </th>
                <td>
                  <code>{a.model}</code>
                </td>
                <td>{a.knowledgeTopics.join(', ') || '—'}</td>
                <td>{a.tools.map(toolName).join(', ') || '—'}</td>
                <td>{dateTime(a.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!list.busy && list.rows.length === 0 && !list.error && <p>No agents yet.</p>}
      <More next={list.next} busy={list.busy} more={list.more} count={list.rows.length} noun="agents" />
    </section>
  );
}
