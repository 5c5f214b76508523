/**
 * The Flowise node types a `flowData` chatflow may hold here, by what each is to the platform's flow.
 * Each is an adapter onto the platform's one set of AI components (the gateway's chat models, the
 * knowledge base's retriever and embedder, the flow's window memory); a type not listed is refused at save.
 */
export type NodeRole =
  | 'chatModel'
  | 'chain'
  | 'prompt'
  | 'memory'
  | 'vectorStore'
  | 'embeddings'
  | 'splitter'
  | 'loader'
  /** A tool a Tool Agent may call (calculator, custom tool, retriever tool, chain tool, web search). */
  | 'tool'
  /** Input moderation in front of a chain (its deny list). */
  | 'moderation'
  /** An output parser of an LLM chain (its format instructions join the prompt). */
  | 'parser'
  /** Canvas notes: kept, never run. */
  | 'note';

export const NODE_TYPES: Readonly<Record<string, NodeRole>> = {
  chatOpenAI: 'chatModel',
  chatOpenAICustom: 'chatModel',
  azureChatOpenAI: 'chatModel',
  chatOllama: 'chatModel',
  chatAnthropic: 'chatModel',
  chatLocalAI: 'chatModel',
  openAI: 'chatModel',
  // By registry name, as every chat model here: the gateway decides where it runs.
  chatMistralAI: 'chatModel',
  chatOpenAI_LlamaIndex: 'chatModel',
  azureChatOpenAI_LlamaIndex: 'chatModel',
  huggingFaceInference_LLMs: 'chatModel',
  replicate: 'chatModel',
  conversationChain: 'chain',
  llmChain: 'chain',
  conversationalRetrievalQAChain: 'chain',
  retrievalQAChain: 'chain',
  simpleChatEngine: 'chain',
  // Agents: the llm module's tool loop (runToolLoop) with the tools connected.
  toolAgent: 'chain',
  openAIToolAgent: 'chain',
  // LangChain's text-protocol agents, on the same loop (the model's tool calls, not parsed text).
  conversationalAgent: 'chain',
  reactAgentChat: 'chain',
  calculator: 'tool',
  customTool: 'tool',
  retrieverTool: 'tool',
  chainTool: 'tool',
  // Web search, each in its service's wire format (flowise/web-search.ts).
  serpAPI: 'tool',
  serper: 'tool',
  googleCustomSearch: 'tool',
  braveSearchAPI: 'tool',
  inputModerationSimple: 'moderation',
  csvOutputParser: 'parser',
  fewShotPromptTemplate: 'prompt',
  promptTemplate: 'prompt',
  chatPromptTemplate: 'prompt',
  bufferMemory: 'memory',
  bufferWindowMemory: 'memory',
  // Kept in the flow's own message store (the platform's memory), its window as Flowise's.
  RedisBackedChatMemory: 'memory',
  memoryVectorStore: 'vectorStore',
  postgres: 'vectorStore',
  // A Pinecone index and namespace are a knowledge-base topic here (filled by the vector upsert).
  pinecone: 'vectorStore',
  // Flowise's older upserting Pinecone node: the same topic.
  pineconeUpsert: 'vectorStore',
  faiss: 'vectorStore',
  faissUpsert: 'vectorStore',
  openAIEmbeddings: 'embeddings',
  ollamaEmbeddings: 'embeddings',
  localAIEmbeddings: 'embeddings',
  recursiveCharacterTextSplitter: 'splitter',
  characterTextSplitter: 'splitter',
  // The knowledge base writes HTML as Markdown and chunks it; the chunk size is the splitter's.
  htmlToMarkdownTextSplitter: 'splitter',
  markdownTextSplitter: 'splitter',
  plainText: 'loader',
  textFile: 'loader',
  pdfFile: 'loader',
  // Run by the vector upsert: the pages or the API's answer, fetched under the outbound rule.
  cheerioWebScraper: 'loader',
  apiLoader: 'loader',
  github: 'loader',
  // SearchApi.io's results (YouTube transcripts, Google…), with the account's SEARCHAPI_API_KEY variable.
  searchApi: 'loader',
  // Flowise's Document Store loader: the flow's topic is filled by the upsert or the document-store API.
  documentStore: 'loader',
  stickyNote: 'note',
};

/** Input name holding the model, by chat-model type (Azure names its deployment). */
export const MODEL_INPUT: Readonly<Record<string, readonly string[]>> = {
  azureChatOpenAI: ['modelName', 'azureOpenAIApiDeploymentName'],
};

/** Input names holding the answer-length cap (Anthropic's is its own). */
export const MAX_TOKENS_INPUTS = ['maxTokens', 'maxTokensToSample', 'numPredict', 'maxOutputTokens'] as const;
