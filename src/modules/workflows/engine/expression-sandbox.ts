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
}

const DEFAULTS: ExpressionSandboxOptions = { workers: 2, memoryMb: 64 };

let options = DEFAULTS;
let shared: SandboxPool | undefined;

/** Sets the sizes from configuration; takes effect for the next worker pool (the current one is retired). */
export function configureExpressionSandbox(next: ExpressionSandboxOptions): void {
  if (shared && (next.workers !== options.workers || next.memoryMb !== options.memoryMb)) {
    void shared.close();
    shared = undefined;
  }
  options = next;
}

export function expressionSandbox(): SandboxPool {
  shared ??= createExpressionSandbox(options);
  return shared;
}

export function createExpressionSandbox(sizes: ExpressionSandboxOptions): SandboxPool {
  return new SandboxPool({ scripts: guestScripts(), workers: sizes.workers, memoryMb: sizes.memoryMb });
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
    // Last: freezes every built-in and guest function, so evaluations cannot change each other's world.
    guest('./guest/harden.js'),
  ];
  return scripts;
}
