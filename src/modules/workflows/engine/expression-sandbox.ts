import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type GuestScript, SandboxPool } from '../../../core/sandbox/sandbox-pool.js';

/**
 * The process's expression sandbox: QuickJS workers with n8n's JavaScript expression runtime (Luxon,
 * jmespath, n8n's data-transformation methods, the Code node's runner), JSONata's browser bundle for
 * workflows that choose it, and the guest side of the evaluator loaded. One per process, started on the first expression (most processes never need
 * it), idle workers do not hold the process open.
 */

export interface ExpressionSandboxOptions {
  workers: number;
  memoryMb: number;
  /** Most workers one account may hold at once; 0 (default): all but one, at least one. */
  perTenant?: number;
  /** The instance's time zone (IANA) for expressions of a workflow without `settings.timezone`; UTC by default. */
  timezone?: string;
}

const DEFAULTS: ExpressionSandboxOptions = { workers: 2, memoryMb: 64 };

/** The per-account cap of workers: as configured, or all but one so another account always finds one. */
function workersPerTenant(sizes: ExpressionSandboxOptions): number {
  const configured = sizes.perTenant ?? 0;
  return Math.min(sizes.workers, configured > 0 ? configured : Math.max(1, sizes.workers - 1));
}

let options = DEFAULTS;
let shared: SandboxPool | undefined;

/** Sets the sizes from configuration; takes effect for the next worker pool (the current one is retired). */
export function configureExpressionSandbox(next: ExpressionSandboxOptions): void {
  if (next.timezone !== undefined && !isTimeZone(next.timezone))
    throw new Error(`GENERIC_TIMEZONE: '${next.timezone}' is not an IANA time zone (e.g. Europe/Berlin)`);
  if (
    shared &&
    (next.workers !== options.workers ||
      next.memoryMb !== options.memoryMb ||
      workersPerTenant(next) !== workersPerTenant(options))
  ) {
    void shared.close();
    shared = undefined;
  }
  options = next;
}

/** The zone of expression dates when the workflow names none (`GENERIC_TIMEZONE`, as in n8n). */
export function defaultTimezone(): string {
  return options.timezone ?? 'UTC';
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function expressionSandbox(): SandboxPool {
  shared ??= createExpressionSandbox(options);
  return shared;
}

export function createExpressionSandbox(sizes: ExpressionSandboxOptions): SandboxPool {
  return new SandboxPool({
    scripts: guestScripts(),
    workers: sizes.workers,
    memoryMb: sizes.memoryMb,
    maxPerTenant: workersPerTenant(sizes),
  });
}

let scripts: GuestScript[] | undefined;

function guestScripts(): GuestScript[] {
  if (scripts) return scripts;
  const require = createRequire(import.meta.url);
  const packageFile = (name: string, file: string) =>
    readFileSync(join(dirname(require.resolve(`${name}/package.json`)), file), 'utf8');
  // The browser bundle is UMD: given `module`, it exports there instead of reaching for a global.
  const jsonata = `(function(){var module={exports:{}};var exports=module.exports;\n${packageFile('jsonata', 'jsonata.min.js')}\n;globalThis.jsonata=module.exports;})();`;
  const guest = (file: string): GuestScript => ({
    name: file,
    code: readFileSync(new URL(file, import.meta.url), 'utf8'),
    // A module: the build may add `export {}` to a file it sees as one, which only module code accepts.
    module: true,
  });
  scripts = [
    { name: 'jsonata.js', code: jsonata },
    guest('./expression-guest.js'),
    guest('./guest/intl.js'),
    // Luxon's global build defines `var luxon`; jmespath's defines `this.jmespath` on the global object.
    { name: 'luxon.js', code: packageFile('luxon', 'build/global/luxon.min.js') },
    { name: 'jmespath.js', code: packageFile('jmespath', 'jmespath.js') },
    guest('./guest/buffer.js'),
    guest('./guest/n8n-extensions.js'),
    guest('./guest/n8n-guest.js'),
    // Last: freezes every built-in, hidden intrinsic and guest function, so the calls of one execution
    // cannot change each other's world (executions never share one: the worker restores its heap).
    guest('./guest/harden.js'),
  ];
  return scripts;
}
