/**
 * Notion-style blocks → Markdown, shared by the workspace reader of the documents module and the
 * platform's Markdown workflow node. Pure: JSON in, text out.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

type Obj = { [key: string]: Json };
const obj = (v: Json | undefined): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {});
const arr = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : []);

/** Rich text with annotations (bold, italic, strikethrough, code) and links → inline Markdown. */
function richTextToMarkdown(richText: Json | undefined): string {
  return arr(richText)
    .map((rt) => {
      const r = obj(rt);
      const text = obj(r.text);
      let s =
        typeof r.plain_text === 'string'
          ? r.plain_text
          : typeof text.content === 'string'
            ? text.content
            : '';
      if (s === '') return '';
      const a = obj(r.annotations);
      if (a.code === true) s = `\`${s}\``;
      else s = s.replace(/([\\*_`[\]])/g, '\\$1');
      if (a.bold === true) s = `**${s}**`;
      if (a.italic === true) s = `_${s}_`;
      if (a.strikethrough === true) s = `~~${s}~~`;
      const link = typeof r.href === 'string' ? r.href : obj(text.link).url;
      if (typeof link === 'string' && link !== '') s = `[${s}](${link})`;
      return s;
    })
    .join('');
}

/** Notion-style blocks → Markdown: paragraphs, headings, lists (nested by `children`), to-dos, code, quotes, dividers. */
export function blocksToMarkdown(blocks: Json | undefined, depth = 0): string {
  const indent = '  '.repeat(depth);
  const lines: string[] = [];
  let number = 0;
  const list = arr(blocks);
  list.forEach((b, i) => {
    const block = obj(b);
    const type = typeof block.type === 'string' ? block.type : '';
    const body = obj(block[type]);
    const text = richTextToMarkdown(body.rich_text);
    number = type === 'numbered_list_item' ? number + 1 : 0;
    const isListItem = ['bulleted_list_item', 'numbered_list_item', 'to_do'].includes(type);
    let line: string | null;
    switch (type) {
      case 'paragraph':
        line = text;
        break;
      case 'heading_1':
        line = `# ${text}`;
        break;
      case 'heading_2':
        line = `## ${text}`;
        break;
      case 'heading_3':
        line = `### ${text}`;
        break;
      case 'bulleted_list_item':
        line = `- ${text}`;
        break;
      case 'numbered_list_item':
        line = `${number}. ${text}`;
        break;
      case 'to_do':
        line = `- [${body.checked === true ? 'x' : ' '}] ${text}`;
        break;
      case 'quote':
        line = `> ${text}`;
        break;
      case 'divider':
        line = '---';
        break;
      case 'code': {
        const lang = typeof body.language === 'string' && body.language !== 'plain text' ? body.language : '';
        const code = arr(body.rich_text)
          .map((r) => {
            const o = obj(r);
            return typeof o.plain_text === 'string' ? o.plain_text : String(obj(o.text).content ?? '');
          })
          .join('');
        line = `\`\`\`${lang}\n${code}\n\`\`\``;
        break;
      }
      default:
        line = text === '' ? null : text; // unknown block types: keep their text
    }
    if (line !== null)
      lines.push(
        line
          .split('\n')
          .map((l) => indent + l)
          .join('\n'),
      );
    const children = arr(block.children ?? body.children);
    if (children.length > 0) lines.push(blocksToMarkdown(children, isListItem ? depth + 1 : depth));
    const next = obj(list[i + 1]).type;
    const nextIsList =
      typeof next === 'string' && ['bulleted_list_item', 'numbered_list_item', 'to_do'].includes(next);
    if (i < list.length - 1 && !(isListItem && nextIsList)) lines.push('');
  });
  const md = lines.join('\n');
  return depth === 0 ? trimTrailingNewlines(md) : md;
}

/** A loop, not `/\n+$/`: that regex retries at every newline and is quadratic on a long run of them. */
function trimTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return text.slice(0, end);
}
