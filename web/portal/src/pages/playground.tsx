import { useRef, useState } from 'preact/hooks';
import { ApiError, api, send } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { can, refusal, useSession } from '../session.js';
import { sseData } from '../sse.js';
import type { Chatflow, Model } from '../types.js';
import { useLoad } from '../use-load.js';

interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * The models that chat: OpenAI's list does not say which embed, Ollama's `/api/show` (a read) does.
 * A model whose details cannot be read stays listed; the chat call then answers in words.
 */
async function chatModels(models: Model[]): Promise<Model[]> {
  const shown = await Promise.allSettled(
    models.map((m) => api<{ capabilities?: string[] }>('POST', '/api/show', { body: { model: m.id } })),
  );
  return models.filter((_, i) => {
    const result = shown[i];
    return (
      result?.status !== 'fulfilled' || (result.value.capabilities ?? ['completion']).includes('completion')
    );
  });
}

/** Models of the llm service and flows of the flow service; either list may be refused (403). */
async function targets(): Promise<{ models: Model[]; flows: Chatflow[]; note: string }> {
  const [models, flows] = await Promise.allSettled([
    api<{ data: Model[] }>('GET', '/v1/models'),
    api<Chatflow[]>('GET', '/api/v1/chatflows'),
  ]);
  if (models.status === 'rejected' && flows.status === 'rejected') throw models.reason;
  const note = [models, flows]
    .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    .map((r) => (r.reason instanceof Error ? r.reason.message : String(r.reason)))
    .join(' ');
  return {
    models: models.status === 'fulfilled' ? await chatModels(models.value.data) : [],
    flows: flows.status === 'fulfilled' && Array.isArray(flows.value) ? flows.value : [],
    note,
  };
}

/** Streams one answer into `onToken`; the target is `model:<id>` or `flow:<id>`. */
async function stream(
  target: string,
  history: Turn[],
  onToken: (text: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const [kind, ...rest] = target.split(':');
  const id = rest.join(':');
  const question = history[history.length - 1]?.content ?? '';
  const response =
    kind === 'flow'
      ? await send('POST', `/api/v1/prediction/${encodeURIComponent(id)}`, {
          body: { question, streaming: true },
          signal,
        })
      : await send('POST', '/v1/chat/completions', {
          body: { model: id, messages: history, stream: true },
          signal,
        });
  if (!response.body) throw new ApiError(0, 'NO_BODY', 'The answer had no body');
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    // A flow may answer whole instead of streaming.
    const whole = (await response.json()) as {
      text?: string;
      choices?: Array<{ message?: { content?: string } }>;
    };
    onToken(whole.text ?? whole.choices?.[0]?.message?.content ?? '');
    return;
  }
  for await (const data of sseData(response.body)) {
    if (data === '[DONE]') break;
    const event = JSON.parse(data) as {
      event?: string;
      data?: unknown;
      error?: { message?: string };
      choices?: Array<{ delta?: { content?: string } }>;
    };
    if (kind === 'flow') {
      if (event.event === 'token' && typeof event.data === 'string') onToken(event.data);
      else if (event.event === 'error') throw new ApiError(0, 'STREAM', String(event.data));
      else if (event.event === 'end') break;
    } else {
      if (event.error) throw new ApiError(0, 'STREAM', event.error.message ?? 'The model failed mid-answer');
      const token = event.choices?.[0]?.delta?.content;
      if (token) onToken(token);
    }
  }
}

export function PlaygroundPage() {
  const { session } = useSession();
  const writable = can.write(session.member.role);
  const list = useLoad(targets, []);
  const [target, setTarget] = useState('');
  const [message, setMessage] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const chosen = target || (list.data?.models[0] ? `model:${list.data.models[0].id}` : '');

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!message.trim() || !chosen) return;
    const history: Turn[] = [...turns, { role: 'user', content: message }];
    setTurns([...history, { role: 'assistant', content: '' }]);
    setMessage('');
    setError(null);
    setBusy(true);
    abort.current = new AbortController();
    let answer = '';
    try {
      await stream(
        chosen,
        history,
        (token) => {
          answer += token;
          setTurns([...history, { role: 'assistant', content: answer }]);
        },
        abort.current.signal,
      );
    } catch (e) {
      if (!(e instanceof DOMException && e.name === 'AbortError')) setError(e);
    } finally {
      setBusy(false);
      abort.current = null;
    }
  };

  return (
    <section aria-labelledby="playground-title">
      <h1 id="playground-title">Playground</h1>
      <ErrorNote error={list.error} />
      {list.data?.note && <p class="notice">{list.data.note}</p>}
      {!writable && <p class="notice">{refusal(session.member.role, 'call models (a write)')}</p>}
      <form onSubmit={submit}>
        <label>
          Model or flow
          <select name="target" value={chosen} onChange={(e) => setTarget(e.currentTarget.value)}>
            {(list.data?.models.length ?? 0) > 0 && (
              <optgroup label="Models">
                {list.data?.models.map((m) => (
                  <option key={m.id} value={`model:${m.id}`}>
                    {m.id}
                  </option>
                ))}
              </optgroup>
            )}
            {(list.data?.flows.length ?? 0) > 0 && (
              <optgroup label="Flows">
                {list.data?.flows.map((f) => (
                  <option key={f.id} value={`flow:${f.id}`}>
                    {f.name}
                  </option>
                ))}
              </optgroup>
            )}
          </select>
        </label>
        <div class="chat" aria-live="polite" aria-busy={busy}>
          {turns.length === 0 && <p class="hint">Ask something; the answer streams in as it is written.</p>}
          {turns.map((t, i) => (
            <div key={i} class={`turn ${t.role}`}>
              <span class="who">{t.role === 'user' ? 'You' : 'Answer'}</span>
              <p>{t.content || (busy && i === turns.length - 1 ? '…' : '')}</p>
            </div>
          ))}
        </div>
        <ErrorNote error={error} />
        <label>
          Message
          <textarea
            name="message"
            rows={3}
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey))
                (e.currentTarget.form as HTMLFormElement).requestSubmit();
            }}
          />
        </label>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !chosen || !message.trim()}>
            Send
          </button>
          {busy && (
            <button type="button" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          )}
          {!busy && turns.length > 0 && (
            <button type="button" onClick={() => setTurns([])}>
              New chat
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
