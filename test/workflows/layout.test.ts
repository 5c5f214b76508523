import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const MODULE = path.resolve(import.meta.dirname, '../../src/modules/workflows');

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(full)));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

describe('the workflows module in rooms', () => {
  it('keeps only its surface at the top: the module, its routes, schemas and tables', async () => {
    const top = (await readdir(MODULE, { withFileTypes: true }))
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => e.name)
      .sort();
    expect(top).toEqual(['index.ts', 'routes.ts', 'schemas.ts', 'tables.ts']);
  });

  it("below the routes nothing imports Fastify's types: a webhook call is a plain value", async () => {
    const offenders: string[] = [];
    for (const file of await sources(MODULE)) {
      if (path.basename(file) === 'routes.ts' || file === path.join(MODULE, 'index.ts')) continue;
      const text = await readFile(file, 'utf8');
      if (/from\s+'fastify'/.test(text)) offenders.push(path.relative(MODULE, file));
    }
    expect(offenders).toEqual([]);
  });
});
