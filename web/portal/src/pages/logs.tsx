import { useState } from 'preact/hooks';
import { CopyButton } from '../components/copy-button.js';
import { ErrorNote } from '../components/error-note.js';
import { instant, More, TimeFilters, usePages } from '../components/paged-list.js';
import { dateTime } from '../format.js';
import { href } from '../route.js';
import { type AuditEvent, type RequestLogRow, SERVICES } from '../types.js';

/** The three logs of the account, one tab each. */
export function Tabs({ current }: { current: 'requests' | 'audit' | 'models' }) {
  return (
    <nav aria-label="Logs" class="tabs">
      <a href={href('logs')} aria-current={current === 'requests' ? 'page' : undefined}>
        Requests
      </a>
      <a href={href('logs', 'models')} aria-current={current === 'models' ? 'page' : undefined}>
        Model calls
      </a>
      <a href={href('logs', 'audit')} aria-current={current === 'audit' ? 'page' : undefined}>
        Audit trail
      </a>
    </nav>
  );
}

const statusBadge = (status: number) =>
  status >= 500 ? 'badge crashed' : status >= 400 ? 'badge error' : 'badge success';

export function RequestLogPage({ params }: { params: URLSearchParams }) {
  const [requestId, setRequestId] = useState(params.get('requestId') ?? '');
  const [statusClass, setStatusClass] = useState('');
  const [service, setService] = useState('');
  const [keyId, setKeyId] = useState(params.get('keyId') ?? '');
  const [range, setRange] = useState({ from: '', to: '' });
  const rows = usePages<RequestLogRow>('/v1/request-logs', {
    requestId: requestId.trim() || undefined,
    statusClass: statusClass || undefined,
    service: service || undefined,
    keyId: keyId.trim() || undefined,
    from: instant(range.from),
    to: instant(range.to),
  });
  return (
    <section aria-labelledby="logs-title">
      <div class="title-row">
        <h1 id="logs-title">Request log</h1>
        <button type="button" onClick={rows.reload}>
          Refresh
        </button>
      </div>
      <Tabs current="requests" />
      <p class="hint">
        Every authenticated call of the account, newest first. Paths are stored without their query string; no
        key, token or body is kept.
      </p>
      <div class="filters">
        <label>
          Request id
          <input
            type="search"
            name="requestId"
            value={requestId}
            onInput={(e) => setRequestId(e.currentTarget.value)}
          />
        </label>
        <label>
          Status
          <select
            name="statusClass"
            value={statusClass}
            onChange={(e) => setStatusClass(e.currentTarget.value)}
          >
            <option value="">any</option>
            <option value="2xx">2xx success</option>
            <option value="3xx">3xx</option>
            <option value="4xx">4xx refused</option>
            <option value="5xx">5xx failed</option>
          </select>
        </label>
        <label>
          Service
          <select name="service" value={service} onChange={(e) => setService(e.currentTarget.value)}>
            <option value="">any</option>
            {SERVICES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Key id
          <input type="search" name="keyId" value={keyId} onInput={(e) => setKeyId(e.currentTarget.value)} />
        </label>
        <TimeFilters from={range.from} to={range.to} set={(from, to) => setRange({ from, to })} />
      </div>
      <ErrorNote error={rows.error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Request</th>
              <th scope="col">Status</th>
              <th scope="col">Latency</th>
              <th scope="col">Caller</th>
              <th scope="col">Client</th>
              <th scope="col">Request id</th>
            </tr>
          </thead>
          <tbody>
            {rows.rows.map((r) => (
              <tr key={r.id} data-request-id={r.requestId}>
                <td title={r.createdAt}>{dateTime(r.createdAt)}</td>
                <th scope="row">
                  <code>
                    {r.method} {r.path}
                  </code>
                  {r.service && <span class="hint"> {r.service}</span>}
                </th>
                <td>
                  <span class={statusBadge(r.status)}>{r.status}</span>
                </td>
                <td>{r.latencyMs} ms</td>
                <td>
                  <code>{r.keyId ?? r.memberId ?? '—'}</code>
                </td>
                <td title={r.userAgent ?? undefined}>{r.clientIp}</td>
                <td>
                  <code>{r.requestId}</code>{' '}
                  <CopyButton value={r.requestId} label="Copy" name={`Copy ${r.requestId}`} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!rows.busy && rows.rows.length === 0 && !rows.error && <p>No requests match.</p>}
      <More next={rows.next} busy={rows.busy} more={rows.more} count={rows.rows.length} noun="requests" />
    </section>
  );
}

const ACTIONS = [
  'key.created',
  'key.updated',
  'key.rotated',
  'key.revoked',
  'member.invited',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'member.password_set',
  'session.created',
  'session.ended',
  'session.revoked',
  'credential.created',
  'credential.updated',
  'credential.shared',
  'credential.deleted',
  'workflow.activated',
  'workflow.deactivated',
];

const detailText = (details: Record<string, unknown>) =>
  Object.entries(details)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join('; ');

export function AuditPage() {
  const [action, setAction] = useState('');
  const [targetId, setTargetId] = useState('');
  const [range, setRange] = useState({ from: '', to: '' });
  const events = usePages<AuditEvent>('/v1/audit-events', {
    action: action || undefined,
    targetId: targetId.trim() || undefined,
    from: instant(range.from),
    to: instant(range.to),
  });
  return (
    <section aria-labelledby="audit-title">
      <div class="title-row">
        <h1 id="audit-title">Audit trail</h1>
        <button type="button" onClick={events.reload}>
          Refresh
        </button>
      </div>
      <Tabs current="audit" />
      <p class="hint">Security-relevant changes of the account: who made them and from where.</p>
      <div class="filters">
        <label>
          Action
          <select name="action" value={action} onChange={(e) => setAction(e.currentTarget.value)}>
            <option value="">any</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          Target id
          <input
            type="search"
            name="targetId"
            value={targetId}
            onInput={(e) => setTargetId(e.currentTarget.value)}
          />
        </label>
        <TimeFilters from={range.from} to={range.to} set={(from, to) => setRange({ from, to })} />
      </div>
      <ErrorNote error={events.error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">By</th>
              <th scope="col">From</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {events.rows.map((e) => (
              <tr key={e.id} data-action={e.action}>
                <td title={e.createdAt}>{dateTime(e.createdAt)}</td>
                <th scope="row">{e.action}</th>
                <td>
                  {e.targetType} {e.targetId && <code>{e.targetId}</code>}
                </td>
                <td>
                  {e.actorType === 'session' ? 'member' : e.actorType === 'api_key' ? 'key' : e.actorType}{' '}
                  <code>{e.actorId ?? '—'}</code>
                </td>
                <td title={e.userAgent ?? undefined}>{e.clientIp ?? '—'}</td>
                <td>{detailText(e.details)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!events.busy && events.rows.length === 0 && !events.error && <p>No events match.</p>}
      <More
        next={events.next}
        busy={events.busy}
        more={events.more}
        count={events.rows.length}
        noun="events"
      />
    </section>
  );
}
