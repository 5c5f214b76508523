import { Type } from 'typebox';
import { binaryBytes } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { CheckLimits, Item } from '../../../engine/types.js';
import { realRoot } from '../read-write-file/confined-path.js';
import { FILES_OFF, readMatchingFiles, rootOf, writeConfinedFile } from '../read-write-file/index.js';

/**
 * n8n's legacy Read Binary File, Read Binary Files and Write Binary File (v1), which n8n replaced by
 * Read/Write Files from Disk. They share its confinement: paths are read inside the account's folder
 * under WORKFLOW_FILES_DIR, and the nodes are off (refused at save) when that is unset.
 */

const filesOff = (_params: unknown, limits: CheckLimits) =>
  limits.host?.filesDir ? [] : [{ path: 'parameters', message: FILES_OFF }];

/** One file per item into the item's binary data (n8n reads a single path, no pattern). */
export const readBinaryFileNode = defineNode({
  type: 'n8n-nodes-base.readBinaryFile',
  versions: [1],
  schema: Type.Object(
    {
      filePath: Type.String({ default: '' }),
      dataPropertyName: Type.String({ default: 'data', minLength: 1 }),
    },
    { additionalProperties: false },
  ),
  check: filesOff,
  async execute(ctx) {
    const root = await realRoot(rootOf(ctx.deps));
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const file = p.filePath.trim();
      if (file === '') throw new NodeOperationError("The parameter 'File Path' is empty");
      if (/[*?[\]{}]/.test(file))
        throw new NodeOperationError(`'${file.slice(0, 200)}' is a pattern: Read Binary File reads one path`);
      const [found] = await readMatchingFiles(root, file);
      if (!found) throw new NodeOperationError(`The file '${file.slice(0, 200)}' could not be found`);
      out.push({
        json: item.json,
        binary: { ...item.binary, [p.dataPropertyName]: found.binary },
        pairedItem: { item: i },
      });
    }
    return output(out);
  },
});

/** Every file matching a pattern, one item each (the node runs once, as n8n's). */
export const readBinaryFilesNode = defineNode({
  type: 'n8n-nodes-base.readBinaryFiles',
  versions: [1],
  schema: Type.Object(
    {
      fileSelector: Type.String({ default: '' }),
      dataPropertyName: Type.String({ default: 'data', minLength: 1 }),
    },
    { additionalProperties: false },
  ),
  check: filesOff,
  async execute(ctx) {
    const root = await realRoot(rootOf(ctx.deps));
    const p = await ctx.params(0);
    const selector = p.fileSelector.trim();
    if (selector === '') throw new NodeOperationError("The parameter 'File Selector' is empty");
    const files = await readMatchingFiles(root, selector);
    return output(
      files.map(({ binary }) => ({
        json: {},
        binary: { [p.dataPropertyName]: binary },
        pairedItem: { item: 0 },
      })),
    );
  },
});

/** Each item's binary property to a file; the item passes on with `fileName` added. */
export const writeBinaryFileNode = defineNode({
  type: 'n8n-nodes-base.writeBinaryFile',
  versions: [1],
  schema: Type.Object(
    {
      fileName: Type.String({ default: '' }),
      dataPropertyName: Type.String({ default: 'data', minLength: 1 }),
      options: Type.Object(
        { append: Type.Optional(Type.Boolean()) },
        { additionalProperties: false, default: {} },
      ),
    },
    { additionalProperties: false },
  ),
  check: filesOff,
  async execute(ctx) {
    const root = await realRoot(rootOf(ctx.deps));
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const given = p.fileName.trim();
      if (given === '') throw new NodeOperationError("The parameter 'File Name' is empty");
      const { bytes } = binaryBytes(item, p.dataPropertyName, i);
      await writeConfinedFile(root, given, bytes, p.options.append === true);
      out.push({
        json: { ...item.json, fileName: given },
        ...(item.binary ? { binary: item.binary } : {}),
        pairedItem: { item: i },
      });
    }
    return output(out);
  },
});
