/** Dates and numbers as people read them; the full ISO time in the title for precision. */

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function day(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

export function duration(fromIso: string, toIso: string | null): string {
  if (!toIso) return 'running';
  const ms = Date.parse(toIso) - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export const count = (n: number): string => n.toLocaleString();

/** `YYYY-MM-DD` of a UTC day, `offset` days from the given one. */
export function utcDay(date: Date, offset = 0): string {
  return new Date(date.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
}
