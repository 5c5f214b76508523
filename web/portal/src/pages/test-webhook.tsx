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
 * for that run (polling the workflow's test executions every 2 s until the window ends) and opens it.
 */
export function ListenForTestWebhook(props: { workflowId: string; disabled?: string }) {
  const [listening, setListening] = useState<Listening | null>(null);
  const [error, setError] = useState<unknown>(null);
  const since = useRef('');
  const listen = async () => {
    setError(null);
    try {
      since.current = new Date(Date.now() - 1_000).toISOString();
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
        const page = await api<List<{ id: string }>>(
          'GET',
          `/api/v1/executions${query({ workflowId: props.workflowId, mode: 'test', startedAfter: since.current, limit: 1 })}`,
        );
        const run = page.data[0];
        if (run && live) {
          navigate(href('executions', run.id));
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
