import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * Layers point down only (DESIGN.md "Layout", STYLE.md 13): `src/core/` never imports `src/modules/`,
 * and a module imports another module only through that module's `index.ts`. Every import form
 * counts: `import`, `import type`, `export … from` and `import()`.
 */

const SRC = path.resolve('src');
const MODULES = path.join(SRC, 'modules');
const CORE = path.join(SRC, 'core');

/**
 * Known arrows that break the rule, each until a move under way removes it. The list only shrinks:
 * an entry no import needs any more fails the test too, so it is deleted when its move lands.
 */
const ALLOWED: ReadonlyArray<{ from: string; to: string; until: string }> = [];

/** Why an import from `from` of `to` (both absolute, resolved) breaks the layering; null when it does not. */
function problemOf(from: string, to: string): string | null {
  const inside = (dir: string, file: string) => file.startsWith(`${dir}${path.sep}`);
  if (inside(CORE, from) && inside(MODULES, to)) return 'core/ imports modules/';
  if (!inside(MODULES, from) || !inside(MODULES, to)) return null;
  const moduleOf = (file: string) => path.relative(MODULES, file).split(path.sep)[0];
  const target = moduleOf(to);
  if (moduleOf(from) === target) return null;
  if (to === path.join(MODULES, target as string, 'index.ts')) return null;
  return `imports module ${target}'s internal file instead of its index.ts`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The files a source file imports by relative path, resolved (`.js` in imports is the `.ts` file). */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => {
      const resolved = path.resolve(path.dirname(file), name);
      if (/\.js$/.test(resolved)) return resolved.replace(/\.js$/, '.ts');
      if (/\.jsx$/.test(resolved)) return resolved.replace(/\.jsx$/, '.tsx');
      return resolved;
    });
}

interface Arrow {
  from: string;
  to: string;
  problem: string;
}

function arrowsBreakingTheRule(): Arrow[] {
  const arrows: Arrow[] = [];
  for (const file of [...sourceFiles(CORE), ...sourceFiles(MODULES)])
    for (const target of importsOf(file)) {
      const problem = problemOf(file, target);
      if (problem) arrows.push({ from: path.relative(SRC, file), to: path.relative(SRC, target), problem });
    }
  return arrows;
}

const same = (a: { from: string; to: string }, b: { from: string; to: string }) =>
  a.from === b.from && a.to === b.to;

describe('the layers of src/', () => {
  const arrows = arrowsBreakingTheRule();

  it('core/ imports no module, and a module reaches another only through its index.ts', () => {
    const unexpected = arrows
      .filter((a) => !ALLOWED.some((allowed) => same(a, allowed)))
      .map((a) => `${a.from} → ${a.to}: ${a.problem}`);
    expect(unexpected).toEqual([]);
  });

  it('the allow-list holds only arrows that still exist', () => {
    const stale = ALLOWED.filter((allowed) => !arrows.some((a) => same(a, allowed))).map(
      (a) => `${a.from} → ${a.to} (${a.until}): gone, delete it from ALLOWED`,
    );
    expect(stale).toEqual([]);
  });

  it('the rule tells the arrows apart', () => {
    const at = (p: string) => path.join(SRC, p);
    expect(problemOf(at('core/queue/index.ts'), at('modules/llm/index.ts'))).toBe('core/ imports modules/');
    expect(problemOf(at('modules/agents/tools.ts'), at('modules/documents/knowledge-service.ts'))).toMatch(
      /internal file/,
    );
    expect(problemOf(at('modules/agents/tools.ts'), at('modules/documents/index.ts'))).toBeNull();
    expect(problemOf(at('modules/agents/tools.ts'), at('modules/agents/tool-specs.ts'))).toBeNull();
    expect(problemOf(at('modules/agents/tools.ts'), at('core/ids.ts'))).toBeNull();
    // A module's own sub-folder may reach its index; another module's sub-folder index may not be reached.
    expect(problemOf(at('modules/flows/x.ts'), at('modules/workflows/engine/index.ts'))).toMatch(
      /internal file/,
    );
  });

  it('sees every import form', () => {
    const { importedFiles } = ts.preProcessFile(
      [
        "import a from './a.js';",
        "import type { B } from './b.js';",
        "export { c } from './c.js';",
        "const d = await import('./d.js');",
      ].join('\n'),
      true,
      true,
    );
    expect(importedFiles.map((i) => i.fileName)).toEqual(['./a.js', './b.js', './c.js', './d.js']);
  });
});

describe('docs/architecture.md', () => {
  it('draws the module graph the code has (npm run architecture redraws it)', async () => {
    const { execFile } = await import('node:child_process');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['scripts/architecture.mjs', '--check'],
        (_err, _out, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
