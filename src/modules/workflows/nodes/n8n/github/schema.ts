import { type Static, Type } from 'typebox';
import { annotated, shownWhen } from '../../../engine/display-options.js';
import { ResourceLocator } from '../sql/parameters.js';

/** n8n's GitHub resources; `search` and `workflow` are known (n8n has them) and refused at save. */
export const RESOURCES = [
  'file',
  'issue',
  'organization',
  'release',
  'repository',
  'review',
  'search',
  'user',
  'workflow',
] as const;
export type Resource = (typeof RESOURCES)[number];

/** The operations served here, by resource; the first is n8n's default for it. */
export const OPERATIONS: Record<Resource, readonly string[]> = {
  file: ['create', 'delete', 'edit', 'get', 'list'],
  issue: ['create', 'createComment', 'edit', 'get', 'lock'],
  organization: ['getRepositories'],
  release: ['create', 'delete', 'get', 'getAll', 'update'],
  repository: [
    'getIssues',
    'get',
    'getLicense',
    'getProfile',
    'getPullRequests',
    'listPopularPaths',
    'listReferrers',
  ],
  review: ['create', 'get', 'getAll', 'update'],
  search: [],
  user: ['getRepositories', 'invite'],
  workflow: [],
};

/** n8n's default operation of each resource (the served ones first in OPERATIONS). */
export const DEFAULT_OPERATION: Record<Resource, string> = {
  file: 'create',
  issue: 'create',
  organization: 'getRepositories',
  release: 'create',
  repository: 'getIssues',
  review: 'create',
  search: 'searchRepositories',
  user: 'getRepositories',
  workflow: 'dispatch',
};

const Str = (max = 1_000) => Type.String({ maxLength: max });
const Num = Type.Union([Type.Number(), Type.String({ maxLength: 30 })]);
const Person = Type.Object(
  { name: Type.Optional(Str(200)), email: Type.Optional(Str(320)) },
  { additionalProperties: false },
);
const Labels = Type.Array(Type.Object({ label: Type.Optional(Str(200)) }, { additionalProperties: false }), {
  maxItems: 100,
});
const Assignees = Type.Array(
  Type.Object({ assignee: Type.Optional(Str(200)) }, { additionalProperties: false }),
  { maxItems: 100 },
);
const Direction = Type.Enum(['asc', 'desc'] as const);

export const GithubParameters = Type.Object(
  {
    authentication: Type.Enum(['accessToken', 'oAuth2'] as const, { default: 'accessToken' }),
    resource: Type.Enum(RESOURCES, { default: 'issue' }),
    operation: Type.Optional(Str(50)),
    owner: annotated(ResourceLocator, { default: '' }),
    repository: annotated(ResourceLocator, { default: '' }),
    // file
    filePath: Type.String({ default: '', maxLength: 1_000, ...shownWhen({ resource: ['file'] }) }),
    binaryData: Type.Boolean({
      default: false,
      ...shownWhen({ resource: ['file'], operation: ['create', 'edit'] }),
    }),
    fileContent: Type.String({ default: '', ...shownWhen({ resource: ['file'], binaryData: [false] }) }),
    binaryPropertyName: Type.String({ default: 'data', maxLength: 200 }),
    commitMessage: Type.String({ default: '', maxLength: 10_000 }),
    additionalParameters: Type.Object(
      {
        author: Type.Optional(Person),
        committer: Type.Optional(Person),
        branch: Type.Optional(
          Type.Object({ branch: Type.Optional(Str(250)) }, { additionalProperties: false }),
        ),
        reference: Type.Optional(Str(250)),
      },
      { additionalProperties: false, default: {} },
    ),
    asBinaryProperty: Type.Boolean({
      default: true,
      ...shownWhen({ resource: ['file'], operation: ['get'] }),
    }),
    // issue
    title: Type.String({ default: '', maxLength: 1_000 }),
    body: Type.String({ default: '', maxLength: 65_536 }),
    labels: Type.Union([Labels, Type.Object({ label: Type.Optional(Str(200)) })], { default: [] }),
    assignees: Type.Union([Assignees, Type.Object({ assignee: Type.Optional(Str(200)) })], { default: [] }),
    issueNumber: annotated(Num, { default: 0 }),
    editFields: Type.Object(
      {
        assignees: Type.Optional(Assignees),
        body: Type.Optional(Str(65_536)),
        labels: Type.Optional(Labels),
        state: Type.Optional(Type.Enum(['closed', 'open'] as const)),
        state_reason: Type.Optional(Type.Enum(['completed', 'not_planned', 'reopened'] as const)),
        title: Type.Optional(Str(1_000)),
      },
      { additionalProperties: false, default: {} },
    ),
    lockReason: Type.Enum(['off-topic', 'too heated', 'resolved', 'spam'] as const, { default: 'resolved' }),
    // release
    releaseTag: Type.String({ default: '', maxLength: 250 }),
    release_id: annotated(Num, { default: '' }),
    additionalFields: Type.Object(
      {
        name: Type.Optional(Str(1_000)),
        body: Type.Optional(Str(125_000)),
        draft: Type.Optional(Type.Boolean()),
        prerelease: Type.Optional(Type.Boolean()),
        tag_name: Type.Optional(Str(250)),
        target_commitish: Type.Optional(Str(250)),
        commitId: Type.Optional(Str(100)),
      },
      { additionalProperties: false, default: {} },
    ),
    // lists
    returnAll: Type.Boolean({ default: false }),
    limit: Type.Number({ default: 50, minimum: 1, maximum: 100 }),
    getRepositoryIssuesFilters: Type.Object(
      {
        assignee: Type.Optional(Str(200)),
        creator: Type.Optional(Str(200)),
        mentioned: Type.Optional(Str(200)),
        labels: Type.Optional(Str(1_000)),
        since: Type.Optional(Str(50)),
        state: Type.Optional(Type.Enum(['all', 'closed', 'open'] as const)),
        sort: Type.Optional(Type.Enum(['created', 'updated', 'comments'] as const)),
        direction: Type.Optional(Direction),
      },
      { additionalProperties: false, default: {} },
    ),
    getRepositoryPullRequestsFilters: Type.Object(
      {
        state: Type.Optional(Type.Enum(['all', 'closed', 'open'] as const)),
        sort: Type.Optional(Type.Enum(['created', 'updated', 'popularity', 'long-running'] as const)),
        direction: Type.Optional(Direction),
      },
      { additionalProperties: false, default: {} },
    ),
    // review
    pullRequestNumber: annotated(Num, { default: 0 }),
    reviewId: annotated(Num, { default: '' }),
    event: Type.Enum(['approve', 'requestChanges', 'comment', 'pending'] as const, { default: 'approve' }),
    // user
    organization: Type.String({ default: '', maxLength: 200 }),
    email: Type.String({ default: '', maxLength: 320 }),
  },
  { additionalProperties: false },
);
export type GithubParams = Static<typeof GithubParameters>;
