import { existsSync } from 'node:fs';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';

/** A web-search service's base address: http(s), no query string (a key belongs in a variable, not here). */
const SEARCH_BASE_URL = '^https?://[^\\s?#]+$';

/** Every setting of the platform, parsed once at boot. Nothing else reads process.env. */
const ConfigSchema = Type.Object({
  NODE_ENV: Type.String({ default: 'development' }),
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  PUBLIC_URL: Type.String({ default: '' }),
  DATA_DIR: Type.String({ default: './data' }),
  DATABASE_URL: Type.String({ default: '' }),
  /**
   * How long a request waits for the database (a free pooled connection, or the server back after a
   * restart) before it is answered 503 with Retry-After. Bounds every answer during an outage.
   */
  DATABASE_WAIT_MS: Type.Integer({ default: 5_000, minimum: 100, maximum: 60_000 }),
  /** PostgreSQL statement_timeout of the platform's sessions (0: none); a slower statement is a 503. */
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 0 }),
  /** The Retry-After (seconds) of a 503 for a dependency that is down (database, disk). */
  UNAVAILABLE_RETRY_AFTER_SECONDS: Type.Integer({ default: 2, minimum: 1, maximum: 3_600 }),
  REDIS_URL: Type.String({ default: '' }),
  /** Prefix of every Redis counter key and pub/sub channel, so several platforms can share one Redis. */
  REDIS_PREFIX: Type.String({ default: 'platform:', pattern: '^[A-Za-z0-9_.:-]{1,60}$' }),
  /** Longest a Redis command may take; past it Redis counts as unreachable (docs/operations.md, Faults). */
  REDIS_COMMAND_TIMEOUT_MS: Type.Integer({ default: 2_000, minimum: 100, maximum: 60_000 }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    default: 'info',
  }),
  /**
   * Proxies whose X-Forwarded-For is believed: `false`, a hop count, or a comma list of proxy
   * addresses/CIDRs (`true` means 1 hop). Parsed by `trustProxyOption` (core/http/ip-rules.ts).
   */
  TRUST_PROXY: Type.String({ default: 'false', maxLength: 2000 }),
  BODY_LIMIT_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024 }),
  /** Time a client has to send its request headers; slow clients are cut off (slow loris). */
  HTTP_HEADERS_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100 }),
  /** Time a client has to send the whole request, body included (the handler's time not counted). */
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100 }),
  /** A socket with no traffic either way for this long is closed; above the longest response wait. */
  HTTP_CONNECTION_TIMEOUT_MS: Type.Integer({ default: 120_000, minimum: 1_000 }),
  /** How long an idle keep-alive connection stays open between requests (above a proxy's idle timeout). */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 72_000, minimum: 100 }),
  PLATFORM_SERVICES: Type.String({ default: 'all' }),
  PLATFORM_BOOTSTRAP_KEY: Type.String({ default: '' }),
  PLATFORM_OWNER_EMAIL: Type.String({ default: 'owner@localhost' }),
  ENCRYPTION_KEY: Type.String({ default: '' }),
  QUOTA_DAILY_DEVELOPMENT: Type.Integer({ default: 5_000, minimum: 1 }),
  QUOTA_DAILY_PRODUCTION: Type.Integer({ default: 50_000, minimum: 1 }),
  KEY_CACHE_TTL_SECONDS: Type.Integer({ default: 30, minimum: 0, maximum: 3600 }),
  KEY_CACHE_MAX: Type.Integer({ default: 10_000, minimum: 1 }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ default: 60, minimum: 1 }),
  RATE_LIMIT_PER_IP: Type.Integer({ default: 6_000, minimum: 0 }),
  RATE_LIMIT_PER_ENDPOINT: Type.Integer({ default: 1_200, minimum: 0 }),
  AUTH_FAILURES_PER_IP: Type.Integer({ default: 60, minimum: 0 }),
  // Portal sign-in (browser sessions).
  /** A session ends this long after sign-in, however active. */
  SESSION_TTL_HOURS: Type.Integer({ default: 168, minimum: 1, maximum: 8_760 }),
  /** A session unused for this long ends. */
  SESSION_IDLE_MINUTES: Type.Integer({ default: 720, minimum: 1, maximum: 525_600 }),
  /**
   * Failed sign-ins of one email from one client address within LOGIN_WINDOW_SECONDS before that
   * client waits (1 s, doubling, up to the window); five times as many from all clients make every
   * client wait at most LOGIN_EMAIL_MAX_DELAY_SECONDS (0: no limit). Nobody can lock a member out.
   */
  LOGIN_ATTEMPTS_PER_WINDOW: Type.Integer({ default: 10, minimum: 0 }),
  LOGIN_EMAIL_MAX_DELAY_SECONDS: Type.Integer({ default: 30, minimum: 1, maximum: 3_600 }),
  /** Failed sign-ins per client address within LOGIN_WINDOW_SECONDS before 429 (0: no limit). */
  LOGIN_ATTEMPTS_PER_IP: Type.Integer({ default: 50, minimum: 0 }),
  LOGIN_WINDOW_SECONDS: Type.Integer({ default: 900, minimum: 1, maximum: 86_400 }),
  CUSTOMER_TOKEN_DEFAULT_TTL_SECONDS: Type.Integer({ default: 3_600, minimum: 60 }),
  CUSTOMER_TOKEN_MAX_TTL_SECONDS: Type.Integer({ default: 86_400, minimum: 60 }),
  USAGE_FLUSH_SECONDS: Type.Integer({ default: 5, minimum: 1 }),
  /** Days a request-log row is kept (GET /v1/request-logs); 0 keeps no request log. */
  REQUEST_LOG_RETENTION_DAYS: Type.Integer({ default: 30, minimum: 0, maximum: 3_650 }),
  SHUTDOWN_GRACE_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  // Game-platform integration (operator settings, trusted by the outbound guard).
  GAME_API_URL: Type.String({ default: 'https://www.bungie.net/Platform' }),
  GAME_API_KEY: Type.String({ default: '' }),
  GAME_OAUTH_CLIENT_ID: Type.String({ default: '' }),
  GAME_OAUTH_CLIENT_SECRET: Type.String({ default: '' }),
  GAME_OAUTH_AUTHORIZE_URL: Type.String({ default: 'https://www.bungie.net/en/OAuth/Authorize' }),
  GAME_OAUTH_TOKEN_URL: Type.String({ default: 'https://www.bungie.net/Platform/App/OAuth/Token/' }),
  GAME_OAUTH_REDIRECT_URL: Type.String({ default: '' }),
  GAME_RATE_PER_SECOND: Type.Integer({ default: 25, minimum: 1 }),
  GAME_QUEUE_MAX: Type.Integer({ default: 500, minimum: 0 }),
  GAME_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100 }),
  // Workflow automation.
  EXECUTIONS_MAX_AGE_DAYS: Type.Integer({ default: 14, minimum: 1 }),
  EXECUTIONS_MAX_COUNT: Type.Integer({ default: 100_000, minimum: 1 }),
  EXECUTIONS_PRUNE_INTERVAL_SECONDS: Type.Integer({ default: 3_600, minimum: 1 }),
  WORKFLOW_CONCURRENCY: Type.Integer({ default: 10, minimum: 1 }),
  /**
   * Executions of one account running at once per worker process (with Redis counted in Redis: this
   * times the live workers, across all of them). Below WORKFLOW_CONCURRENCY, so one account's
   * runaway work leaves slots to the others.
   */
  WORKFLOW_ACCOUNT_CONCURRENCY: Type.Integer({ default: 4, minimum: 1, maximum: 10_000 }),
  /** Executions one account may start per UTC day, every mode counted (0: no quota). */
  WORKFLOW_DAILY_EXECUTIONS: Type.Integer({ default: 50_000, minimum: 0 }),
  /** Per-account quotas that replace the default: `acct_1=50000,acct_2=100` (0: none). */
  WORKFLOW_DAILY_EXECUTIONS_BY_ACCOUNT: Type.String({ default: '', maxLength: 100_000 }),
  /** Run queued executions in this process (`serve --no-worker` turns it off). */
  WORKFLOW_WORKER: Type.Boolean({ default: true }),
  /**
   * Webhook answers carry n8n's sandbox Content-Security-Policy, so a page a workflow serves cannot act
   * on the platform's origin as its viewer. Turn off only where one trusted account owns the instance.
   */
  WORKFLOW_WEBHOOK_SANDBOX: Type.Boolean({ default: true }),
  WORKFLOWS_DIR: Type.String({ default: './workflows' }),
  /**
   * Folder Read/Write Files from Disk is confined to, one subfolder per account (n8n's
   * N8N_RESTRICT_FILE_ACCESS_TO); empty: the node is off.
   */
  WORKFLOW_FILES_DIR: Type.String({ default: '' }),
  /** Execute Command runs shell commands on this server: off unless set (dangerous; n8n 2 excludes it too). */
  WORKFLOW_EXECUTE_COMMAND_ENABLED: Type.Boolean({ default: false }),
  /** Longest one Execute Command run may take before its process group is killed. */
  EXECUTE_COMMAND_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100, maximum: 3_600_000 }),
  /** Most bytes of stdout (and of stderr) one Execute Command run keeps; past it the process is killed. */
  EXECUTE_COMMAND_MAX_OUTPUT_BYTES: Type.Integer({
    default: 1_048_576,
    minimum: 1_024,
    maximum: 104_857_600,
  }),
  /**
   * Most bytes one AWS S3 node download may bring into an item (binary data lives in memory and in the
   * saved execution): refused from S3's Content-Length before the body is read, else as it arrives.
   */
  S3_MAX_DOWNLOAD_BYTES: Type.Integer({ default: 52_428_800, minimum: 1_024, maximum: 1_073_741_824 }),
  /** The SSH node (commands and files on other machines): off unless set (dangerous). */
  WORKFLOW_SSH_ENABLED: Type.Boolean({ default: false }),
  /** CPU time for one node's expressions on one item, in the sandbox (wall clock on its worker thread). */
  EXPRESSION_TIMEOUT_MS: Type.Integer({ default: 1_000, minimum: 1, maximum: 60_000 }),
  /** CPU time for one Code node run (all its items), in the same sandbox. */
  CODE_NODE_TIMEOUT_MS: Type.Integer({ default: 5_000, minimum: 1, maximum: 300_000 }),
  /**
   * Python in the Code node (Pyodide in confined child processes, docs/security.md). On by default again
   * since each interpreter's memory is bounded at the process (docs/decisions.md, issue 30); false
   * refuses Python Code nodes at save and at run.
   */
  WORKFLOW_PYTHON_ENABLED: Type.Boolean({ default: true }),
  /**
   * Python interpreters (Pyodide, CPython on WebAssembly) for the Code node's Python, each in a child
   * process under Node's permission model, started on first use (seconds each); each serves one account.
   */
  PYTHON_WORKERS: Type.Integer({ default: 2, minimum: 1, maximum: 32 }),
  /** Python runs one account may have waiting for an interpreter; more are refused ("try again"). */
  PYTHON_QUEUE_PER_ACCOUNT: Type.Integer({ default: 20, minimum: 1, maximum: 1_000 }),
  /**
   * Memory cap of one Python interpreter (its WebAssembly memory); past it Python raises MemoryError. On
   * Linux its process is killed past this + 192 MiB resident (and runs under RLIMIT_DATA of this + 320 MiB).
   */
  PYTHON_MEMORY_MB: Type.Integer({ default: 256, minimum: 64, maximum: 2_048 }),
  /** Heap of one expression sandbox (QuickJS), JSONata included. */
  EXPRESSION_MEMORY_MB: Type.Integer({ default: 64, minimum: 16, maximum: 1_024 }),
  /** Worker threads evaluating expressions; each runs one evaluation at a time. */
  EXPRESSION_WORKERS: Type.Integer({ default: 2, minimum: 1, maximum: 64 }),
  /**
   * Most expression workers one account's calls may hold at once, so its runaway Code nodes leave the
   * rest to other accounts; 0: all but one (at least one).
   */
  EXPRESSION_WORKERS_PER_ACCOUNT: Type.Integer({ default: 0, minimum: 0, maximum: 64 }),
  /**
   * A user's regular expression that only JavaScript's backtracking engine can run (backreferences,
   * lookaround) is stopped after this long on its worker thread; the node fails naming the condition.
   */
  REGEX_TIMEOUT_MS: Type.Integer({ default: 500, minimum: 10, maximum: 60_000 }),
  /** Worker threads for such regular expressions (and for linear-time matches too large for the event loop). */
  REGEX_WORKERS: Type.Integer({ default: 2, minimum: 1, maximum: 64 }),
  /** Longest regular expression a node parameter may hold, in characters. */
  REGEX_MAX_LENGTH: Type.Integer({ default: 10_000, minimum: 1, maximum: 1_000_000 }),
  /** Comma-separated environment variable names expressions may read as $env. */
  EXPRESSION_ENV_ALLOWLIST: Type.String({ default: '' }),
  /** IANA zone of expression dates ($now, DateTime, toDateTime()) in a workflow without `settings.timezone` (n8n's name). */
  GENERIC_TIMEZONE: Type.String({ default: 'UTC', minLength: 1, maxLength: 100 }),
  /**
   * n8n's source control: the git remote (https://, or file:// with SOURCE_CONTROL_ALLOW_FILE) the
   * accounts' workflows are pulled from and pushed to, one folder per account; empty: off.
   */
  SOURCE_CONTROL_REPO_URL: Type.String({ default: '', maxLength: 2_000 }),
  SOURCE_CONTROL_BRANCH: Type.String({ default: 'main', pattern: '^[A-Za-z0-9._/-]{1,100}$' }),
  /** file:// remotes (a repository on this machine): off unless set. */
  SOURCE_CONTROL_ALLOW_FILE: Type.Boolean({ default: false }),
  /** Longest one git command (fetch, push) may take before it is killed. */
  SOURCE_CONTROL_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 1_000, maximum: 600_000 }),
  /** Comma-separated host names (or host:port) outbound HTTP may reach even if private. */
  OUTBOUND_ALLOW_HOSTS: Type.String({ default: '' }),
  OUTBOUND_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100 }),
  /** Base URLs of the web-search services a Flowise chatflow's search tools call (outbound rules apply). */
  FLOWISE_SERPAPI_URL: Type.String({
    default: 'https://serpapi.com',
    maxLength: 2_000,
    pattern: SEARCH_BASE_URL,
  }),
  FLOWISE_SERPER_URL: Type.String({
    default: 'https://google.serper.dev',
    maxLength: 2_000,
    pattern: SEARCH_BASE_URL,
  }),
  FLOWISE_GOOGLE_SEARCH_URL: Type.String({
    default: 'https://www.googleapis.com',
    maxLength: 2_000,
    pattern: SEARCH_BASE_URL,
  }),
  FLOWISE_BRAVE_SEARCH_URL: Type.String({
    default: 'https://api.search.brave.com',
    maxLength: 2_000,
    pattern: SEARCH_BASE_URL,
  }),
  /** Base URL of SearchApi.io, which a chatflow's SearchApi loader calls (`/api/v1/search`; outbound rules apply). */
  FLOWISE_SEARCHAPI_URL: Type.String({
    default: 'https://www.searchapi.io',
    maxLength: 2_000,
    pattern: SEARCH_BASE_URL,
  }),
  /** Longest one web search of a chatflow's agent may take. */
  FLOWISE_SEARCH_TIMEOUT_MS: Type.Integer({ default: 15_000, minimum: 100, maximum: 120_000 }),
  WEBHOOK_BODY_LIMIT_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024 }),
  /**
   * Largest JSON or form body a webhook parses into items, whatever the node's `bodyLimitBytes` (up to
   * 100 MB, for bytes kept whole): a parsed body is objects the server's thread handles at every step.
   */
  WEBHOOK_JSON_LIMIT_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024, maximum: 104_857_600 }),
  /**
   * Largest multipart submission of a form with a file field (Form Trigger and n8n Form pages), files
   * included; read within it, refused past it with 413 (n8n's N8N_FORMDATA_FILE_SIZE_MAX, per file).
   */
  FORM_UPLOAD_MAX_BYTES: Type.Integer({ default: 16_777_216, minimum: 1024, maximum: 104_857_600 }),
  WEBHOOK_DEDUPE_HOURS: Type.Integer({ default: 24, minimum: 1 }),
  /** How long a webhook in lastNode/responseNode mode waits for its execution before 504. */
  WEBHOOK_RESPONSE_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 100 }),
  /**
   * While the queue (Redis) is unreachable, how long a webhook caller waits for an execution that has
   * not started before 503: the execution is then canceled, so a retry runs it once.
   */
  WEBHOOK_QUEUE_OUTAGE_MS: Type.Integer({ default: 8_000, minimum: 100, maximum: 600_000 }),
  /**
   * How often a worker looks at every active workflow for listening triggers (Email Trigger (IMAP),
   * RSS Feed Trigger) to start, stop or restart; its own activations act at once.
   */
  TRIGGER_LISTENER_SYNC_SECONDS: Type.Integer({ default: 30, minimum: 1, maximum: 3_600 }),
  /** Schedule Trigger rules one account's active workflows may hold. */
  WORKFLOW_MAX_SCHEDULES: Type.Integer({ default: 100, minimum: 1, maximum: 100_000 }),
  /** Most node runs one execution may take (a loop that never ends fails there). */
  WORKFLOW_MAX_NODE_RUNS: Type.Integer({ default: 10_000, minimum: 10, maximum: 10_000_000 }),
  /** How deep Execute Workflow calls may nest. */
  WORKFLOW_MAX_CALL_DEPTH: Type.Integer({ default: 10, minimum: 1, maximum: 100 }),
  /** How long `POST /api/v1/workflows/{id}/listen` keeps the test webhooks (n8n: 120 s). */
  TEST_WEBHOOK_SECONDS: Type.Integer({ default: 120, minimum: 1, maximum: 3600 }),
  /** How long `POST /api/v1/workflows/{id}/run` waits for the run to end before answering 202. */
  MANUAL_RUN_WAIT_MS: Type.Integer({ default: 30_000, minimum: 0, maximum: 600_000 }),
  /** Longest a `wait` node may pause (refused at save and at run beyond it). */
  WORKFLOW_MAX_WAIT_SECONDS: Type.Integer({ default: 2_592_000, minimum: 1 }),
  /**
   * How long a running workflow's decrypted credential stays in this process's memory (0: read and
   * decrypt on every execution). A change made by another process takes effect within it.
   */
  CREDENTIAL_CACHE_SECONDS: Type.Integer({ default: 5, minimum: 0, maximum: 300 }),
  /** How far an HMAC webhook's signed `X-Store-Timestamp` may be from now. */
  WEBHOOK_HMAC_TOLERANCE_SECONDS: Type.Integer({ default: 300, minimum: 1 }),
  /** Prefix of the job queue's Redis keys (BullMQ), so several platforms can share one Redis. */
  QUEUE_PREFIX: Type.String({ default: 'platform', pattern: '^[A-Za-z0-9_.-]{1,60}$' }),
  /** With Redis: how long a job's lock lasts unrenewed, so how soon a dead worker's job moves on (BullMQ's 30 s). */
  QUEUE_STALL_SECONDS: Type.Integer({ default: 30, minimum: 2, maximum: 600 }),
  // Downstreams of the named workflows (default: this server, where the module exists).
  WORKSPACE_API_URL: Type.String({ default: 'https://api.notion.com/v1' }),
  DOCS_API_URL: Type.String({ default: '' }),
  LLM_URL: Type.String({ default: '' }),
  FLOW_URL: Type.String({ default: '' }),
  DOCPROC_URL: Type.String({ default: '' }),
  ORDERS_URL: Type.String({ default: '' }),
  USERS_URL: Type.String({ default: '' }),
  // Language-model gateway.
  /** JSON or YAML file of models (see models.example.yaml); the built-in models are always there. */
  MODELS_FILE: Type.String({ default: '' }),
  /** JSON array of model entries that add to or replace MODELS_FILE's, by name. */
  LLM_MODELS: Type.String({ default: '' }),
  /** Base URL of models on the `ollama` provider that name none. */
  OLLAMA_URL: Type.String({ default: 'http://127.0.0.1:11434' }),
  /** Base URL and key of models on the `openai` provider that name none. */
  OPENAI_BASE_URL: Type.String({ default: 'https://api.openai.com/v1' }),
  OPENAI_API_KEY: Type.String({ default: '' }),
  /** Time to the first byte of a model's answer, and the longest silence inside a stream. */
  LLM_TIMEOUT_MS: Type.Integer({ default: 120_000, minimum: 100, maximum: 3_600_000 }),
  /** Largest request body on the model routes (images travel inline as base64). */
  LLM_BODY_LIMIT_BYTES: Type.Integer({ default: 20_971_520, minimum: 1024 }),
  /** Exact-match cache of `stream:false`, temperature-0 answers; 0 turns it off. */
  LLM_CACHE_TTL_SECONDS: Type.Integer({ default: 0, minimum: 0, maximum: 604_800 }),
  LLM_CACHE_MAX_ENTRIES: Type.Integer({ default: 1_000, minimum: 1, maximum: 1_000_000 }),
  /** What one account's `/v1/files` may hold (uploads and batch results), in bytes; 0: no bound. */
  LLM_FILES_MAX_BYTES_PER_ACCOUNT: Type.Integer({ default: 1_073_741_824, minimum: 0 }),
  /** What one account's Ollama blobs (`POST /api/blobs/:digest`) may hold, in bytes. */
  LLM_BLOBS_MAX_BYTES_PER_ACCOUNT: Type.Integer({ default: 268_435_456, minimum: 0 }),
  /**
   * Registries a pulled Ollama name may name (`host[:port]/namespace/model`), comma-separated: Ollama
   * connects there, and follows their redirects, from inside the operator's network.
   */
  OLLAMA_PULL_REGISTRIES: Type.String({ default: 'registry.ollama.ai,hf.co,huggingface.co' }),
  /** How many files one account's `/v1/files` may hold; 0: no bound. */
  LLM_FILES_MAX_PER_ACCOUNT: Type.Integer({ default: 1_000, minimum: 0 }),
  // Operations.
  /** Serves Prometheus metrics at GET /metrics (off by default). */
  METRICS_ENABLED: Type.Boolean({ default: false }),
  /**
   * 0: /metrics on the main port, for keys with the `core:admin` scope. Another port: a separate
   * listener on METRICS_HOST with no key (bind it to a private address).
   */
  METRICS_PORT: Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
  METRICS_HOST: Type.String({ default: '127.0.0.1' }),
  // Agent API.
  /** Long-lived streams (agent WebSockets, SSE/NDJSON answers) one key (or customer) may hold open. */
  STREAMS_PER_KEY: Type.Integer({ default: 100, minimum: 1 }),
  /** Long-lived streams per process; 0: the open-file limit less STREAMS_RESERVED_SOCKETS (≤ 10,000). */
  STREAMS_PER_PROCESS: Type.Integer({ default: 0, minimum: 0 }),
  /** File descriptors kept free of streams, so /health and ordinary requests always get a socket. */
  STREAMS_RESERVED_SOCKETS: Type.Integer({ default: 512, minimum: 16 }),
  /** Largest client message on the agents' WebSocket (larger: close 1009). */
  AGENT_WS_MAX_MESSAGE_BYTES: Type.Integer({ default: 65_536, minimum: 1_024, maximum: 16_777_216 }),
  /** A WebSocket that sends nothing for this long is closed. */
  AGENT_WS_IDLE_TIMEOUT_MS: Type.Integer({ default: 300_000, minimum: 1_000 }),
  /** Turns one WebSocket may have under way at once. */
  AGENT_WS_MAX_IN_FLIGHT: Type.Integer({ default: 4, minimum: 1, maximum: 100 }),
  /** Bytes queued for a slow WebSocket reader before the server closes it (1008). */
  AGENT_WS_MAX_BUFFERED_BYTES: Type.Integer({ default: 1_048_576, minimum: 16_384 }),
  /** Background agent runs (`background: true`) one worker process runs at once. */
  AGENT_RUN_CONCURRENCY: Type.Integer({ default: 4, minimum: 1, maximum: 1_000 }),
  /**
   * How long a tool call waits for approval when its agent sets no time (`approvalTimeoutSeconds`,
   * `approvalTimeouts`): then it is rejected and the run continues in the background.
   */
  AGENT_APPROVAL_TIMEOUT_SECONDS: Type.Integer({ default: 86_400, minimum: 1, maximum: 2_592_000 }),
  /** How often a worker looks for approvals past their time. */
  AGENT_APPROVAL_SWEEP_MS: Type.Integer({ default: 5_000, minimum: 100, maximum: 3_600_000 }),
  /** Conversation messages an agent sees besides the new one. */
  AGENT_HISTORY_MESSAGES: Type.Integer({ default: 20, minimum: 0, maximum: 200 }),
  // MCP (docs/decisions.md, MCP both ways): the server at /mcp and agents' MCP server tools.
  /** Largest JSON-RPC body the MCP server accepts. */
  MCP_BODY_LIMIT_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024 }),
  /** A tools/call on the MCP server still running after this long answers a timed-out tool error. */
  MCP_TOOL_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 100 }),
  /** tools/call requests one account may have under way on one process; more: 429. */
  MCP_CALLS_PER_ACCOUNT: Type.Integer({ default: 8, minimum: 1, maximum: 1_000 }),
  /** A tool result's text as the MCP server answers it, at most this long (longer: cut, and said). */
  MCP_MAX_RESULT_CHARS: Type.Integer({ default: 100_000, minimum: 1_000 }),
  /** Each exchange of an agent with an MCP server (tools/list at save, tools/call in a turn). */
  MCP_CLIENT_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100 }),
  /** Largest answer an agent accepts from an MCP server. */
  MCP_CLIENT_MAX_RESPONSE_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024 }),
  // CPU work whose size a caller controls (documents, built-in models): worker threads (docs/security.md).
  /** Worker threads of the CPU pool; 0: one fewer than the machine's cores, 1 to 4. */
  CPU_WORKERS: Type.Integer({ default: 0, minimum: 0, maximum: 64 }),
  /** Heap limit of each CPU worker; a call that needs more fails alone (its worker is replaced). */
  CPU_WORKER_HEAP_MB: Type.Integer({ default: 512, minimum: 64, maximum: 16_384 }),
  /** A CPU call still running after this long is stopped (its worker terminated). */
  CPU_TASK_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 100, maximum: 3_600_000 }),
  /** Calls waiting for a CPU worker beyond this are refused (503). */
  CPU_MAX_QUEUE: Type.Integer({ default: 1_000, minimum: 1, maximum: 1_000_000 }),
  // Documents and knowledge base.
  /** Largest document a load accepts (fetched, or sent inline; base64 PDFs count decoded). */
  DOCUMENT_MAX_BYTES: Type.Integer({ default: 20_971_520, minimum: 1024 }),
  /** Time bound of reading one PDF or HTML page (each in a worker thread), and PDFs' page bound. */
  PDF_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100 }),
  PDF_MAX_PAGES: Type.Integer({ default: 2_000, minimum: 1 }),
  /** Chunking and embedding when a process request names none. */
  DOCUMENT_CHUNK_SIZE: Type.Integer({ default: 2_000, minimum: 50, maximum: 20_000 }),
  DOCUMENT_CHUNK_OVERLAP: Type.Integer({ default: 150, minimum: 0, maximum: 10_000 }),
  KNOWLEDGE_EMBEDDING_MODEL: Type.String({ default: 'builtin/hashed-ngrams' }),
  /** The hybrid search's vector weight (keyword 1) when a query gives none. */
  KNOWLEDGE_VECTOR_WEIGHT: Type.Number({ default: 0.1, minimum: 0, maximum: 100 }),
  /** Language the keyword index stems words in (`none`: as written); per topic: `topic=language,…`. */
  KNOWLEDGE_LANGUAGE: Type.String({ default: 'english' }),
  KNOWLEDGE_TOPIC_LANGUAGES: Type.String({ default: '' }),
  /** Memory the in-process vector and keyword indexes may hold (topics used least recently are dropped past it). */
  KNOWLEDGE_VECTOR_CACHE_MB: Type.Integer({ default: 512, minimum: 1, maximum: 1_048_576 }),
  /** The share of that memory (%) one account may hold once it is full: its own topics go first past it. */
  KNOWLEDGE_VECTOR_CACHE_ACCOUNT_PERCENT: Type.Integer({ default: 50, minimum: 1, maximum: 100 }),
  /** Topics (most recently changed first) loaded into that memory in the background at start; 0: none. */
  KNOWLEDGE_WARM_TOPICS: Type.Integer({ default: 20, minimum: 0, maximum: 10_000 }),
  /** Disk the topics' snapshots (DATA_DIR/knowledge-cache) may take; the least recently used go past it. 0: none kept. */
  KNOWLEDGE_SNAPSHOT_MAX_MB: Type.Integer({ default: 1_024, minimum: 0, maximum: 1_048_576 }),
  /** How long `POST /api/documents/{id}/process?wait=true` holds the request before answering 202. */
  DOCUMENT_PROCESS_WAIT_MS: Type.Integer({ default: 110_000, minimum: 100, maximum: 3_600_000 }),
  /** Documents processed at once per process. */
  DOCUMENT_CONCURRENCY: Type.Integer({ default: 2, minimum: 1, maximum: 64 }),
  // Commerce.
  ASSET_BASE_URL: Type.String({ default: '' }),
  CURRENCY: Type.String({ default: 'USD', pattern: '^[A-Z]{3}$' }),
  /** How long a prepared checkout holds its inventory reservation. */
  CHECKOUT_TTL_SECONDS: Type.Integer({ default: 900, minimum: 30, maximum: 86_400 }),
  /** At most this many units of one variant in one customer's cart (and so in their reservation). */
  CART_MAX_RESERVED_PER_VARIANT: Type.Integer({ default: 10, minimum: 1, maximum: 999 }),
  /** How many times a reservation may be renewed back to back before it must lapse for one TTL. */
  CHECKOUT_MAX_RENEWALS: Type.Integer({ default: 4, minimum: 0, maximum: 100 }),
  /** Gift wrapping, per wrapped unit, in the currency's major unit. */
  GIFT_WRAP_FEE: Type.Number({ default: 4.99, minimum: 0, maximum: 1000 }),
  /** Sales tax rate used until an address is known (0.08 = 8 %). */
  TAX_DEFAULT_RATE: Type.Number({ default: 0.08, minimum: 0, maximum: 1 }),
});

export type Config = Static<typeof ConfigSchema> & {
  /** The variables EXPRESSION_ENV_ALLOWLIST names, with their values: what expressions see as $env. */
  EXPRESSION_ENV: Record<string, string>;
  /**
   * The environment these settings were read from, for the models file's `apiKeyEnv` entries: the
   * llm module loads MODELS_FILE and LLM_MODELS (modules/llm/model-file.ts), not this file.
   */
  MODELS_ENV: Readonly<Record<string, string | undefined>>;
  /** WORKFLOW_DAILY_EXECUTIONS_BY_ACCOUNT, parsed: account id → daily executions (0: none). */
  WORKFLOW_DAILY_EXECUTION_OVERRIDES: Record<string, number>;
};

export const ALL_SERVICES = [
  'core',
  'workflow',
  'llm',
  'flow',
  'docproc',
  'commerce',
  'game',
  'agent',
] as const;
export type ServiceId = (typeof ALL_SERVICES)[number];

export class ConfigError extends Error {}

/** Parses settings from an environment-like record; tests pass their own record. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const withDefaults = Value.Default(ConfigSchema, raw);
  const converted = Value.Convert(ConfigSchema, withDefaults);
  if (!Value.Check(ConfigSchema, converted)) {
    const problems = [...Value.Errors(ConfigSchema, converted)].map(
      (e) => `${e.instancePath.replace(/^\//, '') || '(root)'}: ${e.message}`,
    );
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const config = converted as Config;
  config.EXPRESSION_ENV = {};
  for (const name of config.EXPRESSION_ENV_ALLOWLIST.split(',').map((n) => n.trim())) {
    const value = name ? env[name] : undefined;
    if (value !== undefined) config.EXPRESSION_ENV[name] = value;
  }
  config.WORKFLOW_DAILY_EXECUTION_OVERRIDES = accountQuotas(config.WORKFLOW_DAILY_EXECUTIONS_BY_ACCOUNT);
  if (!config.PUBLIC_URL) config.PUBLIC_URL = `http://localhost:${config.PORT}`;
  config.MODELS_ENV = env;
  return config;
}

/** `acct_1=50000, acct_2=0` → `{acct_1: 50000, acct_2: 0}`; anything else is a configuration error. */
function accountQuotas(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    if (!part) continue;
    const match = /^([A-Za-z0-9_-]{1,100})\s*=\s*(\d{1,12})$/.exec(part);
    if (!match)
      throw new ConfigError(
        `Invalid configuration:\n  WORKFLOW_DAILY_EXECUTIONS_BY_ACCOUNT: '${part}' is not account_id=count`,
      );
    out[match[1] as string] = Number(match[2]);
  }
  return out;
}

/** Reads `.env` (if present) into process.env, then parses. Only the CLI entry calls this. */
export function loadConfig(): Config {
  if (existsSync('.env')) process.loadEnvFile('.env');
  return parseConfig(process.env);
}

export function enabledServices(config: Config): ReadonlySet<ServiceId> {
  if (config.PLATFORM_SERVICES.trim() === 'all') return new Set(ALL_SERVICES);
  const wanted = config.PLATFORM_SERVICES.split(',').map((s) => s.trim());
  const unknown = wanted.filter((s) => !(ALL_SERVICES as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new ConfigError(`PLATFORM_SERVICES names unknown services: ${unknown.join(', ')}`);
  return new Set(wanted as ServiceId[]);
}
