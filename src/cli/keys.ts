import { parseArgs } from 'node:util';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ALL_SERVICES } from '../config.js';
import { ROLES, type Role } from '../core/auth/principal.js';
import { AppError } from '../core/errors.js';
import type { AuthApi } from '../modules/auth/index.js';
import { CreateKeyBody, RotateKeyBody } from '../modules/auth/schemas.js';
import { firstKeyBox, KEYS_USAGE as USAGE } from './help.js';

type Print = (line: string) => void;

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The CLI calls the key service directly: check its input against the API's own body schema. */
function checked<S extends TSchema>(schema: S, input: unknown): Static<S> {
  if (Value.Check(schema, input)) return input as Static<S>;
  const fields = [...Value.Errors(schema, input)].map((e) => ({
    field: e.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(input)',
    message: e.message,
  }));
  throw new AppError('VALIDATION_ERROR', 'Invalid arguments', { fields });
}

/**
 * `platform keys …`: acts for the owner account, on the same database as the server. `notice` takes
 * what is not the command's answer (the first-start key): stdout stays parseable with --json.
 */
export async function keysCommand(
  auth: AuthApi,
  argv: string[],
  print: Print,
  notice: Print = print,
): Promise<number> {
  if (argv[0] === 'help' || argv[0] === '--help') {
    print(USAGE);
    return 0;
  }
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      type: { type: 'string' },
      role: { type: 'string' },
      services: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      'allowed-ips': { type: 'string' },
      'expires-at': { type: 'string' },
      'daily-quota': { type: 'string' },
      models: { type: 'string' },
      'daily-token-budget': { type: 'string' },
      'grace-seconds': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const boot = await auth.bootstrap();
  if (boot.createdKey) notice(firstKeyBox(boot.createdKey));
  const accountId = boot.accountId;

  switch (sub) {
    case 'create': {
      const type = values.type;
      const role = values.role as Role | undefined;
      const problems = [
        type === 'development' || type === 'production'
          ? null
          : `--type must be development or production${type === undefined ? '' : ` (got '${type}')`}`,
        role && ROLES.includes(role)
          ? null
          : `--role must be one of ${ROLES.join(', ')}${role === undefined ? '' : ` (got '${role}')`}`,
        values.name ? null : '--name is required',
      ].filter((problem): problem is string => problem !== null);
      if (problems.length > 0 || (type !== 'development' && type !== 'production') || !role) {
        for (const problem of problems) print(problem);
        print(USAGE);
        return 2;
      }
      const services = values.services === 'all' || !values.services ? ['*'] : list(values.services);
      const unknown = services.filter((s) => s !== '*' && !(ALL_SERVICES as readonly string[]).includes(s));
      if (unknown.length > 0) {
        print(`Unknown services: ${unknown.join(', ')} (known: ${ALL_SERVICES.join(', ')})`);
        return 2;
      }
      const input = checked(CreateKeyBody, {
        name: values.name,
        type,
        role,
        services: services as never,
        scopes: list(values.scopes),
        allowedIps: list(values['allowed-ips']),
        ...(values['expires-at'] ? { expiresAt: values['expires-at'] } : {}),
        ...(values['daily-quota'] ? { dailyQuota: Number(values['daily-quota']) } : {}),
        ...(values.models ? { models: list(values.models) } : {}),
        ...(values['daily-token-budget'] ? { dailyTokenBudget: Number(values['daily-token-budget']) } : {}),
      });
      const created = await auth.keys.create(accountId, input, null);
      if (values.json) print(JSON.stringify(created));
      else {
        print(
          `Created ${created.id} (${created.type}, ${created.role}, services ${created.services.join(',')})`,
        );
        print(`Key (shown once): ${created.key}`);
      }
      return 0;
    }
    case 'list': {
      const page = await auth.keys.list(accountId, { limit: 200 });
      if (values.json) print(JSON.stringify(page.data));
      else
        for (const k of page.data) {
          print(
            [k.id, k.name, k.type, k.role, `${k.prefix}…${k.last4}`, k.status, `expires ${k.expiresAt}`].join(
              '  ',
            ),
          );
        }
      return 0;
    }
    case 'revoke': {
      const id = positionals[0];
      if (!id) {
        print(USAGE);
        return 2;
      }
      await auth.keys.revoke(accountId, id);
      print(`Revoked ${id}`);
      return 0;
    }
    case 'rotate': {
      const id = positionals[0];
      if (!id) {
        print(USAGE);
        return 2;
      }
      const { gracePeriodSeconds = 0 } = checked(RotateKeyBody, {
        gracePeriodSeconds: Number(values['grace-seconds'] ?? 0),
      });
      const rotated = await auth.keys.rotate(accountId, id, gracePeriodSeconds, null);
      if (values.json) print(JSON.stringify(rotated));
      else print(`Rotated ${id}. New key (shown once): ${rotated.key}`);
      return 0;
    }
    default:
      print(USAGE);
      return 2;
  }
}

export function describeCliError(error: unknown): string {
  // Several refusals at once (`workflows import DIR`): each as its own block, then the summary.
  if (error instanceof AggregateError)
    return [...error.errors.map(describeCliError), error.message].join('\n');
  if (error instanceof AppError) {
    const fields = (error.details.fields as Array<{ field: string; message: string }> | undefined) ?? [];
    const problems = (error.details.problems as Array<{ path: string; message: string }> | undefined) ?? [];
    return [
      `${error.code}: ${error.message}`,
      ...fields.map((f) => `  ${f.field}: ${f.message}`),
      ...problems.map((p) => `  ${p.path}: ${p.message}`),
    ].join('\n');
  }
  return error instanceof Error ? error.message : String(error);
}
