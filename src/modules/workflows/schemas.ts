import { type Static, Type } from 'typebox';
import { type ListSpec, MAX_OFFSET } from '../../core/http/list-query.js';
import { listQueryOf, Nullable, Timestamp } from '../../core/http/schemas.js';
import { OAUTH2_CREDENTIAL_TYPES, OAUTH2_OPTIONAL_FIELDS } from './credentials/oauth2/types.js';
import { AI_CONNECTION_TYPES } from './engine/types.js';

const Anything = Type.Unknown();
const JsonObject = Type.Record(Type.String(), Anything);

/** Bounded, so finite: a number JSON cannot hold (1e400 is Infinity) is refused, never stored as null. */
const Coordinate = Type.Number({ minimum: -1e9, maximum: 1e9 });

/** n8n's `onError` settings (INode.onError); `continueOnFail: true` is the old spelling of the second. */
const ON_ERROR = ['stopWorkflow', 'continueRegularOutput', 'continueErrorOutput'] as const;
const OnError = Type.Union(ON_ERROR.map((v) => Type.Literal(v)));

/** A credential by id or name, or n8n's export shape `{ id, name }` (id null when exported without one). */
const CredentialRefSchema = Type.Union([
  Type.String({ minLength: 1, maxLength: 200 }),
  Type.Object(
    {
      id: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
      name: Type.String({ minLength: 1, maxLength: 200 }),
    },
    { additionalProperties: false },
  ),
]);

/**
 * n8n's node settings besides its parameters (INode): stored and returned as given. The engine honours
 * onError, retryOnFail, maxTries, waitBetweenTries, alwaysOutputData and executeOnce; the ranges follow
 * n8n's editor (at most 5 tries, at most 5000 ms between them).
 */
const nodeSettings = {
  continueOnFail: Type.Optional(Type.Boolean({ description: "n8n's older spelling of onError" })),
  onError: Type.Optional(OnError),
  retryOnFail: Type.Optional(Type.Boolean()),
  maxTries: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
  waitBetweenTries: Type.Optional(Type.Integer({ minimum: 0, maximum: 5_000, description: 'milliseconds' })),
  alwaysOutputData: Type.Optional(Type.Boolean()),
  executeOnce: Type.Optional(Type.Boolean()),
  disabled: Type.Optional(Type.Boolean()),
  notes: Type.Optional(Type.String({ maxLength: 10_000 })),
  notesInFlow: Type.Optional(Type.Boolean()),
  webhookId: Type.Optional(Type.String({ maxLength: 100 })),
  color: Type.Optional(Type.String({ maxLength: 32, description: "the editor's node colour" })),
};

/** A node as n8n exports it; a field n8n's nodes do not have is refused, never dropped. */
const NodeSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    type: Type.String({ minLength: 1, maxLength: 100 }),
    typeVersion: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000 })),
    position: Type.Optional(Type.Tuple([Coordinate, Coordinate])),
    parameters: Type.Optional(JsonObject),
    credentials: Type.Optional(Type.Record(Type.String(), CredentialRefSchema)),
    ...nodeSettings,
  },
  { additionalProperties: false },
);

const ConnectionTarget = Type.Object({
  node: Type.String({ minLength: 1 }),
  type: Type.Union([Type.Literal('main'), ...AI_CONNECTION_TYPES.map((t) => Type.Literal(t))]),
  index: Type.Integer({ minimum: 0 }),
});
const Outputs = Type.Array(Nullable(Type.Array(ConnectionTarget)));
/** `main`, or for a sub-node (n8n's AI nodes) the connection type it supplies its root by. */
const ConnectionsSchema = Type.Record(
  Type.String(),
  Type.Object(
    {
      main: Type.Optional(Outputs),
      ...Object.fromEntries(AI_CONNECTION_TYPES.map((t) => [t, Type.Optional(Outputs)])),
    },
    { additionalProperties: false },
  ),
);

/** n8n's tag as it exports it; only the name is kept (the id is derived from it, see tagsOf). */
const TagInput = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 100 })),
    name: Type.String({ minLength: 1, maxLength: 24 }),
    createdAt: Type.Optional(Type.String()),
    updatedAt: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const ignored = (description: string) => ({ description: `Accepted and ignored: ${description}` });

/**
 * Create or replace, in n8n's shape (its public API's workflowCreate and its exports). Fields n8n
 * marks read-only (id, active, createdAt, …) are accepted and ignored as n8n does; any other field
 * is refused.
 */
export const WorkflowBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    nodes: Type.Array(NodeSchema, { maxItems: 500 }),
    connections: ConnectionsSchema,
    settings: Type.Optional(JsonObject),
    pinData: Type.Optional(
      Nullable(
        Type.Record(Type.String(), Type.Array(Anything), {
          description: "Pinned sample data by node name (kept; n8n's production runs ignore it too)",
        }),
      ),
    ),
    staticData: Type.Optional(Nullable(Type.Union([Type.String(), JsonObject]))),
    meta: Type.Optional(Nullable(JsonObject)),
    tags: Type.Optional(Type.Array(TagInput, { maxItems: 50 })),
    versionId: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 100,
          description: "Kept if given, else a new UUID on every save (n8n's file exports carry null)",
        }),
      ),
    ),
    id: Type.Optional(Type.String(ignored('the server gives the id (the CLI import keeps it)'))),
    active: Type.Optional(Type.Boolean(ignored('use the activate and deactivate actions'))),
    createdAt: Type.Optional(Type.String(ignored('read-only'))),
    updatedAt: Type.Optional(Type.String(ignored('read-only'))),
    isArchived: Type.Optional(Type.Boolean(ignored('read-only'))),
    triggerCount: Type.Optional(Type.Integer(ignored('read-only'))),
    shared: Type.Optional(Type.Array(Anything, ignored("projects are not kept; the key's account owns it"))),
    activeVersion: Type.Optional(Type.Unknown(ignored('read-only'))),
  },
  { additionalProperties: false },
);
export type WorkflowBodyT = Static<typeof WorkflowBody>;

const NodeView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  typeVersion: Type.Optional(Type.Number()),
  position: Type.Tuple([Type.Number(), Type.Number()]),
  parameters: JsonObject,
  credentials: Type.Optional(Type.Record(Type.String(), CredentialRefSchema)),
  ...nodeSettings,
});

const TagView = Type.Object({ id: Type.String(), name: Type.String() });

/** A workflow in n8n's shape (its public API's workflow object); list entries are the same. */
export const WorkflowView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  isArchived: Type.Boolean({
    description:
      'Archived (POST /api/v1/workflows/{id}/archive): inactive, not changed or run until unarchived',
  }),
  versionId: Type.String({ description: 'Changes on every save (kept as given by an import)' }),
  triggerCount: Type.Integer({ description: 'Webhook triggers registered (0 while inactive)' }),
  nodes: Type.Array(NodeView),
  connections: Anything,
  settings: JsonObject,
  staticData: Nullable(Type.Union([Type.String(), JsonObject])),
  pinData: Nullable(JsonObject),
  meta: Nullable(JsonObject),
  tags: Type.Array(TagView),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const WorkflowListEntry = WorkflowView;

/** n8n's workflow version list item (its workflow history). */
export const WorkflowVersionListItem = Type.Object({
  versionId: Type.String({
    description: "n8n's versionId (the version number, as text, for versions saved before it was recorded)",
  }),
  workflowId: Type.String(),
  authors: Type.String({ description: 'Who saved it: key:<id>, member:<id> or account' }),
  name: Nullable(Type.String()),
  description: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** n8n's workflow version: a saved shape of the workflow. */
export const WorkflowVersionView = Type.Object({
  ...WorkflowVersionListItem.properties,
  nodes: Type.Array(NodeView),
  connections: Anything,
});

export const WorkflowHistoryQuery = Type.Object(
  {
    take: Type.Optional(Type.String({ description: 'How many (10, max 250)' })),
    skip: Type.Optional(Type.String({ description: 'How many to skip (0)' })),
  },
  { additionalProperties: false },
);

export const WorkflowVersionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  versionId: Type.String({ minLength: 1, maxLength: 200 }),
});

/** Fields a list may project (`fields=`): every field of the view. */
const WORKFLOW_FIELDS = Object.keys(WorkflowView.properties) as Array<keyof typeof WorkflowView.properties>;

/** Activate and deactivate answer with the workflow, as n8n's do (id, name, active, updatedAt among it). */
export const ActivationView = WorkflowView;

export const DeletedView = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });

/** The list rules of `GET /api/v1/workflows`: the service enforces them, the document shows them. */
export const WORKFLOW_LIST_SPEC: ListSpec = {
  columns: { active: 'active', name: 'name', createdAt: 'created_at', updatedAt: 'updated_at' },
  sortable: ['id', 'name', 'createdAt', 'updatedAt'],
  filters: { active: 'boolean', name: 'string' },
  projectable: WORKFLOW_FIELDS,
  defaultSort: 'id',
  defaultOrder: 'asc',
  defaultLimit: 100,
  maxLimit: 250,
};

export const WorkflowListQuery = listQueryOf(
  WORKFLOW_LIST_SPEC,
  Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1 })),
      offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET })),
      sort: Type.Optional(Type.String()),
      order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
      fields: Type.Optional(Type.String()),
      cursor: Type.Optional(Type.String()),
      active: Type.Optional(Type.String({ description: 'true or false' })),
      name: Type.Optional(Type.String()),
    },
    { additionalProperties: Type.String() },
  ),
);

const EXECUTION_STATUSES = ['new', 'running', 'success', 'error', 'waiting', 'canceled'] as const;

export const ExecutionEntry = Type.Object({
  id: Type.String(),
  workflowId: Type.String(),
  finished: Type.Boolean(),
  mode: Type.String(),
  status: Type.String({ description: EXECUTION_STATUSES.join(' | ') }),
  startedAt: Timestamp,
  stoppedAt: Nullable(Timestamp),
  retryOf: Nullable(Type.String()),
  waitTill: Nullable(Timestamp),
});

export const CREDENTIAL_TYPES = {
  httpHeaderAuth: ['name', 'value'],
  httpBasicAuth: ['user', 'password'],
  httpQueryAuth: ['name', 'value'],
  httpBearerAuth: ['token'],
  // n8n's Multiple Headers Auth: `headers` is `{values: [{name, value}]}` (stored as its JSON text).
  httpMultipleHeadersAuth: ['headers'],
  // n8n's Custom Auth: `json` is a JSON object of `headers`, `qs` and `body` merged into each request.
  httpCustomAuth: ['json'],
  hmacSecret: ['secret'],
  // n8n's JWT credential; which key field it needs depends on keyType (credential-service.ts).
  jwtAuth: [],
  // n8n's TOTP credential: `label` (issuer:username) and a base32 `secret`.
  totpApi: ['label', 'secret'],
  // n8n's Crypto credential (Crypto v2): hmacSecret for hmac, signPrivateKey for sign; either may be absent.
  crypto: [],
  // n8n's SSH credentials (SSH node); `port` is optional (22).
  sshPassword: ['host', 'username', 'password'],
  sshPrivateKey: ['host', 'username', 'privateKey'],
  // n8n's SMTP credential (Send Email): host required; port, secure, disableStartTls, hostName, user, password optional.
  smtp: ['host'],
  // n8n's IMAP credential (Email Trigger): port, secure and allowUnauthorizedCerts optional.
  imap: ['user', 'password', 'host'],
  // n8n's database and Redis credentials (the node's connection; the test action connects with them).
  postgres: ['host', 'database', 'user'],
  mySql: ['host', 'database', 'user'],
  redis: ['host'],
  // n8n's FTP and SFTP credentials (FTP node; port 21 / 22 unless set) and AWS (S3 node).
  ftp: ['host'],
  sftp: ['host', 'username'],
  aws: ['accessKeyId', 'secretAccessKey'],
  // n8n's AI model credentials (chat models, embeddings): `url` may name this platform's gateway.
  openAiApi: ['apiKey'],
  anthropicApi: ['apiKey'],
  ollamaApi: ['baseUrl'],
  azureOpenAiApi: ['apiKey'],
  mistralCloudApi: ['apiKey'],
  groqApi: ['apiKey'],
  googlePalmApi: ['apiKey'],
  openRouterApi: ['apiKey'],
  // n8n's Pinecone credential (the Pinecone Vector Store): its API key.
  pineconeApi: ['apiKey'],
  // n8n's n8n API credential (the n8n node): a key of this platform and its /api/v1 URL.
  n8nApi: ['apiKey', 'baseUrl'],
  // Flowise's credentials of its loaders (a chatflow canvas names one by id or name): SearchApi's key, and
  // GitHub's token (n8n's githubApi has the same `accessToken`, with `server` and `user`).
  searchApi: ['searchApiKey'],
  githubApi: ['accessToken'],
  // n8n's service credentials the HTTP Request node authenticates with (http-request/predefined/), by
  // n8n's field names: required what the authentication reads (or n8n requires), the rest optional.
  // Qdrant's URL is `qdrantUrl` in n8n's credential as its vector store reads it, `apiUrl` in another
  // version of the class: either is taken, one is required (credentials/service.ts).
  qdrantApi: [],
  notionApi: ['apiKey'],
  airtableTokenApi: ['accessToken'],
  wordpressApi: ['username', 'password'],
  slackApi: ['accessToken'],
  todoistApi: ['apiKey'],
  hubspotAppToken: ['appToken'],
  whatsAppApi: ['accessToken'],
  virusTotalApi: ['accessToken'],
  cloudflareApi: ['apiToken'],
  stripeApi: ['secretKey'],
  clockifyApi: ['apiKey'],
  serpApi: ['apiKey'],
  qualysApi: ['username', 'password'],
  erpNextApi: ['apiKey', 'apiSecret'],
  shopifyAccessTokenApi: ['shopSubdomain', 'accessToken', 'appSecretKey'],
  pipedriveApi: ['apiToken'],
  nocoDbApiToken: ['apiToken', 'host'],
  zendeskApi: ['email', 'apiToken'],
  lemlistApi: ['apiKey'],
  discordBotApi: ['botToken'],
  wooCommerceApi: ['consumerKey', 'consumerSecret'],
  dropcontactApi: ['apiKey'],
  calApi: ['apiKey'],
  huggingFaceApi: ['apiKey'],
  supabaseApi: ['serviceRole'],
  mailerLiteApi: ['apiKey'],
  facebookGraphApi: ['accessToken'],
  // n8n's Google service account (Google Sheets): its email and PEM private key; a delegated user optional.
  googleApi: ['email', 'privateKey'],
  // n8n's OAuth2 credentials (generic oAuth2Api and the service types): credentials/oauth2/types.ts.
  ...OAUTH2_CREDENTIAL_TYPES,
  // n8n's Telegram credential (Telegram node and trigger): the bot's token; `baseUrl` another Bot API server.
  telegramApi: ['accessToken'],
} as const;
export type CredentialType = keyof typeof CREDENTIAL_TYPES;

/** Fields a type may have besides its required ones. */
export const OPTIONAL_CREDENTIAL_FIELDS: Partial<Record<CredentialType, readonly string[]>> = {
  ...OAUTH2_OPTIONAL_FIELDS,
  jwtAuth: ['keyType', 'secret', 'privateKey', 'publicKey', 'algorithm'],
  crypto: ['hmacSecret', 'signPrivateKey'],
  sshPassword: ['port'],
  sshPrivateKey: ['port', 'passphrase'],
  smtp: ['user', 'password', 'port', 'secure', 'disableStartTls', 'hostName'],
  imap: ['port', 'secure', 'allowUnauthorizedCerts'],
  postgres: ['password', 'port', 'ssl', 'allowUnauthorizedCerts', 'maxConnections', 'sshTunnel'],
  mySql: [
    'password',
    'port',
    'connectTimeout',
    'ssl',
    'caCertificate',
    'clientCertificate',
    'clientPrivateKey',
    'sshTunnel',
  ],
  redis: ['password', 'user', 'port', 'database', 'ssl', 'disableTlsVerification'],
  ftp: ['port', 'username', 'password'],
  sftp: ['port', 'password', 'privateKey', 'passphrase'],
  openAiApi: ['url', 'organizationId', 'header', 'headerName', 'headerValue'],
  anthropicApi: ['url', 'header', 'headerName', 'headerValue'],
  ollamaApi: ['apiKey'],
  // Classic (resourceName and apiVersion, or endpoint) or Foundry (endpointType 'foundry', foundryEndpoint).
  azureOpenAiApi: [
    'resourceName',
    'apiVersion',
    'endpoint',
    'approvedModels',
    'endpointType',
    'foundryEndpoint',
  ],
  // `url`: a proxy or a compatible server instead of the provider's own API (n8n's openRouterApi has it).
  mistralCloudApi: ['url'],
  groqApi: ['url'],
  googlePalmApi: ['host'],
  openRouterApi: ['url'],
  // Pinecone's serverless API needs only the key; `environment` is the pod-based API's (n8n's earlier credential).
  pineconeApi: ['environment'],
  githubApi: ['server', 'user'],
  qdrantApi: ['qdrantUrl', 'apiUrl', 'apiKey'],
  wordpressApi: ['url', 'allowUnauthorizedCerts'],
  slackApi: ['signatureSecret'],
  whatsAppApi: ['businessAccountId'],
  stripeApi: ['signatureSecret'],
  qualysApi: ['requestedWith'],
  erpNextApi: ['environment', 'subdomain', 'domain', 'allowUnauthorizedCerts'],
  zendeskApi: ['subdomain'],
  discordBotApi: ['applicationId', 'publicKey'],
  wooCommerceApi: ['url', 'includeCredentialsInQuery'],
  calApi: ['host'],
  supabaseApi: ['host'],
  mailerLiteApi: ['classicApi'],
  googleApi: ['delegatedEmail', 'inpersonate', 'region', 'httpNode', 'scopes'],
  telegramApi: ['baseUrl'],
  aws: [
    'region',
    'temporaryCredentials',
    'sessionToken',
    'customEndpoints',
    's3Endpoint',
    'rekognitionEndpoint',
    'lambdaEndpoint',
    'snsEndpoint',
    'sesEndpoint',
    'sqsEndpoint',
    'ssmEndpoint',
  ],
};

/** The algorithms of n8n's JWT credential (jsonwebtoken's). */
export const JWT_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
] as const;

export const CredentialBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9 ._:/-]+$' }),
  type: Type.Enum(Object.keys(CREDENTIAL_TYPES) as CredentialType[]),
  // n8n's API sends numbers and booleans for ports, databases and switches: kept as their text. An object
  // is the value of a structured field (httpMultipleHeadersAuth `headers`, httpCustomAuth `json`): its JSON.
  data: Type.Record(
    Type.String(),
    Type.Union([
      Type.String({ maxLength: 10_000 }),
      Type.Number(),
      Type.Boolean(),
      Type.Object({}, { additionalProperties: true }),
    ]),
    { maxProperties: 20 },
  ),
});
export type CredentialBodyT = Static<typeof CredentialBody>;

export const CredentialView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  owner: Type.String({
    description:
      'Who created it and may share it: key:<id>, member:<id>, or account (the operator; credentials made before owners)',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** `POST /api/v1/workflows/{id}/run`: n8n's manual run. */
export const ManualRunBodySchema = Type.Object(
  {
    startNode: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: "The node to start from (default: the workflow's trigger); it gets `items` as input",
      }),
    ),
    items: Type.Optional(
      Type.Array(JsonObject, {
        maxItems: 1000,
        description:
          "The start node's input: `{json: {...}}` items or plain objects (default: one empty item)",
      }),
    ),
    pinData: Type.Optional(
      Nullable(
        Type.Record(Type.String({ maxLength: 128 }), Type.Array(JsonObject, { maxItems: 1000 }), {
          description:
            "Output per node name that replaces running it (default: the workflow's own pinData; null: none)",
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

/** `POST /api/v1/workflows/{id}/listen`: where the test webhooks answer, and until when. */
export const TestListenView = Type.Object({
  id: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
  webhooks: Type.Array(
    Type.Object({
      method: Type.String(),
      path: Type.String({ description: '/webhook-test/{path}' }),
    }),
  ),
});
