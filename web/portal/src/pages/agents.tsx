import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { names, useModelChoice } from '../components/model-choice.js';
import { More, usePages } from '../components/paged-list.js';
import { dateTime } from '../format.js';
import { href, navigate } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import { useSubmit } from '../use-submit.js';

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

function NewAgent() {
  const model = useModelChoice();
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const [topics, setTopics] = useState('');
  const { busy, error, onSubmit } = useSubmit(async () => {
    const knowledgeTopics = names(topics);
    const agent = await api<Agent>('POST', '/api/agents', {
      body: {
        name: name.trim(),
        model: model.chosen,
        ...(instructions.trim() ? { instructions } : {}),
        ...(knowledgeTopics.length ? { knowledgeTopics } : {}),
      },
    });
    navigate(href('agents', agent.id));
  });
  return (
    <form class="panel" onSubmit={onSubmit} aria-labelledby="new-agent-title">
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
        {model.select}
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
      <ErrorNote error={error ?? model.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || !model.chosen}>
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
