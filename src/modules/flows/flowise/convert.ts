import { validationError } from '../../../core/errors.js';
import { DEFAULT_TEMPLATES, type Problem } from '../definition.js';
import type { FlowBodyT } from '../schemas.js';
import type { Canvas, CanvasNode } from './flow-data.js';
import { MAX_TOKENS_INPUTS, MODEL_INPUT } from './node-types.js';

/** What a canvas sets of the platform's definition; the rest stays the body's or the defaults. */
export type ConvertedFields = Pick<
  FlowBodyT,
  | 'kind'
  | 'model'
  | 'systemPrompt'
  | 'promptTemplate'
  | 'topics'
  | 'topK'
  | 'temperature'
  | 'maxTokens'
  | 'memory'
>;

/** Buffer Memory keeps every turn in Flowise; here the window's largest size. */
const BUFFER_MEMORY_TURNS = 50;
const DEFAULT_WINDOW = 4;
const DEFAULT_TOP_K = 4;
const MAX_PROMPT_CHARS = 20_000;
const REF = /^\{\{([^.{}]+)\.data\.instance\}\}$/;
const VARIABLE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The platform's flow a checked canvas describes: its ending chain, the chat model, prompt, memory and
 * retriever wired into it. `topicOf` names the knowledge-base topic of an in-memory vector store.
 */
export function convertCanvas(canvas: Canvas, topicOf: (node: CanvasNode) => string): ConvertedFields {
  const problems: Problem[] = [];
  const chain = canvas.ending;
  const refs = (node: CanvasNode, input: string): CanvasNode[] => {
    const value = node.inputs[input];
    const list = Array.isArray(value) ? value : [value];
    return list.flatMap((v) => {
      const id = typeof v === 'string' ? REF.exec(v)?.[1] : undefined;
      const target = id ? canvas.nodes.get(id) : undefined;
      return target ? [target] : [];
    });
  };
  const one = (node: CanvasNode, input: string, role: CanvasNode['role'], required: boolean) => {
    const found = refs(node, input).filter((n) => n.role === role);
    if (found.length === 0 && required)
      problems.push({ field: `flowData.${node.id}.${input}`, message: `needs a ${role} node connected` });
    return found[0];
  };

  const modelNode = one(chain, 'model', 'chatModel', true);
  // Every field set: a PUT of new flowData replaces what the previous canvas set.
  const out: ConvertedFields = {
    kind: 'llm',
    model: null,
    systemPrompt: '',
    promptTemplate: '{question}',
    topics: [],
    topK: DEFAULT_TOP_K,
    temperature: null,
    maxTokens: null,
    memory: { type: 'none' },
  };
  if (modelNode) Object.assign(out, modelFields(modelNode, problems));

  const memory = refs(chain, 'memory').find((n) => n.role === 'memory');
  if (memory) out.memory = memoryOf(memory);
  // Flowise gives this chain a Buffer Memory when none is connected.
  else if (chain.name === 'conversationalRetrievalQAChain')
    out.memory = { type: 'window', windowSize: BUFFER_MEMORY_TURNS };

  if (chain.name === 'conversationChain') {
    const prompt = one(chain, 'chatPromptTemplate', 'prompt', false);
    if (prompt) Object.assign(out, promptFields(prompt, problems));
    else {
      out.systemPrompt = text(chain.inputs.systemMessagePrompt);
      out.promptTemplate = '{question}';
    }
    // Flowise's "include whole document into the context window": the documents join the system prompt.
    const documents = refs(chain, 'document').filter((n) => n.role === 'loader');
    const texts = documents.map((d) => loaderText(d, problems)).filter((t) => t !== '');
    if (texts.length > 0)
      out.systemPrompt = [out.systemPrompt ?? '', ...texts].filter((t) => t !== '').join('\n\n');
    if ((out.systemPrompt ?? '').length > MAX_PROMPT_CHARS)
      problems.push({
        field: `flowData.${chain.id}.document`,
        message: `makes a system prompt over ${MAX_PROMPT_CHARS} characters`,
      });
  } else if (chain.name === 'llmChain') {
    const prompt = one(chain, 'prompt', 'prompt', true);
    if (prompt) Object.assign(out, promptFields(prompt, problems));
  } else {
    // conversationalRetrievalQAChain, retrievalQAChain: retrieval over the knowledge base.
    out.kind = 'rag';
    out.promptTemplate = DEFAULT_TEMPLATES.rag;
    out.systemPrompt = text(chain.inputs.systemMessagePrompt);
    const store = one(chain, 'vectorStoreRetriever', 'vectorStore', true);
    if (store) {
      // Postgres names a table, shared as in Flowise; in-memory and local stores are the flow's own.
      out.topics = [store.name === 'postgres' ? postgresTopic(store) : topicOf(store)];
      out.topK = integerIn(store.inputs.topK, 1, 20) ?? DEFAULT_TOP_K;
    }
    const response = text(chain.inputs.responsePrompt);
    if (response !== '') {
      out.systemPrompt = '';
      out.promptTemplate = withQuestion(
        templateOf(response, {}, problems, `flowData.${chain.id}.responsePrompt`),
      );
    }
  }
  if (problems.length > 0) throw validationError('This chatflow cannot run here', problems);
  return out;
}

function modelFields(node: CanvasNode, problems: Problem[]): Partial<ConvertedFields> {
  const inputs = MODEL_INPUT[node.name] ?? ['modelName', 'model'];
  const name = inputs.map((i) => text(node.inputs[i])).find((v) => v !== '');
  if (!name) problems.push({ field: `flowData.${node.id}.modelName`, message: 'names no model' });
  const fields: Partial<ConvertedFields> = { model: name ?? null };
  const temperature = numberIn(node.inputs.temperature, 0, 2);
  if (temperature === 'bad')
    problems.push({ field: `flowData.${node.id}.temperature`, message: 'must be a number from 0 to 2' });
  else fields.temperature = temperature;
  const cap = MAX_TOKENS_INPUTS.map((i) => node.inputs[i]).find((v) => v !== undefined && v !== '');
  fields.maxTokens = cap === undefined ? null : (integerIn(cap, 1, 32_768) ?? null);
  return fields;
}

function memoryOf(node: CanvasNode): ConvertedFields['memory'] {
  if (node.name === 'bufferWindowMemory')
    return { type: 'window', windowSize: integerIn(node.inputs.k, 1, BUFFER_MEMORY_TURNS) ?? DEFAULT_WINDOW };
  const size = integerIn(node.inputs.windowSize, 1, BUFFER_MEMORY_TURNS);
  if (size !== undefined) return { type: 'window', windowSize: size };
  return { type: 'window', windowSize: BUFFER_MEMORY_TURNS };
}

/** A prompt node's system prompt and template, its variables mapped through its `promptValues`. */
function promptFields(node: CanvasNode, problems: Problem[]): Partial<ConvertedFields> {
  const values = promptValues(node.inputs.promptValues);
  if (node.name === 'promptTemplate')
    return {
      systemPrompt: '',
      promptTemplate: templateOf(
        text(node.inputs.template),
        values,
        problems,
        `flowData.${node.id}.template`,
      ),
    };
  const human = text(node.inputs.humanMessagePrompt);
  const system = text(node.inputs.systemMessagePrompt);
  // The question goes where the human message puts it; the system message's variables are filled the same way.
  const template = templateOf(human || '{input}', values, problems, `flowData.${node.id}.humanMessagePrompt`);
  return {
    systemPrompt: fillSystem(system, values),
    promptTemplate: template.includes('{question}') ? template : withQuestion(template),
  };
}

function promptValues(raw: unknown): Record<string, string> {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return {};
    try {
      value = JSON.parse(raw);
    } catch {
      return {};
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
}

/** A Flowise value (`{{question}}`, `{{$vars.x}}`, literal text) as the platform's template text. */
function valueText(value: string): string {
  return value
    .replace(/\{\{\s*question\s*\}\}/g, '{question}')
    .replace(/\{\{\s*\$vars\.([A-Za-z0-9_]{1,100})\s*\}\}/g, '{vars.$1}');
}

/**
 * A Flowise template in the platform's placeholders: mapped variables filled, `{input}`/`{question}`
 * the question, a single unmapped variable the question (Flowise's rule), any other `{vars.NAME}`.
 */
function templateOf(
  source: string,
  values: Record<string, string>,
  problems: Problem[],
  field: string,
): string {
  const unmapped = new Set<string>();
  const reserved = new Set(['input', 'question', 'context', 'chat_history']);
  for (const [, name = ''] of source.matchAll(VARIABLE))
    if (!(name in values) && !reserved.has(name)) unmapped.add(name);
  const mapsQuestion =
    Object.values(values).some((v) => /\{\{\s*question\s*\}\}/.test(v)) ||
    /\{(input|question)\}/.test(source);
  const single = !mapsQuestion && unmapped.size === 1 ? [...unmapped][0] : undefined;
  if (source.length > 20_000) problems.push({ field, message: 'is longer than 20,000 characters' });
  return source.replace(VARIABLE, (_whole, name: string) => {
    if (name in values) return valueText(values[name] as string);
    if (name === 'input' || name === 'question' || name === single) return '{question}';
    if (name === 'context') return '{context}';
    if (name === 'chat_history') return '{history}';
    return `{vars.${name}}`;
  });
}

function fillSystem(source: string, values: Record<string, string>): string {
  // The system prompt is sent as written: its mapped variables are filled now, literal values only.
  return source.replace(VARIABLE, (whole, name: string) => {
    const value = values[name];
    return value !== undefined && !/\{\{/.test(value) ? value : whole;
  });
}

const withQuestion = (template: string) =>
  template.includes('{question}') ? template : `${template}\n\n{question}`;

/**
 * A document loader's text, for a chain that puts whole documents in its prompt: plain text as
 * written, a text file from its data URL. A PDF inside the canvas is not parsed at save: refused.
 */
function loaderText(node: CanvasNode, problems: Problem[]): string {
  if (node.name === 'plainText') return text(node.inputs.text);
  const file = text(node.inputs.txtFile ?? node.inputs.pdfFile);
  if (file === '') return '';
  if (node.name === 'pdfFile') {
    problems.push({
      field: `flowData.${node.id}.pdfFile`,
      message:
        'a PDF inside the canvas is not read here: load it with the vector upsert into a retrieval chain',
    });
    return '';
  }
  // Flowise keeps an uploaded file as `data:<type>;base64,<data>,filename:<name>`.
  const match = /^data:[^;,]*;base64,([A-Za-z0-9+/=]*)/.exec(file);
  return match ? Buffer.from(match[1] ?? '', 'base64').toString('utf8') : '';
}

function postgresTopic(node: CanvasNode): string {
  const table = text(node.inputs.tableName);
  return (table || 'documents').slice(0, 200);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A number input (Flowise stores numbers or numeric strings; '' is unset). */
function numberIn(value: unknown, min: number, max: number): number | null | 'bad' {
  if (value === undefined || value === null || value === '') return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) && n >= min && n <= max ? n : 'bad';
}

function integerIn(value: unknown, min: number, max: number): number | undefined {
  const n = numberIn(value, min, max);
  return typeof n === 'number' ? Math.round(n) : undefined;
}
