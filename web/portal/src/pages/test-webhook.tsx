import { useEffect, useRef, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import { href, navigate } from '../route.js';
import type { List } from '../types.js';

interface Listening {
  expiresAt: string;
  webhooks: Array<{ method: string; path: string }>;
}

/**
 * n8n's "listen for test event": the workflow's webhooks answer once at /webhook-test/…; the page waits
 * for that run (polling the workflow's newest test execution every 2 s until the window ends) and opens it.
 */
export function ListenForTestWebhook(props: { workflowId: string; disabled?: string }) {
  const [listening, setListening] = useState<Listening | null>(null);
  const [error, setError] = useState<unknown>(null);
  // The newest test run before listening: a run newer than it is the one this page waits for. Ids are
  // the server's, so a browser clock that is off does not matter.
  const before = useRef<string | null>(null);
  const latest = async () =>
    (
      await api<List<{ id: string }>>(
        'GET',
        `/api/v1/executions${query({ workflowId: props.workflowId, mode: 'test', limit: 1 })}`,
      )
    ).data[0]?.id ?? null;
  const listen = async () => {
    setError(null);
    try {
      before.current = await latest();
      setListening(
        await api<Listening>('POST', `/api/v1/workflows/${encodeURIComponent(props.workflowId)}/listen`, {
          body: {},
        }),
      );
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    if (!listening) return;
    let live = true;
    const poll = async () => {
      if (!live) return;
      if (Date.now() > Date.parse(listening.expiresAt)) {
        setListening(null);
        setError(new Error('No test call came before the listening window ended; listen again to retry.'));
        return;
      }
      try {
        const run = await latest();
        if (run && run !== before.current && live) {
          navigate(href('executions', run));
          return;
        }
      } catch (e) {
        setError(e);
      }
      if (live) timer = setTimeout(poll, 2_000);
    };
    let timer = setTimeout(poll, 2_000);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [listening, props.workflowId]);
  const origin = location.origin;
  return (
    <>
      <button type="button" onClick={listen} disabled={Boolean(props.disabled)} title={props.disabled}>
        {listening ? 'Listening…' : 'Listen for test webhook'}
      </button>
      {listening && (
        <div role="status" class="notice">
          Waiting for one call until {new Date(listening.expiresAt).toLocaleTimeString()} at:
          <ul>
            {listening.webhooks.map((w) => (
              <li key={`${w.method} ${w.path}`}>
                <code>
                  {w.method} {origin}
                  {w.path}
                </code>
              </li>
            ))}
          </ul>
          The run opens here when it arrives.
        </div>
      )}
      <ErrorNote error={error} />
    </>
  );
}
