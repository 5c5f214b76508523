import { validationError } from '../../../core/errors.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../../core/http/json-guard.js';
import {
  type ChainStep,
  DEFAULT_TEMPLATES,
  type FlowiseLoader,
  type FlowisePlan,
  type FlowiseTool,
  type Problem,
  type SearchProvider,
} from '../definition.js';
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
/** Chains answered before the ending one (prompt chaining), and tools of one agent. */
const MAX_STEPS = 10;
const MAX_TOOLS = 20;
/** Flowise's default for an agent's iterations. */
const DEFAULT_ITERATIONS = 10;
/** Flowise's (LangChain's) calculator description. */
const CALCULATOR =
  'Useful for getting the result of a math expression. The input to this tool should be a valid mathematical expression that could be executed by a simple calculator.';
/**
 * Agents: the tool loop with the canvas's tools. LangChain's conversational and ReAct agents ask the
 * model for actions as text; here every agent uses the model's tool calls (same tools, memory, prompt).
 */
const AGENTS = new Set(['toolAgent', 'openAIToolAgent', 'conversationalAgent', 'reactAgentChat']);
/** LangChain's web-search tools: the service, and the name and description the model is offered. */
const SEARCH =
  'a search engine. useful for when you need to answer questions about current events. input should be a search query.';
const SEARCH_TOOLS: Record<
  'serpAPI' | 'serper' | 'googleCustomSearch' | 'braveSearchAPI',
  { provider: SearchProvider; name: string; description: string }
> = {
  serpAPI: { provider: 'serpapi', name: 'search', description: SEARCH },
  serper: { provider: 'serper', name: 'search', description: SEARCH },
  googleCustomSearch: {
    provider: 'google',
    name: 'google-custom-search',
    description:
      'a custom search engine. useful for when you need to answer questions about current events. input should be a search query. outputs a JSON array of results.',
  },
  braveSearchAPI: { provider: 'brave', name: 'brave-search', description: SEARCH },
};
const CSV_INSTRUCTIONS = 'Your response should be a list of comma separated values, eg: `foo, bar, baz`';

/**
 * The platform's flow a checked canvas describes: its ending chain, the chat model, prompt, memory and
 * retriever wired into it. `topicOf` names the knowledge-base topic of an in-memory vector store.
 */
export function convertCanvas(
  canvas: Canvas,
  topicOf: (node: CanvasNode) => string,
): { fields: ConvertedFields; plan: FlowisePlan } {
  const problems: Problem[] = [];
  const chain = canvas.ending;
  const plan: FlowisePlan = {};
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

  const storeTopic = (store: CanvasNode): string => {
    // Postgres names a table and Pinecone an index and namespace, shared as in Flowise; in-memory
    // and local stores are the flow's own.
    const topic =
      store.name === 'postgres'
        ? postgresTopic(store)
        : store.name === 'pinecone' || store.name === 'pineconeUpsert'
          ? pineconeTopic(store)
          : topicOf(store);
    plan.stores = { ...plan.stores, [store.id]: topic };
    const loaders = refs(store, 'document')
      // A loader listed more than once (Chat with a Podcast lists its SearchApi node three times) loads once.
      .filter((n, i, all) => WEB_LOADERS.has(n.name) && all.findIndex((m) => m.id === n.id) === i)
      .flatMap((n) => {
        const loader = webLoaderOf(n, problems, (l) => one(l, 'textSplitter', 'splitter', false));
        return loader ? [loader] : [];
      });
    if (loaders.length > 0) plan.loaders = { ...plan.loaders, [store.id]: loaders };
    return topic;
  };
  const steps = new Map<string, ChainStep>();
  // A prompt value `{{llmChain_0.data.instance}}` is that chain's answer: a step run first.
  const chainValue = (id: string): string | null => {
    const node = canvas.nodes.get(id);
    if (node?.name !== 'llmChain') return null;
    if (!steps.has(id)) {
      if (steps.size >= MAX_STEPS) {
        problems.push({
          field: `flowData.${id}`,
          message: `a chatflow chains at most ${MAX_STEPS} LLM chains`,
        });
        return null;
      }
      steps.set(id, stepOf(node));
    }
    return `{vars.${id}}`;
  };
  const promptOf = (node: CanvasNode) =>
    promptFields(node, problems, chainValue, one(node, 'examplePrompt', 'prompt', false));
  const stepOf = (node: CanvasNode): ChainStep => {
    const model = one(node, 'model', 'chatModel', true);
    const fields = model ? modelFields(model, problems) : {};
    const prompt = one(node, 'prompt', 'prompt', true);
    const promptPart = prompt ? promptOf(prompt) : {};
    return {
      id: node.id,
      model: fields.model ?? '',
      systemPrompt: promptPart.systemPrompt ?? '',
      promptTemplate: promptPart.promptTemplate ?? '{question}',
      temperature: fields.temperature ?? null,
      maxTokens: fields.maxTokens ?? null,
    };
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
  const images = modelNode?.inputs.allowImageUploads;
  if (images === true || images === 'true') plan.imageUploads = true;

  const memory = refs(chain, 'memory').find((n) => n.role === 'memory');
  if (memory) out.memory = memoryOf(memory);
  // Flowise gives this chain a Buffer Memory when none is connected.
  else if (chain.name === 'conversationalRetrievalQAChain')
    out.memory = { type: 'window', windowSize: BUFFER_MEMORY_TURNS };

  const moderation = refs(chain, 'inputModeration').filter((n) => n.role === 'moderation');
  if (moderation.length > 0) plan.moderation = moderationOf(moderation);

  if (chain.name === 'simpleChatEngine') {
    // LlamaIndex's chat engine: the model with its system message and memory.
    out.systemPrompt = text(chain.inputs.systemMessagePrompt);
  } else if (AGENTS.has(chain.name)) {
    out.systemPrompt = text(chain.inputs.systemMessage);
    const tools = refs(chain, 'tools').filter((n) => n.role === 'tool');
    if (tools.length > MAX_TOOLS)
      problems.push({
        field: `flowData.${chain.id}.tools`,
        message: `an agent has at most ${MAX_TOOLS} tools`,
      });
    const names = new Set<string>();
    const list = tools.slice(0, MAX_TOOLS).flatMap((t) => {
      const tool = toolOf(t, problems, storeTopic, (n) => stepOf(n), one);
      if (!tool) return [];
      if (names.has(tool.name))
        problems.push({ field: `flowData.${t.id}.name`, message: `two tools are named '${tool.name}'` });
      names.add(tool.name);
      return [tool];
    });
    plan.agent = {
      tools: list,
      maxIterations: integerIn(chain.inputs.maxIterations, 1, 50) ?? DEFAULT_ITERATIONS,
    };
  } else if (chain.name === 'conversationChain') {
    const prompt = one(chain, 'chatPromptTemplate', 'prompt', false);
    if (prompt) Object.assign(out, promptOf(prompt));
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
    if (prompt) Object.assign(out, promptOf(prompt));
    // Flowise's CSV output parser: its format instructions follow the prompt.
    if (refs(chain, 'outputParser').some((n) => n.name === 'csvOutputParser'))
      out.promptTemplate = `${out.promptTemplate}\n\n${CSV_INSTRUCTIONS}`;
  } else {
    // conversationalRetrievalQAChain, retrievalQAChain: retrieval over the knowledge base.
    out.kind = 'rag';
    out.promptTemplate = DEFAULT_TEMPLATES.rag;
    out.systemPrompt = text(chain.inputs.systemMessagePrompt);
    const store = one(chain, 'vectorStoreRetriever', 'vectorStore', true);
    if (store) {
      out.topics = [storeTopic(store)];
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
  // Each step was added after the chains it uses.
  if (steps.size > 0) plan.steps = [...steps.values()];
  if (problems.length > 0) throw validationError('This chatflow cannot run here', problems);
  return { fields: out, plan };
}

type One = (
  node: CanvasNode,
  input: string,
  role: CanvasNode['role'],
  required: boolean,
) => CanvasNode | undefined;

/** A tool node as the agent's tool; null (a problem noted) when it cannot run here. */
function toolOf(
  node: CanvasNode,
  problems: Problem[],
  storeTopic: (store: CanvasNode) => string,
  stepOf: (chain: CanvasNode) => ChainStep,
  one: One,
): FlowiseTool | null {
  const named = (fallback: string) => toolName(text(node.inputs.name) || fallback);
  switch (node.name) {
    case 'calculator':
      return { type: 'calculator', name: 'calculator', description: CALCULATOR };
    case 'serpAPI':
    case 'serper':
    case 'googleCustomSearch':
    case 'braveSearchAPI':
      return { type: 'search', ...SEARCH_TOOLS[node.name] };
    case 'retrieverTool': {
      const store = one(node, 'retriever', 'vectorStore', true);
      if (!store) return null;
      return {
        type: 'retriever',
        name: named('retriever'),
        description: text(node.inputs.description) || 'Searches the documents of the flow.',
        topic: storeTopic(store),
        topK: integerIn(store.inputs.topK, 1, 20) ?? DEFAULT_TOP_K,
      };
    }
    case 'chainTool': {
      const chain = one(node, 'baseChain', 'chain', true);
      if (!chain) return null;
      if (chain.name !== 'llmChain') {
        problems.push({
          field: `flowData.${node.id}.baseChain`,
          message: 'a chain tool runs an LLM chain here',
        });
        return null;
      }
      return {
        type: 'chain',
        name: toolName(text(node.inputs.name) || 'chain'),
        description: text(node.inputs.description) || 'Runs a chain on its input.',
        step: stepOf(chain),
      };
    }
    default: {
      // customTool: Flowise's inline name, description, schema and function (a stored tool by id is
      // not kept here).
      const code = text(node.inputs.customToolFunc);
      if (code === '') {
        problems.push({
          field: `flowData.${node.id}.customToolFunc`,
          message:
            'a custom tool runs its customToolFunc here (a stored tool picked by selectedTool is not kept)',
        });
        return null;
      }
      if (code.length > 100_000)
        problems.push({
          field: `flowData.${node.id}.customToolFunc`,
          message: 'is longer than 100,000 characters',
        });
      return {
        type: 'custom',
        name: toolName(text(node.inputs.customToolName) || 'custom_tool'),
        description: text(node.inputs.customToolDesc) || 'A custom tool.',
        parameters: schemaOf(node.inputs.customToolSchema, problems, `flowData.${node.id}.customToolSchema`),
        code,
      };
    }
  }
}

/** A function name a model accepts: `[A-Za-z0-9_-]{1,64}`. */
function toolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
}

/** Flowise's tool schema (`[{property, type, description, required}]`) as a JSON schema. */
function schemaOf(raw: unknown, problems: Problem[], field: string): Record<string, unknown> {
  let list: unknown = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') list = [];
    else
      try {
        list = JSON.parse(raw);
      } catch {
        problems.push({ field, message: 'is not JSON' });
        list = [];
      }
  }
  if (!Array.isArray(list)) list = [];
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const entry of (list as unknown[]).slice(0, 50)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const name = text(e.property);
    if (!/^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/.test(name)) {
      problems.push({ field, message: `property '${name.slice(0, 64)}' is not a variable name` });
      continue;
    }
    const type = ['number', 'boolean', 'string'].includes(text(e.type)) ? text(e.type) : 'string';
    properties[name] = { type, description: text(e.description) };
    if (e.required === true) required.push(name);
  }
  return { type: 'object', properties, required };
}

/** Simple Prompt Moderation: its deny list, line by line, and the message it answers with. */
function moderationOf(nodes: CanvasNode[]): NonNullable<FlowisePlan['moderation']> {
  const denyList = nodes
    .flatMap((n) => text(n.inputs.denyList).split('\n'))
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .slice(0, 500);
  const message =
    nodes.map((n) => text(n.inputs.moderationErrorMessage)).find((m) => m !== '') ??
    'Cannot Process! Input violates content moderation policies.';
  return { denyList, message };
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
function promptFields(
  node: CanvasNode,
  problems: Problem[],
  chainValue: (id: string) => string | null,
  examplePrompt: CanvasNode | undefined,
): Partial<ConvertedFields> {
  const values = promptValues(node.inputs.promptValues);
  for (const [name, value] of Object.entries(values)) {
    const id = REF.exec(value)?.[1];
    const step = id ? chainValue(id) : null;
    if (step) values[name] = step;
  }
  if (node.name === 'fewShotPromptTemplate')
    return fewShotFields(node, text(examplePrompt?.inputs.template), problems);
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

/**
 * A few-shot prompt: the prefix, each example through the example prompt, the suffix, joined by the
 * separator (`\\n` written in the canvas is a line break, as Flowise reads it).
 */
function fewShotFields(node: CanvasNode, example: string, problems: Problem[]): Partial<ConvertedFields> {
  const lineBreaks = (s: string) => s.replace(/\\n/g, '\n');
  const field = `flowData.${node.id}`;
  let examples: unknown = node.inputs.examples;
  if (typeof examples === 'string')
    try {
      examples = JSON.parse(examples);
    } catch {
      problems.push({ field: `${field}.examples`, message: 'is not JSON' });
      examples = [];
    }
  if (!Array.isArray(examples)) examples = [];
  const exampleTemplate = lineBreaks(example);
  const shown = (examples as unknown[]).slice(0, 200).map((example) => {
    const values =
      typeof example === 'object' && example !== null ? (example as Record<string, unknown>) : {};
    return exampleTemplate.replace(VARIABLE, (whole, name: string) =>
      name in values ? String(values[name]) : whole,
    );
  });
  const separator = lineBreaks(text(node.inputs.exampleSeparator) || '\n\n');
  const source = [lineBreaks(text(node.inputs.prefix)), ...shown, lineBreaks(text(node.inputs.suffix))]
    .filter((p) => p !== '')
    .join(separator);
  return {
    systemPrompt: '',
    promptTemplate: withQuestion(templateOf(source, {}, problems, `${field}.suffix`)),
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
  if (WEB_LOADERS.has(node.name)) {
    problems.push({
      field: `flowData.${node.id}`,
      message: `a ${node.name} is not read at save: connect it to a vector store and run the vector upsert`,
    });
    return '';
  }
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

/** Loaders that fetch their documents when the vector upsert runs (flowise/web-loaders.ts). */
const WEB_LOADERS = new Set(['cheerioWebScraper', 'apiLoader', 'github', 'searchApi']);
const RELATIVE_LINKS = ['', 'webCrawl', 'scrapeXMLSitemap'] as const;

/** A JSON input of the canvas (an object, or its JSON text; '' is unset); a problem when it does not parse. */
function jsonInput(value: unknown, problems: Problem[], field: string): unknown {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value) as unknown;
  } catch {
    problems.push({ field, message: 'is not JSON' });
    return undefined;
  }
  // The input is kept in the flow's definition: nesting past the limit would overflow its save.
  if (nestedDeeperThan(parsed)) {
    problems.push({ field, message: `is nested deeper than ${MAX_JSON_DEPTH} levels` });
    return undefined;
  }
  return parsed;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A Cheerio Web Scraper or API Loader as the loader the vector upsert runs; its URL is checked again
 * at upsert (overrideConfig may change it), and every request goes through the outbound guard.
 */
function webLoaderOf(
  node: CanvasNode,
  problems: Problem[],
  splitterOf: (loader: CanvasNode) => CanvasNode | undefined,
): FlowiseLoader | null {
  const field = `flowData.${node.id}`;
  const url = text(node.inputs.url).trim();
  if (url !== '' && !/^https?:\/\//i.test(url))
    problems.push({ field: `${field}.url`, message: 'must be an http(s) URL' });
  const metadata = jsonInput(node.inputs.metadata, problems, `${field}.metadata`) ?? {};
  if (!isObject(metadata)) problems.push({ field: `${field}.metadata`, message: 'must be a JSON object' });
  const splitter = splitterOf(node);
  const chunkSize = splitter ? integerIn(splitter.inputs.chunkSize, 50, 20_000) : undefined;
  const common = {
    id: node.id,
    metadata: isObject(metadata) ? metadata : {},
    ...(chunkSize !== undefined ? { chunkSize } : {}),
  };
  if (node.name === 'cheerioWebScraper') {
    const method = text(node.inputs.relativeLinksMethod);
    if (!(RELATIVE_LINKS as readonly string[]).includes(method))
      problems.push({
        field: `${field}.relativeLinksMethod`,
        message: 'must be webCrawl, scrapeXMLSitemap or empty',
      });
    const limit = node.inputs.limit;
    const pages = limit === undefined || limit === '' ? 10 : integerIn(limit, 0, 1_000_000);
    if (pages === undefined)
      problems.push({ field: `${field}.limit`, message: 'must be a whole number, 0 or more' });
    return {
      ...common,
      type: 'web',
      url,
      relativeLinksMethod: (RELATIVE_LINKS as readonly string[]).includes(method)
        ? (method as (typeof RELATIVE_LINKS)[number])
        : '',
      limit: pages ?? 10,
      selector: text(node.inputs.selector).slice(0, 1_000),
    };
  }
  if (node.name === 'searchApi') {
    const parameters = jsonInput(node.inputs.customParameters, problems, `${field}.customParameters`) ?? {};
    if (!isObject(parameters))
      problems.push({ field: `${field}.customParameters`, message: 'must be a JSON object' });
    return {
      ...common,
      ...(node.credential !== '' ? { credential: node.credential } : {}),
      type: 'searchapi',
      query: text(node.inputs.query).slice(0, 4_000),
      customParameters: isObject(parameters) ? parameters : {},
    };
  }
  if (node.name === 'github') {
    const ignored = jsonInput(node.inputs.ignorePath, problems, `${field}.ignorePath`) ?? [];
    if (!Array.isArray(ignored) || !ignored.every((p) => typeof p === 'string'))
      problems.push({ field: `${field}.ignorePath`, message: 'must be a JSON array of paths' });
    const api = text(node.inputs.githubInstanceApi).trim();
    if (api !== '' && !/^https?:\/\//i.test(api))
      problems.push({ field: `${field}.githubInstanceApi`, message: 'must be an http(s) URL' });
    return {
      ...common,
      ...(node.credential !== '' ? { credential: node.credential } : {}),
      type: 'github',
      repoLink: text(node.inputs.repoLink).trim(),
      branch: text(node.inputs.branch).trim() || 'main',
      recursive: node.inputs.recursive === true || node.inputs.recursive === 'true',
      githubInstanceApi: api.replace(/\/+$/, '') || 'https://api.github.com',
      ignorePath: Array.isArray(ignored) ? (ignored as unknown[]).filter((p) => typeof p === 'string') : [],
    };
  }
  const method = text(node.inputs.method).toUpperCase() || 'GET';
  if (method !== 'GET' && method !== 'POST')
    problems.push({ field: `${field}.method`, message: 'must be GET or POST' });
  const headers = jsonInput(node.inputs.headers, problems, `${field}.headers`) ?? {};
  if (!isObject(headers)) problems.push({ field: `${field}.headers`, message: 'must be a JSON object' });
  return {
    ...common,
    type: 'api',
    method: method === 'POST' ? 'POST' : 'GET',
    url,
    headers: isObject(headers)
      ? Object.fromEntries(
          Object.entries(headers).map(([k, v]) => [k, typeof v === 'string' ? v : String(v)]),
        )
      : {},
    body: jsonInput(node.inputs.body, problems, `${field}.body`),
  };
}

function pineconeTopic(node: CanvasNode): string {
  const name = `pinecone:${text(node.inputs.pineconeIndex) || 'index'}/${text(node.inputs.pineconeNamespace)}`;
  return name.replace(/[^A-Za-z0-9._:/@+-]/g, '_').slice(0, 100);
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
