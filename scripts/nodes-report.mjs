// `npm run nodes-report`: rewrites the README's table of supported n8n node types from the node registry.
import { readFileSync, writeFileSync } from 'node:fs';
import { defaultNodeRegistry } from '../src/modules/workflows/nodes/index.js';
import { nodeReport, withReport } from '../src/modules/workflows/nodes/report.js';

const readme = readFileSync('README.md', 'utf8');
writeFileSync('README.md', withReport(readme, nodeReport(defaultNodeRegistry)));
console.log(
  `README.md: ${defaultNodeRegistry.types.filter((t) => t.versions).length} n8n node definitions listed`,
);
