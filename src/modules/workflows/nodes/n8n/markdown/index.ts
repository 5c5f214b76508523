import type { NodeHtmlMarkdownOptions } from 'node-html-markdown';
import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';
import { setField } from '../file-helpers/paths.js';

const PatternPair = Type.Object(
  { pattern: Type.String({ default: '' }), replacement: Type.String({ default: '' }) },
  { additionalProperties: false },
);

/** HTML to Markdown options (node-html-markdown's) and Markdown to HTML options (showdown's): one collection. */
const MarkdownOptions = Type.Object(
  {
    bulletMarker: Type.Optional(Type.String()),
    codeFence: Type.Optional(Type.String()),
    emDelimiter: Type.Optional(Type.String()),
    globalEscape: Type.Optional(
      Type.Object({ value: Type.Optional(PatternPair) }, { additionalProperties: false }),
    ),
    ignore: Type.Optional(Type.String()),
    keepDataImages: Type.Optional(Type.Boolean()),
    lineStartEscape: Type.Optional(
      Type.Object({ value: Type.Optional(PatternPair) }, { additionalProperties: false }),
    ),
    maxConsecutiveNewlines: Type.Optional(Type.Number()),
    useLinkReferenceDefinitions: Type.Optional(Type.Boolean()),
    strongDelimiter: Type.Optional(Type.String()),
    codeBlockStyle: Type.Optional(Type.Union([Type.Literal('fence'), Type.Literal('indented')])),
    textReplace: Type.Optional(
      Type.Object({ values: Type.Optional(Type.Array(PatternPair)) }, { additionalProperties: false }),
    ),
    blockElements: Type.Optional(Type.String()),
    // showdown
    openLinksInNewWindow: Type.Optional(Type.Boolean()),
    simplifiedAutoLink: Type.Optional(Type.Boolean()),
    backslashEscapesHTMLTags: Type.Optional(Type.Boolean()),
    completeHTMLDocument: Type.Optional(Type.Boolean()),
    customizedHeaderId: Type.Optional(Type.Boolean()),
    emoji: Type.Optional(Type.Boolean()),
    encodeEmails: Type.Optional(Type.Boolean()),
    excludeTrailingPunctuationFromURLs: Type.Optional(Type.Boolean()),
    ghCodeBlocks: Type.Optional(Type.Boolean()),
    ghCompatibleHeaderId: Type.Optional(Type.Boolean()),
    ghMentionsLink: Type.Optional(Type.String()),
    ghMentions: Type.Optional(Type.Boolean()),
    tasklists: Type.Optional(Type.Boolean()),
    headerLevelStart: Type.Optional(Type.Number()),
    requireSpaceBeforeHeadingText: Type.Optional(Type.Boolean()),
    literalMidWordAsterisks: Type.Optional(Type.Boolean()),
    literalMidWordUnderscores: Type.Optional(Type.Boolean()),
    noHeaderId: Type.Optional(Type.Boolean()),
    parseImgDimensions: Type.Optional(Type.Boolean()),
    prefixHeaderId: Type.Optional(Type.String()),
    rawHeaderId: Type.Optional(Type.Boolean()),
    rawPrefixHeaderId: Type.Optional(Type.Boolean()),
    simpleLineBreaks: Type.Optional(Type.Boolean()),
    smartIndentationFix: Type.Optional(Type.Boolean()),
    disableForced4SpacesIndentedSublists: Type.Optional(Type.Boolean()),
    splitAdjacentBlockquotes: Type.Optional(Type.Boolean()),
    strikethrough: Type.Optional(Type.Boolean()),
    tablesHeaderId: Type.Optional(Type.Boolean()),
    tables: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, default: {} },
);

const MarkdownParameters = Type.Object(
  {
    mode: Type.Union([Type.Literal('markdownToHtml'), Type.Literal('htmlToMarkdown')], {
      default: 'htmlToMarkdown',
    }),
    html: Type.String({ default: '' }),
    markdown: Type.String({ default: '' }),
    destinationKey: Type.String({ default: 'data' }),
    options: MarkdownOptions,
  },
  { additionalProperties: false },
);

type Options = Record<string, unknown>;

const SHOWDOWN_KEYS = new Set([
  'openLinksInNewWindow',
  'simplifiedAutoLink',
  'backslashEscapesHTMLTags',
  'completeHTMLDocument',
  'customizedHeaderId',
  'emoji',
  'encodeEmails',
  'excludeTrailingPunctuationFromURLs',
  'ghCodeBlocks',
  'ghCompatibleHeaderId',
  'ghMentionsLink',
  'ghMentions',
  'tasklists',
  'headerLevelStart',
  'requireSpaceBeforeHeadingText',
  'literalMidWordAsterisks',
  'literalMidWordUnderscores',
  'noHeaderId',
  'parseImgDimensions',
  'prefixHeaderId',
  'rawHeaderId',
  'rawPrefixHeaderId',
  'simpleLineBreaks',
  'smartIndentationFix',
  'disableForced4SpacesIndentedSublists',
  'splitAdjacentBlockquotes',
  'strikethrough',
  'tablesHeaderId',
  'tables',
]);

/** A pattern of n8n's options is a regular expression source (node-html-markdown takes RegExps). */
function regex(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'g');
  } catch {
    throw new NodeOperationError(`Invalid regular expression '${pattern}'`);
  }
}

/** n8n's option mapping to node-html-markdown: lists from comma lists, pattern pairs, only truthy values. */
function htmlToMarkdownOptions(options: Options): Partial<NodeHtmlMarkdownOptions> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (SHOWDOWN_KEYS.has(key) || !value) continue;
    if (key === 'textReplace') {
      const pairs = (value as { values?: Array<{ pattern: string; replacement: string }> }).values ?? [];
      if (pairs.length > 0) out.textReplace = pairs.map((e) => [regex(e.pattern), e.replacement]);
    } else if (key === 'lineStartEscape' || key === 'globalEscape') {
      const pair = (value as { value?: { pattern: string; replacement: string } }).value;
      if (pair) out[key] = [regex(pair.pattern), pair.replacement];
    } else if (key === 'ignore' || key === 'blockElements') {
      out[key] = String(value)
        .split(',')
        .map((e) => e.trim());
    } else out[key] = value;
  }
  return out as Partial<NodeHtmlMarkdownOptions>;
}

/**
 * n8n's Markdown node (v1): HTML to Markdown through node-html-markdown, Markdown to HTML through
 * showdown (both n8n's libraries), written at `destinationKey` of a copy of the item.
 */
export const n8nMarkdownNode = defineNode({
  type: 'n8n-nodes-base.markdown',
  versions: [1],
  schema: MarkdownParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const json = structuredClone(item.json);
      let result: string;
      if (p.mode === 'htmlToMarkdown') {
        assertSize('HTML', Buffer.byteLength(p.html), FILE_LIMITS.markdownBytes);
        // Both converters load when the node first runs, not at every start.
        const { NodeHtmlMarkdown } = await import('node-html-markdown');
        result = NodeHtmlMarkdown.translate(p.html, htmlToMarkdownOptions(p.options as Options));
      } else {
        assertSize('Markdown', Buffer.byteLength(p.markdown), FILE_LIMITS.markdownBytes);
        const { default: showdown } = await import('showdown');
        const converter = new showdown.Converter();
        for (const [key, value] of Object.entries(p.options)) converter.setOption(key, value);
        result = converter.makeHtml(p.markdown);
      }
      setField(json, p.destinationKey, result as Json);
      out.push({ json, pairedItem: { item: i } });
    }
    return output(out);
  },
});
