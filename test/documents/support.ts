import { expect } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';

export interface DocView {
  id: string;
  documentId: string;
  status: string;
  title: string | null;
  topic: string;
  chunkCount: number;
  pages?: Array<{ pageNumber: number; text: string }>;
  error: string | null;
  [key: string]: unknown;
}

export async function load(p: TestPlatform, body: Record<string, unknown>, key?: string) {
  return p.request({ method: 'POST', url: '/api/documents/load', payload: body, ...(key ? { key } : {}) });
}

export async function loaded(p: TestPlatform, body: Record<string, unknown>): Promise<DocView> {
  const res = await load(p, body);
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json() as DocView;
}

/** Processes a document and waits until it is indexed (or failed). */
export async function processed(
  p: TestPlatform,
  id: string,
  body: Record<string, unknown> = {},
  until = 'indexed',
): Promise<DocView> {
  const res = await p.request({ method: 'POST', url: `/api/documents/${id}/process`, payload: body });
  expect(res.statusCode, res.body).toBe(202);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const doc = (
      await p.request({
        method: 'GET',
        url: `/api/documents/${id}?fields=status,processing,error,chunkCount,embeddingModel`,
      })
    ).json() as DocView;
    if (!doc.processing && (doc.status === until || doc.status === 'failed')) return doc;
    if (Date.now() > deadline) throw new Error(`document ${id} still ${doc.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function query(p: TestPlatform, body: Record<string, unknown>, key?: string) {
  return p.request({ method: 'POST', url: '/api/knowledge/query', payload: body, ...(key ? { key } : {}) });
}
