#!/usr/bin/env node
/**
 * Draws docs/architecture.md's dependency picture from the code: which module imports which (through
 * its index.ts), and core at the bottom. `--check` exits 1 when the picture in the file is stale, so
 * the test suite keeps it true. Plain import scanning: relative specifiers only, type imports included
 * (a type import is still a dependency a reader has to know about).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const doc = path.join(root, 'docs', 'architecture.md');
const START = '<!-- module-graph:start (npm run architecture) -->';
const END = '<!-- module-graph:end -->';

function files(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...files(full));
    else if (/\.(ts|mjs|js)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) out.push(full);
  }
  return out;
}

/** `modules/<name>` or `core` or `app` for a path under src/. */
function ownerOf(file) {
  const rel = path.relative(src, file).split(path.sep);
  if (rel[0] === 'modules' && rel.length > 2) return rel[1];
  if (rel[0] === 'core') return 'core';
  return null;
}

export function moduleGraph() {
  const edges = new Map();
  for (const file of files(src)) {
    const from = ownerOf(file);
    if (from === null) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
      const to = ownerOf(path.resolve(path.dirname(file), m[1]));
      if (to === null || to === from) continue;
      const key = `${from} --> ${to}`;
      edges.set(key, (edges.get(key) ?? 0) + 1);
    }
  }
  return [...edges.keys()].filter((e) => !e.endsWith('--> core')).sort();
}

function render() {
  const lines = ['```mermaid', 'flowchart TD'];
  for (const edge of moduleGraph()) lines.push(`  ${edge.replaceAll('-', '_').replace('__>', '-->')}`);
  lines.push('  %% every module also imports core; core imports no module', '```');
  return lines.join('\n');
}

const text = readFileSync(doc, 'utf8');
const start = text.indexOf(START);
const end = text.indexOf(END);
if (start < 0 || end < start) {
  console.error(`${doc} has no ${START} … ${END} block`);
  process.exit(1);
}
const next = `${text.slice(0, start + START.length)}\n${render()}\n${text.slice(end)}`;
if (process.argv.includes('--check')) {
  if (next !== text) {
    console.error('docs/architecture.md: the module graph is stale; run `npm run architecture`');
    process.exit(1);
  }
} else if (next !== text) {
  writeFileSync(doc, next);
  console.log('docs/architecture.md: module graph updated');
}
