/** n8n's workflow reference: a plain id, or a resource locator `{__rl, value, mode}` (by id, list or URL). */
export function workflowIdOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return null;
  const { value: id, mode } = value as { value?: unknown; mode?: unknown };
  if (typeof id !== 'string' && typeof id !== 'number') return null;
  const text = String(id);
  if (mode === 'url') return /\/workflow\/([^/?#]+)/.exec(text)?.[1] ?? text;
  return text;
}
