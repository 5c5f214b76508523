import { CpuTaskError, cpuTask } from '../../../../../core/cpu/index.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps } from '../../../engine/types.js';
import { MAX_CHUNKS, type SplitOptions } from './split.js';
import { type TokenWindowsInput, tokenWindows } from './token-windows.js';

const windowsTask = cpuTask<TokenWindowsInput, string[]>(
  new URL('./token-windows.js', import.meta.url),
  'tokenWindows',
);

/**
 * The Token Splitter's windows (token-windows.ts), worked out in the platform's CPU pool: the
 * vocabulary is loaded there, a worker's deadline and heap bound a large text, and the account waits
 * its turn. Without a pool (an engine run on its own, as some tests do), inline.
 */
export async function splitTokens(
  text: string,
  o: SplitOptions,
  deps: Pick<EngineDeps, 'cpu' | 'tenant'>,
): Promise<string[]> {
  const input: TokenWindowsInput = {
    text,
    chunkSize: o.chunkSize,
    chunkOverlap: o.chunkOverlap,
    maxChunks: MAX_CHUNKS,
  };
  try {
    if (!deps.cpu) return await tokenWindows(input);
    return await deps.cpu.pool.run(windowsTask, input, {
      timeoutMs: deps.cpu.timeoutMs,
      ...(deps.tenant ? { tenant: deps.tenant } : {}),
    });
  } catch (error) {
    if (error instanceof CpuTaskError && error.limit !== null && error.limit !== 'queue')
      throw new NodeOperationError(`Splitting the text into tokens stopped: it ${error.message}`);
    if (error instanceof CpuTaskError && error.limit === 'queue')
      throw new NodeOperationError('Splitting the text into tokens: the server is busy; try again');
    throw new NodeOperationError(error instanceof Error ? error.message : String(error));
  }
}
