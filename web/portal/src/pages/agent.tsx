import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorNote } from '../components/error-note.js';
import { modelList, names } from '../components/model-choice.js';
import { href, navigate } from '../route.js';
import { can, useSession } from '../session.js';
import { useLoad } from '../use-load.js';
import { AgentChat } from './agent-chat.js';
import { type Agent, toolName } from './agents.js';

interface Block {
  id: string;
  label: string;
  description: string | null;
  value: string;
  limit: number;
}

/** Instructions, model, topics and which tools wait for a person's approval. */
function Settings({
  agent,
  onSaved,
  writable,
}: {
  agent: Agent;
  onSaved: (a: Agent) => void;
  writable: boolean;
}) {
  const models = useLoad(modelList, []);
  const [instructions, setInstructions] = useState(agent.instructions);
  const [model, setModel] = useState(agent.model);
  const [topics, setTopics] = useState(agent.knowledgeTopics.join(', '));
  const [approval, setApproval] = useState(agent.requiresApproval.join(', '));
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setNote('');
    try {
      const saved = await api<Agent>('PATCH', `/api/agents/${encodeURIComponent(agent.id)}`, {
        body: { instructions, model, knowledgeTopics: names(topics), requiresApproval: names(approval) },
      });
      onSaved(saved);
      setNote('Saved.');
    } catch (e) {
      setError(e);
    }
  };
  const listed = new Set((models.data ?? []).map((m) => m.id));
  return (
    <form class="panel" onSubmit={save} aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <fieldset disabled={!writable}>
        <div class="filters">
          <label>
            Model
            <select name="model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
              {!listed.has(model) && <option value={model}>{model}</option>}
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
          <label>
            Tools that need approval (comma-separated)
            <input name="approval" value={approval} onInput={(e) => setApproval(e.currentTarget.value)} />
          </label>
        </div>
        <p class="hint">Tools: {agent.tools.map(toolName).join(', ') || 'none'} (set through the API).</p>
        <label>
          Instructions
          <textarea
            name="instructions"
            rows={4}
            value={instructions}
            onInput={(e) => setInstructions(e.currentTarget.value)}
          />
        </label>
        <ErrorNote error={error} />
        {note && <p role="status">{note}</p>}
        <div class="actions">
          <button type="submit" class="primary">
            Save settings
          </button>
        </div>
      </fieldset>
    </form>
  );
}

/** The agent's own memory blocks (read into every turn): add one, change a value. */
function Memory({ agentId, writable }: { agentId: string; writable: boolean }) {
  const path = `/api/agents/${encodeURIComponent(agentId)}/memory/blocks`;
  const blocks = useLoad(() => api<{ data: Block[] }>('GET', path), [agentId]);
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [label, setLabel] = useState('');
  const [error, setError] = useState<unknown>(null);
  const run = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
      blocks.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section class="panel" aria-labelledby="memory-title">
      <h2 id="memory-title">Memory blocks</h2>
      <ErrorNote error={error ?? blocks.error} />
      {(blocks.data?.data ?? []).map((b) => (
        <form
          key={b.id}
          onSubmit={(e) => {
            e.preventDefault();
            void run(() =>
              api('PATCH', `${path}/${encodeURIComponent(b.id)}`, {
                body: { value: edits[b.id] ?? b.value },
              }),
            );
          }}
        >
          <label>
            {b.label} ({(edits[b.id] ?? b.value).length} of {b.limit} characters)
            <textarea
              name={`block-${b.label}`}
              rows={3}
              maxLength={b.limit}
              disabled={!writable}
              value={edits[b.id] ?? b.value}
              onInput={(e) => {
                const value = e.currentTarget.value;
                setEdits((x) => ({ ...x, [b.id]: value }));
              }}
            />
          </label>
          {writable && (
            <button type="submit" aria-label={`Save the ${b.label} block`}>
              Save
            </button>
          )}
        </form>
      ))}
      {blocks.data?.data.length === 0 && <p>No memory blocks.</p>}
      {writable && (
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              await api('POST', path, { body: { label: label.trim() } });
              setLabel('');
            });
          }}
        >
          <label>
            New block label
            <input
              name="label"
              required
              maxLength={64}
              value={label}
              onInput={(e) => setLabel(e.currentTarget.value)}
            />
          </label>
          <button type="submit">Add block</button>
        </form>
      )}
    </section>
  );
}

/** `#/agents/{id}`: settings, memory, and a chat that shows each turn's steps and waits for approvals. */
export function AgentPage({ id }: { id: string }) {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const loaded = useLoad(() => api<Agent>('GET', `/api/agents/${encodeURIComponent(id)}`), [id]);
  const [saved, setSaved] = useState<Agent | null>(null);
  const [deleting, setDeleting] = useState(false);
  const agent = saved?.id === id ? saved : loaded.data;
  return (
    <section aria-labelledby="agent-title">
      <p>
        <a href={href('agents')}>← Agents</a>
      </p>
      <div class="title-row">
        <h1 id="agent-title">{agent?.name ?? 'Agent'}</h1>
        {writable && agent && (
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Delete agent
          </button>
        )}
      </div>
      <ErrorNote error={loaded.error} />
      {agent && (
        <>
          <AgentChat agent={agent} writable={writable} />
          <Settings key={agent.updatedAt} agent={agent} onSaved={setSaved} writable={writable} />
          <Memory agentId={agent.id} writable={writable} />
        </>
      )}
      {deleting && agent && (
        <ConfirmDialog
          title={`Delete ${agent.name}?`}
          confirmLabel="Delete agent"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api('DELETE', `/api/agents/${encodeURIComponent(agent.id)}`);
            navigate(href('agents'));
          }}
        >
          <p>Its conversations stay; nobody can talk to it any more.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
