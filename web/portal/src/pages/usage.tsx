import { useMemo, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { type Bar, BarChart } from '../components/bar-chart.js';
import { ErrorNote } from '../components/error-note.js';
import { download } from '../download.js';
import { count, utcDay } from '../format.js';
import type { ApiKey, RequestSummary, Usage } from '../types.js';
import { useLoad } from '../use-load.js';
import { allKeys } from './keys.js';
import { RequestFigures, usageCsv, usd } from './usage-figures.js';

/** Every day from `from` to `to` (YYYY-MM-DD, UTC), so days without traffic draw as empty bars. */
function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (
    let d = new Date(`${from}T00:00:00Z`);
    utcDay(d) <= to && days.length < 400;
    d = new Date(d.getTime() + 86_400_000)
  )
    days.push(utcDay(d));
  return days;
}

function sum<T>(rows: T[], by: (row: T) => string, value: (row: T) => number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) out.set(by(r), (out.get(by(r)) ?? 0) + value(r));
  return out;
}

export function UsagePage({ params }: { params: URLSearchParams }) {
  const [keyId, setKeyId] = useState(params.get('keyId') ?? '');
  const [service, setService] = useState('');
  // The key list needs core:admin; without it the page still shows the account's usage by key id.
  const keys = useLoad(() => allKeys().catch(() => [] as ApiKey[]), []);
  const [range, setRange] = useState({ from: '', to: '' });
  const usage = useLoad(
    () => api<Usage>('GET', `/v1/usage${query({ keyId, from: range.from, to: range.to })}`),
    [keyId, range.from, range.to],
  );
  // The request log's figures over the same UTC days (the log keeps REQUEST_LOG_RETENTION_DAYS).
  const summary = useLoad(() => {
    const u = usage.data;
    if (!u) return Promise.resolve(null);
    const to = new Date(Date.parse(`${u.to}T00:00:00Z`) + 86_400_000).toISOString();
    return api<RequestSummary>('GET', `/v1/request-logs/summary${query({ keyId, from: u.from, to })}`);
  }, [usage.data]);
  const names = new Map((keys.data ?? []).map((k) => [k.id, k]));

  const view = useMemo(() => {
    if (!usage.data) return null;
    const u = usage.data;
    const rows = u.data.filter((r) => !service || r.service === service);
    const requests = sum(
      rows,
      (r) => r.day,
      (r) => r.requests,
    );
    const rejected = sum(
      rows,
      (r) => r.day,
      (r) => r.rejected,
    );
    const bars: Bar[] = daysBetween(u.from, u.to).map((d) => ({
      label: d,
      value: requests.get(d) ?? 0,
      extra: rejected.get(d) ?? 0,
    }));
    const services = [...new Set(u.data.map((r) => r.service))].sort();
    const byService = services.map((s) => ({
      service: s,
      requests: u.data.filter((r) => r.service === s).reduce((t, r) => t + r.requests, 0),
      rejected: u.data.filter((r) => r.service === s).reduce((t, r) => t + r.rejected, 0),
    }));
    const today = u.to;
    const todayByKey = sum(
      u.data.filter((r) => r.day === today),
      (r) => r.keyId,
      (r) => r.requests,
    );
    const keyIds = [...new Set([...u.data.map((r) => r.keyId), ...(keyId ? [keyId] : [])])];
    return { bars, services, byService, todayByKey, keyIds, today };
  }, [usage.data, service, keyId]);

  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <div class="filters">
        <label>
          Key
          <select name="keyId" value={keyId} onChange={(e) => setKeyId(e.currentTarget.value)}>
            <option value="">All keys</option>
            {(keys.data ?? []).map((k) => (
              <option key={k.id} value={k.id}>
                {k.name} ({k.prefix}…{k.last4})
              </option>
            ))}
            {keyId && !names.has(keyId) && <option value={keyId}>{keyId}</option>}
          </select>
        </label>
        <label>
          Service
          <select name="service" value={service} onChange={(e) => setService(e.currentTarget.value)}>
            <option value="">All services</option>
            {(view?.services ?? []).map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          From (UTC day)
          <input
            type="date"
            name="from"
            value={range.from}
            onChange={(e) => setRange((r) => ({ ...r, from: e.currentTarget.value }))}
          />
        </label>
        <label>
          To (UTC day)
          <input
            type="date"
            name="to"
            value={range.to}
            onChange={(e) => setRange((r) => ({ ...r, to: e.currentTarget.value }))}
          />
        </label>
        <button type="button" onClick={usage.reload} disabled={usage.loading}>
          Refresh
        </button>
        <button
          type="button"
          disabled={!usage.data}
          onClick={() =>
            usage.data &&
            download(`usage-${usage.data.from}-${usage.data.to}.csv`, usageCsv(usage.data, summary.data))
          }
        >
          Export CSV
        </button>
      </div>
      <ErrorNote error={usage.error ?? summary.error} />
      {view && usage.data && (
        <>
          <BarChart
            title={`Requests per day, ${usage.data.from} to ${usage.data.to} (UTC)`}
            bars={view.bars}
            valueLabel="requests"
            extraLabel="refused (429)"
          />
          <h2>Today's quota</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Requests today</th>
                <th scope="col">Daily quota</th>
                <th scope="col">Remaining today</th>
              </tr>
            </thead>
            <tbody>
              {view.keyIds.map((id) => {
                const k = names.get(id);
                const used = view.todayByKey.get(id) ?? 0;
                return (
                  <tr key={id}>
                    <th scope="row">{k ? k.name : id}</th>
                    <td>{count(used)}</td>
                    <td>{k ? count(k.dailyQuota) : '—'}</td>
                    <td data-remaining={k ? Math.max(0, k.dailyQuota - used) : ''}>
                      {k ? count(Math.max(0, k.dailyQuota - used)) : '—'}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {view.keyIds.length === 0 && <p>No requests in these days.</p>}
          {summary.data && <RequestFigures summary={summary.data} />}
          <h2>Per service</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Service</th>
                <th scope="col">Requests</th>
                <th scope="col">Refused (429)</th>
              </tr>
            </thead>
            <tbody>
              {view.byService.map((s) => (
                <tr key={s.service}>
                  <th scope="row">{s.service}</th>
                  <td>{count(s.requests)}</td>
                  <td>{count(s.rejected)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {usage.data.tokens.length > 0 && (
            <>
              <h2>Tokens per model</h2>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Prompt tokens</th>
                    <th scope="col">Completion tokens</th>
                    <th scope="col">Cost (USD)</th>
                  </tr>
                </thead>
                <tbody>
                  {[...new Set(usage.data.tokens.map((t) => t.model))].sort().map((model) => {
                    const rows = usage.data?.tokens.filter((t) => t.model === model) ?? [];
                    return (
                      <tr key={model}>
                        <th scope="row">{model}</th>
                        <td>{count(rows.reduce((t, r) => t + r.requests, 0))}</td>
                        <td>{count(rows.reduce((t, r) => t + r.promptTokens, 0))}</td>
                        <td>{count(rows.reduce((t, r) => t + r.completionTokens, 0))}</td>
                        <td>{usd(rows)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </>
          )}
        </>
      )}
    </section>
  );
}
