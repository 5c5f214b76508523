import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components/error-note.js';
import type { Agent } from './agents.js';

interface Step {
  type: 'retrieval' | 'tool_call' | 'model';
  name: string;
  input: unknown;
  output: unknown;
  ms: number;
}
interface Message {
  id: string;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  steps: Step[];
}
interface Pending {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  expiresAt?: string;
}
interface RequiredAction {
  type: 'submit_tool_outputs' | 'approve_tool_calls';
  toolCalls: Pending[];
  approvals: Pending[];
}
interface Answer {
  conversationId: string;
  runId: string;
  status: 'completed' | 'requires_action';
  messages: Message[];
  requiredAction?: RequiredAction;
}
interface Run {
  id: string;
  conversationId: string;
  status: string;
  requiredAction: RequiredAction | null;
}

const short = (value: unknown): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

function Steps({ steps }: { steps: Step[] }) {
  if (steps.length === 0) return null;
  return (
    <details class="steps">
      <summary>{steps.length === 1 ? '1 step' : `${steps.length} steps`}</summary>
      <ol>
        {steps.map((s, i) => (
          <li key={`${s.name}-${i}`}>
            <strong>{s.type.replace('_', ' ')}</strong> <code>{s.name}</code> ({Math.round(s.ms)} ms)
            <div class="hint">in: {short(s.input)}</div>
            <div class="hint">out: {short(s.output)}</div>
          </li>
        ))}
      </ol>
    </details>
  );
}

/** Calls that wait for a person: approve or reject each, and the turn continues when none waits. */
function Approvals(props: {
  pending: Pending[];
  decide: (id: string, approve: boolean) => void;
  busy: boolean;
}) {
  return (
    <section class="panel" aria-label="Waiting for approval">
      <p>The agent wants to call a tool that needs approval:</p>
      <ul>
        {props.pending.map((c) => (
          <li key={c.id}>
            <code>{c.name}</code> with <code>{short(c.arguments)}</code>
            {c.expiresAt ? <span class="hint"> (rejected if nobody decides by {c.expiresAt})</span> : null}{' '}
            <button type="button" disabled={props.busy} onClick={() => props.decide(c.id, true)}>
              Approve {c.name}
            </button>{' '}
            <button
              type="button"
              class="danger"
              disabled={props.busy}
              onClick={() => props.decide(c.id, false)}
            >
              Reject {c.name}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A chat with the agent as the API runs it: retrieval and tool steps shown, approvals asked here. */
export function AgentChat({ agent, writable }: { agent: Agent; writable: boolean }) {
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [waiting, setWaiting] = useState<{ runId: string; pending: Pending[] } | null>(null);
  const [text, setText] = useState('');
  const [runId, setRunId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const base = `/api/agents/${encodeURIComponent(agent.id)}`;

  const took = (answer: Answer) => {
    setConversationId(answer.conversationId);
    setMessages((m) => [...m.filter((x) => !answer.messages.some((y) => y.id === x.id)), ...answer.messages]);
    const pending = answer.requiredAction?.approvals ?? [];
    setWaiting(
      answer.status === 'requires_action' && pending.length ? { runId: answer.runId, pending } : null,
    );
  };
  const call = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const send = (event: Event) => {
    event.preventDefault();
    if (!text.trim()) return;
    const content = text;
    setText('');
    void call(async () =>
      took(
        await api<Answer>('POST', `${base}/messages`, {
          body: { content, ...(conversationId ? { conversationId } : {}) },
        }),
      ),
    );
  };
  const decide = (toolCallId: string, approve: boolean) => {
    if (!waiting) return;
    void call(async () =>
      took(
        await api<Answer>('POST', `${base}/runs/${encodeURIComponent(waiting.runId)}/approvals`, {
          body: { approvals: [{ toolCallId, approve }] },
        }),
      ),
    );
  };
  /** A run an API caller started, paused for approval: found by its id. */
  const openRun = (event: Event) => {
    event.preventDefault();
    void call(async () => {
      const run = await api<Run>('GET', `${base}/runs/${encodeURIComponent(runId.trim())}`);
      const pending = run.requiredAction?.approvals ?? [];
      if (pending.length === 0) throw new Error(`Run ${run.id} is ${run.status}; nothing waits for approval`);
      setConversationId(run.conversationId);
      setWaiting({ runId: run.id, pending });
    });
  };

  return (
    <section class="panel" aria-labelledby="chat-title">
      <h2 id="chat-title">Chat</h2>
      <ol class="chat" aria-live="polite">
        {messages
          .filter((m) => m.role !== 'tool')
          .map((m) => (
            <li key={m.id} class={m.role}>
              <strong>{m.role === 'user' ? 'You' : agent.name}:</strong> {m.content}
              <Steps steps={m.steps} />
            </li>
          ))}
      </ol>
      {waiting && <Approvals pending={waiting.pending} decide={decide} busy={busy || !writable} />}
      <ErrorNote error={error} />
      <form onSubmit={send} class="filters">
        <label class="grow">
          Message
          <textarea
            name="message"
            rows={2}
            maxLength={32_000}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            disabled={!writable || waiting !== null}
          />
        </label>
        <button type="submit" class="primary" disabled={busy || !writable || waiting !== null}>
          {busy ? 'Waiting…' : 'Send'}
        </button>
        {conversationId && (
          <button
            type="button"
            onClick={() => {
              setConversationId(null);
              setMessages([]);
              setWaiting(null);
            }}
          >
            New conversation
          </button>
        )}
      </form>
      {writable && (
        <form onSubmit={openRun} class="filters">
          <label>
            Run waiting for approval (id)
            <input
              name="runId"
              required
              maxLength={100}
              value={runId}
              onInput={(e) => setRunId(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy}>
            Open run
          </button>
        </form>
      )}
    </section>
  );
}
