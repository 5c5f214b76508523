import { type Static, Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, type ListenerContext, output } from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import { cronProblem, nextFire, specOf } from '../../../schedule/rules.js';
import { cronExpressionOf, TriggerTime } from '../cron/index.js';
import { readFeed } from '../rss-feed-read/feed.js';

const RssFeedReadTriggerParameters = Type.Object(
  {
    /** n8n's polling nodes' own parameter: when to look (Cron's trigger times). */
    pollTimes: Type.Object(
      { item: Type.Array(TriggerTime, { maxItems: 20, default: [{ mode: 'everyMinute' }] }) },
      { additionalProperties: false, default: {} },
    ),
    feedUrl: Type.String({ default: 'https://blog.n8n.io/rss/' }),
  },
  { additionalProperties: false },
);
type Params = Static<typeof RssFeedReadTriggerParameters>;

/** Shortest time between two looks, whatever the poll times say. */
const MIN_POLL_MS = 10_000;

function problemsOf(p: Params): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  if (isExpression(p.feedUrl))
    problems.push({ path: 'parameters.feedUrl', message: 'must be fixed: the trigger polls before any run' });
  p.pollTimes.item.forEach((t, i) => {
    const problem = cronProblem(cronExpressionOf(t));
    if (problem) problems.push({ path: `parameters.pollTimes.item[${i}].cronExpression`, message: problem });
  });
  return problems;
}

const dateOf = (item: Record<string, Json>) => Date.parse(String(item.isoDate ?? ''));

/**
 * One poll, as n8n's: the items dated after the newest date seen before (the first poll only notes
 * that date). The newest date lives in the dedupe history, raised with a compare-and-set, so several
 * worker processes polling the same feed start one execution per new item date between them.
 */
async function poll(ctx: ListenerContext, url: string): Promise<void> {
  const dedupe = ctx.deps.dedupe;
  if (!dedupe) throw new Error('The RSS Feed Trigger needs the dedupe history');
  const scope = { workflowId: ctx.workflowId, scope: `rss:${ctx.node.id}` };
  const items = await readFeed(ctx.deps, url);
  const dated = items.filter((i) => !Number.isNaN(dateOf(i)));
  if (dated.length === 0) return;
  const newest = Math.max(...dated.map(dateOf));
  const before = await dedupe.latest(scope, 'date');
  if (before === null) {
    await dedupe.raiseLatest(scope, 'date', newest);
    return;
  }
  if (newest <= before) return;
  // Whoever raises the date first owns this round (the key records it once for every process).
  const owner = await dedupe.recordKeys(scope, [`${before}>${newest}`]);
  if (owner.size === 0) return;
  await dedupe.raiseLatest(scope, 'date', newest);
  const fresh = dated.filter((i) => dateOf(i) > before);
  await ctx.emit(fresh.map((json): Item => ({ json })));
}

/** Polls at the node's poll times until stopped; a failed poll is logged and the next one tries again. */
async function listen(ctx: ListenerContext) {
  const p = ctx.parameters as Params;
  const specs = p.pollTimes.item.map((t) =>
    specOf({ field: 'cronExpression', expression: cronExpressionOf(t) }, 'UTC'),
  );
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const next = () => {
    if (stopped) return;
    const now = ctx.deps.now();
    const times = specs
      .map((s) => nextFire(s, now, null)?.getTime())
      .filter((t): t is number => t !== undefined);
    const at = times.length > 0 ? Math.min(...times) : now.getTime() + 60_000;
    timer = setTimeout(tick, Math.max(MIN_POLL_MS, at - now.getTime()));
    timer.unref();
  };
  const tick = () => {
    running = poll(ctx, p.feedUrl)
      .catch((err: unknown) =>
        ctx.log.warn({ err, workflowId: ctx.workflowId, node: ctx.node.name }, 'RSS poll failed'),
      )
      .finally(next);
  };
  // The first look notes the newest date at once (n8n compares with the activation time).
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/**
 * n8n's RSS Feed Trigger (v1): polls the feed through the guarded outbound client at its poll times
 * while the workflow is active, and starts the workflow with the items newer than any seen before. In a
 * manual run (no trigger items) it reads the feed and passes its first item on, as n8n does.
 */
export const rssFeedReadTriggerNode = defineNode({
  type: 'n8n-nodes-base.rssFeedReadTrigger',
  versions: [1],
  schema: RssFeedReadTriggerParameters,
  trigger: true,
  inputs: 0,
  check: problemsOf,
  listener: { start: listen },
  async execute(ctx) {
    if (ctx.items.length > 0) return output(ctx.items);
    const p = await ctx.params(0);
    const first = (await readFeed(ctx.deps, p.feedUrl))[0];
    return output(first ? [{ json: first }] : []);
  },
});
