import type { Item, Json } from '../../../engine/types.js';

export interface TableOptions {
  capitalize?: boolean;
  customStyling?: boolean;
  caption?: string;
  tableAttributes?: string;
  headerAttributes?: string;
}

const capitalizeHeader = (header: string, capitalize?: boolean) =>
  capitalize
    ? header
        .split('_')
        .filter((word) => word)
        .map((word) => (word[0] ?? '').toUpperCase() + word.slice(1))
        .join(' ')
    : header;

/** A cell as n8n writes it: a checkbox for a boolean, else the value as JavaScript prints it. */
function cell(value: Json | undefined): string {
  if (typeof value === 'boolean') return `<input type="checkbox" ${value ? 'checked="checked"' : ''}/>`;
  if (value !== null && typeof value === 'object')
    return Array.isArray(value) ? value.join(',') : '[object Object]';
  return String(value);
}

/**
 * n8n's "Convert to HTML Table": every item a row, the union of their keys the header, n8n's inline
 * styles unless `customStyling`. Values are written as n8n writes them (not escaped), so the output
 * matches n8n's byte for byte.
 */
export function htmlTable(
  items: Item[],
  options: TableOptions,
  rowAttributes: (i: number) => string,
  cellAttributes: (i: number) => string,
): string {
  const tableStyle = options.customStyling
    ? ''
    : "style='border-spacing:0; font-family:helvetica,arial,sans-serif'";
  const headerStyle = options.customStyling
    ? ''
    : "style='margin:0; padding:7px 20px 7px 0px; border-bottom:1px solid #eee; text-align:left; color:#888; font-weight:normal'";
  const cellStyle = options.customStyling
    ? ''
    : "style='margin:0; padding:7px 20px 7px 0px; border-bottom:1px solid #eee'";
  const headers = [...new Set(items.flatMap((i) => Object.keys(i.json)))];
  let table = `<table ${tableStyle} ${options.tableAttributes || ''}>`;
  if (options.caption) table += `<caption>${options.caption}</caption>`;
  table += `<thead ${headerStyle} ${options.headerAttributes || ''}>`;
  table += `<tr>${headers.map((h) => `<th>${capitalizeHeader(h, options.capitalize)}</th>`).join('')}</tr>`;
  table += '</thead><tbody>';
  items.forEach((item, i) => {
    table += `<tr  ${rowAttributes(i)}>`;
    table += headers.map((h) => `<td ${cellStyle} ${cellAttributes(i)}>${cell(item.json[h])}</td>`).join('');
    table += '</tr>';
  });
  return `${table}</tbody></table>`;
}
