/** n8n's HTTP Request tool placeholders: `{name}` in the URL and JSON texts, filled from the model's arguments. */

export const PLACEHOLDER = /\{([A-Za-z0-9_-]{1,64})\}/g;

export function placeholdersIn(text: unknown, into: Set<string>): void {
  if (typeof text !== 'string') return;
  for (const m of text.matchAll(PLACEHOLDER)) if (m[1]) into.add(m[1]);
}

/** The URL with each placeholder's value percent-encoded: a value never changes the URL's structure. */
export function fillUrl(url: string, values: Record<string, unknown>): string {
  return url.replace(PLACEHOLDER, (whole, name: string) =>
    name in values ? encodeURIComponent(textOf(values[name])) : whole,
  );
}

/**
 * A JSON text with each placeholder's value as JSON: inside quotes as the escaped text, elsewhere as a
 * JSON value, so a value never changes the JSON's structure.
 */
export function fillJson(text: string, values: Record<string, unknown>): string {
  return text.replace(
    /("?)\{([A-Za-z0-9_-]{1,64})\}("?)/g,
    (whole, open: string, name: string, close: string) => {
      if (!(name in values)) return whole;
      const value = values[name];
      if (open && close) return JSON.stringify(textOf(value));
      if (open || close) return `${open}${JSON.stringify(textOf(value)).slice(1, -1)}${close}`;
      return JSON.stringify(value ?? null);
    },
  );
}

export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
