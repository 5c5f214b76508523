import type { OutboundResponse } from '../../../../../core/http/outbound.js';

/**
 * What n8n's HTTP Request tool hands the model (ToolHttpRequest `configureResponseOptimizer`): a JSON
 * answer (n8n's HTTP helper parses it) pretty-printed with two spaces, any other answer as its text;
 * with "Optimize Response" and the JSON response type, only `dataField` of the answer (each element's,
 * for a list) and of that only the `fields` chosen (`fieldsToInclude`: all, selected or all but
 * those), as a pretty-printed list; with the text type, Readability's plain text of the page; with the
 * HTML type, the elements `cssSelector` picks (their HTML, or their text with `onlyContent`, leaving out
 * `elementsToOmit`) as a pretty-printed list. Pages are read in the documents module's bounded workers.
 */
export interface Optimize {
  optimizeResponse: boolean;
  responseType?: string | undefined;
  dataField?: string | undefined;
  fieldsToInclude?: string | undefined;
  fields?: string | undefined;
  cssSelector?: string | undefined;
  onlyContent?: boolean | undefined;
  elementsToOmit?: string | undefined;
}

type Obj = Record<string, unknown>;

const isJson = (res: OutboundResponse) => /[/+]json\b/i.test(res.headers['content-type'] ?? '');

export async function toolAnswer(res: OutboundResponse, p: Optimize, tenant?: string): Promise<string> {
  if (res.body.includes('\0')) throw new Error('Binary data is not supported');
  const type = p.responseType ?? 'json';
  if (p.optimizeResponse && type === 'json') return optimizeJson(res.body, p);
  if (p.optimizeResponse && type === 'text') {
    const { htmlReadableText } = await import('../../../../documents/index.js');
    return htmlReadableText(plain(res), tenant);
  }
  if (p.optimizeResponse && type === 'html') {
    const { htmlSelectTexts } = await import('../../../../documents/index.js');
    const texts = await htmlSelectTexts(
      res.body,
      {
        selector: p.cssSelector ?? 'body',
        onlyContent: p.onlyContent === true,
        omit: p.onlyContent
          ? (p.elementsToOmit ?? '')
              .split(',')
              .filter((s) => s)
              .map((s) => s.trim())
          : [],
      },
      tenant,
    );
    return JSON.stringify(texts, null, 2);
  }
  return plain(res);
}

/** The answer as n8n's HTTP helper leaves it: JSON parsed (here pretty-printed), anything else as text. */
function plain(res: OutboundResponse): string {
  if (!isJson(res)) return res.body;
  try {
    return JSON.stringify(JSON.parse(res.body), null, 2);
  } catch {
    return res.body;
  }
}

function optimizeJson(body: string, p: Optimize): string {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    throw new Error('The response is not valid JSON');
  }
  if (typeof data !== 'object' || data === null)
    throw new Error('The response type must be an object or an array of objects');
  const field = p.dataField ?? '';
  let list: unknown[];
  if (Array.isArray(data)) list = field ? data.map((d) => own(d, field)) : data;
  else if (field) {
    const inner = own(data, field);
    list = Array.isArray(inner) ? inner : [inner];
  } else list = [data];
  const mode = p.fieldsToInclude ?? 'all';
  if (mode === 'all') return JSON.stringify(list, null, 2);
  const fields = (p.fields ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  const out = list.map((item) => {
    if (mode === 'selected') {
      const picked: Obj = {};
      for (const f of fields) setPath(picked, f, getPath(item, f));
      return picked;
    }
    if (mode !== 'except' || typeof item !== 'object' || item === null) return item;
    for (const f of fields) unsetPath(item as Obj, f);
    return item;
  });
  return JSON.stringify(out, null, 2);
}

/** A field of an object by its own key (never the prototype's). */
function own(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key)
    ? (value as Obj)[key]
    : undefined;
}

/** lodash's dotted paths, as n8n's `get`/`set`/`unset` read them (no prototype keys). */
const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);
const keysOf = (path: string) => path.split('.').filter((k) => k !== '');

function getPath(value: unknown, path: string): unknown {
  let at = value;
  for (const key of keysOf(path)) at = own(at, key);
  return at;
}

function setPath(target: Obj, path: string, value: unknown): void {
  const keys = keysOf(path);
  if (keys.length === 0 || keys.some((k) => UNSAFE.has(k))) return;
  let at = target;
  for (const key of keys.slice(0, -1)) {
    const next = own(at, key);
    if (typeof next !== 'object' || next === null) at[key] = {};
    at = at[key] as Obj;
  }
  at[keys[keys.length - 1] as string] = value;
}

function unsetPath(target: Obj, path: string): void {
  const keys = keysOf(path);
  let at: unknown = target;
  for (const key of keys.slice(0, -1)) at = own(at, key);
  const last = keys[keys.length - 1];
  if (last !== undefined && typeof at === 'object' && at !== null && Object.hasOwn(at, last))
    delete (at as Obj)[last];
}
