import { parseArgs } from 'node:util';
import { Value } from 'typebox/value';
import { AppError } from '../core/errors.js';
import { readDefinitions, type WorkflowsApi } from '../modules/workflows/index.js';
import { WorkflowBody } from '../modules/workflows/schemas.js';

type Print = (line: string) => void;

const USAGE = `usage:
  workflows import FILE|DIR     create or replace workflows from JSON definitions (same id → replaced)
  workflows export ID|--all     print definitions as JSON`;

/** `platform workflows …`: acts for the owner account, on the same database as the server. */
export async function workflowsCommand(
  api: WorkflowsApi,
  accountId: string,
  argv: string[],
  print: Print,
): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { all: { type: 'boolean' } },
  });
  switch (sub) {
    case 'import': {
      const target = positionals[0];
      if (!target) {
        print(USAGE);
        return 2;
      }
      const definitions = await readDefinitions(target);
      if (definitions.length === 0) throw new AppError('NOT_FOUND', `No workflow definitions at ${target}`);
      // Every file is checked before any is written: a folder imports whole or not at all.
      for (const { file, body } of definitions) {
        if (!Value.Check(WorkflowBody, body)) {
          const problems = [...Value.Errors(WorkflowBody, body)].map((e) => ({
            path: e.instancePath || '/',
            message: e.message,
          }));
          throw new AppError('VALIDATION_ERROR', `${file}: not a workflow definition`, { problems });
        }
        const problems = api.workflows.check(body);
        if (problems.length > 0)
          throw new AppError('VALIDATION_ERROR', `${file}: the workflow is not valid`, { problems });
      }
      for (const { file, body } of definitions) {
        const result = await api.workflows.upsert(accountId, body);
        print(`${result}: ${body.id ?? ''} ${body.name} (${file})`);
      }
      return 0;
    }
    case 'export': {
      const id = values.all ? null : (positionals[0] ?? null);
      if (!values.all && !id) {
        print(USAGE);
        return 2;
      }
      const found = await api.workflows.export(accountId, id);
      if (id && found.length === 0)
        throw new AppError('WORKFLOW_NOT_FOUND', `Workflow '${id}' was not found`);
      print(JSON.stringify(id ? found[0] : found, null, 2));
      return 0;
    }
    default:
      print(USAGE);
      return 2;
  }
}
