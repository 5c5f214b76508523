import { describe, expect, it } from 'vitest';
import { blocksToMarkdown } from '../../../../../core/blocks-markdown.js';
import { ctx, jsonOf, testDeps, trigger, webhookNode, workflow } from '../../../engine/testing.js';
import type { Json } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const rt = (text: string, annotations: Record<string, boolean> = {}, href?: string) => ({
  type: 'text',
  plain_text: text,
  text: { content: text, link: href ? { url: href } : null },
  annotations,
  ...(href ? { href } : {}),
});
const block = (type: string, body: Record<string, unknown>, extra: Record<string, unknown> = {}): Json =>
  ({ object: 'block', type, [type]: body, ...extra }) as Json;

describe('blocksToMarkdown', () => {
  it('converts headings, paragraphs with annotations and links, lists, to-dos, code, quotes and dividers', () => {
    const blocks = [
      block('heading_1', { rich_text: [rt('Title')] }),
      block('paragraph', {
        rich_text: [
          rt('Plain, '),
          rt('bold', { bold: true }),
          rt(', '),
          rt('it', { italic: true }),
          rt(' '),
          rt('x()', { code: true }),
          rt(' '),
          rt('docs', {}, 'https://d.test'),
        ],
      }),
      block('heading_2', { rich_text: [rt('Sub')] }),
      block(
        'bulleted_list_item',
        { rich_text: [rt('one')] },
        { children: [block('bulleted_list_item', { rich_text: [rt('nested')] })] },
      ),
      block('bulleted_list_item', { rich_text: [rt('two')] }),
      block('numbered_list_item', { rich_text: [rt('first')] }),
      block('numbered_list_item', { rich_text: [rt('second')] }),
      block('to_do', { rich_text: [rt('done')], checked: true }),
      block('to_do', { rich_text: [rt('open')], checked: false }),
      block('heading_3', { rich_text: [rt('Code')] }),
      block('code', { rich_text: [rt('const a = 1;\nconsole.log(a);')], language: 'typescript' }),
      block('quote', { rich_text: [rt('wise '), rt('words', { strikethrough: true })] }),
      block('divider', {}),
      block('paragraph', { rich_text: [rt('a *star* and _under_')] }),
    ];
    expect(blocksToMarkdown(blocks)).toBe(
      [
        '# Title',
        '',
        'Plain, **bold**, _it_ `x()` [docs](https://d.test)',
        '',
        '## Sub',
        '',
        '- one',
        '  - nested',
        '- two',
        '1. first',
        '2. second',
        '- [x] done',
        '- [ ] open',
        '',
        '### Code',
        '',
        '```typescript\nconst a = 1;\nconsole.log(a);\n```',
        '',
        '> wise ~~words~~',
        '',
        '---',
        '',
        'a \\*star\\* and \\_under\\_',
      ].join('\n'),
    );
  });

  it('restarts numbering after another block and ignores empty unknown blocks', () => {
    const blocks = [
      block('numbered_list_item', { rich_text: [rt('a')] }),
      block('paragraph', { rich_text: [rt('break')] }),
      block('numbered_list_item', { rich_text: [rt('b')] }),
      block('image', {}),
    ];
    expect(blocksToMarkdown(blocks)).toBe('1. a\n\nbreak\n\n1. b');
  });

  it('returns an empty string for no blocks', () => {
    expect(blocksToMarkdown(undefined)).toBe('');
  });
});

describe('blocksToMarkdown on hostile input (audit: a quadratic regex held the server 3.3 s on 120 KB)', () => {
  it('trims a long run of newlines that is not at the end in linear time', () => {
    // `/\n+$/` retried at each of these newlines and scanned the rest: minutes for 2 MB, past the test timeout.
    const text = `${'\n'.repeat(2_000_000)}end`;
    const md = blocksToMarkdown([block('paragraph', { rich_text: [rt(text)] }), block('divider', {})]);
    expect(md.endsWith('end\n\n---')).toBe(true);
    expect(blocksToMarkdown([block('paragraph', { rich_text: [rt(`x${'\n'.repeat(100_000)}`)] })])).toBe('x');
  });
});

describe('markdown node', () => {
  it('writes the Markdown of each item to the destination field', async () => {
    const def = workflow(
      [
        webhookNode,
        { name: 'MD', type: 'markdown', parameters: { field: 'page.results', destinationField: 'doc.md' } },
      ],
      [['Webhook', 'MD']],
    );
    const out = await new WorkflowEngine(testDeps(), defaultNodeRegistry).run(
      def,
      trigger([{ json: { page: { results: [block('heading_1', { rich_text: [rt('Hi')] })] } } }]),
      ctx,
    );
    expect(jsonOf(out.state, 'MD')[0]?.doc).toEqual({ md: '# Hi' });
  });
});
