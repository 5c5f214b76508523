import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorNote } from '../components/error-note.js';
import { href, navigate } from '../route.js';
import { can, useSession } from '../session.js';
import type { Chatflow } from '../types.js';
import { useLoad } from '../use-load.js';

/** What GET answers and PUT does not take back: the server keeps these. */
const READ_ONLY = ['id', 'type', 'createdDate', 'updatedDate'];

const editable = (flow: Chatflow): string =>
  JSON.stringify(
    Object.fromEntries(Object.entries(flow).filter(([k, v]) => !READ_ONLY.includes(k) && v !== undefined)),
    null,
    2,
  );

/** Asks the flow one question as a client's prediction call does, and shows the whole answer. */
function TryFlow({ flow }: { flow: Chatflow }) {
  const [question, setQuestion] = useState('');
  const [answer, setAnswer] = useState<{ text?: string; sourceDocuments?: unknown[] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const ask = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setAnswer(
        await api('POST', `/api/v1/prediction/${encodeURIComponent(flow.id)}`, {
          body: { question, streaming: false },
        }),
      );
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={ask} aria-labelledby="try-title">
      <h2 id="try-title">Try it</h2>
      <div class="filters">
        <label class="grow">
          Question
          <input
            name="question"
            required
            value={question}
            onInput={(e) => setQuestion(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Asking…' : 'Ask'}
        </button>
      </div>
      <ErrorNote error={error} />
      {answer && (
        <div role="status">
          <p class="answer">{answer.text ?? JSON.stringify(answer)}</p>
          {(answer.sourceDocuments?.length ?? 0) > 0 && (
            <p class="hint">{answer.sourceDocuments?.length} source passages used</p>
          )}
        </div>
      )}
    </form>
  );
}

/** `#/flows/{id}`: try the flow, edit its definition as JSON, delete it. */
export function FlowPage({ id }: { id: string }) {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const loaded = useLoad(() => api<Chatflow>('GET', `/api/v1/chatflows/${encodeURIComponent(id)}`), [id]);
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const [deleting, setDeleting] = useState(false);
  const flow = loaded.data;
  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setNote('');
    try {
      let body: unknown;
      try {
        body = JSON.parse(text ?? '');
      } catch (e) {
        throw new Error(`The definition is not JSON: ${e instanceof Error ? e.message : String(e)}`);
      }
      await api('PUT', `/api/v1/chatflows/${encodeURIComponent(id)}`, { body });
      setText(null);
      loaded.reload();
      setNote('Saved.');
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="flow-title">
      <p>
        <a href={href('flows')}>← Flows</a>
      </p>
      <div class="title-row">
        <h1 id="flow-title">{flow?.name ?? 'Flow'}</h1>
        {writable && flow && (
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Delete flow
          </button>
        )}
      </div>
      <ErrorNote error={loaded.error} />
      {flow && (
        <>
          <TryFlow flow={flow} />
          <form class="panel" onSubmit={save} aria-labelledby="definition-title">
            <h2 id="definition-title">Definition</h2>
            <label>
              Flow JSON
              <textarea
                name="definition"
                rows={16}
                spellcheck={false}
                readOnly={!writable}
                value={text ?? editable(flow)}
                onInput={(e) => setText(e.currentTarget.value)}
              />
            </label>
            <ErrorNote error={error} />
            {note && <p role="status">{note}</p>}
            {writable && (
              <div class="actions">
                <button type="submit" class="primary" disabled={text === null}>
                  Save definition
                </button>
              </div>
            )}
          </form>
        </>
      )}
      {deleting && flow && (
        <ConfirmDialog
          title={`Delete ${flow.name}?`}
          confirmLabel="Delete flow"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api('DELETE', `/api/v1/chatflows/${encodeURIComponent(flow.id)}`);
            navigate(href('flows'));
          }}
        >
          <p>Its chat messages go with it; clients that call it get 404.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
