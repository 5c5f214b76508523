import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type GuestScript, SandboxPool } from '../../../core/sandbox/sandbox-pool.js';

/**
 * The process's expression sandbox: QuickJS workers with JSONata's browser bundle and the guest side of
 * the evaluator loaded. One per process, started on the first expression (most processes never need
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
  const jsonataDir = dirname(createRequire(import.meta.url).resolve('jsonata'));
  // The browser bundle is UMD: given `module`, it exports there instead of reaching for a global.
  const bundle = readFileSync(join(jsonataDir, 'jsonata.min.js'), 'utf8');
  const jsonata = `(function(){var module={exports:{}};var exports=module.exports;\n${bundle}\n;globalThis.jsonata=module.exports;})();`;
  const guest = readFileSync(new URL('./expression-guest.js', import.meta.url), 'utf8');
  scripts = [
    { name: 'jsonata.js', code: jsonata },
    // A module: the build may add `export {}` to a file it sees as one, which only module code accepts.
    { name: 'expression-guest.js', code: guest, module: true },
  ];
  return scripts;
}
