import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tscPath } from '../../scripts/tsc-path.mjs';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A project whose node_modules holds the named packages (each only its package.json). */
function project(packages: string[]): string {
  const root = mkdtempSync(path.join(tmpdir(), 'tsc-path-'));
  dirs.push(root);
  writeFileSync(path.join(root, 'package.json'), '{}');
  for (const name of packages) {
    const dir = path.join(root, 'node_modules', ...name.split('/'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name }));
  }
  return root;
}

const native = `@typescript/typescript-${process.platform}-${process.arch}`;

describe('scripts/tsc-path.mjs', () => {
  it("prefers TypeScript 7's native compiler when its platform binary is installed", () => {
    const root = project(['typescript', '@typescript/native', native]);
    expect(tscPath(root)).toBe(path.join(root, 'node_modules', '@typescript', 'native', 'bin', 'tsc'));
  });

  it('falls back to TypeScript 5.9 when the platform binary is missing (an unsupported platform)', () => {
    const root = project(['typescript', '@typescript/native']);
    expect(tscPath(root)).toBe(path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'));
  });

  it('answers null without any TypeScript (installed without dev dependencies)', () => {
    expect(tscPath(project([]))).toBeNull();
  });

  it("is this checkout's native compiler", () => {
    expect(tscPath(path.resolve('.'))).toMatch(/@typescript\/native\/bin\/tsc$/);
  });
});
