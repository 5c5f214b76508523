import { CpuTaskError, cpuTask } from '../../../../../core/cpu/index.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps, Json } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';
import {
  type ExtractInput,
  type ExtractionValue,
  type ExtractOptions,
  type ExtractResult,
  extractHtml,
} from './extract-task.js';

export type { ExtractionValue, ExtractOptions } from './extract-task.js';

const extractTask = cpuTask<ExtractInput, ExtractResult>(
  new URL('./extract-task.js', import.meta.url),
  'extractHtml',
);

/** The selectors named in an error, shortened. */
function selectorsOf(values: ExtractionValue[]): string {
  const shown = values.map(
    (v) => `'${v.cssSelector.length > 80 ? `${v.cssSelector.slice(0, 80)}…` : v.cssSelector}'`,
  );
  return shown.length > 5 ? `${shown.slice(0, 5).join(', ')} and ${shown.length - 5} more` : shown.join(', ');
}

/**
 * Extracts every value from one HTML document; one output item's JSON. The work (parsing, selectors,
 * text) runs in the platform's CPU pool (`deps.cpu`: a worker with a deadline and a heap bound, the
 * account waiting its turn), since a selector can take exponential time; without a pool (an engine run
 * on its own, as some tests do), inline.
 */
export async function extractFromHtml(
  html: string,
  values: ExtractionValue[],
  options: ExtractOptions,
  version: number,
  legacyTrim: boolean,
  deps: Pick<EngineDeps, 'cpu' | 'tenant'> = {},
): Promise<Record<string, Json>> {
  assertSize('HTML', Buffer.byteLength(html), FILE_LIMITS.htmlBytes);
  const input: ExtractInput = { html, values, options, version, legacyTrim };
  let result: ExtractResult;
  try {
    result = deps.cpu
      ? await deps.cpu.pool.run(extractTask, input, {
          timeoutMs: deps.cpu.timeoutMs,
          ...(deps.tenant ? { tenant: deps.tenant } : {}),
        })
      : await extractHtml(input);
  } catch (error) {
    if (!(error instanceof CpuTaskError) || error.limit === null)
      throw new NodeOperationError(error instanceof Error ? error.message : String(error));
    if (error.limit === 'queue')
      throw new NodeOperationError('Extracting HTML content: the server is busy; try again');
    if (error.limit !== 'time' && error.limit !== 'memory')
      throw new NodeOperationError(`Extracting HTML content stopped: ${error.message}`);
    throw new NodeOperationError(
      `Extracting HTML content stopped: it ${error.message} (CSS selectors ${selectorsOf(values)})`,
      {
        description:
          'Some selectors take very long on some pages (nested :has() grows exponentially with the nesting); use a simpler selector or a smaller page',
      },
    );
  }
  if (!result.ok)
    throw new NodeOperationError(`Invalid CSS selector '${result.selector}'`, {
      description: result.description,
    });
  return result.json;
}
