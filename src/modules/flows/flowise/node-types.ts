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
  conversationChain: 'chain',
  llmChain: 'chain',
  conversationalRetrievalQAChain: 'chain',
  retrievalQAChain: 'chain',
  promptTemplate: 'prompt',
  chatPromptTemplate: 'prompt',
  bufferMemory: 'memory',
  bufferWindowMemory: 'memory',
  // Kept in the flow's own message store (the platform's memory), its window as Flowise's.
  RedisBackedChatMemory: 'memory',
  memoryVectorStore: 'vectorStore',
  postgres: 'vectorStore',
  faiss: 'vectorStore',
  faissUpsert: 'vectorStore',
  openAIEmbeddings: 'embeddings',
  ollamaEmbeddings: 'embeddings',
  localAIEmbeddings: 'embeddings',
  recursiveCharacterTextSplitter: 'splitter',
  characterTextSplitter: 'splitter',
  plainText: 'loader',
  textFile: 'loader',
  pdfFile: 'loader',
  stickyNote: 'note',
};

/** Input name holding the model, by chat-model type (Azure names its deployment). */
export const MODEL_INPUT: Readonly<Record<string, readonly string[]>> = {
  azureChatOpenAI: ['modelName', 'azureOpenAIApiDeploymentName'],
};

/** Input names holding the answer-length cap (Anthropic's is its own). */
export const MAX_TOKENS_INPUTS = ['maxTokens', 'maxTokensToSample', 'numPredict'] as const;
