import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { nodeReport, REPORT_END, REPORT_START } from '../../src/modules/workflows/nodes/report.js';

describe('the README lists the supported n8n node types', () => {
  it('matches the registry (run `npm run nodes-report` after adding a node type or version)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(
      readme.indexOf(REPORT_START),
      readme.indexOf(REPORT_END) + REPORT_END.length,
    );
    expect(section).toBe(nodeReport(defaultNodeRegistry));
    expect(section).toContain('`n8n-nodes-base.code` | 1, 2 |');
  });
});
