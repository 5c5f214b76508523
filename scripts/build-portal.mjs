#!/usr/bin/env node
// Bundles the developer portal (web/portal, Preact + TSX) with esbuild into dist/portal/:
// index.html (served with no-cache) and assets/app.[hash].js|css (served immutable).
// A build writes a fresh folder and swaps it in, so a server never serves half a build.
//
//   node scripts/build-portal.mjs              build into dist/portal
//   node scripts/build-portal.mjs --out DIR    build into DIR (tests build their own copy)
//
// scripts/ensure-build.mjs runs it when web/portal changed since dist/portal/.build-stamp.
import { mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const PORTAL_SOURCE = path.join(root, 'web', 'portal');
export const PORTAL_OUT = path.join(root, 'dist', 'portal');
export const STAMP_NAME = '.build-stamp';

const escapeAttr = (value) => value.replaceAll('&', '&amp;').replaceAll('"', '&quot;');

/** Builds the portal into `outDir`; returns the asset paths index.html references. */
export async function buildPortal({ outDir = PORTAL_OUT } = {}) {
  const esbuild = await import('esbuild');
  const startedAt = new Date();
  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: { app: path.join(PORTAL_SOURCE, 'src', 'main.tsx') },
      outdir: path.join(staging, 'assets'),
      entryNames: '[name].[hash]',
      assetNames: '[name].[hash]',
      bundle: true,
      format: 'esm',
      target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
      jsx: 'automatic',
      jsxImportSource: 'preact',
      tsconfig: path.join(PORTAL_SOURCE, 'tsconfig.json'),
      minify: true,
      sourcemap: 'linked',
      metafile: true,
      legalComments: 'none',
      logLevel: 'warning',
      define: { 'process.env.NODE_ENV': '"production"' },
    });
    const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
    const js = outputs.find((f) => /^app\.[A-Z0-9]+\.js$/i.test(f));
    const css = outputs.find((f) => /^app\.[A-Z0-9]+\.css$/i.test(f));
    if (!js || !css) throw new Error(`esbuild wrote no app.[hash].js and .css (wrote ${outputs.join(', ')})`);
    const assets = { js: `/portal/assets/${js}`, css: `/portal/assets/${css}` };
    const template = readFileSync(path.join(PORTAL_SOURCE, 'index.html'), 'utf8');
    const html = template
      .replace('%APP_CSS%', escapeAttr(assets.css))
      .replace('%APP_JS%', escapeAttr(assets.js));
    writeFileSync(path.join(staging, 'index.html'), html);
    writeFileSync(path.join(staging, STAMP_NAME), '');
    // The stamp takes the time the build started: a file saved during the build makes the next start rebuild.
    utimesSync(path.join(staging, STAMP_NAME), startedAt, startedAt);
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(path.dirname(outDir), { recursive: true });
    renameSync(staging, outDir);
    return assets;
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out');
  const outDir = at > 0 && process.argv[at + 1] ? path.resolve(process.argv[at + 1]) : PORTAL_OUT;
  try {
    const started = Date.now();
    await buildPortal({ outDir });
    process.stderr.write(
      `portal built into ${path.relative(root, outDir) || outDir} in ${Date.now() - started} ms.\n`,
    );
  } catch (error) {
    process.stderr.write(
      `the portal build failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
}
