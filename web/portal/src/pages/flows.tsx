import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { names, useModelChoice } from '../components/model-choice.js';
import { dateTime } from '../format.js';
import { href, navigate } from '../route.js';
import { can, refusal, useSession } from '../session.js';
import type { Chatflow } from '../types.js';
import { useLoad } from '../use-load.js';
import { useSubmit } from '../use-submit.js';

/** A flow from the platform's fields, or a Flowise export (its canvas JSON) pasted as it is. */
function NewFlow() {
  const model = useModelChoice();
  const [name, setName] = useState('');
  const [kind, setKind] = useState('llm');
  const [systemPrompt, setSystemPrompt] = useState('');
  const [topics, setTopics] = useState('');
  const [flowData, setFlowData] = useState('');
  const { busy, error, onSubmit } = useSubmit(async () => {
    const body = flowData.trim()
      ? { name: name.trim(), flowData: flowData.trim() }
      : {
          name: name.trim(),
          kind,
          model: model.chosen,
          ...(systemPrompt.trim() ? { systemPrompt } : {}),
          ...(kind === 'rag' ? { topics: names(topics) } : {}),
        };
    const flow = await api<Chatflow>('POST', '/api/v1/chatflows', { body });
    navigate(href('flows', flow.id));
  });
  return (
    <form class="panel" onSubmit={onSubmit} aria-labelledby="new-flow-title">
      <h2 id="new-flow-title">New flow</h2>
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
          Kind
          <select name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            <option value="llm">Chat with a model (llm)</option>
            <option value="rag">Answer from knowledge (rag)</option>
          </select>
        </label>
        {model.select}
        {kind === 'rag' && (
          <label>
            Topics (comma-separated)
            <input name="topics" value={topics} onInput={(e) => setTopics(e.currentTarget.value)} />
          </label>
        )}
      </div>
      <label>
        System prompt
        <textarea
          name="systemPrompt"
          rows={2}
          value={systemPrompt}
          onInput={(e) => setSystemPrompt(e.currentTarget.value)}
        />
      </label>
      <label>
        Or paste a Flowise chatflow export (flowData JSON; the fields above are then not used)
        <textarea
          name="flowData"
          rows={3}
          value={flowData}
          onInput={(e) => setFlowData(e.currentTarget.value)}
        />
      </label>
      <ErrorNote error={error ?? model.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Create flow
        </button>
      </div>
    </form>
  );
}

/** The account's flows (the platform's and imported Flowise chatflows). */
export function FlowsPage() {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const list = useLoad(() => api<Chatflow[]>('GET', '/api/v1/chatflows'), []);
  return (
    <section aria-labelledby="flows-title">
      <div class="title-row">
        <h1 id="flows-title">Flows</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      {writable ? <NewFlow /> : <p class="notice">{refusal(session.member.role, 'create flows')}</p>}
      <ErrorNote error={list.error} />
      <div class="table-wrap">
        <table aria-label="Flows">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Model</th>
              <th scope="col">Topics</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((f) => (
              <tr key={f.id}>
                <th scope="row">
                  <a href={href('flows', f.id)}>{f.name}</a>
                </th>
                <td>{f.kind}</td>
                <td>
                  <code>{f.model ?? '—'}</code>
                </td>
                <td>{f.topics.join(', ') || '—'}</td>
                <td>{dateTime(f.updatedDate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data?.length === 0 && <p>No flows yet.</p>}
    </section>
  );
}
