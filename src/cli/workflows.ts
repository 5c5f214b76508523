import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Value } from 'typebox/value';
import { AppError } from '../core/errors.js';
import type { WorkflowsApi } from '../modules/workflows/index.js';
import { WorkflowBody, type WorkflowBodyT } from '../modules/workflows/schemas.js';
import { WORKFLOWS_USAGE as USAGE } from './help.js';

type Print = (line: string) => void;

type Definition = WorkflowBodyT & { id?: string; active?: boolean };
/** One definition and where it came from: the file, or `file[i]` for an element of an array. */
type Entry = { source: string; body: Definition };

async function definitionFiles(target: string): Promise<string[]> {
  const info = await stat(target).catch(() => null);
  if (!info) return [];
  if (info.isFile()) return [target];
  const names = await readdir(target);
  return names
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => path.join(target, n));
}

/** Every definition under `target` and every reason one is refused, so one run names all bad files. */
async function readEntries(api: WorkflowsApi, target: string) {
  const entries: Entry[] = [];
  const refused: AppError[] = [];
  let unreadable = 0;
  for (const file of await definitionFiles(target)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      refused.push(new AppError('VALIDATION_ERROR', `${file}: not valid JSON (${reason})`));
      unreadable++;
      continue;
    }
    const bodies = Array.isArray(parsed) ? parsed : [parsed];
    bodies.forEach((body, i) => {
      entries.push({ source: Array.isArray(parsed) ? `${file}[${i}]` : file, body: body as Definition });
    });
  }
  const seen = new Map<string, string>();
  for (const { source, body } of entries) {
    if (!Value.Check(WorkflowBody, body)) {
      const problems = [...Value.Errors(WorkflowBody, body)].map((e) => ({
        path: e.instancePath || '/',
        message: e.message,
      }));
      refused.push(new AppError('VALIDATION_ERROR', `${source}: not a workflow definition`, { problems }));
      continue;
    }
    const problems = api.workflows.check(body);
    if (problems.length > 0)
      refused.push(new AppError('VALIDATION_ERROR', `${source}: the workflow is not valid`, { problems }));
    const earlier = body.id ? seen.get(body.id) : undefined;
    if (body.id && earlier)
      refused.push(new AppError('CONFLICT', `${source}: id '${body.id}' is also defined in ${earlier}`));
    if (body.id) seen.set(body.id, source);
  }
  return { entries, refused, found: entries.length + unreadable };
}

/** Several refusals as one error: the CLI prints each (file and reason), then exits 1. */
function refusal(errors: AppError[], summary: string | null): Error {
  if (errors.length === 1 && !summary) return errors[0] as AppError;
  return new AggregateError(errors, summary ?? `${errors.length} problems`);
}

async function importDefinitions(api: WorkflowsApi, accountId: string, target: string, print: Print) {
  const { entries, refused, found } = await readEntries(api, target);
  if (found === 0) throw new AppError('NOT_FOUND', `No workflow definitions at ${target}`);
  // Every definition is checked before any is written: a folder imports whole or not at all.
  if (refused.length > 0)
    throw refusal(refused, found > 1 ? `${refused.length} problem(s): nothing was imported` : null);
  for (const { source, body } of entries) {
    const result = await api.workflows.upsert(accountId, body);
    print(`${result}: ${body.id ?? ''} ${body.name} (${source})`);
  }
  // An exported definition says whether it was active: importing it restores that, so export → import
  // gives back what was exported. Activation needs the definition's credentials to exist here.
  const notActivated: AppError[] = [];
  for (const { source, body } of entries) {
    if (!body.id || typeof body.active !== 'boolean') continue;
    try {
      if (body.active) await api.workflows.activate(accountId, body.id);
      else await api.workflows.deactivate(accountId, body.id);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      notActivated.push(
        new AppError(error.code, `${source}: imported, but not activated: ${error.message}`, error.details),
      );
    }
  }
  if (notActivated.length > 0) throw refusal(notActivated, null);
}

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
    options: { all: { type: 'boolean' }, out: { type: 'string' } },
  });
  switch (sub) {
    case 'import': {
      const target = positionals[0];
      if (!target) {
        print(USAGE);
        return 2;
      }
      await importDefinitions(api, accountId, target, print);
      return 0;
    }
    case 'export': {
      const id = values.all ? null : (positionals[0] ?? null);
      if ((!values.all && !id) || (values.out && !values.all)) {
        print(USAGE);
        return 2;
      }
      const found = (await api.workflows.export(accountId, id)) as Array<{ id: string }>;
      if (id && found.length === 0)
        throw new AppError('WORKFLOW_NOT_FOUND', `Workflow '${id}' was not found`);
      if (values.out) {
        await mkdir(values.out, { recursive: true });
        for (const def of found)
          await writeFile(path.join(values.out, `${def.id}.json`), `${JSON.stringify(def, null, 2)}\n`);
        print(`wrote ${found.length} definition(s) to ${values.out}`);
        return 0;
      }
      print(JSON.stringify(id ? found[0] : found, null, 2));
      return 0;
    }
    case 'help':
    case '--help':
      print(USAGE);
      return 0;
    default:
      print(USAGE);
      return 2;
  }
}
