import { NodeOperationError } from '../../../engine/node-type.js';
import type { GithubCall } from './request.js';
import { DEFAULT_OPERATION, type GithubParams } from './schema.js';

/** What one item's operation asks of GitHub, and how its answer becomes items. */
export interface Planned {
  call: GithubCall;
  /** Read every page (a list with "Return All"). */
  all: boolean;
  /** n8n's operations whose answer replaces the items; the others (issue lock) pass the input on. */
  replaces: boolean;
  /** file:get with "As Binary Property": the file goes to this binary property. */
  binaryProperty?: string;
}

export const operationOf = (p: GithubParams): string => p.operation ?? DEFAULT_OPERATION[p.resource];

/** n8n's owner and repository patterns; a locator in `url` mode is read as n8n's extractValue reads it. */
const OWNER = /^[-_a-zA-Z0-9]+$/;
const REPOSITORY = /^[-_.0-9a-zA-Z]+$/;
const OWNER_URL = /https:\/\/github\.com\/([-_0-9a-zA-Z]+)/;
const REPOSITORY_URL = /https:\/\/github\.com\/(?:[-_0-9a-zA-Z]+)\/([-_.0-9a-zA-Z]+)/;

function locator(value: unknown, url: RegExp): string {
  if (value !== null && typeof value === 'object') {
    const rl = value as { mode?: unknown; value?: unknown };
    const v = String(rl.value ?? '').trim();
    if (rl.mode === 'url') return url.exec(v)?.[1] ?? v;
    return v;
  }
  return String(value ?? '').trim();
}

/** A path segment GitHub reads as a name: never `..`, a slash or anything a URL would bend. */
function name(value: unknown, url: RegExp, pattern: RegExp, what: string): string {
  const v = locator(value, url);
  if (v === '') throw new NodeOperationError(`The parameter "${what}" is empty`);
  if (!pattern.test(v) || v === '.' || v === '..')
    throw new NodeOperationError(`'${v.slice(0, 100)}' is not a valid GitHub ${what.toLowerCase()}`);
  return v;
}

function whole(value: unknown, what: string): string {
  const v = String(value ?? '').trim();
  if (!/^\d{1,20}$/.test(v)) throw new NodeOperationError(`The ${what} '${v.slice(0, 50)}' is not a number`);
  return v;
}

/** n8n's removeTrailingSlash, then the path as one encoded segment (n8n's encodeURIComponent). */
const contentsPath = (filePath: string) => encodeURIComponent(filePath.replace(/\/+$/, ''));

/** n8n's isBase64: content that already reads as base64 is sent as it is (n8n's own rule, kept). */
const BASE64 = /^([0-9a-zA-Z+/]{4})*(([0-9a-zA-Z+/]{2}==)|([0-9a-zA-Z+/]{3}=))?$/;
export const contentOf = (text: string) => (BASE64.test(text) ? text : Buffer.from(text).toString('base64'));

function commitFields(p: GithubParams): Record<string, unknown> {
  const a = p.additionalParameters;
  return {
    ...(a.author ? { author: a.author } : {}),
    ...(a.committer ? { committer: a.committer } : {}),
    ...(a.branch?.branch ? { branch: a.branch.branch } : {}),
  };
}

const listOf = <T>(v: T[] | T | undefined): T[] => (Array.isArray(v) ? v : v ? [v] : []);
const labelsOf = (v: GithubParams['labels']) =>
  listOf(v)
    .map((l) => l.label ?? '')
    .filter((l) => l !== '');
const assigneesOf = (v: GithubParams['assignees']) =>
  listOf(v)
    .map((a) => a.assignee ?? '')
    .filter((a) => a !== '');

function page(p: GithubParams): { all: boolean; query: Record<string, number> } {
  return p.returnAll ? { all: true, query: {} } : { all: false, query: { per_page: p.limit } };
}

/**
 * The call n8n's GitHub node makes for one item. `fileBody` is the base64 content of file create/edit
 * (from the text or the binary property), `sha` the current blob of file edit/delete (looked up first).
 */
export function plan(p: GithubParams, extra: { fileBody?: string; sha?: string }): Planned {
  const op = operationOf(p);
  const owner = () => name(p.owner, OWNER_URL, OWNER, 'Repository Owner');
  const repo = () => `/repos/${owner()}/${name(p.repository, REPOSITORY_URL, REPOSITORY, 'Repository Name')}`;
  const one = (call: GithubCall): Planned => ({ call, all: false, replaces: true });
  switch (`${p.resource}:${op}`) {
    case 'file:create':
    case 'file:edit':
      return one({
        method: 'PUT',
        path: `${repo()}/contents/${contentsPath(p.filePath)}`,
        body: {
          ...commitFields(p),
          ...(extra.sha ? { sha: extra.sha } : {}),
          message: p.commitMessage,
          content: extra.fileBody ?? '',
        },
      });
    case 'file:delete':
      return one({
        method: 'DELETE',
        path: `${repo()}/contents/${contentsPath(p.filePath)}`,
        body: { ...commitFields(p), message: p.commitMessage, sha: extra.sha },
      });
    case 'file:get':
      return {
        ...one({
          method: 'GET',
          path: `${repo()}/contents/${contentsPath(p.filePath)}`,
          query: { ref: p.additionalParameters.reference },
        }),
        ...(p.asBinaryProperty ? { binaryProperty: p.binaryPropertyName || 'data' } : {}),
      };
    case 'file:list':
      return one({ method: 'GET', path: `${repo()}/contents/${contentsPath(p.filePath)}` });
    case 'issue:create':
      return one({
        method: 'POST',
        path: `${repo()}/issues`,
        body: {
          title: p.title,
          body: p.body,
          labels: labelsOf(p.labels),
          assignees: assigneesOf(p.assignees),
        },
      });
    case 'issue:createComment':
      return one({
        method: 'POST',
        path: `${repo()}/issues/${whole(p.issueNumber, 'issue number')}/comments`,
        body: { body: p.body },
      });
    case 'issue:edit': {
      const { labels, assignees, ...rest } = p.editFields;
      return one({
        method: 'PATCH',
        path: `${repo()}/issues/${whole(p.issueNumber, 'issue number')}`,
        body: {
          ...rest,
          ...(labels !== undefined ? { labels: labelsOf(labels) } : {}),
          ...(assignees !== undefined ? { assignees: assigneesOf(assignees) } : {}),
        },
      });
    }
    case 'issue:get':
      return one({ method: 'GET', path: `${repo()}/issues/${whole(p.issueNumber, 'issue number')}` });
    case 'issue:lock':
      return {
        call: {
          method: 'PUT',
          path: `${repo()}/issues/${whole(p.issueNumber, 'issue number')}/lock`,
          query: { lock_reason: p.lockReason },
        },
        all: false,
        replaces: false,
      };
    case 'release:create': {
      const { commitId: _, tag_name: __, ...fields } = p.additionalFields;
      return one({ method: 'POST', path: `${repo()}/releases`, body: { ...fields, tag_name: p.releaseTag } });
    }
    case 'release:delete':
      return one({ method: 'DELETE', path: `${repo()}/releases/${whole(p.release_id, 'release ID')}` });
    case 'release:get':
      return one({ method: 'GET', path: `${repo()}/releases/${whole(p.release_id, 'release ID')}` });
    case 'release:update': {
      const { commitId: _, ...fields } = p.additionalFields;
      return one({
        method: 'PATCH',
        path: `${repo()}/releases/${whole(p.release_id, 'release ID')}`,
        body: fields,
      });
    }
    case 'release:getAll': {
      const { all, query } = page(p);
      return { call: { method: 'GET', path: `${repo()}/releases`, query }, all, replaces: true };
    }
    case 'repository:get':
      return one({ method: 'GET', path: repo() });
    case 'repository:getLicense':
      return one({ method: 'GET', path: `${repo()}/license` });
    case 'repository:getProfile':
      return one({ method: 'GET', path: `${repo()}/community/profile` });
    case 'repository:listPopularPaths':
      return one({ method: 'GET', path: `${repo()}/traffic/popular/paths` });
    case 'repository:listReferrers':
      return one({ method: 'GET', path: `${repo()}/traffic/popular/referrers` });
    case 'repository:getIssues': {
      const { all, query } = page(p);
      return {
        call: {
          method: 'GET',
          path: `${repo()}/issues`,
          query: { ...p.getRepositoryIssuesFilters, ...query },
        },
        all,
        replaces: true,
      };
    }
    case 'repository:getPullRequests': {
      const { all, query } = page(p);
      return {
        call: {
          method: 'GET',
          path: `${repo()}/pulls`,
          query: { ...p.getRepositoryPullRequestsFilters, ...query },
        },
        all,
        replaces: true,
      };
    }
    case 'review:create': {
      const event = {
        approve: 'APPROVE',
        requestChanges: 'REQUEST_CHANGES',
        comment: 'COMMENT',
        pending: 'PENDING',
      }[p.event];
      const { commitId } = p.additionalFields;
      return one({
        method: 'POST',
        path: `${repo()}/pulls/${whole(p.pullRequestNumber, 'pull request number')}/reviews`,
        body: {
          ...(commitId ? { commitId } : {}),
          event,
          ...(event === 'REQUEST_CHANGES' || event === 'COMMENT' ? { body: p.body } : {}),
        },
      });
    }
    case 'review:get':
      return one({
        method: 'GET',
        path: `${repo()}/pulls/${whole(p.pullRequestNumber, 'pull request number')}/reviews/${whole(p.reviewId, 'review ID')}`,
      });
    case 'review:getAll': {
      const { all, query } = page(p);
      return {
        call: {
          method: 'GET',
          path: `${repo()}/pulls/${whole(p.pullRequestNumber, 'pull request number')}/reviews`,
          query,
        },
        all,
        replaces: true,
      };
    }
    case 'review:update':
      return one({
        method: 'PUT',
        path: `${repo()}/pulls/${whole(p.pullRequestNumber, 'pull request number')}/reviews/${whole(p.reviewId, 'review ID')}`,
        body: { body: p.body },
      });
    case 'user:getRepositories': {
      const { all, query } = page(p);
      return { call: { method: 'GET', path: `/users/${owner()}/repos`, query }, all, replaces: true };
    }
    case 'user:invite':
      return one({
        method: 'POST',
        path: `/orgs/${name(p.organization, OWNER_URL, OWNER, 'Organization')}/invitations`,
        body: { email: p.email },
      });
    case 'organization:getRepositories': {
      const { all, query } = page(p);
      return { call: { method: 'GET', path: `/orgs/${owner()}/repos`, query }, all, replaces: true };
    }
    default:
      throw new NodeOperationError(`The operation '${op}' of '${p.resource}' is not supported here`);
  }
}
