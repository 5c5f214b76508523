import { KEY_ROLES, type KeyRole, SERVICES } from '../types.js';

/** The editable grant of a key, as the forms hold it (text fields as typed). */
export interface KeyDraft {
  name: string;
  services: string[];
  role: KeyRole;
  scopes: string;
  allowedIps: string;
  dailyQuota: string;
}

/** Scopes and IPs are typed one per line or separated by commas. */
export const listOf = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

export function ServicesField(props: { value: string[]; onChange: (services: string[]) => void }) {
  const all = props.value.includes('*');
  const toggle = (service: string, on: boolean) => {
    if (service === '*') return props.onChange(on ? ['*'] : []);
    const rest = props.value.filter((s) => s !== service && s !== '*');
    props.onChange(on ? [...rest, service] : rest);
  };
  return (
    <fieldset aria-describedby="services-hint">
      <legend>Services</legend>
      <p id="services-hint" class="hint">
        Only what the key needs: tick its services, or All services to grant every one, those added later too.
      </p>
      <label class="inline">
        <input type="checkbox" checked={all} onChange={(e) => toggle('*', e.currentTarget.checked)} />
        All services (*)
      </label>
      {SERVICES.map((service) => (
        <label class="inline" key={service}>
          <input
            type="checkbox"
            name="services"
            value={service}
            disabled={all}
            checked={all || props.value.includes(service)}
            onChange={(e) => toggle(service, e.currentTarget.checked)}
          />
          {service}
        </label>
      ))}
    </fieldset>
  );
}

/** Name, services, role or custom scopes, allowed IPs and daily quota: shared by create and edit. */
export function KeyFields(props: {
  draft: KeyDraft;
  set: (patch: Partial<KeyDraft>) => void;
  quotaHint: string;
}) {
  const { draft, set } = props;
  return (
    <>
      <label>
        Name
        <input
          type="text"
          name="name"
          required
          maxLength={100}
          value={draft.name}
          onInput={(e) => set({ name: e.currentTarget.value })}
        />
      </label>
      <ServicesField value={draft.services} onChange={(services) => set({ services })} />
      <label>
        Role
        <select
          name="role"
          value={draft.role}
          onChange={(e) => set({ role: e.currentTarget.value as KeyRole })}
        >
          {KEY_ROLES.map((role) => (
            <option key={role} value={role}>
              {role === 'Custom' ? 'Custom (explicit scopes)' : role}
            </option>
          ))}
        </select>
      </label>
      <p class="hint">
        Reader: every read. Writer: reads and writes (no delete). Admin: everything, keys included.
      </p>
      {draft.role === 'Custom' && (
        <label>
          Scopes
          <textarea
            name="scopes"
            rows={3}
            aria-describedby="scopes-hint"
            value={draft.scopes}
            onInput={(e) => set({ scopes: e.currentTarget.value })}
          />
        </label>
      )}
      {draft.role === 'Custom' && (
        <p id="scopes-hint" class="hint">
          One per line, as service:operation (read, write, delete, admin), e.g. workflow:read.
        </p>
      )}
      <label>
        Allowed IPs
        <textarea
          name="allowedIps"
          rows={2}
          aria-describedby="ips-hint"
          value={draft.allowedIps}
          onInput={(e) => set({ allowedIps: e.currentTarget.value })}
        />
      </label>
      <p id="ips-hint" class="hint">
        Addresses or CIDR ranges (IPv4 or IPv6), one per line; empty allows any address.
      </p>
      <label>
        Daily quota (requests per UTC day)
        <input
          type="number"
          name="dailyQuota"
          min={1}
          max={100000000}
          aria-describedby="quota-hint"
          value={draft.dailyQuota}
          onInput={(e) => set({ dailyQuota: e.currentTarget.value })}
        />
      </label>
      <p id="quota-hint" class="hint">
        {props.quotaHint}
      </p>
    </>
  );
}

/** The grant part of a create or update body from a draft; the server validates the rest. */
export function grantOf(draft: KeyDraft): Record<string, unknown> {
  if (draft.services.length === 0) throw new Error('Choose the services the key may call, or All services.');
  return {
    name: draft.name.trim(),
    services: draft.services,
    role: draft.role,
    ...(draft.role === 'Custom' ? { scopes: listOf(draft.scopes) } : {}),
    allowedIps: listOf(draft.allowedIps),
  };
}

/** A typed number, or an Error in words (the form shows it before asking the server). */
export function quotaOf(text: string): number | null {
  if (text.trim() === '') return null;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error('The daily quota must be a whole number of at least 1.');
  return n;
}
