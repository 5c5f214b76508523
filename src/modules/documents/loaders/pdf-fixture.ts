/**
 * Test support: a small valid PDF written by hand (one Helvetica text line per page, an Info title), with
 * the cross-reference offsets computed, so tests need no binary fixture files.
 */
import { deflateSync } from 'node:zlib';

export function buildPdf(pages: string[], title?: string): Buffer {
  const objects: string[] = [];
  const add = (body: string): number => objects.push(body);
  const catalog = add('');
  const pageTree = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const kids: number[] = [];
  for (const text of pages) {
    const escaped = text.replace(/[\\()]/g, (c) => `\\${c}`);
    const stream = `BT /F1 18 Tf 72 720 Td (${escaped}) Tj ET`;
    const content = add(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
    kids.push(
      add(
        `<< /Type /Page /Parent ${pageTree} 0 R /MediaBox [0 0 612 792] /Contents ${content} 0 R ` +
          `/Resources << /Font << /F1 ${font} 0 R >> >> >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pageTree} 0 R >>`;
  objects[pageTree - 1] =
    `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  const info = title === undefined ? undefined : add(`<< /Title (${title}) >>`);

  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${info ? ` /Info ${info} 0 R` : ''} >>\n`;
  out += `startxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A one-page PDF whose content stream is `decodedBytes` of spaces after some text, deflated: a bomb. */
export function buildFlateBombPdf(decodedBytes: number): Buffer {
  const payload = Buffer.alloc(decodedBytes, 0x20);
  payload.write('BT /F1 18 Tf 72 720 Td (boom) Tj ET', 0, 'latin1');
  const data = deflateSync(payload, { level: 9 });
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let length = 0;
  const push = (chunk: Buffer | string): void => {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    parts.push(b);
    length += b.length;
  };
  const object = (n: number, body: string): void => {
    offsets.push(length);
    push(`${n} 0 obj\n${body}\nendobj\n`);
  };
  push('%PDF-1.4\n');
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, '<< /Type /Pages /Kids [4 0 R] /Count 1 >>');
  object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  object(
    4,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 3 0 R >> >> >>',
  );
  offsets.push(length);
  push(`5 0 obj\n<< /Length ${data.length} /Filter /FlateDecode >>\nstream\n`);
  push(data);
  push('\nendstream\nendobj\n');
  const xref = length;
  push(
    `xref\n0 6\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`,
  );
  push(`trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}
