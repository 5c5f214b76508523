import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { ctx as runContext, testDeps } from '../../src/modules/workflows/engine/testing.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { SYSTEM_PROMPT_TEMPLATE } from '../../src/modules/workflows/nodes/langchain/chain-retrieval-qa/index.js';
import { FakeEmbeddings, vectorOf } from './support/fake-embeddings.js';
import { completion, FakeOpenAi } from './support/fake-openai.js';
import { FakeQdrant } from './support/fake-qdrant.js';
import { loadFixture } from './support/n8n-fixtures.js';

/**
 * The Mistral Cloud Chat Model in a real export (template 2335, "Financial Documents Assistant using
 * Qdrant and Mistral.ai", test/fixtures/n8n/SOURCES-templates.md), imported unmodified: its Chat
 * Trigger v1 asks a Question and Answer Chain v1.3 whose Vector Store Retriever reads the Qdrant
 * collection `BankStatements` (the question embedded by Embeddings Mistral Cloud), then one call of the
 * Mistral Cloud Chat Model v1 (`mistral-small-2402`). Mistral's public host goes to local servers
 * through the outbound function: its chat completions (OpenAI's wire, as Mistral's API speaks it) to a
 * local chat upstream, its embeddings to a local embeddings upstream; the Qdrant the credential names
 * is a local one. Credentials are the export's own ids.
 */

const mistral = new FakeOpenAi();
const embed = new FakeEmbeddings();
const qdrant = new FakeQdrant();
let deps: Partial<EngineDeps>;
// The export's file branch (Local File Trigger, Read File) imports only where the files folder is set.
const filesDir = mkdtempSync(join(tmpdir(), 'mistral-template-'));

const CREDENTIALS: Record<string, () => Record<string, string>> = {
  EIl2QxhXAS9Hkg37: () => ({ apiKey: 'ms-key' }),
  NyinAS3Pgfik66w5: () => ({ qdrantUrl: qdrant.base, apiKey: 'qd-key' }),
};

beforeAll(async () => {
  await Promise.all([mistral.start(), embed.start(), qdrant.start()]);
  const http = createOutboundHttp({
    allowHosts: [mistral.base, embed.base, qdrant.base].map((b) => new URL(b).host),
    timeoutMs: 10_000,
  });
  // Mistral's one public origin, split by path: embeddings to one local server, chat to the other.
  const origins = (): Array<[string, string]> => [
    ['https://api.mistral.ai/v1/embeddings', `${embed.base}/v1/embeddings`],
    ['https://api.mistral.ai', mistral.base],
  ];
  deps = {
    tenant: 'acct_mistral_template',
    host: {
      filesDir,
      executeCommand: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
      ssh: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
      tcpTarget: async () => {
        throw new Error('no TCP here');
      },
    },
    http: (req) => {
      const hit = origins().find(([from]) => req.url.startsWith(from));
      return http(hit ? { ...req, url: hit[1] + req.url.slice(hit[0].length) } : req);
    },
    credential: async (id) => {
      const found = CREDENTIALS[id];
      if (!found) throw new Error(`Credential '${id}' not found`);
      return found();
    },
  };
});
afterAll(async () => {
  await Promise.all([mistral.stop(), embed.stop(), qdrant.stop()]);
  rmSync(filesDir, { recursive: true, force: true });
});
beforeEach(() => {
  mistral.reset();
  embed.reset();
  qdrant.reset();
});

/** Bank statements as the template's file branch stores them (LangChain's payload: content, metadata). */
const STATEMENTS = [
  '## file location\n/home/node/BankStatements/2024-03.csv\n## file contents\nGROCERIES supermarket 84.20\nRENT landlord 1200.00',
  '## file location\n/home/node/BankStatements/2024-04.csv\n## file contents\nSALARY employer 3100.00\nGYM membership 39.00',
];

function seedBankStatements(): void {
  const points = new Map(
    STATEMENTS.map((content, i) => [
      `p${i}`,
      {
        id: `p${i}`,
        vector: vectorOf(content),
        payload: {
          content,
          metadata: { filter_by_filename: `/home/node/BankStatements/2024-0${i + 3}.csv` },
        },
      },
    ]),
  );
  qdrant.collections.set('BankStatements', { size: 256, distance: 'Cosine', config: {}, points });
}

/** Runs the export from its Chat Trigger with the message n8n's chat sends, after checking it imports. */
async function ask(chatInput: string) {
  const def = loadFixture('templates/qdrant-mistral-financial-qa.json');
  const engine = new WorkflowEngine(testDeps(deps), defaultNodeRegistry);
  expect(engine.validate(def)).toEqual([]);
  const outcome = await engine.run(
    def,
    {
      nodeName: 'Chat Trigger',
      items: [{ json: { sessionId: 's-bank', action: 'sendMessage', chatInput } }],
    },
    runContext,
  );
  const last = outcome.state.runData['Question and Answer Chain']?.at(-1)?.output[0] ?? [];
  return { outcome, answer: last.map((i) => i.json) };
}

describe('Mistral Cloud Chat Model (template 2335, financial documents assistant)', () => {
  it('a chat question: Qdrant’s nearest statements as context, Mistral’s answer is the workflow’s output', async () => {
    seedBankStatements();
    mistral.queue(completion('You spent 84.20 on groceries in March.'));
    const question = 'How much did I spend on GROCERIES at the supermarket?';
    const { outcome, answer } = await ask(question);
    expect(outcome.state.error).toBeNull();
    expect(outcome.status).toBe('success');
    // v1.3 of the chain answers `{response: {text}}`: the last node's item, what the chat shows.
    expect(answer).toEqual([{ response: { text: 'You spent 84.20 on groceries in March.' } }]);

    // The question embedded over Mistral's embeddings API with the template's credential.
    expect(embed.requests).toHaveLength(1);
    expect(embed.requests[0]).toMatchObject({
      path: '/v1/embeddings',
      headers: { authorization: 'Bearer ms-key' },
      body: { model: 'mistral-embed', input: [question] },
    });
    // The retriever's default topK (4) as Qdrant's limit, on the collection the export names.
    const search = qdrant.calls('POST', '/collections/BankStatements/points/search');
    expect(search).toHaveLength(1);
    expect(search[0]?.body).toMatchObject({ limit: 4, with_payload: ['metadata', 'content'] });
    expect(qdrant.requests.every((r) => r.headers['api-key'] === 'qd-key')).toBe(true);

    // One call of Mistral's chat completions: the export's model, the chain's system prompt with the
    // statements (nearest first) as context, the question as the user's turn.
    expect(mistral.requests).toHaveLength(1);
    const call = mistral.requests[0] ?? {};
    expect(call.__path).toBe('/v1/chat/completions');
    expect(call.__auth).toBe('Bearer ms-key');
    expect(call.model).toBe('mistral-small-2402');
    expect(call.stream).toBe(false);
    expect(call.messages).toEqual([
      {
        role: 'system',
        content: SYSTEM_PROMPT_TEMPLATE.replace('{context}', `${STATEMENTS[0]}\n\n${STATEMENTS[1]}`),
      },
      { role: 'user', content: question },
    ]);
    // The template sets no options: none of Mistral's sampling fields are sent.
    for (const field of ['temperature', 'top_p', 'max_tokens', 'safe_prompt', 'random_seed'])
      expect(call).not.toHaveProperty(field);
  });

  it('Mistral refusing the key, or an empty collection: a node error naming it, no answer', async () => {
    seedBankStatements();
    mistral.queue({
      status: 401,
      body: { object: 'error', message: 'Unauthorized', type: 'invalid_request_error', code: null },
    });
    const refused = await ask('What was my rent?');
    expect(refused.outcome.state.error?.message).toContain('Mistral refused the request (401)');
    expect(refused.outcome.state.error?.node).toBe('Question and Answer Chain');
    // Mistral's own words travel in the error's description (its body, as Mistral sent it).
    expect(refused.outcome.state.error?.description).toContain('"message":"Unauthorized"');
    expect(refused.answer).toEqual([]);
    expect(mistral.pending()).toBe(0);

    // The collection the chat reads is filled by another branch; before that, Qdrant says it is missing.
    qdrant.reset();
    mistral.reset();
    const missing = await ask('What was my rent?');
    expect(missing.outcome.state.error?.message).toBe(
      "The Qdrant collection 'BankStatements' does not exist",
    );
    expect(mistral.requests).toHaveLength(0);
  });
});
