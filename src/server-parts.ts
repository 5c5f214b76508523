/**
 * Everything `serve` and `worker` load, behind one module: the build bundles it into dist/bundle/
 * (scripts/ensure-build.mjs), which main.ts loads instead when it exists. One import of it gives one
 * copy of each module's state (the expression sandbox warmed before the app is built is the app's).
 */
export { default as closeWithGrace } from 'close-with-grace';
export { buildApp } from './app.js';
export { enabledServices, loadConfig } from './config.js';
export { serveWorkerMetrics } from './core/metrics/index.js';
export { handleProcessErrors } from './core/process-faults.js';
export {
  configureExpressionSandbox,
  expressionSandbox,
} from './modules/workflows/engine/expression-sandbox.js';
