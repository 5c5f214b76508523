import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { jsonOf, ctx as runContext, testDeps, workflow } from '../../src/modules/workflows/engine/testing.js';
import type { EngineDeps, Item, RunContext } from '../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { clearServiceAccountTokens } from '../../src/modules/workflows/nodes/n8n/google-sheets/service-account.js';
import { type Cell, FakeGoogle } from './support/fake-google.js';
import { completion, FakeOpenAi } from './support/fake-openai.js';
import { loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's Google Sheets node (v1, v2, v3, v4–v4.7) against a local Google: its token endpoint checks each
 * service account assertion's RS256 signature with the account's public key, and its Sheets API holds
 * spreadsheets in memory. The outbound function sends Google's public hosts (and the other hosts the
 * real template exports call) to the local servers, through the platform's outbound guard.
 */

const google = new FakeGoogle();
const openai = new FakeOpenAi();
const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const ROBOT = 'robot@sheets-test.iam.gserviceaccount.com';
const DOC = '1QZhQqg79-HVBQh8Y2ihMq67UIYIRrJFKLQalcFvtDaY';
const OAUTH_TOKEN = 'ya29.oauth-test';
const oauthCalls: Array<{ id: string; renew: boolean }> = [];
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await Promise.all([google.start(), openai.start()]);
  const guarded = createOutboundHttp({
    allowHosts: [google.base, openai.base].map((b) => new URL(b).host),
    timeoutMs: 10_000,
  });
  const routes: Array<[string, string]> = [
    ['https://sheets.googleapis.com', google.base],
    ['https://oauth2.googleapis.com', google.base],
    ['https://www.googleapis.com', google.base],
    ['https://it.trustpilot.com', google.base],
    ['https://api.prospeo.io', google.base],
    ['https://api.deepseek.com', openai.base],
  ];
  const serviceAccount = { email: ROBOT, privateKey: keys.privateKey.replace(/\n/g, '\\n') };
  deps = {
    http: (req) => {
      const route = routes.find(([origin]) => req.url.startsWith(`${origin}/`));
      return guarded(route ? { ...req, url: route[1] + req.url.slice(route[0].length) } : req);
    },
    credential: async (id): Promise<Record<string, string>> => {
      if (id === 'sa' || id === 'jPoTdPxgVL0vr9SQ') return serviceAccount;
      if (id === 'sa-delegated') return { ...serviceAccount, delegatedEmail: 'ada@example.com' };
      if (id === 'sa-bad-key')
        return {
          email: ROBOT,
          privateKey: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----',
        };
      if (id === 'oauth' || id === 'JYR6a64Qecd6t8Hb' || id === 'google-sheet') return {};
      if (id === '97Cz4cqyiy1RdcQL' || id === 'CDX6QM4gLYanh0P4')
        return { apiKey: 'oa-key', url: `${openai.base}/v1` };
      if (id === 'L5CnisK8R3BgVGcO') return {};
      throw new Error(`Credential '${id}' not found`);
    },
    // The engine's OAuth2 token store, as the instance's OAuth2 credentials provide it.
    oauth2Token: async (id, _workflowId, renew) => {
      oauthCalls.push({ id, renew });
      google.issue(OAUTH_TOKEN);
      return { accessToken: OAUTH_TOKEN, tokenType: 'bearer', tokenExpiredStatusCode: 401 };
    },
  };
});
afterAll(async () => {
  await Promise.all([google.stop(), openai.stop()]);
});
beforeEach(() => {
  google.reset();
  google.trust(keys.publicKey);
  openai.reset();
  oauthCalls.length = 0;
  clearServiceAccountTokens();
});

const PEOPLE: Cell[][] = [
  ['id', 'name', 'city', 'rent'],
  [1, 'Ada', 'Berlin', 900],
  [2, 'Grace', 'Paris', 1200],
  [3, 'Alan', 'Berlin', 700],
];

interface RunOptions {
  version?: number;
  items?: Item[];
  credentials?: Record<string, { id: string; name: string }>;
  run?: RunContext;
  over?: Partial<EngineDeps>;
}

/** One Google Sheets node after a manual trigger, on the service account unless told otherwise. */
async function runSheets(parameters: Record<string, unknown>, o: RunOptions = {}) {
  const def = workflow(
    [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      {
        name: 'Sheets',
        type: 'n8n-nodes-base.googleSheets',
        typeVersion: o.version ?? 4.5,
        parameters:
          !o.credentials || 'googleApi' in o.credentials
            ? { authentication: 'serviceAccount', ...parameters }
            : parameters,
        credentials: o.credentials ?? { googleApi: { id: 'sa', name: 'Robot' } },
      },
    ],
    [['Start', 'Sheets']],
  );
  const engine = new WorkflowEngine(testDeps({ ...deps, ...o.over }), defaultNodeRegistry);
  expect(engine.validate(def)).toEqual([]);
  const outcome = await engine.run(
    def,
    { nodeName: 'Start', items: o.items ?? [{ json: {} }] },
    o.run ?? runContext,
  );
  return { outcome, json: jsonOf(outcome.state, 'Sheets'), error: outcome.state.error };
}

const doc = (value = DOC, mode = 'id') => ({ __rl: true, mode, value });
const sheet = (value: string | number, mode = 'name') => ({ __rl: true, mode, value });

describe('service account credential (googleApi)', () => {
  it('signs an RS256 assertion Google verifies, sends its token, and reuses it until it expires', async () => {
    google.add(DOC, [{ title: 'People', rows: PEOPLE.map((r) => [...r]) }]);
    const first = await runSheets({ documentId: doc(), sheetName: sheet('People') });
    expect(first.error).toBeNull();
    expect(google.tokenRequests).toEqual([
      {
        iss: ROBOT,
        sub: ROBOT,
        scope:
          'https://www.googleapis.com/auth/drive.file https://www.googleapis.com/auth/spreadsheets https://www.googleapis.com/auth/drive.metadata',
      },
    ]);
    expect(google.sheetsCalls().every((r) => r.auth === 'Bearer ya29.test-1')).toBe(true);
    const second = await runSheets({ documentId: doc(), sheetName: sheet('People') });
    expect(second.error).toBeNull();
    expect(google.tokenRequests).toHaveLength(1);
  });

  it('acts for the delegated user when the credential names one', async () => {
    google.add(DOC, [{ title: 'People', rows: PEOPLE.map((r) => [...r]) }]);
    const { error } = await runSheets(
      { documentId: doc(), sheetName: sheet('People') },
      { credentials: { googleApi: { id: 'sa-delegated', name: 'Robot' } } },
    );
    expect(error).toBeNull();
    expect(google.tokenRequests[0]?.sub).toBe('ada@example.com');
  });

  it('a key Google does not trust, or that is no key, fails the node naming why', async () => {
    google.add(DOC, [{ title: 'People', rows: [] }]);
    google.trust(
      generateKeyPairSync('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      }).publicKey,
    );
    const untrusted = await runSheets({ documentId: doc(), sheetName: sheet('People') });
    expect(untrusted.error?.message).toBe(
      "Google refused the service account's token request: invalid_grant (Invalid JWT Signature.)",
    );
    const broken = await runSheets(
      { documentId: doc(), sheetName: sheet('People') },
      { credentials: { googleApi: { id: 'sa-bad-key', name: 'Broken' } } },
    );
    expect(broken.error?.message).toBe("The googleApi credential's private key is not a PEM private key");
    expect(google.sheetsCalls()).toHaveLength(0);
  });

  it('a node without the credential its authentication names fails before any call', async () => {
    const { error } = await runSheets({ documentId: doc(), sheetName: sheet('People') }, { credentials: {} });
    expect(error?.message).toBe('Node does not have any credentials set for "googleSheetsOAuth2Api"');
  });
});

describe('OAuth2 credential (googleSheetsOAuth2Api)', () => {
  it("uses the engine's token store, renewing the token once when Google answers 401", async () => {
    google.add(DOC, [{ title: 'People', rows: PEOPLE.map((r) => [...r]) }]);
    google.faults.push({
      status: 401,
      body: {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials.',
          status: 'UNAUTHENTICATED',
        },
      },
    });
    const { json, error } = await runSheets(
      { documentId: doc(), sheetName: sheet('People') },
      { credentials: { googleSheetsOAuth2Api: { id: 'oauth', name: 'Google' } } },
    );
    expect(error).toBeNull();
    expect(json).toHaveLength(3);
    // The store is asked before each call (it keeps the token); once more to renew it after the 401.
    expect(oauthCalls.slice(0, 3)).toEqual([
      { id: 'oauth', renew: false },
      { id: 'oauth', renew: true },
      { id: 'oauth', renew: false },
    ]);
    expect(oauthCalls.filter((c) => c.renew)).toHaveLength(1);
    expect(google.tokenRequests).toHaveLength(0);
  });

  it('without a token store (an engine without OAuth2 credentials) the node refuses, saying so', async () => {
    const { error } = await runSheets(
      { documentId: doc(), sheetName: sheet('People') },
      {
        credentials: { googleSheetsOAuth2Api: { id: 'oauth', name: 'Google' } },
        over: { oauth2Token: undefined } as Partial<EngineDeps>,
      },
    );
    expect(error?.message).toBe('OAuth2 credentials are not available here');
    expect(google.requests).toHaveLength(0);
  });
});

describe('sheet → read (v4.x)', () => {
  beforeEach(() => {
    google.add(DOC, [
      { title: 'People', rows: PEOPLE.map((r) => [...r]), sheetId: 0 },
      { title: 'Other', rows: [['a'], ['b']], sheetId: 77 },
    ]);
  });

  it('reads every row with its row_number, the sheet found by name, id, list pick or URL', async () => {
    const rows = [
      { row_number: 2, id: 1, name: 'Ada', city: 'Berlin', rent: 900 },
      { row_number: 3, id: 2, name: 'Grace', city: 'Paris', rent: 1200 },
      { row_number: 4, id: 3, name: 'Alan', city: 'Berlin', rent: 700 },
    ];
    expect((await runSheets({ documentId: doc(), sheetName: sheet('People') })).json).toEqual(rows);
    expect(
      (await runSheets({ documentId: doc(DOC, 'list'), sheetName: sheet('gid=0', 'list') })).json,
    ).toEqual(rows);
    expect((await runSheets({ documentId: doc(DOC), sheetName: sheet(0, 'id') })).json).toEqual(rows);
    const url = `https://docs.google.com/spreadsheets/d/${DOC}/edit#gid=77`;
    const other = await runSheets({ documentId: doc(url, 'url'), sheetName: sheet(url, 'url') });
    expect(other.json).toEqual([{ row_number: 2, a: 'b' }]);
    const get = google.sheetsCalls().find((r) => r.path.includes('/values/'));
    expect(get?.path).toBe(`/v4/spreadsheets/${DOC}/values/'People'`);
    expect(get?.query).toEqual({
      valueRenderOption: 'UNFORMATTED_VALUE',
      dateTimeRenderOption: 'FORMATTED_STRING',
    });
  });

  it('filters: the first match per filter before v4.5, every match from it; AND combines them', async () => {
    const berlin = { filtersUI: { values: [{ lookupColumn: 'city', lookupValue: 'Berlin' }] } };
    const v43 = await runSheets(
      { documentId: doc(), sheetName: sheet('People'), ...berlin },
      { version: 4.3 },
    );
    expect(v43.json.map((r) => r.name)).toEqual(['Ada']);
    const v45 = await runSheets({ documentId: doc(), sheetName: sheet('People'), ...berlin });
    expect(v45.json.map((r) => r.row_number)).toEqual([2, 4]);
    const firstOnly = await runSheets({
      documentId: doc(),
      sheetName: sheet('People'),
      ...berlin,
      options: { returnFirstMatch: true },
    });
    expect(firstOnly.json.map((r) => r.name)).toEqual(['Ada']);
    const all43 = await runSheets(
      {
        documentId: doc(),
        sheetName: sheet('People'),
        ...berlin,
        options: { returnAllMatches: 'returnAllMatches' },
      },
      { version: 4.3 },
    );
    expect(all43.json.map((r) => r.name)).toEqual(['Ada', 'Alan']);
    const and = await runSheets({
      documentId: doc(),
      sheetName: sheet('People'),
      combineFilters: 'AND',
      filtersUI: {
        values: [
          { lookupColumn: 'city', lookupValue: 'Berlin' },
          { lookupColumn: 'rent', lookupValue: '700' },
        ],
      },
    });
    expect(and.json).toEqual([{ row_number: 4, id: 3, name: 'Alan', city: 'Berlin', rent: 700 }]);
    const missing = await runSheets({
      documentId: doc(),
      sheetName: sheet('People'),
      filtersUI: { values: [{ lookupColumn: 'zip', lookupValue: '1' }] },
    });
    expect(missing.error?.message).toBe('The column "zip" could not be found');
  });

  it('reads once per item from v4.2 (each item its own filter), once for all before', async () => {
    const items = [{ json: { city: 'Paris' } }, { json: { city: 'Berlin' } }];
    const params = {
      documentId: doc(),
      sheetName: sheet('People'),
      filtersUI: { values: [{ lookupColumn: 'city', lookupValue: '={{ $json.city }}' }] },
      options: { returnFirstMatch: true },
    };
    const perItem = await runSheets(params, { items });
    expect(perItem.json.map((r) => r.name)).toEqual(['Grace', 'Ada']);
    const once = await runSheets(params, { items, version: 4.1 });
    expect(once.json.map((r) => r.name)).toEqual(['Grace', 'Ada']);
    expect(google.sheetsCalls().filter((r) => r.path.includes('/values/'))).toHaveLength(3);
  });

  it('dataLocationOnSheet (A1 range, header row) and outputFormatting reach the values.get', async () => {
    const ranged = await runSheets({
      documentId: doc(),
      sheetName: sheet('People'),
      options: {
        dataLocationOnSheet: { values: { rangeDefinition: 'specifyRangeA1', range: 'A1:B3' } },
        outputFormatting: { values: { general: 'FORMATTED_VALUE', date: 'SERIAL_NUMBER' } },
      },
    });
    expect(ranged.json).toEqual([
      { row_number: 2, id: '1', name: 'Ada' },
      { row_number: 3, id: '2', name: 'Grace' },
    ]);
    const get = google.sheetsCalls().find((r) => r.path.includes('/values/'));
    expect(get?.path).toBe(`/v4/spreadsheets/${DOC}/values/People!A1:B3`);
    expect(get?.query.dateTimeRenderOption).toBe('SERIAL_NUMBER');
    const header2 = await runSheets({
      documentId: doc(),
      sheetName: sheet('People'),
      options: {
        dataLocationOnSheet: { values: { rangeDefinition: 'specifyRange', headerRow: 2, firstDataRow: 4 } },
      },
    });
    expect(header2.json).toEqual([{ row_number: 4, '1': 3, Ada: 'Alan', Berlin: 'Berlin', '900': 700 }]);
  });

  it('an empty sheet reads as no items', async () => {
    google.add('empty-doc-xxxxxxxxxxxxxxxxxxxx', [{ title: 'Sheet1', rows: [] }]);
    const { json, error } = await runSheets({
      documentId: doc('empty-doc-xxxxxxxxxxxxxxxxxxxx'),
      sheetName: sheet('Sheet1'),
    });
    expect(error).toBeNull();
    expect(json).toEqual([]);
  });
});

describe('sheet → append, update, appendOrUpdate (v4.x)', () => {
  beforeEach(() => {
    google.add(DOC, [{ title: 'People', rows: PEOPLE.map((r) => [...r]) }]);
  });

  it('append maps each item below (defineBelow) after the last row, USER_ENTERED from v4.1', async () => {
    const items = [{ json: { who: 'Edsger', rent: '650' } }, { json: { who: 'Barbara', rent: '800' } }];
    const { json, error } = await runSheets(
      {
        operation: 'append',
        documentId: doc(),
        sheetName: sheet('People'),
        columns: {
          mappingMode: 'defineBelow',
          value: { name: '={{ $json.who }}', rent: '={{ $json.rent }}', city: 'Zurich' },
          matchingColumns: [],
          schema: [],
        },
        options: {},
      },
      { items },
    );
    expect(error).toBeNull();
    expect(json).toEqual([
      { name: 'Edsger', rent: '650', city: 'Zurich' },
      { name: 'Barbara', rent: '800', city: 'Zurich' },
    ]);
    expect(google.rows(DOC, 'People').slice(4)).toEqual([
      ['', 'Edsger', 'Zurich', 650],
      ['', 'Barbara', 'Zurich', 800],
    ]);
    const put = google.sheetsCalls().find((r) => r.method === 'PUT');
    expect(put?.path).toBe(`/v4/spreadsheets/${DOC}/values/People!5:6`);
    expect(put?.query).toEqual({ valueInputOption: 'USER_ENTERED' });
  });

  it('append auto-maps items: new keys become columns; RAW before v4.1; ignoreIt and error as n8n', async () => {
    const items = [{ json: { id: 4, name: 'Edsger', zip: '8000', row_number: 9 } }];
    const auto = await runSheets(
      {
        operation: 'append',
        documentId: doc(),
        sheetName: sheet('People'),
        columns: { mappingMode: 'autoMapInputData', value: {} },
      },
      { items, version: 4 },
    );
    expect(auto.error).toBeNull();
    expect(auto.json).toEqual([{ id: 4, name: 'Edsger', zip: '8000', row_number: 9 }]);
    expect(google.rows(DOC, 'People')[0]).toEqual(['id', 'name', 'city', 'rent', 'zip']);
    expect(google.rows(DOC, 'People')[4]).toEqual([4, 'Edsger', '', '', '8000']);
    expect(
      google
        .sheetsCalls()
        .filter((r) => r.method === 'PUT')
        .map((r) => r.query.valueInputOption),
    ).toEqual(['RAW', 'RAW']);

    const strict = await runSheets(
      {
        operation: 'append',
        documentId: doc(),
        sheetName: sheet('People'),
        columns: { mappingMode: 'autoMapInputData', value: {} },
        options: { handlingExtraData: 'error' },
      },
      { items: [{ json: { id: 5, phone: '1' } }] },
    );
    expect(strict.error?.message).toBe('Unexpected fields in node input');
    expect(strict.error?.description).toContain("The input field 'phone'");
  });

  it('append with useAppend sends values.append', async () => {
    const { error } = await runSheets({
      operation: 'append',
      documentId: doc(),
      sheetName: sheet('People'),
      columns: { mappingMode: 'defineBelow', value: { id: '9' } },
      options: { useAppend: true },
    });
    expect(error).toBeNull();
    const call = google.sheetsCalls().find((r) => r.path.endsWith(':append'));
    expect(call?.path).toBe(`/v4/spreadsheets/${DOC}/values/People!5:5:append`);
    expect(google.rows(DOC, 'People')[4]).toEqual([9]);
  });

  it('update writes the matched row cell by cell; an unmatched item changes nothing', async () => {
    const items = [{ json: { id: 2, rent: 1300 } }, { json: { id: 42, rent: 1 } }];
    const { json, error } = await runSheets(
      {
        operation: 'update',
        documentId: doc(),
        sheetName: sheet('People'),
        columns: {
          mappingMode: 'defineBelow',
          value: { id: '={{ $json.id }}', rent: '={{ $json.rent }}' },
          matchingColumns: ['id'],
        },
      },
      { items },
    );
    expect(error).toBeNull();
    expect(json).toEqual([
      { id: 2, rent: 1300 },
      { id: 42, rent: 1 },
    ]);
    expect(google.rows(DOC, 'People')).toEqual([
      ...PEOPLE.slice(0, 2),
      [2, 'Grace', 'Paris', 1300],
      PEOPLE[3],
    ]);
    const batch = google.sheetsCalls().find((r) => r.path.endsWith('/values:batchUpdate'));
    expect(batch?.body).toEqual({
      data: [{ range: 'People!D3', values: [[1300]] }],
      valueInputOption: 'USER_ENTERED',
    });
  });

  it('update by row_number (a read row sent back), and without a match value fails naming the parameter', async () => {
    const byRow = await runSheets(
      {
        operation: 'update',
        documentId: doc(),
        sheetName: sheet('People'),
        columns: { mappingMode: 'autoMapInputData', value: {}, matchingColumns: ['row_number'] },
        options: { handlingExtraData: 'ignoreIt' },
      },
      { items: [{ json: { row_number: 4, name: 'Alan T.', extra: 'x' } }] },
    );
    expect(byRow.error).toBeNull();
    expect(google.rows(DOC, 'People')[3]).toEqual([3, 'Alan T.', 'Berlin', 700]);
    const noValue = await runSheets({
      operation: 'update',
      documentId: doc(),
      sheetName: sheet('People'),
      columns: { mappingMode: 'defineBelow', value: { rent: '5' }, matchingColumns: ['id'] },
    });
    expect(noValue.error?.message).toBe("The 'Column to Match On' parameter is required");
  });

  it('appendOrUpdate updates matched rows and appends the others (v4.5 export shape)', async () => {
    const items = [{ json: { id: '3', city: 'London' } }, { json: { id: '7', city: 'Rome' } }];
    const { json, error } = await runSheets(
      {
        operation: 'appendOrUpdate',
        documentId: doc(),
        sheetName: sheet('People'),
        columns: {
          value: { id: '={{ $json.id }}', city: '={{ $json.city }}' },
          schema: [
            {
              id: 'id',
              type: 'string',
              display: true,
              required: false,
              displayName: 'id',
              defaultMatch: false,
              canBeUsedToMatch: true,
            },
          ],
          mappingMode: 'defineBelow',
          matchingColumns: ['id'],
          attemptToConvertTypes: false,
          convertFieldsToString: false,
        },
        options: {},
      },
      { items },
    );
    expect(error).toBeNull();
    expect(json).toEqual([
      { id: '3', city: 'London' },
      { id: '7', city: 'Rome' },
    ]);
    expect(google.rows(DOC, 'People').slice(3)).toEqual([
      [3, 'Alan', 'London', 700],
      [7, '', 'Rome', ''],
    ]);
  });

  it('v3 appendOrUpdate with columnToMatchOn and fieldsUi', async () => {
    const { error, json } = await runSheets(
      {
        operation: 'appendOrUpdate',
        documentId: doc(),
        sheetName: sheet('People'),
        dataMode: 'defineBelow',
        columnToMatchOn: 'name',
        valueToMatchOn: 'Ada',
        fieldsUi: { values: [{ column: 'rent', fieldValue: '950' }] },
      },
      { version: 3 },
    );
    expect(error).toBeNull();
    expect(json).toEqual([{}]);
    expect(google.rows(DOC, 'People')[1]).toEqual([1, 'Ada', 'Berlin', '950']);
  });
});

describe('sheet → clear, delete, create, remove; spreadsheet → create, deleteSpreadsheet (v4.x)', () => {
  beforeEach(() => {
    google.add(DOC, [
      { title: 'People', rows: PEOPLE.map((r) => [...r]) },
      { title: 'Old', rows: [['x']], sheetId: 55 },
    ]);
  });

  it('clear: the whole sheet keeping its header, rows, columns, a range', async () => {
    expect(
      (
        await runSheets({
          operation: 'clear',
          documentId: doc(),
          sheetName: sheet('People'),
          clear: 'specificRows',
          startIndex: 2,
          rowsToDelete: 1,
        })
      ).error,
    ).toBeNull();
    expect(google.rows(DOC, 'People')[1]).toEqual(['', '', '', '']);
    await runSheets({
      operation: 'clear',
      documentId: doc(),
      sheetName: sheet('People'),
      clear: 'specificColumns',
      startIndex: 'D',
      columnsToDelete: 1,
    });
    expect(google.rows(DOC, 'People').map((r) => r[3])).toEqual(['', '', '', '']);
    await runSheets({
      operation: 'clear',
      documentId: doc(),
      sheetName: sheet('People'),
      clear: 'specificRange',
      range: 'B3:C3',
    });
    expect(google.rows(DOC, 'People')[2]).toEqual([2, '', '', '']);
    const { json } = await runSheets(
      {
        operation: 'clear',
        documentId: doc(),
        sheetName: sheet('People'),
        clear: 'wholeSheet',
        keepFirstRow: true,
      },
      { items: [{ json: { keep: 1 } }] },
    );
    expect(json).toEqual([{ keep: 1 }]);
    expect(google.rows(DOC, 'People')[0]).toEqual(['id', 'name', 'city', '']);
    expect(google.rows(DOC, 'People')[3]).toEqual(['', '', '', '']);
  });

  it('delete rows (from a row number) and columns (from a letter) by deleteDimension', async () => {
    const rows = await runSheets({
      operation: 'delete',
      documentId: doc(),
      sheetName: sheet('People'),
      toDelete: 'rows',
      startIndex: 2,
      numberToDelete: 2,
    });
    expect(rows.json).toEqual([{ success: true }]);
    expect(google.rows(DOC, 'People')).toEqual([PEOPLE[0], PEOPLE[3]]);
    await runSheets({
      operation: 'delete',
      documentId: doc(),
      sheetName: sheet('People'),
      toDelete: 'columns',
      startIndex: 'B',
    });
    expect(google.rows(DOC, 'People')).toEqual([
      ['id', 'city', 'rent'],
      [3, 'Berlin', 700],
    ]);
    const body = google
      .sheetsCalls()
      .filter((r) => r.path.endsWith(':batchUpdate'))
      .map((r) => r.body);
    expect(body[0]).toEqual({
      requests: [
        { deleteDimension: { range: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 3 } } },
      ],
    });
  });

  it('create adds a sheet and answers its properties; remove deletes one', async () => {
    const created = await runSheets({
      operation: 'create',
      documentId: doc(),
      title: 'Reports',
      options: { tabColor: '#ff0000' },
    });
    expect(created.error).toBeNull();
    expect(created.json[0]).toMatchObject({ title: 'Reports', sheetType: 'GRID' });
    const call = google.sheetsCalls().find((r) => r.path.endsWith(':batchUpdate'));
    expect(call?.body).toEqual({
      requests: [{ addSheet: { properties: { title: 'Reports', tabColor: { red: 1, green: 0, blue: 0 } } } }],
    });
    const removed = await runSheets({ operation: 'remove', documentId: doc(), sheetName: sheet(55, 'id') });
    expect(removed.json).toEqual([{ spreadsheetId: DOC }]);
    expect(google.spreadsheets.get(DOC)?.sheets.map((s) => s.title)).toEqual(['People', 'Reports']);
  });

  it('spreadsheet create and deleteSpreadsheet (through Drive)', async () => {
    const created = await runSheets({
      resource: 'spreadsheet',
      operation: 'create',
      title: 'Budget',
      sheetsUi: { sheetValues: [{ title: 'Q1' }, { title: 'Q2', hidden: true }] },
      options: { locale: 'de_DE' },
    });
    expect(created.error).toBeNull();
    const id = String(created.json[0]?.spreadsheetId);
    expect(created.json[0]).toMatchObject({ properties: { title: 'Budget' } });
    expect(google.spreadsheets.get(id)?.sheets.map((s) => s.title)).toEqual(['Q1', 'Q2']);
    const deleted = await runSheets({
      resource: 'spreadsheet',
      operation: 'deleteSpreadsheet',
      documentId: doc(id),
    });
    expect(deleted.json).toEqual([{ success: true }]);
    expect(google.spreadsheets.has(id)).toBe(false);
    expect(google.requests.at(-1)?.path).toBe(`/drive/v3/files/${id}`);
  });
});

describe("Google's refusals and bounds", () => {
  beforeEach(() => {
    google.add(DOC, [{ title: 'People', rows: PEOPLE.map((r) => [...r]) }]);
  });

  it('an unknown spreadsheet (404), an unknown sheet, 403 and 429 are node errors naming them', async () => {
    const unknownDoc = await runSheets({
      documentId: doc('missing-doc-xxxxxxxxxxxxxxxxxxxxx'),
      sheetName: sheet('People'),
    });
    expect(unknownDoc.error?.message).toBe(
      'Google Sheets refused reading spreadsheet missing-doc-xxxxxxxxxxxxxxxxxxxxx (404 NOT_FOUND): Requested entity was not found.',
    );
    const unknownSheet = await runSheets({ documentId: doc(), sheetName: sheet('Nope') });
    expect(unknownSheet.error?.message).toBe('Sheet with name Nope not found');
    expect(unknownSheet.error?.description).toBe(`The spreadsheet ${DOC} has 'People'`);
    google.faults.push({
      status: 403,
      body: {
        error: { code: 403, message: 'The caller does not have permission', status: 'PERMISSION_DENIED' },
      },
    });
    const forbidden = await runSheets({ documentId: doc(), sheetName: sheet('People') });
    expect(forbidden.error?.message).toBe(
      `Google Sheets refused reading spreadsheet ${DOC} (403 PERMISSION_DENIED): The caller does not have permission`,
    );
    expect(forbidden.error?.description).toContain('share it with the service account');
    google.faults.push({
      status: 429,
      body: {
        error: {
          code: 429,
          message: "Quota exceeded for quota metric 'Read requests'",
          status: 'RESOURCE_EXHAUSTED',
        },
      },
    });
    const limited = await runSheets({ documentId: doc(), sheetName: sheet('People') });
    expect(limited.error?.message).toBe(
      `Google Sheets refused reading spreadsheet ${DOC} (429 RESOURCE_EXHAUSTED): Quota exceeded for quota metric 'Read requests'`,
    );
  });

  it('bad parameters fail at save or before any call', async () => {
    const engine = new WorkflowEngine(testDeps(deps), defaultNodeRegistry);
    const bad = workflow(
      [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        {
          name: 'Sheets',
          type: 'n8n-nodes-base.googleSheets',
          typeVersion: 4.5,
          parameters: { resource: 'spreadsheet', operation: 'append', colour: 1 },
        },
      ],
      [['Start', 'Sheets']],
    );
    expect(engine.validate(bad).map((p) => p.path)).toEqual(['nodes[1].parameters.colour']);
    const noDoc = await runSheets({ sheetName: sheet('People') });
    expect(noDoc.error?.message).toBe("The Document is not set: give the spreadsheet's id or URL");
    const badUrl = await runSheets({
      documentId: doc('https://example.com/x', 'url'),
      sheetName: sheet('People'),
    });
    expect(badUrl.error?.message).toBe("'https://example.com/x' is not the URL of a Google spreadsheet");
  });

  it('a hanging Google is bounded by the execution deadline', async () => {
    google.hang = true;
    const started = Date.now();
    const { outcome } = await runSheets(
      { documentId: doc(), sheetName: sheet('People') },
      { run: { ...runContext, deadline: { at: Date.now() + 1_500, seconds: 1.5 } } },
    );
    expect(outcome.status).not.toBe('success');
    await expect.poll(() => google.closed, { timeout: 10_000 }).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a sheet larger than one read may bring fails the node naming the bound', async () => {
    const wide = Array.from({ length: 1_000 }, (_, c) => `c${c}`);
    google.add('huge-doc-xxxxxxxxxxxxxxxxxxxxxxx', [
      { title: 'Big', rows: Array.from({ length: 502 }, () => wide) },
    ]);
    const { error } = await runSheets({
      documentId: doc('huge-doc-xxxxxxxxxxxxxxxxxxxxxxx'),
      sheetName: sheet('Big'),
    });
    expect(error?.message).toBe("'Big' holds more than 500000 cells, more than one read may bring");
  });
});

describe('v1 and v2 (spreadsheet id and A1 range)', () => {
  beforeEach(() => {
    google.add(DOC, [{ title: 'Sheet1', rows: PEOPLE.map((r) => [...r]) }]);
  });

  it('read structures rows by the key row (no row_number), or answers them raw', async () => {
    const read = await runSheets({ sheetId: DOC, range: 'A:D' }, { version: 1 });
    expect(read.json).toEqual([
      { id: 1, name: 'Ada', city: 'Berlin', rent: 900 },
      { id: 2, name: 'Grace', city: 'Paris', rent: 1200 },
      { id: 3, name: 'Alan', city: 'Berlin', rent: 700 },
    ]);
    expect(google.sheetsCalls()[0]?.path).toBe(`/v4/spreadsheets/${DOC}/values/A%3AD`);
    const raw = await runSheets(
      { sheetId: DOC, range: 'Sheet1!A1:B2', rawData: true, dataProperty: 'cells' },
      { version: 2 },
    );
    expect(raw.json).toEqual([
      {
        cells: [
          ['id', 'name'],
          [1, 'Ada'],
        ],
      },
    ]);
  });

  it('append, update by key, upsert and clear', async () => {
    const append = await runSheets(
      { operation: 'append', sheetId: DOC, range: 'A:D' },
      { version: 1, items: [{ json: { id: 4, name: 'Edsger', city: 'Austin', rent: 1, extra: 'dropped' } }] },
    );
    expect(append.error).toBeNull();
    expect(google.rows(DOC, 'Sheet1')[4]).toEqual([4, 'Edsger', 'Austin', 1]);
    const update = await runSheets(
      { operation: 'update', sheetId: DOC, range: 'A:D', key: 'name' },
      { version: 1, items: [{ json: { name: 'Grace', rent: 1250 } }] },
    );
    expect(update.error).toBeNull();
    expect(google.rows(DOC, 'Sheet1')[2]).toEqual([2, 'Grace', 'Paris', 1250]);
    await runSheets(
      { operation: 'upsert', sheetId: DOC, range: 'A:D' },
      { version: 1, items: [{ json: { id: 1, city: 'Bonn' } }, { json: { id: 9, name: 'New' } }] },
    );
    expect(google.rows(DOC, 'Sheet1')[1]).toEqual([1, 'Ada', 'Bonn', 900]);
    expect(google.rows(DOC, 'Sheet1')[5]).toEqual([9, 'New', '', '']);
    await runSheets({ operation: 'clear', sheetId: DOC, range: 'Sheet1!A2:D' }, { version: 1 });
    expect(
      google
        .rows(DOC, 'Sheet1')
        .slice(1)
        .flat()
        .every((c) => c === ''),
    ).toBe(true);
  });
});

describe('real template exports (test/fixtures/n8n/templates, SOURCES-templates.md)', () => {
  it('v1 append → lookup → update → read on one sheet (OAuth2)', async () => {
    google.add('1remFwo--5ehUgIU7UUndKldPI0Xm93e1T3DldD9GOg0', [
      {
        title: 'Sheet1',
        rows: [
          ['ID', 'Name', 'Rent', 'City'],
          [1, 'Flat A', 800, 'Berlin'],
          [2, 'Flat B', 950, 'Hamburg'],
        ],
      },
    ]);
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/sheets-v1-append-lookup-update-read.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    const rows = google.rows('1remFwo--5ehUgIU7UUndKldPI0Xm93e1T3DldD9GOg0', 'Sheet1');
    // The Set node's random ID was appended; both Berlin rows were looked up, got 100 more rent, and read back.
    expect(rows).toHaveLength(4);
    expect(rows[3]?.slice(1)).toEqual(["John's Place", 1100, 'Berlin']);
    expect(rows[1]).toEqual([1, 'Flat A', 900, 'Berlin']);
    expect(outputs['Google Sheets1']?.map((r) => r.Name)).toEqual(['Flat A', "John's Place"]);
    expect(outputs['Google Sheets3']).toEqual([
      { ID: '1', Name: 'Flat A', Rent: '900', City: 'Berlin' },
      { ID: '2', Name: 'Flat B', Rent: '950', City: 'Hamburg' },
      { ID: String(rows[3]?.[0]), Name: "John's Place", Rent: '1100', City: 'Berlin' },
    ]);
    expect(oauthCalls.every((c) => c.id === 'google-sheet')).toBe(true);
  });

  it('v4.2 read of a sheet named in Arabic, If, an HTTP lookup merged by position, update matched on ID (OAuth2)', async () => {
    const id = '1ochnGSCy8V5Mz-nr51dBmugqR50m62K7d6pvbwOHewo';
    const header = [
      'ID',
      'Linkden URL',
      'Name',
      'Gender',
      'Email',
      'Education',
      'Location',
      'Job Title',
      'Summery',
      'Skills',
      'Picture',
    ];
    google.add(id, [
      {
        title: 'الورقة1',
        rows: [
          header,
          [1, 'https://www.linkedin.com/in/ada'],
          [
            2,
            'https://www.linkedin.com/in/grace',
            'Grace Hopper',
            'female',
            'g@example.com',
            'Yale',
            'NYC',
            'Admiral',
            'Compilers',
          ],
        ],
      },
    ]);
    google.pages.set('/linkedin-email-finder', {
      type: 'application/json',
      body: JSON.stringify({
        error: false,
        response: {
          full_name: 'Ada Lovelace',
          gender: 'female',
          email: { email: 'ada@example.com' },
          summary: 'Wrote the first program',
          education: [{ school: { name: 'Home' } }],
          skills: 'mathematics',
          picture: 'https://example.com/ada.png',
          job_title: 'Analyst',
          location: { raw: 'London' },
          linkedin: 'https://www.linkedin.com/in/ada',
        },
      }),
    });
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/sheets-v4.2-read-if-http-update.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['Get links from Google Sheet']?.map((r) => r.row_number)).toEqual([2, 3]);
    const lookup = google.requests.find((r) => r.path === '/linkedin-email-finder');
    expect(lookup?.body).toEqual({ url: 'https://www.linkedin.com/in/ada', id: 1 });
    expect(google.sheetsCalls().find((r) => r.path.includes('/values/'))?.path).toBe(
      `/v4/spreadsheets/${id}/values/${encodeURIComponent("'الورقة1'")}`,
    );
    const rows = google.rows(id, 'الورقة1');
    expect(rows[1]).toEqual([
      1,
      'https://www.linkedin.com/in/ada',
      'Ada Lovelace',
      'female',
      'ada@example.com',
      'Home',
      'London',
      'Analyst',
      'Wrote the first program',
      'mathematics',
      'https://example.com/ada.png',
    ]);
    expect(rows[2]?.[2]).toBe('Grace Hopper');
  });

  it('Trustpilot reviews: Information Extractor on DeepSeek, Sentiment Analysis, then Google Sheets (OAuth2)', async () => {
    const header = [
      'Id',
      'Data',
      'Nome',
      'Titolo',
      'Testo',
      'Valutazione',
      'Località',
      'N. Recensioni',
      'URL',
      'Sentiment',
    ];
    google.add(DOC, [{ title: 'Foglio1', rows: [header] }]);
    // Two listing pages (max_page 2) of two reviews each; the Limit keeps the first three.
    const listings = [
      ['/reviews/aaa111', '/reviews/bbb222'],
      ['/reviews/ccc333', '/reviews/ddd444'],
    ];
    listings.forEach((links, i) => {
      const body = `<html><body>${links.map((r) => `<article><section><a href="${r}">review</a></section></article>`).join('')}</body></html>`;
      google.pages.set(`/review/COMPANY?sort=recency&page=${i + 1}`, { type: 'text/html', body });
    });
    const reviews = listings.flat().slice(0, 3);
    for (const r of reviews)
      google.pages.set(r, {
        type: 'text/html',
        body: `<html><body><article>Great service ${r}</article></body></html>`,
      });
    // The Information Extractor answers for the three reviews, then Sentiment Analysis.
    for (const [i, r] of reviews.entries())
      openai.queue(
        completion(
          JSON.stringify({
            autore: `Author ${i}`,
            valutazione: 5 - i,
            data: `2025-01-0${i + 1}`,
            titolo: `Title ${i}`,
            testo: `Text of ${r}`,
            nazione: 'IT',
            n_recensioni: 3,
          }),
        ),
      );
    for (const category of ['Positive', 'Negative', 'Neutral'])
      openai.queue(completion(JSON.stringify({ sentiment: category, strength: 0.9, confidence: 0.8 })));

    const { outcome, outputs } = await runFixture(
      loadFixture('templates/sheets-trustpilot-sentiment.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    // The ids were added first (appendOrUpdate on Id), then read back one per review, still unrated.
    expect(outputs['Get rows']?.map((r) => [r.row_number, r.Id])).toEqual([
      [2, 'aaa111'],
      [3, 'bbb222'],
      [4, 'ccc333'],
    ]);
    // One output per category (Positive, Neutral, Negative), all three leading to the sheet update.
    const sentiment = outcome.state.runData['Sentiment Analysis']?.at(-1)?.output;
    expect(
      sentiment?.map((out) => out.map((i) => (i.json.sentimentAnalysis as { category: string }).category)),
    ).toEqual([['Positive'], ['Neutral'], ['Negative']]);
    const rows = google.rows(DOC, 'Foglio1');
    expect(rows.map((r) => r[0])).toEqual(['Id', 'aaa111', 'bbb222', 'ccc333']);
    expect(rows.map((r) => r[header.indexOf('Sentiment')])).toEqual([
      'Sentiment',
      'Positive',
      'Negative',
      'Neutral',
    ]);
    expect(rows[1]?.slice(1, 4)).toEqual(['2025-01-01', 'Author 0', 'Title 0']);
    expect(rows[2]?.[header.indexOf('URL')]).toBe('https://it.trustpilot.com/reviews/bbb222');
    expect(openai.requests.map((r) => r.__path)).toEqual(Array(6).fill('/v1/chat/completions'));
    // The extractor ran on DeepSeek's base URL (the export's option), Sentiment Analysis on OpenAI's.
    expect(openai.requests.map((r) => r.model)).toEqual([
      ...Array(3).fill('deepseek-reasoner'),
      ...Array(3).fill('gpt-4o-mini'),
    ]);
  });
});
