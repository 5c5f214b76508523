#!/usr/bin/env node
/** `npm run typecheck`: the server (src, test, eval) and the portal's browser code, both at once. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tscPath } from './tsc-path.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = tscPath(root);
if (!tsc) {
  console.error('TypeScript is not installed (npm install without dev dependencies?)');
  process.exit(1);
}

const check = (project) =>
  new Promise((resolve) => {
    const chunks = [];
    const child = spawn(process.execPath, [tsc, '-p', project, '--noEmit'], { cwd: root });
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.once('error', (error) => resolve({ project, code: 1, output: String(error) }));
    child.once('close', (code) =>
      resolve({ project, code: code ?? 1, output: Buffer.concat(chunks).toString() }),
    );
  });

const results = await Promise.all([check('tsconfig.json'), check('web/portal/tsconfig.json')]);
for (const { project, code, output } of results) {
  if (output.trim()) process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
  if (code !== 0) console.error(`typecheck: ${project} has errors`);
}
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
