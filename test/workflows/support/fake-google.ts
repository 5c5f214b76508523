import { createPublicKey, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';

/**
 * A local Google for the Google Sheets node: the token endpoint of the JWT-bearer grant (checking each
 * assertion's RS256 signature with the service account's public key, its issuer, audience and scopes),
 * the Sheets API v4 (values.get/update/append/clear/batchUpdate, spreadsheets.get/create/batchUpdate)
 * over spreadsheets held in memory with A1 ranges read as Sheets reads them, and Drive's file delete.
 * Google's error shape (`{error: {code, message, status}}`) for what it refuses; faults on demand.
 */
export type Cell = string | number | boolean;
interface Sheet {
  sheetId: number;
  title: string;
  rows: Cell[][];
}
interface Spreadsheet {
  id: string;
  title: string;
  sheets: Sheet[];
}
export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  auth: string;
}

const SCOPES = 'https://www.googleapis.com/auth/spreadsheets';

export class FakeGoogle {
  readonly spreadsheets = new Map<string, Spreadsheet>();
  readonly requests: SeenRequest[] = [];
  readonly tokenRequests: Array<{ sub: unknown; iss: unknown; scope: unknown }> = [];
  /** Answers for other hosts the templates call, by path with its query, or by path. */
  readonly pages = new Map<string, { type: string; body: string }>();
  /** Answers given instead of the next Sheets calls (a 429, a 403…). */
  readonly faults: Array<{ status: number; body: unknown }> = [];
  /** Sheets calls get no answer at all while set; `closed` counts the connections the client gave up. */
  hang = false;
  closed = 0;
  private readonly tokens = new Set<string>();
  private publicKey: KeyObject | null = null;
  private server: Server | null = null;
  base = '';

  /** The service account whose assertions are accepted. */
  trust(publicKeyPem: string): void {
    this.publicKey = createPublicKey(publicKeyPem);
  }

  /** A spreadsheet with its sheets (title → rows); sheet ids 0, then 1001, 1002… unless given. */
  add(id: string, sheets: Array<{ title: string; rows: Cell[][]; sheetId?: number }>, title = id): void {
    this.spreadsheets.set(id, {
      id,
      title,
      sheets: sheets.map((s, i) => ({
        sheetId: s.sheetId ?? (i === 0 ? 0 : 1000 + i),
        title: s.title,
        rows: s.rows,
      })),
    });
  }

  rows(id: string, title: string): Cell[][] {
    return this.spreadsheets.get(id)?.sheets.find((s) => s.title === title)?.rows ?? [];
  }

  /** A token the Sheets API accepts without the token endpoint (OAuth2 credentials in tests). */
  issue(token: string): void {
    this.tokens.add(token);
  }

  reset(): void {
    this.spreadsheets.clear();
    this.requests.length = 0;
    this.tokenRequests.length = 0;
    this.pages.clear();
    this.faults.length = 0;
    this.hang = false;
    this.closed = 0;
  }

  sheetsCalls(): SeenRequest[] {
    return this.requests.filter((r) => r.path.startsWith('/v4/') || r.path.startsWith('/drive/'));
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: Error) => {
          if (!res.headersSent)
            send(res, 500, { error: { code: 500, message: err.message, status: 'INTERNAL' } });
        });
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<unknown> {
    const url = new URL(req.url ?? '/', 'http://google.test');
    const path = url.pathname;
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // a form body (the token request)
    }
    const auth = String(req.headers.authorization ?? '');
    this.requests.push({
      method: req.method ?? '',
      path,
      query: Object.fromEntries(url.searchParams),
      body,
      auth,
    });
    if (path === '/token' && req.method === 'POST') return this.token(res, raw);
    const page = this.pages.get(`${path}${url.search}`) ?? this.pages.get(path);
    if (page) {
      res.writeHead(200, { 'content-type': page.type }).end(page.body);
      return;
    }
    if (!path.startsWith('/v4/') && !path.startsWith('/drive/'))
      return send(res, 404, { error: { code: 404, message: 'no page', status: 'NOT_FOUND' } });
    if (this.hang) {
      req.socket.on('close', () => {
        this.closed++;
      });
      return;
    }
    const fault = this.faults.shift();
    if (fault) return send(res, fault.status, fault.body);
    if (!this.tokens.has(auth.replace(/^Bearer /, '')))
      return send(res, 401, {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials.',
          status: 'UNAUTHENTICATED',
        },
      });
    return this.api(req.method ?? 'GET', path, url.searchParams, body, res);
  }

  private async token(res: ServerResponse, raw: string): Promise<unknown> {
    const form = new URLSearchParams(raw);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' || !this.publicKey)
      return send(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
    try {
      const { payload, protectedHeader } = await jwtVerify(form.get('assertion') ?? '', this.publicKey, {
        audience: 'https://oauth2.googleapis.com/token',
      });
      if (
        protectedHeader.alg !== 'RS256' ||
        !String(payload.scope ?? '')
          .split(' ')
          .includes(SCOPES)
      )
        throw new Error('bad scope');
      this.tokenRequests.push({ sub: payload.sub, iss: payload.iss, scope: payload.scope });
      const token = `ya29.test-${this.tokenRequests.length}`;
      this.tokens.add(token);
      return send(res, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
    } catch {
      return send(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    }
  }

  private api(method: string, path: string, q: URLSearchParams, body: unknown, res: ServerResponse): unknown {
    const b = (body ?? {}) as Record<string, unknown>;
    if (method === 'POST' && path === '/v4/spreadsheets') {
      const props = (b.properties ?? {}) as { title?: string };
      const id = `created${this.spreadsheets.size + 1}xxxxxxxxxxxxxxxxxxxx`;
      const sheets = (
        (b.sheets ?? [{ properties: { title: 'Sheet1' } }]) as Array<{ properties: { title?: string } }>
      ).map((s, i) => ({ title: s.properties.title ?? `Sheet${i + 1}`, rows: [] as Cell[][] }));
      this.add(id, sheets, props.title ?? 'Untitled spreadsheet');
      return send(res, 200, this.describe(id));
    }
    const drive = /^\/drive\/v3\/files\/([^/]+)$/.exec(path);
    if (drive && method === 'DELETE') {
      if (!this.spreadsheets.delete(decodeURIComponent(drive[1] ?? ''))) return notFound(res);
      res.writeHead(204).end();
      return;
    }
    const m = /^\/v4\/spreadsheets\/([^/:]+)(.*)$/.exec(path);
    const doc = m ? this.spreadsheets.get(decodeURIComponent(m[1] ?? '')) : undefined;
    if (!m || !doc) return notFound(res);
    const rest = m[2] ?? '';
    if (rest === '' && method === 'GET') return send(res, 200, this.describe(doc.id));
    if (rest === ':batchUpdate' && method === 'POST') return this.structure(doc, b, res);
    if (rest === '/values:batchUpdate' && method === 'POST') {
      const input = String(b.valueInputOption ?? '');
      for (const d of (b.data ?? []) as Array<{ range: string; values: Cell[][] }>) {
        const r = parseRange(doc, d.range);
        if (!r) return badRange(res, d.range);
        write(r.sheet.rows, r.r1, r.c1, d.values, input);
      }
      return send(res, 200, { spreadsheetId: doc.id, totalUpdatedCells: (b.data as unknown[]).length });
    }
    const v = /^\/values\/(.+?)(:append|:clear)?$/.exec(rest);
    if (!v) return notFound(res);
    const rangeText = decodeURIComponent(v[1] ?? '');
    const r = parseRange(doc, rangeText);
    if (!r) return badRange(res, rangeText);
    const input = q.get('valueInputOption') ?? '';
    if (method === 'GET' && !v[2]) {
      const out: Cell[][] = [];
      for (let i = r.r1; i <= Math.min(r.r2, r.sheet.rows.length - 1); i++) {
        const row = r.sheet.rows[i] ?? [];
        const cells = row
          .slice(r.c1, r.c2 === Infinity ? undefined : r.c2 + 1)
          .map((c) =>
            q.get('valueRenderOption') === 'FORMATTED_VALUE' && typeof c !== 'string' ? String(c) : c,
          );
        while (cells.length > 0 && cells[cells.length - 1] === '') cells.pop();
        out.push(cells);
      }
      while (out.length > 0 && (out[out.length - 1] ?? []).length === 0) out.pop();
      return send(res, 200, {
        range: rangeText,
        majorDimension: 'ROWS',
        ...(out.length > 0 ? { values: out } : {}),
      });
    }
    if (method === 'PUT' && !v[2]) {
      write(r.sheet.rows, r.r1, r.c1, (b.values ?? []) as Cell[][], input);
      return send(res, 200, { spreadsheetId: doc.id, updatedRange: rangeText });
    }
    if (method === 'POST' && v[2] === ':append') {
      let last = r.sheet.rows.length - 1;
      while (last >= 0 && (r.sheet.rows[last] ?? []).every((c) => c === '')) last--;
      write(
        r.sheet.rows,
        Math.max(last + 1, r.r1 === 0 ? 0 : r.r1),
        r.c1,
        (b.values ?? []) as Cell[][],
        input,
      );
      return send(res, 200, { spreadsheetId: doc.id, tableRange: rangeText });
    }
    if (method === 'POST' && v[2] === ':clear') {
      for (let i = r.r1; i <= Math.min(r.r2, r.sheet.rows.length - 1); i++) {
        const row = r.sheet.rows[i] ?? [];
        for (let c = r.c1; c <= Math.min(r.c2, row.length - 1); c++) row[c] = '';
      }
      return send(res, 200, { spreadsheetId: doc.id, clearedRange: rangeText });
    }
    return notFound(res);
  }

  private structure(doc: Spreadsheet, b: Record<string, unknown>, res: ServerResponse): unknown {
    const replies: unknown[] = [];
    for (const request of (b.requests ?? []) as Array<Record<string, Record<string, unknown>>>) {
      if (request.addSheet) {
        const p = (request.addSheet.properties ?? {}) as { title?: string; sheetId?: number };
        const sheet = { sheetId: p.sheetId ?? 2000 + doc.sheets.length, title: p.title ?? 'Sheet', rows: [] };
        doc.sheets.push(sheet);
        replies.push({
          addSheet: {
            properties: {
              sheetId: sheet.sheetId,
              title: sheet.title,
              index: doc.sheets.length - 1,
              sheetType: 'GRID',
              gridProperties: { rowCount: 1000, columnCount: 26 },
            },
          },
        });
      } else if (request.deleteSheet) {
        const at = doc.sheets.findIndex((s) => s.sheetId === Number(request.deleteSheet?.sheetId));
        if (at === -1)
          return send(res, 400, {
            error: {
              code: 400,
              message: `No grid with id: ${request.deleteSheet.sheetId}`,
              status: 'INVALID_ARGUMENT',
            },
          });
        doc.sheets.splice(at, 1);
        replies.push({});
      } else if (request.deleteDimension) {
        const range = request.deleteDimension.range as {
          sheetId: number;
          dimension: string;
          startIndex: number;
          endIndex: number;
        };
        const sheet = doc.sheets.find((s) => s.sheetId === Number(range.sheetId));
        if (!sheet)
          return send(res, 400, {
            error: { code: 400, message: `No grid with id: ${range.sheetId}`, status: 'INVALID_ARGUMENT' },
          });
        if (range.dimension === 'ROWS')
          sheet.rows.splice(range.startIndex, range.endIndex - range.startIndex);
        else for (const row of sheet.rows) row.splice(range.startIndex, range.endIndex - range.startIndex);
        replies.push({});
      } else {
        return send(res, 400, {
          error: { code: 400, message: 'Invalid requests[0]: unknown request', status: 'INVALID_ARGUMENT' },
        });
      }
    }
    return send(res, 200, { spreadsheetId: doc.id, replies });
  }

  private describe(id: string) {
    const doc = this.spreadsheets.get(id) as Spreadsheet;
    return {
      spreadsheetId: id,
      properties: { title: doc.title, locale: 'en_US' },
      sheets: doc.sheets.map((s, index) => ({
        properties: {
          sheetId: s.sheetId,
          title: s.title,
          index,
          sheetType: 'GRID',
          gridProperties: { rowCount: 1000, columnCount: 26 },
        },
      })),
      spreadsheetUrl: `https://docs.google.com/spreadsheets/d/${id}/edit`,
    };
  }
}

function send(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
  return true;
}
const notFound = (res: ServerResponse) =>
  send(res, 404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
const badRange = (res: ServerResponse, range: string) =>
  send(res, 400, {
    error: { code: 400, message: `Unable to parse range: ${range}`, status: 'INVALID_ARGUMENT' },
  });

const colNumber = (letters: string) =>
  [...letters.toUpperCase()].reduce((n, c) => n * 26 + c.charCodeAt(0) - 64, 0);

/** An A1 range as Sheets reads it: `'My sheet'!A1:C`, `Sheet1!2:2`, `Sheet1`, or `A:D` (the first sheet). */
function parseRange(doc: Spreadsheet, text: string) {
  const CELLS = /^([A-Za-z]*)(\d*)(?::([A-Za-z]*)(\d*))?$/;
  let name = text;
  let cells = '';
  const bang = text.lastIndexOf('!');
  if (bang !== -1) {
    name = text.slice(0, bang);
    cells = text.slice(bang + 1);
  }
  const unquoted = /^'(.*)'$/.exec(name)?.[1]?.replace(/''/g, "'") ?? name;
  let sheet = doc.sheets.find((s) => s.title === unquoted);
  if (!sheet && bang === -1 && CELLS.test(text)) {
    sheet = doc.sheets[0];
    cells = text;
  }
  if (!sheet) return null;
  const m = CELLS.exec(cells);
  if (cells && !m) return null;
  const [, c1 = '', r1 = '', c2, r2] = m ?? [];
  const single = cells !== '' && !cells.includes(':');
  return {
    sheet,
    c1: c1 ? colNumber(c1) - 1 : 0,
    r1: r1 ? Number(r1) - 1 : 0,
    c2: single ? (c1 ? colNumber(c1) - 1 : Infinity) : c2 ? colNumber(c2) - 1 : Infinity,
    r2: single ? (r1 ? Number(r1) - 1 : Infinity) : r2 ? Number(r2) - 1 : Infinity,
  };
}

/** Writes a block of values at a row and column; USER_ENTERED reads numbers and formulas' results as typed. */
function write(rows: Cell[][], r: number, c: number, values: Cell[][], input: string): void {
  values.forEach((line, i) => {
    while (rows.length <= r + i) rows.push([]);
    const row = rows[r + i] as Cell[];
    line.forEach((value, j) => {
      // null leaves the cell as it is (values.append's way to skip one).
      if (value === null) return;
      while (row.length <= c + j) row.push('');
      row[c + j] = input === 'USER_ENTERED' ? typed(value) : value;
    });
  });
}

/** A value typed into Sheets' UI: numbers (with a currency sign and thousands separators) become numbers. */
function typed(value: Cell): Cell {
  if (typeof value !== 'string' || !/^\$?-?[\d,]*\d(\.\d+)?$/.test(value)) return value;
  return Number(value.replace(/[$,]/g, ''));
}
