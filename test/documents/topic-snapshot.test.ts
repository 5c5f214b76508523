import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnowledgeService } from '../../src/modules/documents/knowledge-service.js';
import { DocumentStore } from '../../src/modules/documents/store.js';
import { embedHashedNgrams } from '../../src/modules/llm/builtin/hashed-ngrams.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { loaded, processed } from './support.js';

const MODEL = 'builtin/hashed-ngrams';
const TEXTS = [
  '# Herons\n\nThe grey heron waits by the reeds for fish. It nests in colonies high in trees.',
  '# Kingfishers\n\nA kingfisher dives for small fish from a perch above the river.',
  '# Otters\n\nOtters eat fish and crabs; they hold hands while they sleep on the water.',
  '# Beavers\n\nBeavers build dams of branches and mud across streams to make ponds.',
];
const QUESTIONS = ['fish by the river', 'dams of branches', 'heron colonies in trees', 'sleep on water'];

/**
 * A restart loads a saved topic from its snapshot and reads only the documents changed since, with the
 * same results (chunks, scores, order) as a cache that loads everything from the rows.
 */
describe.each(await testDialects())('knowledge topic snapshots on %s', (dialect) => {
  let p: TestPlatform;
  let dir: string;
  const services: KnowledgeService[] = [];

  /** A server on the same database: the builtin embedder answers as the gateway does for it. */
  const server = (snapshots: boolean) => {
    const service = new KnowledgeService(
      new DocumentStore(p.ctx.db, p.dialect),
      async (texts, model) => ({ vectors: texts.map((t) => Array.from(embedHashedNgrams(t))), model }),
      MODEL,
      64 * 1024 * 1024,
      1,
      snapshots ? { dir, delayMs: 0 } : null,
    );
    services.push(service);
    return service;
  };
  const ask = async (service: KnowledgeService, topic: string) => {
    const out = [];
    for (const mode of ['keyword', 'vector', 'hybrid'] as const)
      for (const query of QUESTIONS)
        out.push(
          (await service.query(p.accountId, { query, topK: 10, mode, topics: [topic] })).results.map((r) => ({
            chunkId: r.chunkId,
            score: r.score,
            keywordRank: r.keywordRank,
            vectorRank: r.vectorRank,
          })),
        );
    return out;
  };

  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
    dir = mkdtempSync(path.join(tmpdir(), 'kb-snapshots-'));
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.close()));
    await p?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a restart starts from the snapshot and answers as a full load does', async () => {
    const topic = 'birds';
    const ids: string[] = [];
    for (const content of TEXTS.slice(0, 3)) {
      const doc = await loaded(p, { source: 'markdown', content, topic, title: content.slice(2, 12) });
      expect((await processed(p, doc.documentId, { chunkSize: 60, chunkOverlap: 10 })).status).toBe(
        'indexed',
      );
      ids.push(doc.documentId);
    }
    const first = server(true);
    const before = await ask(first, topic);
    expect(before.some((r) => r.length > 0)).toBe(true);
    await until(() => readdirSync(dir).some((f) => f.endsWith('.kbs')));
    await first.close();

    // Unchanged since: the snapshot alone serves the restart.
    const again = server(true);
    expect(await ask(again, topic)).toEqual(before);
    expect(again.snapshotLoads()).toBe(1);

    // Changed since: one document processed again (new chunk ids), one deleted, one added.
    expect((await processed(p, ids[0]!, { chunkSize: 60, chunkOverlap: 10 })).status).toBe('indexed');
    expect((await p.request({ method: 'DELETE', url: `/api/documents/${ids[1]}` })).statusCode).toBe(204);
    const added = await loaded(p, { source: 'markdown', content: TEXTS[3]!, topic });
    expect((await processed(p, added.documentId, { chunkSize: 60, chunkOverlap: 10 })).status).toBe(
      'indexed',
    );
    const restarted = server(true);
    const fromSnapshot = await ask(restarted, topic);
    expect(restarted.snapshotLoads()).toBe(1);
    const fromRows = await ask(server(false), topic);
    expect(fromSnapshot).toEqual(fromRows);
    expect(fromSnapshot.flat().map((r) => r.chunkId)).not.toEqual(before.flat().map((r) => r.chunkId));
  });

  it('a snapshot that does not parse is removed and the topic loads from its rows', async () => {
    const topic = 'broken';
    const doc = await loaded(p, { source: 'markdown', content: TEXTS[0]!, topic });
    expect((await processed(p, doc.documentId)).status).toBe('indexed');
    const first = server(true);
    const before = await ask(first, topic);
    await until(() => readdirSync(dir).filter((f) => f.endsWith('.kbs')).length >= 2);
    await first.close();
    const files = readdirSync(dir).filter((f) => f.endsWith('.kbs'));
    for (const f of files) writeFileSync(path.join(dir, f), 'kbsnap1\nnot a snapshot');
    const restarted = server(true);
    expect(await ask(restarted, topic)).toEqual(before);
    expect(restarted.snapshotLoads()).toBe(0);
  });
});
