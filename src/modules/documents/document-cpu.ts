import { type CpuPool, CpuTaskError, cpuTask } from '../../core/cpu/index.js';
import { AppError } from '../../core/errors.js';
import type { ChunkOptions } from './chunker.js';
import { chunkDocument, normaliseText, type PackedChunks } from './document-tasks.js';
import type { LoadedDocument, LoadedPage } from './types.js';

const TASKS = new URL('./document-tasks.js', import.meta.url);
const chunkTask = cpuTask<Parameters<typeof chunkDocument>[0], PackedChunks>(TASKS, 'chunkDocument');
const normaliseTask = cpuTask<Parameters<typeof normaliseText>[0], LoadedDocument>(TASKS, 'normaliseText');

/** Texts up to this many characters are worked on inline: cheaper than the hop to a worker. */
const INLINE_CHARS = 65_536;

/** Where the documents module's CPU work runs: a CPU worker for large inputs, inline for small ones. */
export class DocumentCpu {
  constructor(private readonly cpu: { pool: CpuPool; timeoutMs: number } | null) {}

  chunk(pages: LoadedPage[], options: ChunkOptions, language: string, tenant: string): Promise<PackedChunks> {
    const chars = pages.reduce((n, p) => n + p.text.length, 0);
    if (!this.cpu || chars <= INLINE_CHARS)
      return Promise.resolve(chunkDocument({ pages, options, language }));
    return this.cpu.pool
      .run(chunkTask, { pages, options, language }, { timeoutMs: this.cpu.timeoutMs, tenant })
      .catch((error: unknown) => {
        throw domainError(error, 'document');
      });
  }

  normalise(text: string, mimeType: 'text/plain' | 'text/markdown'): Promise<LoadedDocument> {
    if (!this.cpu || text.length <= INLINE_CHARS) return Promise.resolve(normaliseText({ text, mimeType }));
    return this.cpu.pool
      .run(normaliseTask, { text, mimeType }, { timeoutMs: this.cpu.timeoutMs })
      .catch((error: unknown) => {
        throw domainError(error, 'text');
      });
  }
}

/** A CPU bound in the platform's terms: the input's size is the caller's (422), a full pool is a 503. */
function domainError(error: unknown, what: string): unknown {
  if (!(error instanceof CpuTaskError)) return error;
  switch (error.limit) {
    case 'time':
    case 'memory':
      return new AppError('UNPROCESSABLE', `The ${what} is too large to process: it ${error.message}`);
    case 'queue':
      return new AppError(
        'SERVICE_UNAVAILABLE',
        'The server is busy processing documents; try again',
        {},
        {
          'retry-after': '5',
        },
      );
    default:
      return new Error(`processing the ${what} failed: ${error.message}`);
  }
}
