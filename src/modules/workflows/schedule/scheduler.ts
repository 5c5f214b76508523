import type { Transaction } from 'kysely';
import type { Static } from 'typebox';
import type { Clock } from '../../../core/clock.js';
import type { Database } from '../../../core/db/types.js';
import { AppError, isAppError } from '../../../core/errors.js';
import type { WorkflowStore } from '../definitions/store.js';
import { isExpression } from '../engine/expressions.js';
import type { WorkflowDefinition } from '../engine/index.js';
import { checkParameters, withDefaults } from '../engine/parameters.js';
import type { Log } from '../executions/log.js';
import type { ExecutionRunner } from '../executions/runner.js';
import { CronParameters, cronExpressionOf } from '../nodes/n8n/cron/index.js';
import { IntervalParameters, intervalCron } from '../nodes/n8n/interval/index.js';
import {
  ScheduleTriggerParameters,
  type ScheduleTriggerParams,
} from '../nodes/n8n/schedule-trigger/index.js';
import {
  cronProblem,
  type IntervalRule,
  nextFire,
  type ScheduleSpec,
  scheduleItem,
  specOf,
} from './rules.js';
import type { ScheduleRow, ScheduleStore } from './schedule-store.js';

const SCHEDULE_TRIGGER = 'n8n-nodes-base.scheduleTrigger';

/** A timed trigger's rules: Schedule Trigger's own, or the legacy Cron's and Interval's as cron rules. */
function legacyRulesOf(type: string, parameters: Record<string, unknown>): IntervalRule[] {
  if (type === SCHEDULE_TRIGGER)
    return (withDefaults(ScheduleTriggerParameters, parameters) as ScheduleTriggerParams).rule
      .interval as IntervalRule[];
  if (type === 'n8n-nodes-base.cron')
    return (withDefaults(CronParameters, parameters) as Static<typeof CronParameters>).triggerTimes.item.map(
      (t) => ({
        field: 'cronExpression',
        expression: cronExpressionOf(t),
      }),
    );
  if (type === 'n8n-nodes-base.interval') {
    const p = withDefaults(IntervalParameters, parameters) as Static<typeof IntervalParameters>;
    const expression = intervalCron(p.interval, p.unit);
    return expression ? [{ field: 'cronExpression', expression }] : [];
  }
  return [];
}

/** Longest sleep between looks at the table: how soon another process's activation is seen. */
const POLL_MS = 1_000;
/** Rules claimed per look; more wait for the next one, a few milliseconds later. */
const BATCH = 100;

export interface SchedulerDeps {
  store: ScheduleStore;
  /**
   * Evaluates an expression of a rule when the workflow is activated (no item), as n8n reads its
   * Schedule Trigger's parameters then; absent, a rule with an expression is refused.
   */
  evaluate?(accountId: string, def: WorkflowDefinition, expression: string): Promise<unknown>;
  /** Schedule rules one account's active workflows may hold (each fire is an execution). */
  maxRulesPerAccount: number;
  workflows: WorkflowStore;
  runner: ExecutionRunner;
  clock: Clock;
  log: Log;
}

/** The zone a workflow's schedules run in: its `settings.timezone`, else UTC. */
function zoneOf(def: WorkflowDefinition): string {
  const zone = def.settings?.timezone;
  return typeof zone === 'string' && zone !== 'DEFAULT' ? zone : 'UTC';
}

/**
 * Starts the runs of Schedule Trigger rules. Every process with a worker looks at the due rules; a
 * fire is claimed by a compare-and-set on its next fire time, so it starts exactly once however many
 * processes look (on SQLite and PostgreSQL alike, with or without Redis). A fire time missed while no
 * process ran is caught up once: the claim moves the rule to its first time after now.
 */
export class Scheduler {
  private wake: (() => void) | null = null;

  constructor(private readonly deps: SchedulerDeps) {}

  /** Registers (or re-registers) a workflow's rules inside its activation's transaction. */
  async register(trx: Transaction<Database>, accountId: string, def: WorkflowDefinition): Promise<void> {
    const now = this.deps.clock.now();
    const rows: ScheduleRow[] = [];
    for (const [at, node] of def.nodes.entries()) {
      if (node.disabled) continue;
      const parameters = await this.fixedParameters(accountId, def, node, at);
      legacyRulesOf(node.type, parameters).forEach((rule, index) => {
        const spec = specOf(rule, zoneOf(def));
        const next = nextFire(spec, now, null);
        if (!next) return;
        rows.push({
          workflow_id: def.id,
          node_name: node.name,
          rule_index: index,
          account_id: accountId,
          spec: JSON.stringify(spec),
          next_fire_at: next.toISOString(),
          last_fire_at: null,
        });
      });
    }
    if (rows.length > 0) {
      const others = await this.deps.store.countOf(trx, accountId, def.id);
      if (others + rows.length > this.deps.maxRulesPerAccount)
        throw new AppError(
          'CONFLICT',
          `The account's active workflows would hold ${others + rows.length} schedule rules; at most ${this.deps.maxRulesPerAccount} (WORKFLOW_MAX_SCHEDULES)`,
          { limit: this.deps.maxRulesPerAccount },
        );
    }
    await this.deps.store.replace(trx, def.id, rows);
    if (rows.length > 0) this.wake?.();
  }

  /**
   * A Schedule Trigger's parameters with each expression in its rules evaluated (n8n evaluates them at
   * activation: `={{ Math.floor(Math.random() * 60) }}` spreads a template's minute), then checked as
   * fixed values are at save: a value out of range refuses the activation with a 400 naming it.
   */
  private async fixedParameters(
    accountId: string,
    def: WorkflowDefinition,
    node: WorkflowDefinition['nodes'][number],
    at: number,
  ): Promise<Record<string, unknown>> {
    const rule = (node.parameters as { rule?: { interval?: unknown } }).rule;
    const rules = rule?.interval;
    if (node.type !== SCHEDULE_TRIGGER || !Array.isArray(rules)) return node.parameters;
    if (!rules.some((r) => r && typeof r === 'object' && Object.values(r).some(isExpression)))
      return node.parameters;
    const path = `nodes[${at}].parameters.rule.interval`;
    const evaluate = this.deps.evaluate;
    if (!evaluate)
      throw new AppError('VALIDATION_ERROR', `The schedule of node '${node.name}' has expressions`, {
        problems: [{ path, message: 'must be fixed here: no expression evaluator' }],
      });
    const interval: Array<Record<string, unknown>> = [];
    for (const [i, r] of rules.entries()) {
      const fixed: Record<string, unknown> = { ...(r as Record<string, unknown>) };
      for (const [name, value] of Object.entries(fixed)) {
        if (!isExpression(value)) continue;
        let result: unknown;
        try {
          result = await evaluate(accountId, def, value);
        } catch (error) {
          throw new AppError(
            'VALIDATION_ERROR',
            `The schedule of node '${node.name}' could not be evaluated`,
            {
              problems: [
                {
                  path: `${path}[${i}].${name}`,
                  message: error instanceof Error ? error.message : String(error),
                },
              ],
            },
          );
        }
        // n8n writes the value into its cron text as is: digits as text are that number.
        fixed[name] = typeof result === 'string' && /^\d+$/.test(result.trim()) ? Number(result) : result;
      }
      interval.push(fixed);
    }
    const parameters = { ...node.parameters, rule: { ...rule, interval } };
    const problems = checkParameters(ScheduleTriggerParameters, parameters, `nodes[${at}].parameters`, false);
    for (const [i, r] of interval.entries()) {
      if (r.field !== 'cronExpression') continue;
      const problem = typeof r.expression === 'string' ? cronProblem(r.expression) : 'is required';
      if (problem) problems.push({ path: `${path}[${i}].expression`, message: problem });
    }
    if (problems.length > 0)
      throw new AppError(
        'VALIDATION_ERROR',
        `The schedule of node '${node.name}' is not valid once its expressions are evaluated`,
        { problems },
      );
    return parameters;
  }

  async clear(trx: Transaction<Database>, workflowId: string): Promise<void> {
    await this.deps.store.clear(trx, workflowId);
  }

  /** Claims and starts every due fire; returns how many this process started. */
  async tick(): Promise<number> {
    const now = this.deps.clock.now();
    let started = 0;
    for (const row of await this.deps.store.due(now.toISOString(), BATCH)) {
      const spec = JSON.parse(row.spec) as ScheduleSpec;
      const dueAt = new Date(row.next_fire_at);
      const next = nextFire(spec, now, dueAt);
      if (!(await this.deps.store.claim(row, next?.toISOString() ?? null))) continue;
      try {
        if (await this.fire(row, spec, dueAt)) started++;
      } catch (err) {
        const at = { accountId: row.account_id, workflowId: row.workflow_id, node: row.node_name };
        // A spent daily quota skips this fire (the rule moved on already); the next fire tries again.
        if (isAppError(err) && err.code === 'RATE_LIMIT_EXCEEDED')
          this.deps.log.warn(
            { ...at, dueAt: row.next_fire_at, reason: err.message },
            'scheduled run skipped: daily execution quota spent',
          );
        else this.deps.log.error({ err, ...at }, 'scheduled run not started');
      }
    }
    return started;
  }

  private async fire(row: ScheduleRow, spec: ScheduleSpec, dueAt: Date): Promise<boolean> {
    const workflow = await this.deps.workflows.get(row.account_id, row.workflow_id);
    if (workflow?.active !== 1) return false;
    await this.deps.runner.enqueue({
      accountId: row.account_id,
      workflowId: row.workflow_id,
      version: workflow.version,
      mode: 'trigger',
      trigger: { nodeName: row.node_name, items: [{ json: scheduleItem(dueAt, spec.tz) }] },
    });
    return true;
  }

  /** Looks again at the next due time (at most POLL_MS apart) until stopped. */
  start(): () => Promise<void> {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> = Promise.resolve();
    const schedule = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        running = loop();
      }, ms);
      timer.unref();
    };
    const loop = async () => {
      try {
        await this.tick();
      } catch (err) {
        this.deps.log.error({ err }, 'schedule tick failed');
      }
      if (stopped) return;
      const next = await this.deps.store.earliest().catch(() => null);
      const wait = next === null ? POLL_MS : Date.parse(next) - this.deps.clock.now().getTime();
      schedule(Math.min(POLL_MS, Math.max(5, wait)));
    };
    this.wake = () => {
      if (!stopped) schedule(0);
    };
    schedule(0);
    return async () => {
      stopped = true;
      this.wake = null;
      clearTimeout(timer);
      await running;
    };
  }
}
