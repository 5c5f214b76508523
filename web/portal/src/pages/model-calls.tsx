import { useState } from 'preact/hooks';
import { ErrorNote } from '../components/error-note.js';
import { More, usePages } from '../components/paged-list.js';
import { count, dateTime } from '../format.js';
import type { LlmRequestRow } from '../types.js';
import { Tabs } from './logs.js';

const cost = (usd: number | null | undefined) =>
  usd === null || usd === undefined ? '—' : `$${usd < 0.01 ? usd.toFixed(6) : usd.toFixed(4)}`;

/** `GET /v1/llm/requests`: every model call of the account, with tokens, latency, first token and cost. */
export function ModelCallsPage() {
  const [model, setModel] = useState('');
  const [status, setStatus] = useState('');
  const [keyId, setKeyId] = useState('');
  const rows = usePages<LlmRequestRow>('/v1/llm/requests', {
    model: model.trim() || undefined,
    status: status || undefined,
    keyId: keyId.trim() || undefined,
  });
  return (
    <section aria-labelledby="model-calls-title">
      <div class="title-row">
        <h1 id="model-calls-title">Model calls</h1>
        <button type="button" onClick={rows.reload}>
          Refresh
        </button>
      </div>
      <Tabs current="models" />
      <p class="hint">
        Calls to the language-model gateway, newest first. Cost is at the prices the model registry sets
        (`pricing`); models without one show —.
      </p>
      <div class="filters">
        <label>
          Model
          <input type="search" name="model" value={model} onChange={(e) => setModel(e.currentTarget.value)} />
        </label>
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="success">success</option>
            <option value="error">error</option>
            <option value="canceled">canceled</option>
          </select>
        </label>
        <label>
          Key id
          <input type="search" name="keyId" value={keyId} onChange={(e) => setKeyId(e.currentTarget.value)} />
        </label>
      </div>
      <ErrorNote error={rows.error} />
      <div class="table-wrap">
        <table aria-label="Model calls">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col">Tokens in / out</th>
              <th scope="col">Latency</th>
              <th scope="col">First token</th>
              <th scope="col">Cost</th>
              <th scope="col">Key</th>
            </tr>
          </thead>
          <tbody>
            {rows.rows.map((r) => (
              <tr key={r.id}>
                <td title={r.createdAt}>{dateTime(r.createdAt)}</td>
                <th scope="row">
                  <code>{r.model}</code>
                  {r.answeredBy && r.answeredBy !== r.model ? ` → ${r.answeredBy}` : ''}
                </th>
                <td>
                  {r.status}
                  {r.errorCode ? ` (${r.errorCode})` : ''}
                </td>
                <td>
                  {count(r.promptTokens)} / {count(r.completionTokens)}
                  {r.tokensEstimated ? ' (estimated)' : ''}
                </td>
                <td>{r.latencyMs} ms</td>
                <td>{r.ttftMs === null ? '—' : `${r.ttftMs} ms`}</td>
                <td>{cost(r.costUsd)}</td>
                <td>
                  <code>{r.keyId ?? '—'}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!rows.busy && rows.rows.length === 0 && !rows.error && <p>No model calls match.</p>}
      <More next={rows.next} busy={rows.busy} more={rows.more} count={rows.rows.length} noun="calls" />
    </section>
  );
}
