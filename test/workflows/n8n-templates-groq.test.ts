import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { buildPdf } from '../../src/modules/documents/loaders/pdf-fixture.js';
import { ctx as runContext, testDeps } from '../../src/modules/workflows/engine/testing.js';
import type { EngineDeps, Item, Json } from '../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { FakeEmbeddings } from './support/fake-embeddings.js';
import { completion, FakeOpenAi } from './support/fake-openai.js';
import { FakePinecone } from './support/fake-pinecone.js';
import { FakeTelegram } from './support/fake-telegram.js';
import { loadFixture, type N8nExport } from './support/n8n-fixtures.js';

/**
 * The Groq Chat Model in a real export (template 5Ycrm1MuK8htwd96, "Telegram RAG pdf",
 * test/fixtures/n8n/SOURCES-templates.md), imported unmodified: a Telegram Trigger v1.1 update either
 * carries a PDF (Telegram get File, a Code node making it application/pdf, the Default Data Loader with
 * a Recursive Character Text Splitter into the Pinecone Vector Store, Limit, a Telegram reply) or a
 * question (a Question and Answer Chain v1.3 on the Groq Chat Model v1 with a Vector Store Retriever over
 * Pinecone, its answer sent back to the chat). Groq's public host (its OpenAI-compatible API), OpenAI's
 * embeddings and Pinecone's hosts go to local servers through the outbound function; the Telegram
 * credential names the local Bot API server.
 */

const telegram = new FakeTelegram();
const groq = new FakeOpenAi();
const embed = new FakeEmbeddings();
const pinecone = new FakePinecone();
let deps: Partial<EngineDeps>;

/** The export's credentials are blank (`id: ""`): those a user picks after importing it, one per type. */
const CREDENTIALS: Record<string, () => Record<string, string>> = {
  telegramApi: () => ({ accessToken: FakeTelegram.TOKEN, baseUrl: telegram.base }),
  openAiApi: () => ({ apiKey: 'sk-embed' }),
  pineconeApi: () => ({ apiKey: 'pc-key' }),
  groqApi: () => ({ apiKey: 'gsk-local' }),
};

const withCredentials = (def: N8nExport): N8nExport => ({
  ...def,
  nodes: def.nodes.map((n) =>
    n.credentials
      ? {
          ...n,
          credentials: Object.fromEntries(
            Object.keys(n.credentials).map((type) => [type, { id: type, name: type }]),
          ),
        }
      : n,
  ),
});

/** Public origins the export talks to, to the local server standing in for each. */
const origins = (): Record<string, string> => ({
  'https://api.groq.com/openai': groq.base,
  'https://api.openai.com': embed.base,
});

beforeAll(async () => {
  await Promise.all([telegram.start(), groq.start(), embed.start(), pinecone.start()]);
  const http = createOutboundHttp({
    allowHosts: [telegram.base, groq.base, embed.base, pinecone.base].map((b) => new URL(b).host),
    timeoutMs: 10_000,
  });
  deps = {
    tenant: 'acct_groq_template',
    http: pinecone.route((req) => {
      const origin = Object.keys(origins()).find((o) => req.url.startsWith(o));
      return http(origin ? { ...req, url: (origins()[origin] ?? '') + req.url.slice(origin.length) } : req);
    }),
    credential: async (id) => {
      const found = CREDENTIALS[id];
      if (!found) throw new Error(`Credential '${id}' not found`);
      return found();
    },
  };
});
afterAll(() => Promise.all([telegram.stop(), groq.stop(), embed.stop(), pinecone.stop()]));
beforeEach(() => {
  telegram.reset();
  groq.reset();
  embed.reset();
  pinecone.reset();
  pinecone.createIndex('telegram', 256);
});

/** Runs the export from its Telegram Trigger with one update, after checking it imports. */
async function runUpdate(update: Record<string, Json>) {
  const def = withCredentials(loadFixture('templates/telegram-rag-pdf-groq.json'));
  const engine = new WorkflowEngine(testDeps(deps), defaultNodeRegistry);
  expect(engine.validate(def)).toEqual([]);
  const items: Item[] = [{ json: update }];
  const outcome = await engine.run(def, { nodeName: 'Telegram Trigger', items }, runContext);
  const outputs: Record<string, Array<Record<string, unknown>>> = {};
  for (const [name, runs] of Object.entries(outcome.state.runData))
    outputs[name] = (runs.at(-1)?.output[0] ?? []).map((i) => i.json);
  return { outcome, outputs };
}

const CHAT = 5_550_123;
const message = (extra: Record<string, unknown>) => ({
  update_id: 9001,
  message: {
    message_id: 77,
    from: { id: CHAT, is_bot: false, first_name: 'Ada', language_code: 'en' },
    chat: { id: CHAT, first_name: 'Ada', type: 'private' },
    date: 1_764_500_000,
    ...extra,
  },
});

const PAGES = [
  'Warranty: the kettle is covered for two years.',
  'Cleaning: descale the kettle monthly using citric acid.',
];

/** Sends the manual as a document update: the insert branch's run. */
async function sendManual() {
  telegram.files.set('documents/file_3.pdf', buildPdf(PAGES));
  telegram.answer('getFile', {
    body: {
      ok: true,
      result: {
        file_id: 'BQACAgQAAxk',
        file_unique_id: 'AgAD',
        file_size: 900,
        file_path: 'documents/file_3.pdf',
      },
    },
  });
  return runUpdate(
    message({
      document: {
        file_name: 'kettle-manual.pdf',
        mime_type: 'application/pdf',
        file_id: 'BQACAgQAAxk',
        file_unique_id: 'AgAD',
        file_size: 900,
      },
    }),
  );
}

/** The manual's pages as the insert branch leaves them in the index. */
async function indexManual(): Promise<void> {
  const { outcome } = await sendManual();
  expect(outcome.state.error).toBeNull();
}

describe('Telegram RAG pdf on Pinecone and the Groq Chat Model (template 5Ycrm1MuK8htwd96)', () => {
  it('a PDF sent to the bot is fetched, split and inserted into the Pinecone index; the bot says how many pages', async () => {
    await indexManual();
    expect(telegram.called('getFile')[0]?.body).toEqual({ file_id: 'BQACAgQAAxk' });
    // One record per page, LangChain's metadata with the PDF's page number, embedded with v1's default model.
    const records = pinecone.records('telegram');
    expect(records.map((r) => r.metadata.text).sort()).toEqual([...PAGES].sort());
    expect(records.map((r) => r.metadata['loc.pageNumber']).sort()).toEqual([1, 2]);
    expect(embed.requests[0]).toMatchObject({
      path: '/v1/embeddings',
      headers: { authorization: 'Bearer sk-embed' },
      body: { model: 'text-embedding-ada-002' },
    });
    expect(telegram.called('sendMessage').map((c) => c.body)).toEqual([
      {
        chat_id: CHAT,
        text: '2 pages saved on Pinecone',
        parse_mode: 'Markdown',
        disable_web_page_preview: true,
      },
    ]);
    expect(groq.requests).toEqual([]);
  });

  it('a PDF when the Pinecone index does not exist: Pinecone’s error names it, nothing is stored or sent', async () => {
    pinecone.reset();
    const { outcome } = await sendManual();
    expect(outcome.state.error).toMatchObject({
      node: 'Pinecone Vector Store',
      message: 'Index telegram not found',
    });
    // The Code node made the download a PDF before the loader read it.
    const changed = outcome.state.runData['Change to application/pdf']?.[0]?.output[0]?.[0];
    expect(changed?.binary?.data).toMatchObject({ mimeType: 'application/pdf', fileName: 'file_3.pdf' });
    expect(pinecone.asked).toEqual(['https://api.pinecone.io/indexes/telegram']);
    expect(telegram.called('sendMessage')).toEqual([]);
  });

  it('a question: the chain retrieves the nearest page, asks Groq, and Groq’s answer is sent to the chat', async () => {
    await indexManual();
    telegram.reset();
    groq.queue(completion('The kettle has a twenty four month warranty.'));
    const { outcome, outputs } = await runUpdate(message({ text: 'How long is the kettle warranty?' }));
    expect(outcome.state.error).toBeNull();

    // Groq's OpenAI-compatible chat completions, the template's model, the key as a bearer token.
    expect(groq.requests).toHaveLength(1);
    const call = groq.requests[0] ?? {};
    expect(call.__path).toBe('/v1/chat/completions');
    expect(call.__auth).toBe('Bearer gsk-local');
    expect(call.model).toBe('llama-3.1-70b-versatile');
    const messages = call.messages as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    // The retrieved pages in the system prompt, the warranty page (sharing the question's words) first.
    expect(messages[0]?.content).toContain(PAGES[0]);
    expect(messages[0]?.content.indexOf(PAGES[0] ?? '')).toBeLessThan(
      messages[0]?.content.indexOf(PAGES[1] ?? '') ?? -1,
    );
    expect(messages[1]?.content).toBe(
      'How long is the kettle warranty?\nSearch the database with the retriever for information for the answer',
    );
    expect(pinecone.requests.find((r) => r.url.endsWith('/query'))?.body).toMatchObject({
      topK: 4,
      includeMetadata: true,
    });

    expect(outputs['Question and Answer Chain']).toEqual([
      { response: { text: 'The kettle has a twenty four month warranty.' } },
    ]);
    expect(telegram.called('sendMessage').map((c) => c.body)).toEqual([
      {
        chat_id: CHAT,
        text: 'The kettle has a twenty four month warranty.',
        // v1.2's defaults; the template turns the attribution off.
        parse_mode: 'Markdown',
        disable_web_page_preview: true,
      },
    ]);
    expect(outputs['Stop and Error']).toBeUndefined();
  });

  it('Groq refusing the retired model fails the chain with Groq’s message; nothing is sent', async () => {
    groq.queue({
      status: 400,
      body: {
        error: {
          message: 'The model `llama-3.1-70b-versatile` has been decommissioned and is no longer supported.',
          type: 'invalid_request_error',
          code: 'model_decommissioned',
        },
      },
    });
    const { outcome } = await runUpdate(message({ text: 'How long is the kettle warranty?' }));
    // Named by the provider, at the chain the model belongs to.
    expect(outcome.state.error).toMatchObject({
      node: 'Question and Answer Chain',
      message:
        'Groq refused the request (400): The model `llama-3.1-70b-versatile` has been decommissioned and is no longer supported.',
    });
    expect(groq.requests).toHaveLength(1);
    expect(telegram.called('sendMessage')).toEqual([]);
  });

  it('Telegram refusing the answer takes the error output to the template’s Stop and Error', async () => {
    groq.queue(completion('Twenty four months.'));
    telegram.refuse('sendMessage', 'Bad Request: chat not found');
    const { outcome } = await runUpdate(message({ text: 'Warranty?' }));
    expect(groq.requests).toHaveLength(1);
    expect(telegram.called('sendMessage')[0]?.body.text).toBe('Twenty four months.');
    // `continueErrorOutput`: Telegram's refusal is an item on the second output, which stops the run.
    expect(outcome.state.runData['Telegram Response']?.[0]?.output[1]?.map((i) => i.json)).toEqual([
      { error: 'Telegram refused sendMessage: Bad Request: chat not found' },
    ]);
    expect(outcome.state.error).toMatchObject({ node: 'Stop and Error' });
    expect(outcome.state.error?.message).toBe('An error occurred');
  });
});
