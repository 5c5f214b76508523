import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { BinaryData, EngineDeps, Item } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';
import { assertReallyInside, lexicalPath, matchFiles, realRoot } from './confined-path.js';

const ReadWriteFileParameters = Type.Object(
  {
    operation: Type.Union([Type.Literal('read'), Type.Literal('write')], { default: 'read' }),
    fileSelector: Type.Optional(Type.String()),
    fileName: Type.Optional(Type.String()),
    dataPropertyName: Type.Optional(Type.String()),
    options: Type.Object(
      {
        append: Type.Optional(Type.Boolean()),
        dataPropertyName: Type.Optional(Type.String()),
        fileExtension: Type.Optional(Type.String()),
        fileName: Type.Optional(Type.String()),
        mimeType: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** The problem (at save) or error (at run) of this node while the instance has it off. */
export const FILES_OFF =
  'Read/Write Files from Disk is off on this instance: set WORKFLOW_FILES_DIR to the folder it may use';

export function rootOf(deps: EngineDeps): string {
  const dir = deps.host?.filesDir;
  if (!dir) throw new NodeOperationError(FILES_OFF);
  return dir;
}

const MIME: Record<string, string> = {
  csv: 'text/csv',
  gif: 'image/gif',
  htm: 'text/html',
  html: 'text/html',
  jpeg: 'image/jpeg',
  jpg: 'image/jpeg',
  json: 'application/json',
  md: 'text/markdown',
  pdf: 'application/pdf',
  png: 'image/png',
  svg: 'image/svg+xml',
  txt: 'text/plain',
  xml: 'application/xml',
  zip: 'application/zip',
};

/**
 * n8n's Read/Write Files from Disk (v1), confined to the account's folder under WORKFLOW_FILES_DIR
 * (off when unset, as n8n 2 restricts it with N8N_RESTRICT_FILE_ACCESS_TO): read files matching a path
 * or pattern into binary data, or write an item's binary data to a file.
 */
export const readWriteFileNode = defineNode({
  type: 'n8n-nodes-base.readWriteFile',
  versions: [1],
  schema: ReadWriteFileParameters,
  check: (_params, limits) => (limits.host?.filesDir ? [] : [{ path: 'parameters', message: FILES_OFF }]),
  async execute(ctx) {
    const root = await realRoot(rootOf(ctx.deps));
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      if (p.operation === 'read') {
        const selector = String(p.fileSelector ?? '').trim();
        if (selector === '') throw new NodeOperationError("The parameter 'File(s) Selector' is empty");
        const property = p.options.dataPropertyName || 'data';
        for (const { binary, directory } of await readMatchingFiles(root, selector, p.options))
          out.push({
            json: { ...withoutData(binary), ...(directory ? { directory } : {}) },
            binary: { [property]: binary },
          });
      } else {
        const given = String(p.fileName ?? '').trim();
        if (given === '') throw new NodeOperationError("The parameter 'File Path and Name' is empty");
        const item = ctx.items[i] as Item;
        const { bytes } = binaryBytes(item, p.dataPropertyName || 'data', i);
        await writeConfinedFile(root, given, bytes, p.options.append === true);
        out.push({
          json: { ...item.json, fileName: given },
          ...(item.binary ? { binary: item.binary } : {}),
        });
      }
    }
    return output(out);
  },
});

function withoutData(binary: BinaryData): Omit<BinaryData, 'data'> {
  const { data: _data, ...meta } = binary;
  return meta;
}

/** The files matching a path or pattern inside the folder, as binary data (each bounded in size). */
export async function readMatchingFiles(
  root: string,
  selector: string,
  options: {
    fileName?: string | undefined;
    fileExtension?: string | undefined;
    mimeType?: string | undefined;
  } = {},
): Promise<Array<{ binary: BinaryData; directory: string }>> {
  const out: Array<{ binary: BinaryData; directory: string }> = [];
  for (const file of await matchFiles(root, selector)) {
    const info = await lstat(file);
    if (!info.isFile() && !info.isSymbolicLink()) continue;
    assertSize(`file '${path.relative(root, file)}'`, info.size, FILE_LIMITS.outputBytes);
    const bytes = await readFile(file);
    assertSize(`file '${path.relative(root, file)}'`, bytes.length, FILE_LIMITS.outputBytes);
    const name = options.fileName || path.basename(file);
    const ext = options.fileExtension || path.extname(file).slice(1).toLowerCase();
    const mime = options.mimeType || MIME[ext] || 'application/octet-stream';
    const binary = binaryOf(bytes, mime, name);
    if (options.fileExtension) binary.fileExtension = options.fileExtension;
    out.push({ binary, directory: path.relative(root, path.dirname(file)) });
  }
  return out;
}

/** Writes bytes to a path inside the folder, never through a symbolic link. */
export async function writeConfinedFile(
  root: string,
  given: string,
  bytes: Uint8Array,
  append: boolean,
): Promise<void> {
  const target = lexicalPath(root, given);
  assertSize('file to write', bytes.length, FILE_LIMITS.outputBytes);
  await mkdir(path.dirname(target), { recursive: true });
  await assertReallyInside(root, target, given);
  // O_NOFOLLOW: a symbolic link put in place after the check is refused by the kernel, not followed.
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    (append ? constants.O_APPEND : constants.O_TRUNC);
  const handle = await open(target, flags, 0o644).catch((err: NodeJS.ErrnoException) => {
    throw new NodeOperationError(`The file '${given}' could not be written: ${err.code ?? err.message}`);
  });
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
}
