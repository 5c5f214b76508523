import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import {
  CORPUS,
  call,
  createFlow,
  expectFlowError,
  expectNamesField,
  type Flow,
  predict,
  seedTopic,
  tick,
} from './support.js';

interface Message {
  id: string;
  role: 'userMessage' | 'apiMessage';
  chatflowid: string;
  content: string;
  sourceDocuments: string | null;
  chatType: string;
  chatId: string;
  sessionId: string;
  memoryType: string | null;
  createdDate: string;
}

/** An ISO time strictly between two timestamps (the filters' inclusiveness is not the point). */
const between = (a: string, b: string) => new Date((Date.parse(a) + Date.parse(b)) / 2).toISOString();

describe.each(await testDialects())('flows: chat messages and vector upsert on %s', (dialect) => {
  let bed: LlmTestbed;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    await seedTopic(bed, 'up', CORPUS.slice(0, 1));
  });
  afterAll(() => bed?.close());

  const messages = async (flowId: string, query = ''): Promise<Message[]> => {
    const res = await call(bed, 'GET', `/api/v1/chatmessage/${flowId}${query}`);
    expect(res.status, res.text).toBe(200);
    const list = res.json() as Message[];
    expect(Array.isArray(list)).toBe(true);
    return list;
  };

  describe('GET and DELETE /api/v1/chatmessage', () => {
    let f: Flow;
    let all: Message[];

    beforeAll(async () => {
      f = await createFlow(bed, { name: 'chatty', kind: 'llm', model: 'llama3.2' });
      await predict(bed, f.id, { question: 'm one', chatId: 'c1', sessionId: 's1' });
      await tick(bed);
      await predict(bed, f.id, { question: 'm two', chatId: 'c1', sessionId: 's1' });
      await tick(bed);
      await predict(bed, f.id, { question: 'm three', chatId: 'c2', sessionId: 's2' });
      all = await messages(f.id);
    });

    it('stores both turns of every prediction, oldest first, in Flowise’s shape', () => {
      expect(all.map((m) => [m.role, m.content])).toEqual([
        ['userMessage', 'm one'],
        ['apiMessage', 'Echo: m one'],
        ['userMessage', 'm two'],
        ['apiMessage', 'Echo: m two'],
        ['userMessage', 'm three'],
        ['apiMessage', 'Echo: m three'],
      ]);
      expect(all[0]).toMatchObject({
        id: expect.any(String),
        chatflowid: f.id,
        sourceDocuments: null,
        chatType: 'EXTERNAL',
        chatId: 'c1',
        sessionId: 's1',
        createdDate: expect.any(String),
      });
      expect(all[4]).toMatchObject({ chatId: 'c2', sessionId: 's2' });
      expect(new Set(all.map((m) => m.id)).size).toBe(6);
    });

    it('the answer’s chatMessageId is the stored apiMessage', async () => {
      const other = await createFlow(bed, { name: 'ids', kind: 'llm', model: 'llama3.2' });
      const answer = await predict(bed, other.id, { question: 'which id' });
      const stored = await messages(other.id);
      expect(stored.map((m) => m.role)).toEqual(['userMessage', 'apiMessage']);
      expect(stored[1]?.id).toBe(answer.chatMessageId);
      expect(stored.every((m) => m.chatId === answer.chatId && m.sessionId === answer.sessionId)).toBe(true);
      // Flows keep their messages apart.
      expect((await messages(f.id)).some((m) => m.content === 'which id')).toBe(false);
    });

    it('filters by chatId and sessionId', async () => {
      expect((await messages(f.id, '?chatId=c1')).map((m) => m.content)).toEqual([
        'm one',
        'Echo: m one',
        'm two',
        'Echo: m two',
      ]);
      expect((await messages(f.id, '?sessionId=s2')).map((m) => m.content)).toEqual([
        'm three',
        'Echo: m three',
      ]);
      expect(await messages(f.id, '?chatId=c1&sessionId=s2')).toEqual([]);
      expect(await messages(f.id, '?chatId=nobody')).toEqual([]);
    });

    it('sorts ASC by default, DESC by sort or its alias order; limit keeps the first n', async () => {
      expect(await messages(f.id, '?sort=ASC')).toEqual(all);
      const desc = await messages(f.id, '?sort=DESC');
      expect(desc.map((m) => m.createdDate)).toEqual([...all].reverse().map((m) => m.createdDate));
      expect(desc[0]?.content).toBe('Echo: m three');
      expect((await messages(f.id, '?order=DESC'))[0]?.content).toBe('Echo: m three');
      expect((await messages(f.id, '?limit=1')).map((m) => m.content)).toEqual(['m one']);
      expect((await messages(f.id, '?sort=DESC&limit=2')).map((m) => m.content)).toEqual([
        'Echo: m three',
        'm three',
      ]);
    });

    it('filters by startDate and endDate', async () => {
      const afterFirst = between(all[1]?.createdDate as string, all[2]?.createdDate as string);
      const beforeLast = between(all[3]?.createdDate as string, all[4]?.createdDate as string);
      expect((await messages(f.id, `?startDate=${afterFirst}`)).map((m) => m.content)).toEqual([
        'm two',
        'Echo: m two',
        'm three',
        'Echo: m three',
      ]);
      expect((await messages(f.id, `?endDate=${afterFirst}`)).map((m) => m.content)).toEqual([
        'm one',
        'Echo: m one',
      ]);
      expect(
        (await messages(f.id, `?startDate=${afterFirst}&endDate=${beforeLast}`)).map((m) => m.content),
      ).toEqual(['m two', 'Echo: m two']);
    });

    it('400 on a bad filter; 404 on an unknown flow', async () => {
      for (const q of ['?sort=SIDEWAYS', '?limit=0', '?limit=1001', '?colour=red']) {
        expectFlowError(await call(bed, 'GET', `/api/v1/chatmessage/${f.id}${q}`), 400, 'VALIDATION_ERROR');
      }
      expectFlowError(await call(bed, 'GET', '/api/v1/chatmessage/flow_nope'), 404, 'FLOW_NOT_FOUND');
    });

    it('DELETE needs flow:delete, removes by chatId, then all', async () => {
      const { key: writer } = await bed.p.createKey({
        name: 'writer',
        type: 'development',
        services: ['flow'],
        role: 'Writer',
      });
      expect((await call(bed, 'GET', `/api/v1/chatmessage/${f.id}`, { key: writer })).status).toBe(200);
      expectFlowError(
        await call(bed, 'DELETE', `/api/v1/chatmessage/${f.id}`, { key: writer }),
        403,
        'FORBIDDEN',
      );
      const byChat = await call(bed, 'DELETE', `/api/v1/chatmessage/${f.id}?chatId=c1`);
      expect(byChat.status, byChat.text).toBe(200);
      expect(byChat.json()).toEqual({ deleted: 4 });
      expect((await messages(f.id)).map((m) => m.chatId)).toEqual(['c2', 'c2']);
      const rest = await call(bed, 'DELETE', `/api/v1/chatmessage/${f.id}`);
      expect(rest.json()).toEqual({ deleted: 2 });
      expect(await messages(f.id)).toEqual([]);
    });
  });

  it('a rag answer is stored with its sourceDocuments as a JSON string', async () => {
    const f = await createFlow(bed, { name: 'rag log', kind: 'rag', model: 'llama3.2', topics: ['up'] });
    const answer = await predict(bed, f.id, { question: 'Why do otters hold hands?', chatId: 'rag-1' });
    expect(answer.sourceDocuments.length).toBeGreaterThan(0);
    const [question, reply] = await messages(f.id, '?chatId=rag-1');
    expect(question?.role).toBe('userMessage');
    expect(reply?.role).toBe('apiMessage');
    expect(typeof reply?.sourceDocuments).toBe('string');
    const stored = JSON.parse(reply?.sourceDocuments as string) as Array<{ pageContent: string }>;
    expect(stored.map((d) => d.pageContent)).toEqual(answer.sourceDocuments.map((d) => d.pageContent));
  });

  describe('POST /api/v1/vector/upsert', () => {
    let rag: Flow;

    beforeAll(async () => {
      rag = await createFlow(bed, {
        name: 'upsert target',
        kind: 'rag',
        model: 'llama3.2',
        topics: ['up'],
        topK: 1,
      });
    });

    it('JSON documents are indexed into the flow’s topic; a rag prediction finds them; again is skipped', async () => {
      const body = {
        documents: [
          {
            pageContent: 'The harbour master of Port Quillan is Ismael Thorne.',
            metadata: { source: 'memo' },
          },
        ],
      };
      const res = await call(bed, 'POST', `/api/v1/vector/upsert/${rag.id}`, { body });
      expect(res.status, res.text).toBe(200);
      const added = res.json() as {
        numAdded: number;
        numSkipped: number;
        addedDocs: Array<{ documentId: string; status: string; chunkCount: number }>;
      };
      expect(added).toMatchObject({ numSkipped: 0, numUpdated: 0, numDeleted: 0 });
      expect(added.addedDocs).toHaveLength(1);
      expect(added.addedDocs[0]).toMatchObject({ documentId: expect.any(String), status: 'indexed' });
      expect(added.addedDocs[0]?.chunkCount).toBeGreaterThan(0);
      expect(added.numAdded).toBe(added.addedDocs[0]?.chunkCount);

      const answer = await predict(bed, rag.id, { question: 'Who is the harbour master of Port Quillan?' });
      expect(answer.sourceDocuments[0]?.pageContent).toContain('Ismael Thorne');
      expect(answer.sourceDocuments[0]?.metadata).toMatchObject({
        documentId: added.addedDocs[0]?.documentId,
        topic: 'up',
      });

      const again = await call(bed, 'POST', `/api/v1/vector/upsert/${rag.id}`, { body });
      expect(again.status, again.text).toBe(200);
      expect(again.json()).toMatchObject({ numAdded: 0, numSkipped: 1, numUpdated: 0, numDeleted: 0 });
    });

    it('multipart files (markdown and text) with a topic field are indexed and found', async () => {
      const form = new FormData();
      form.append(
        'files',
        new Blob(['# Glassworks\n\nThe furnace at the Murano glassworks burns at eleven hundred degrees.'], {
          type: 'text/markdown',
        }),
        'glass.md',
      );
      form.append(
        'files',
        new Blob(['The Tarn Valley ferry leaves the north pier at seven every morning.'], {
          type: 'text/plain',
        }),
        'ferry.txt',
      );
      form.append('topic', 'up');
      form.append('metadata', JSON.stringify({ team: 'ops' }));
      const res = await call(bed, 'POST', `/api/v1/vector/upsert/${rag.id}`, { body: form });
      expect(res.status, res.text).toBe(200);
      const added = res.json() as {
        numAdded: number;
        addedDocs: Array<{ documentId: string; status: string }>;
      };
      expect(added.addedDocs).toHaveLength(2);
      expect(added.addedDocs.every((d) => d.status === 'indexed')).toBe(true);
      expect(added.numAdded).toBeGreaterThanOrEqual(2);

      const glass = await predict(bed, rag.id, {
        question: 'How hot does the Murano glassworks furnace burn?',
      });
      expect(glass.sourceDocuments[0]?.pageContent).toContain('eleven hundred degrees');
      const ferry = await predict(bed, rag.id, {
        question: 'When does the Tarn Valley ferry leave the north pier?',
      });
      expect(ferry.sourceDocuments[0]?.pageContent).toContain('seven every morning');
    });

    it('multipart chunkSize splits a file; numAdded counts the chunks', async () => {
      const sentences = Array.from(
        { length: 12 },
        (_, i) => `Quarry report ${i + 1}: the granite blocks of row ${i + 1} were cut and numbered.`,
      );
      const form = new FormData();
      form.append('files', new Blob([sentences.join(' ')], { type: 'text/plain' }), 'quarry.txt');
      form.append('chunkSize', '100');
      const res = await call(bed, 'POST', `/api/v1/vector/upsert/${rag.id}`, { body: form });
      expect(res.status, res.text).toBe(200);
      const added = res.json() as { numAdded: number; addedDocs: Array<{ chunkCount: number }> };
      expect(added.addedDocs).toHaveLength(1);
      expect(added.addedDocs[0]?.chunkCount).toBeGreaterThan(1);
      expect(added.numAdded).toBe(added.addedDocs[0]?.chunkCount);
    });

    it('upsert needs flow:write', async () => {
      const { key: reader } = await bed.p.createKey({
        name: 'reader',
        type: 'development',
        services: ['flow'],
        role: 'Reader',
      });
      const body = { documents: [{ pageContent: 'Readers may not write this.' }] };
      expectFlowError(
        await call(bed, 'POST', `/api/v1/vector/upsert/${rag.id}`, { key: reader, body }),
        403,
        'FORBIDDEN',
      );
    });

    it('400 on an llm flow and for a topic that is not the flow’s; 404 on an unknown flow', async () => {
      const llm = await createFlow(bed, { name: 'no kb', kind: 'llm', model: 'llama3.2' });
      const body = { documents: [{ pageContent: 'Anything at all.' }] };
      expectFlowError(
        await call(bed, 'POST', `/api/v1/vector/upsert/${llm.id}`, { body }),
        400,
        'VALIDATION_ERROR',
      );
      expectNamesField(
        await call(bed, 'POST', `/api/v1/vector/upsert/${rag.id}`, { body: { ...body, topic: 'elsewhere' } }),
        'topic',
      );
      expectFlowError(
        await call(bed, 'POST', '/api/v1/vector/upsert/flow_nope', { body }),
        404,
        'FLOW_NOT_FOUND',
      );
    });
  });
});
