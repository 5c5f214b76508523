/**
 * What the command line says to a person: the command list and the usage of `keys` and `workflows`, the
 * first-start key box and the line for a busy port. Kept apart from the commands so `platform --help` and
 * `keys help` load nothing else (no database, no server).
 */

export const HELP = `usage: platform <command>   (from a clone: npm run -s platform -- <command>)

  serve [--no-worker]   start the HTTP server (npm start runs this); --no-worker: API only, no workflow executions
  worker                run queued workflow executions only (needs REDIS_URL to share a queue)
  migrate               run database migrations (they also run at every start)
  workflows …           import FILE|DIR | export ID|--all   (see 'workflows help')
  keys …                create | list | revoke | rotate API keys   (see 'keys help')
  users …               setup-link EMAIL | set-password EMAIL: portal sign-in   (see 'users help')
  backup FILE           an online copy of the SQLite database (PostgreSQL: prints the pg_dump advice)
  restore FILE [--force]  put a backup in place of the database (the server stopped), then migrate
  help                  this list

Commands act on the server's DATA_DIR / DATABASE_URL (settings: README "Settings"), before or while it runs.`;

/** `keys help`: printed without opening anything, like HELP. */
export const KEYS_USAGE = `usage:
  keys create --type development|production --role Reader|Writer|Admin|Custom --services all|a,b --name N
              [--scopes s1,s2] [--allowed-ips cidr1,cidr2] [--expires-at ISO] [--daily-quota N]
              [--models m1,m2] [--daily-token-budget N] [--json]
  keys list [--json]
  keys revoke ID
  keys rotate ID [--grace-seconds N] [--json]`;

/** `users help`. */
export const USERS_USAGE = `usage:
  users setup-link EMAIL     print a fresh one-time link that sets the member's portal password
                             (earlier unused links stop working)
  users set-password EMAIL   set the member's password, read from stdin (one line); their sessions end`;

/** `workflows help`. */
export const WORKFLOWS_USAGE = `usage:
  workflows import FILE|DIR        create or replace workflows from JSON definitions (same id → replaced);
                                   a file holds one definition or an array of them (what export --all prints)
  workflows export ID              print one definition as JSON
  workflows export --all [--out DIR]
                                   print every definition as a JSON array, or write DIR/<id>.json each`;

/** The one command that makes another Admin key for every service, should the first one be lost. */
export const NEW_ADMIN_KEY_COMMAND =
  'npm run -s platform -- keys create --type production --role Admin --services all --name admin';

/** Prints a fresh setup link for a member (the owner's, when the first one is lost). */
export const NEW_SETUP_LINK_COMMAND = 'npm run -s platform -- users setup-link EMAIL';

/**
 * The first-start key and the owner's portal setup link (either may be absent), framed so they stand
 * out from the JSON log lines around them. Printed once, never logged: the lines start with box
 * characters, so a log reader taking lines that start with `{` skips them.
 */
export function firstKeyBox(key: string | null, setupUrl?: string): string {
  const keyLines = key
    ? [
        'First start: an owner account and this Admin API key (all services) were created.',
        'It is shown only now; keep it somewhere safe:',
        '',
        `    ${key}`,
        '',
        'Lost it? This makes another (run it where the server keeps its data):',
        `    ${NEW_ADMIN_KEY_COMMAND}`,
      ]
    : [];
  const setupLines = setupUrl
    ? [
        ...(key ? [''] : []),
        'Set the owner’s portal password with this one-time link (valid 7 days):',
        `    ${setupUrl}`,
        `Expired or lost? ${NEW_SETUP_LINK_COMMAND}`,
      ]
    : [];
  const lines = [...keyLines, ...setupLines];
  const width = Math.max(...lines.map((l) => l.length));
  const rule = '─'.repeat(width + 2);
  return ['', `┌${rule}┐`, ...lines.map((l) => `│ ${l.padEnd(width)} │`), `└${rule}┘`, ''].join('\n');
}

/** A listen error a person can act on, as one line; null for any other error. */
export function listenProblem(error: unknown, port: number, host: string): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `Cannot listen on ${where}: port ${port} is already in use (another platform running?). Stop it, or set PORT to a free port, e.g. PORT=${port === 8080 ? 8081 : 8080} npm start.`;
    case 'EACCES':
      return `Cannot listen on ${where}: port ${port} needs privileges here. Set PORT to a port above 1023, e.g. PORT=8080.`;
    case 'EADDRNOTAVAIL':
      return `Cannot listen on ${where}: this machine has no address ${host}. Set HOST to one of its addresses (0.0.0.0: all, 127.0.0.1: local only).`;
    default:
      return null;
  }
}
