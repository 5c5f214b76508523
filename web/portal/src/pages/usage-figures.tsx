import { count } from '../format.js';
import type { RequestSummary, Usage } from '../types.js';

/** The overall and per-endpoint latency percentiles, and requests per status, of the chosen range. */
export function RequestFigures({ summary }: { summary: RequestSummary }) {
  const l = summary.latencyMs;
  return (
    <>
      <h2>Latency</h2>
      <p data-requests={summary.requests}>
        {count(summary.requests)} requests: p50 {l.p50} ms, p95 {l.p95} ms, p99 {l.p99} ms.
      </p>
      <h2>Per endpoint</h2>
      <div class="table-wrap">
        <table class="endpoints">
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Requests</th>
              <th scope="col">Errors</th>
              <th scope="col">p50</th>
              <th scope="col">p95</th>
              <th scope="col">p99</th>
            </tr>
          </thead>
          <tbody>
            {summary.byEndpoint.map((e) => (
              <tr key={`${e.method} ${e.route}`}>
                <th scope="row">
                  <code>
                    {e.method} {e.route}
                  </code>
                </th>
                <td>{count(e.requests)}</td>
                <td>{count(e.errors)}</td>
                <td>{e.latencyMs.p50} ms</td>
                <td>{e.latencyMs.p95} ms</td>
                <td>{e.latencyMs.p99} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Per status</h2>
      <table class="statuses">
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Requests</th>
          </tr>
        </thead>
        <tbody>
          {summary.byStatus.map((s) => (
            <tr key={s.status}>
              <th scope="row">{s.status}</th>
              <td>{count(s.requests)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The cost of a model's rows at the registry's prices; "—" when the model has no price. */
export function usd(rows: Array<{ costUsd: number | null }>): string {
  const priced = rows.filter((r) => r.costUsd !== null);
  if (priced.length === 0) return '—';
  const total = priced.reduce((t, r) => t + (r.costUsd ?? 0), 0);
  return `$${total < 0.01 ? total.toFixed(6) : total.toFixed(2)}`;
}

const cell = (v: string | number) => {
  const text = String(v);
  return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** Usage per day, key and service, then tokens per model and the endpoint figures, as one CSV. */
export function usageCsv(usage: Usage, summary: RequestSummary | null): string {
  const lines = [['day', 'keyId', 'service', 'requests', 'rejected'].join(',')];
  for (const r of usage.data)
    lines.push([r.day, r.keyId, r.service, r.requests, r.rejected].map(cell).join(','));
  lines.push(
    '',
    ['day', 'keyId', 'model', 'requests', 'promptTokens', 'completionTokens', 'costUsd'].join(','),
  );
  for (const t of usage.tokens)
    lines.push(
      [t.day, t.keyId, t.model, t.requests, t.promptTokens, t.completionTokens, t.costUsd ?? '']
        .map(cell)
        .join(','),
    );
  if (summary) {
    lines.push('', ['method', 'route', 'requests', 'errors', 'p50Ms', 'p95Ms', 'p99Ms'].join(','));
    for (const e of summary.byEndpoint)
      lines.push(
        [e.method, e.route, e.requests, e.errors, e.latencyMs.p50, e.latencyMs.p95, e.latencyMs.p99]
          .map(cell)
          .join(','),
      );
  }
  return `${lines.join('\n')}\n`;
}
