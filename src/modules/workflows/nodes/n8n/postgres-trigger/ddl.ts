import type { Client } from 'pg';
import { NodeOperationError } from '../../../engine/node-type.js';
import { ident } from '../postgres/sql.js';
import { foldedName, nodeSuffix, qualified } from './names.js';

export interface TriggerRule {
  schema: string;
  table: string;
  firesOn: 'INSERT' | 'UPDATE' | 'DELETE';
  functionName?: string | undefined;
  triggerName?: string | undefined;
  replaceIfExists?: boolean | undefined;
}

/** The function and trigger n8n creates for a table, with n8n's default names after the node id. */
export function ruleNames(rule: TriggerRule, nodeId: string) {
  const suffix = nodeSuffix(nodeId);
  const fn = (rule.functionName || `n8n_trigger_function_${suffix}`).replace(/\(\)$/, '');
  return {
    fn: qualified(fn, 'function name'),
    trigger: ident(foldedName(rule.triggerName || `n8n_trigger_${suffix}`, 'trigger name')),
    target: `${ident(rule.schema)}.${ident(rule.table)}`,
  };
}

/**
 * n8n's "Listen and Create Trigger Rule": a plpgsql function that sends each row (`new`, or `old` on
 * DELETE) as JSON on the channel, and an AFTER trigger on the table calling it. Custom names without
 * "replace if exists" must not exist yet (CREATE FUNCTION), as in n8n. One transaction.
 */
export async function createRule(client: Client, rule: TriggerRule, nodeId: string, channel: string) {
  const { fn, trigger, target } = ruleNames(rule, nodeId);
  const row = rule.firesOn === 'DELETE' ? 'old' : 'new';
  const replace = rule.replaceIfExists || !(rule.functionName || rule.triggerName);
  // The channel is a string literal in the body: foldedName allows no quote or NUL in a plain name,
  // and a quoted one has its quotes doubled.
  const literal = `'${channel.replace(/'/g, "''")}'`;
  const body = `begin perform pg_notify(${literal}, row_to_json(${row})::text); return null; end;`;
  try {
    await client.query('BEGIN');
    await client.query(
      `CREATE ${replace ? 'OR REPLACE ' : ''}FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $n8n$ ${body} $n8n$`,
    );
    if (replace) await client.query(`DROP TRIGGER IF EXISTS ${trigger} ON ${target}`);
    await client.query(
      `CREATE TRIGGER ${trigger} AFTER ${rule.firesOn} ON ${target} FOR EACH ROW EXECUTE FUNCTION ${fn}()`,
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new NodeOperationError(`The trigger rule could not be created: ${(err as Error).message}`);
  }
}

/** Deactivation: the function goes (CASCADE takes the trigger with it), as n8n's closeFunction does. */
export async function dropRule(client: Client, rule: TriggerRule, nodeId: string) {
  const { fn, trigger, target } = ruleNames(rule, nodeId);
  await client.query(`DROP TRIGGER IF EXISTS ${trigger} ON ${target}`);
  await client.query(`DROP FUNCTION IF EXISTS ${fn}() CASCADE`);
}
