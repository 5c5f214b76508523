import type { AiDocument, ChatModel } from '../ai-parts.js';
import { askText, fillTemplate } from '../ask.js';

/** n8n's prompts (ChainSummarization/prompt.ts). */
export const DEFAULT_PROMPT_TEMPLATE = `Write a concise summary of the following:


"{text}"


CONCISE SUMMARY:`;

export const REFINE_PROMPT_TEMPLATE = `Your job is to produce a final summary
We have provided an existing summary up to a certain point: "{existing_answer}"
We have the opportunity to refine the existing summary
(only if needed) with some more context below.
------------
"{text}"
------------

Given the new context, refine the original summary
If the context isn't useful, return the original summary.

REFINED SUMMARY:`;

export type Method = 'map_reduce' | 'stuff' | 'refine';

export interface Prompts {
  prompt?: string;
  combineMapPrompt?: string;
  refineQuestionPrompt?: string;
  refinePrompt?: string;
}

/** LangChain's MapReduce token limit (3000), counted as LangChain falls back to: about 4 characters a token. */
const MAP_REDUCE_MAX_CHARS = 12_000;
/** Most model calls one summary may take (a map step over many chunks, a long refine). */
export const MAX_CALLS = 500;

/**
 * LangChain's `loadSummarizationChain` as n8n configures it: `stuff` (one call over all documents),
 * `map_reduce` (each document summarised first, only when all of them together are too long, then one
 * combining call), `refine` (a first summary, refined by each next document). The answer's key is
 * LangChain's: `text`, or `output_text` for refine.
 */
export async function summarize(
  model: ChatModel,
  documents: AiDocument[],
  method: Method,
  prompts: Prompts,
): Promise<Record<string, string>> {
  const ask = (template: string, values: Record<string, string>) =>
    askText(model, [{ role: 'user', content: fillTemplate(template, values) }]);
  const joined = (docs: string[]) => docs.join('\n\n');
  if (documents.length > MAX_CALLS)
    throw new Error(`Too many documents to summarise (${documents.length}, at most ${MAX_CALLS})`);
  if (method === 'stuff')
    return {
      text: await ask(prompts.prompt ?? DEFAULT_PROMPT_TEMPLATE, {
        text: joined(documents.map((d) => d.pageContent)),
      }),
    };
  if (method === 'refine') {
    let summary = '';
    for (const [i, doc] of documents.entries()) {
      summary =
        i === 0
          ? await ask(prompts.refineQuestionPrompt ?? DEFAULT_PROMPT_TEMPLATE, { text: doc.pageContent })
          : await ask(prompts.refinePrompt ?? REFINE_PROMPT_TEMPLATE, {
              existing_answer: summary,
              text: doc.pageContent,
            });
    }
    return { output_text: summary };
  }
  let texts = documents.map((d) => d.pageContent);
  const combine = prompts.combineMapPrompt ?? DEFAULT_PROMPT_TEMPLATE;
  if (fillTemplate(combine, { text: joined(texts) }).length >= MAP_REDUCE_MAX_CHARS) {
    const mapped: string[] = [];
    for (const t of texts) mapped.push(await ask(prompts.prompt ?? DEFAULT_PROMPT_TEMPLATE, { text: t }));
    texts = mapped;
  }
  return { text: await ask(combine, { text: joined(texts) }) };
}
