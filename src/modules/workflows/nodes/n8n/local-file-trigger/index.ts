import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { type Static, Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, type ListenerContext, NodeOperationError, output } from '../../../engine/node-type.js';
import type { ValidationProblem } from '../../../engine/types.js';
import { type FileEvent, watchFolder } from './folder-watcher.js';
import { ignorePatternOf } from './ignore-pattern.js';
import { MAX_TRIGGERS_PER_ACCOUNT, takeTriggerSlot } from './trigger-slots.js';
import { watchPathOf } from './watch-path.js';

const EVENTS = ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const;

const LocalFileTriggerParameters = Type.Object(
  {
    triggerOn: Type.Enum(['file', 'folder'] as const, { default: 'folder' }),
    path: Type.String({ default: '', maxLength: 1_024 }),
    events: Type.Array(Type.Enum(EVENTS), {
      default: [],
      maxItems: EVENTS.length,
      ...shownWhen({ triggerOn: ['folder'] }),
    }),
    options: Type.Object(
      {
        awaitWriteFinish: Type.Optional(Type.Boolean()),
        /** n8n's default is true; links are never followed here (see `problemsOf`). */
        followSymlinks: Type.Optional(Type.Boolean()),
        ignored: Type.Optional(Type.String({ maxLength: 500 })),
        depth: Type.Optional(Type.Union([-1, 0, 1, 2, 3, 4, 5].map((n) => Type.Literal(n)))),
        usePolling: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof LocalFileTriggerParameters>;

/** The problem (at save) or error (at activation) while the instance has no files folder. */
export const LOCAL_FILES_OFF =
  'Local File Trigger is off on this instance: set WORKFLOW_FILES_DIR to the folder it may watch';

function problemsOf(p: Params, filesDir: string | null | undefined): ValidationProblem[] {
  if (!filesDir) return [{ path: 'parameters', message: LOCAL_FILES_OFF }];
  const problems: ValidationProblem[] = [];
  if (isExpression(p.path))
    problems.push({ path: 'parameters.path', message: 'must be fixed: the trigger watches before any run' });
  else {
    const where = watchPathOf(filesDir, p.path);
    if (!where.ok) problems.push({ path: 'parameters.path', message: `cannot be watched: ${where.reason}` });
  }
  if (p.triggerOn === 'folder' && Array.isArray(p.events) && p.events.length === 0)
    problems.push({ path: 'parameters.events', message: 'name at least one event to watch for' });
  const ignored = p.options.ignored;
  if (typeof ignored === 'string' && ignored !== '' && !isExpression(ignored)) {
    const pattern = ignorePatternOf(ignored);
    if (typeof pattern === 'string') problems.push({ path: 'parameters.options.ignored', message: pattern });
  }
  return problems;
}

/**
 * Watches while the workflow is active, in every process that runs triggers: one execution per event
 * (`{event, path}`, the path as the workflow names it), recorded in the dedupe history first so that
 * processes watching the same shared folder start one execution between them.
 */
async function listen(ctx: ListenerContext) {
  const p = ctx.parameters as Params;
  const filesDir = ctx.deps.host?.filesDir;
  if (!filesDir) throw new Error(LOCAL_FILES_OFF);
  const where = watchPathOf(filesDir, p.path);
  if (!where.ok) throw new Error(`The path '${p.path}' cannot be watched: ${where.reason}`);
  await mkdir(filesDir, { recursive: true });
  const root = await realpath(filesDir);
  const target = path.join(root, path.relative(filesDir, where.absolute));
  const events: ReadonlySet<FileEvent> = new Set(p.triggerOn === 'file' ? ['change'] : p.events);
  const ignored = p.options.ignored ? ignorePatternOf(p.options.ignored) : null;
  const scope = { workflowId: ctx.workflowId, scope: `local-file:${ctx.node.id}` };
  const shown = p.path.replace(/\/+$/, '') || p.path;
  const release = takeTriggerSlot(ctx.accountId);
  if (typeof release === 'string') throw new Error(`Local File Trigger not started: ${release}`);
  const watcher = watchFolder({
    root,
    target,
    kind: p.triggerOn,
    events,
    depth: p.options.depth ?? -1,
    ignored: typeof ignored === 'string' ? null : ignored,
    awaitWriteFinish: p.options.awaitWriteFinish === true,
    usePolling: p.options.usePolling === true,
    async onEvent(event, rel, stat) {
      const key = `${event}:${rel}:${stat.mtimeMs}:${stat.size}`;
      if (ctx.deps.dedupe && (await ctx.deps.dedupe.recordKeys(scope, [key])).size === 0) return;
      const shownPath = rel === '' ? shown : path.posix.join(shown, rel);
      await ctx.emit([{ json: { event, path: shownPath } }]);
    },
    onDropped(count, why) {
      ctx.log.warn(
        { workflowId: ctx.workflowId, node: ctx.node.name, dropped: count },
        `Local File Trigger: ${why}`,
      );
    },
    onFailed: (error) => ctx.failed(error),
  });
  try {
    await watcher.ready;
  } catch (err) {
    await watcher.close();
    release();
    throw err;
  }
  return { stop: () => watcher.close().finally(release) };
}

/**
 * n8n's Local File Trigger (v1): watches a folder (add, change, unlink, addDir, unlinkDir) or one file
 * (change) inside the account's files folder, off unless WORKFLOW_FILES_DIR is set, as Read/Write Files
 * from Disk. Symbolic links are reported, never followed (`followSymlinks` is read as false).
 */
export const localFileTriggerNode = defineNode({
  type: 'n8n-nodes-base.localFileTrigger',
  versions: [1],
  schema: LocalFileTriggerParameters,
  trigger: true,
  inputs: 0,
  check: (p, limits) => problemsOf(p, limits.host?.filesDir),
  listener: { start: listen, maxPerAccount: MAX_TRIGGERS_PER_ACCOUNT },
  async execute(ctx) {
    if (ctx.items.length > 0) return output(ctx.items);
    throw new NodeOperationError('The Local File Trigger starts its workflow when the folder changes', {
      description: 'Activate the workflow: each file event then starts one execution.',
    });
  },
});
