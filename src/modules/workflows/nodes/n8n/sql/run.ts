import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { isSelectQuery } from './parameters.js';
import type { Statement } from './statements.js';

export type Row = Record<string, unknown>;

/** One connection's way to run statements (Postgres or MySQL). */
export interface StatementRunner {
  run(statement: Statement): Promise<Row[]>;
  begin(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

export interface RunPlan {
  /** One statement per item (its index), in item order. */
  statements: Array<{ statement: Statement; item: number }>;
  batching: 'single' | 'independently' | 'transaction';
  /** Node version below 2.3: an empty answer is `{success: true}` unless the operation is select. */
  legacyEmpty: boolean;
  operation: string;
  continueOnFail: boolean;
  /** Called with the rows of each statement (update: none matched is an error). */
  check?: (rows: Row[], item: number) => void;
}

const toItems = (rows: Row[], item: number): Item[] =>
  rows.map((json) => ({ json: json as Record<string, Json>, pairedItem: { item } }));

/** What n8n answers for a statement without rows. */
function emptyAnswer(plan: RunPlan, texts: string[], item: number): Item[] {
  const select = plan.legacyEmpty ? plan.operation === 'select' : texts.every(isSelectQuery);
  return select ? [] : [{ json: { success: true }, pairedItem: { item } }];
}

function errorItem(err: unknown, item: number): Item {
  const error = err as Error & { description?: string };
  return {
    json: {
      message: error.message,
      error: { message: error.message, description: error.description ?? null },
    },
    pairedItem: { item },
  };
}

/**
 * n8n's query batching: `single` (default) runs the statements together (one transaction when there
 * are several, as n8n's one multi-statement query is); `transaction` runs them in one transaction,
 * rolled back at the first failure; `independently` runs each on its own.
 */
export async function runPlan(runner: StatementRunner, plan: RunPlan): Promise<Item[]> {
  const { statements } = plan;
  if (statements.length === 0) return [];
  if (plan.batching === 'independently') {
    const out: Item[] = [];
    for (const { statement, item } of statements) {
      try {
        const rows = await runner.run(statement);
        plan.check?.(rows, item);
        out.push(...(rows.length > 0 ? toItems(rows, item) : emptyAnswer(plan, [statement.text], item)));
      } catch (err) {
        if (!plan.continueOnFail || !(err instanceof NodeOperationError)) throw err;
        out.push(errorItem(err, item));
      }
    }
    return out;
  }
  const together = statements.length > 1 || plan.batching === 'transaction';
  const out: Item[] = [];
  if (together) await runner.begin();
  try {
    for (const { statement, item } of statements) {
      const rows = await runner.run(statement);
      plan.check?.(rows, item);
      if (plan.batching === 'transaction' && rows.length === 0)
        out.push(...emptyAnswer(plan, [statement.text], item));
      else out.push(...toItems(rows, item));
    }
    if (together) await runner.commit();
  } catch (err) {
    if (together) await runner.rollback().catch(() => undefined);
    if (!plan.continueOnFail || !(err instanceof NodeOperationError)) throw err;
    return [errorItem(err, 0)];
  }
  if (out.length === 0 && plan.batching === 'single')
    return emptyAnswer(
      plan,
      statements.map((s) => s.statement.text),
      0,
    );
  return out;
}
