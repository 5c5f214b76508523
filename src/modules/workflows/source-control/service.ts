import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Principal } from '../../../core/auth/principal.js';
import { AppError } from '../../../core/errors.js';
import { type AddressGuard, OutboundBlockedError } from '../../../core/http/outbound.js';
import { definitionFromBody } from '../definitions/definitions.js';
import type { WorkflowService } from '../definitions/service.js';
import type { WorkflowBodyT } from '../schemas.js';
import { GitError, type GitOptions, git, redactUrl } from './git.js';

export interface SourceControlConfig {
  /** The remote (https, or file:// when `allowFile`); empty: source control is off. */
  repoUrl: string;
  branch: string;
  timeoutMs: number;
  allowFile: boolean;
}

/** n8n's source-controlled file, as its pull and push answer them. */
export interface SourceControlledFile {
  file: string;
  id: string;
  name: string;
  type: 'workflow';
  status: 'created' | 'modified';
  location: 'local' | 'remote';
  conflict: false;
  updatedAt: string;
  pushed?: boolean;
}

/** Ids that are safe file names (a workflow id never leaves its account's folder). */
const SAFE_ID = /^[A-Za-z0-9_-]{1,100}$/;
/** Bounds on what a pull reads: a remote is not trusted to be small. */
const MAX_FILES = 1_000;
const MAX_FILE_BYTES = 5 * 1024 * 1024;

/** What a workflow file holds: the export without its local state (active, versionId). */
function fileBody(exported: Record<string, unknown>): Record<string, unknown> {
  const { active: _active, versionId: _versionId, ...rest } = exported;
  return rest;
}

/**
 * What is compared to tell whether a file changes the stored workflow: both read as a save would
 * (node types resolved, defaults filled in). Node ids take part only when the file gives them (a
 * save without them makes new ones); tags by name.
 */
function comparable(body: Record<string, unknown>, withNodeIds: boolean): string {
  const def = definitionFromBody('compared', body as WorkflowBodyT);
  const nodes = def.nodes.map(({ id, ...rest }) => (withNodeIds ? { id, ...rest } : rest));
  const tags = Array.isArray(body.tags) ? body.tags.map((t) => (t as { name?: unknown }).name) : [];
  // Absent, null and {} are the same empty value (a file written by hand omits them; an export has them).
  const empty = (v: unknown) =>
    v === undefined || v === null || (typeof v === 'object' && Object.keys(v as object).length === 0)
      ? null
      : v;
  const [pinData, staticData, meta] = [empty(body.pinData), empty(body.staticData), empty(body.meta)];
  return JSON.stringify({
    name: def.name,
    nodes,
    connections: def.connections,
    settings: def.settings,
    pinData,
    staticData,
    meta,
    tags,
  });
}

function isWorkflowShaped(
  body: unknown,
): body is Record<string, unknown> & { nodes: Array<Record<string, unknown>> } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { nodes, connections, name } = body as Record<string, unknown>;
  return (
    typeof name === 'string' &&
    Array.isArray(nodes) &&
    nodes.every((n) => typeof n === 'object' && n !== null && !Array.isArray(n)) &&
    typeof connections === 'object' &&
    connections !== null &&
    !Array.isArray(connections)
  );
}

/**
 * n8n's source control (environments): the account's workflows as JSON files in a git repository,
 * one folder per account (`workflows/<accountId>/<workflowId>.json`), pulled into the account or
 * pushed from it through the git CLI. The remote is an instance setting (SOURCE_CONTROL_REPO_URL);
 * its host must pass the outbound guard.
 */
export class SourceControlService {
  constructor(
    private readonly workflows: WorkflowService,
    private readonly config: SourceControlConfig,
    private readonly connectAddress: AddressGuard,
  ) {}

  /** Imports every workflow file of the account's folder that differs from the stored workflow. */
  async pull(accountId: string, principal: Principal | null = null): Promise<SourceControlledFile[]> {
    return this.withCheckout(async (dir, run) => {
      const found = await run.fetch();
      if (!found) return [];
      const folder = path.join(dir, 'workflows', accountId);
      const names = (await readdir(folder).catch(() => [] as string[]))
        .filter((n) => n.endsWith('.json'))
        .sort();
      if (names.length > MAX_FILES)
        throw new AppError(
          'VALIDATION_ERROR',
          `The repository holds more than ${MAX_FILES} workflow files for this account`,
        );
      const current = new Map(
        ((await this.workflows.export(accountId, null)) as Array<Record<string, unknown>>).map((w) => [
          String(w.id),
          w,
        ]),
      );
      const changed: SourceControlledFile[] = [];
      for (const name of names) {
        const id = name.slice(0, -'.json'.length);
        const file = path.join(folder, name);
        const info = await lstat(file);
        // Symbolic links and oversized files are not workflows (a link could point anywhere).
        if (!SAFE_ID.test(id) || !info.isFile() || info.size > MAX_FILE_BYTES) continue;
        let body: unknown;
        try {
          body = JSON.parse(await readFile(file, 'utf8'));
        } catch {
          throw new AppError('VALIDATION_ERROR', `workflows/${accountId}/${name} is not valid JSON`, {
            file: name,
          });
        }
        if (!isWorkflowShaped(body))
          throw new AppError('VALIDATION_ERROR', `workflows/${accountId}/${name} is not a workflow`, {
            file: name,
          });
        const before = current.get(id);
        const withIds = body.nodes.every((n) => typeof n.id === 'string');
        if (before && comparable(fileBody(before), withIds) === comparable(body, withIds)) continue;
        // Saved as the caller's: a pulled workflow may use only the credentials the caller may use.
        const outcome = await this.workflows.upsert(accountId, { ...(body as WorkflowBodyT), id }, principal);
        const after = await this.workflows.get(accountId, id);
        changed.push({
          file: `workflows/${accountId}/${name}`,
          id,
          name: after.name,
          type: 'workflow',
          status: outcome === 'created' ? 'created' : 'modified',
          location: 'remote',
          conflict: false,
          updatedAt: after.updatedAt,
        });
      }
      return changed;
    });
  }

  /** Writes the named workflows to the account's folder, commits and pushes; answers the files that changed. */
  async push(accountId: string, ids: string[], message: string): Promise<SourceControlledFile[]> {
    const unsafe = ids.filter((id) => !SAFE_ID.test(id));
    if (unsafe.length > 0)
      throw new AppError('VALIDATION_ERROR', 'Workflow ids must be plain ids', { ids: unsafe });
    const exported = new Map(
      ((await this.workflows.export(accountId, null)) as Array<Record<string, unknown>>).map((w) => [
        String(w.id),
        w,
      ]),
    );
    const missing = ids.filter((id) => !exported.has(id));
    if (missing.length > 0)
      throw new AppError(
        'NOT_FOUND',
        `No workflow ${missing.map((m) => `'${m}'`).join(', ')} in this account`,
        {
          ids: missing,
        },
      );
    return this.withCheckout(async (dir, run) => {
      await run.fetch();
      const folder = path.join(dir, 'workflows', accountId);
      await mkdir(folder, { recursive: true });
      const changed: SourceControlledFile[] = [];
      for (const id of [...new Set(ids)]) {
        const workflow = exported.get(id) as Record<string, unknown>;
        const file = path.join(folder, `${id}.json`);
        const before = await readFile(file, 'utf8').catch(() => null);
        const text = `${JSON.stringify(fileBody(workflow), null, 2)}\n`;
        if (before === text) continue;
        await writeFile(file, text);
        changed.push({
          file: `workflows/${accountId}/${id}.json`,
          id,
          name: String(workflow.name),
          type: 'workflow',
          status: before === null ? 'created' : 'modified',
          location: 'local',
          conflict: false,
          updatedAt: String((await this.workflows.get(accountId, id)).updatedAt),
          pushed: true,
        });
      }
      if (changed.length === 0) return [];
      await run.git(['add', '--', ...changed.map((c) => c.file)]);
      await run.git(['commit', '-q', '-m', message]);
      await run.push();
      return changed;
    });
  }

  /** A fresh checkout of the branch in a temporary folder, removed afterwards whatever happens. */
  private async withCheckout<T>(
    work: (
      dir: string,
      run: { fetch(): Promise<boolean>; push(): Promise<void>; git(args: string[]): Promise<string> },
    ) => Promise<T>,
  ): Promise<T> {
    const remote = await this.checkedRemote();
    const root = await mkdtemp(path.join(tmpdir(), 'source-control-'));
    const dir = path.join(root, 'repo');
    const options: GitOptions = {
      timeoutMs: this.config.timeoutMs,
      allowFile: this.config.allowFile,
      home: root,
    };
    const branch = this.config.branch;
    const run = (args: string[]) => git(args, dir, options, remote);
    try {
      await mkdir(dir);
      await run(['init', '-q', '-b', branch]);
      return await work(dir, {
        git: run,
        fetch: async () => {
          try {
            await run(['fetch', '-q', '--depth', '1', '--no-tags', '--', remote, `refs/heads/${branch}`]);
          } catch (error) {
            // An empty repository, or one without the branch yet: nothing to pull, a first push.
            if (error instanceof GitError && /couldn't find remote ref/i.test(error.detail)) return false;
            throw upstream(error, remote);
          }
          await run(['checkout', '-q', '-B', branch, 'FETCH_HEAD']);
          return true;
        },
        push: async () => {
          try {
            await run(['push', '-q', '--', remote, `HEAD:refs/heads/${branch}`]);
          } catch (error) {
            if (error instanceof GitError && /rejected|fetch first|non-fast-forward/i.test(error.detail))
              throw new AppError('CONFLICT', 'The branch changed on the remote while pushing; push again', {
                branch,
              });
            throw upstream(error, remote);
          }
        },
      });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }

  /** The configured remote, if its scheme is allowed and its host passes the outbound guard. */
  private async checkedRemote(): Promise<string> {
    const remote = this.config.repoUrl;
    if (!remote)
      throw new AppError(
        'VALIDATION_ERROR',
        'Source control is not connected to a repository (SOURCE_CONTROL_REPO_URL)',
        {
          setting: 'SOURCE_CONTROL_REPO_URL',
        },
      );
    let url: URL;
    try {
      url = new URL(remote);
    } catch {
      throw new AppError('VALIDATION_ERROR', 'SOURCE_CONTROL_REPO_URL is not a URL', {
        setting: 'SOURCE_CONTROL_REPO_URL',
      });
    }
    if (url.protocol === 'file:') {
      if (!this.config.allowFile)
        throw new AppError('VALIDATION_ERROR', 'file:// remotes need SOURCE_CONTROL_ALLOW_FILE=true', {
          setting: 'SOURCE_CONTROL_ALLOW_FILE',
        });
      return remote;
    }
    if (url.protocol !== 'https:')
      throw new AppError('VALIDATION_ERROR', 'SOURCE_CONTROL_REPO_URL must be an https:// remote', {
        setting: 'SOURCE_CONTROL_REPO_URL',
      });
    try {
      await this.connectAddress(url.hostname.replace(/^\[|\]$/g, ''), Number(url.port || 443));
    } catch (error) {
      if (error instanceof OutboundBlockedError)
        throw new AppError('FORBIDDEN', `The repository's host is not allowed: ${error.message}`, {
          host: url.hostname,
        });
      throw error;
    }
    return remote;
  }
}

function upstream(error: unknown, remote: string): unknown {
  if (!(error instanceof GitError)) return error;
  return new AppError('UPSTREAM_ERROR', `The repository ${redactUrl(remote)} answered: ${error.detail}`, {
    command: error.command,
  });
}
