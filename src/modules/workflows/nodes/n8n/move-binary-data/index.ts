import { Type } from 'typebox';
import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { BinaryData, Item, Json } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';
import { getField, setField } from '../file-helpers/paths.js';
import { decodeText, encodeText } from '../file-helpers/text.js';
import { unsetField } from '../merge/json.js';

const MoveBinaryDataParameters = Type.Object(
  {
    mode: Type.Union([Type.Literal('binaryToJson'), Type.Literal('jsonToBinary')], {
      default: 'binaryToJson',
    }),
    setAllData: Type.Boolean({ default: true }),
    sourceKey: Type.String({ default: 'data' }),
    destinationKey: Type.String({ default: 'data' }),
    convertAllData: Type.Boolean({ default: true }),
    options: Type.Object(
      {
        addBOM: Type.Optional(Type.Boolean()),
        dataIsBase64: Type.Optional(Type.Boolean()),
        encoding: Type.Optional(Type.String()),
        fileName: Type.Optional(Type.String()),
        jsonParse: Type.Optional(Type.Boolean()),
        keepAsBase64: Type.Optional(Type.Boolean()),
        keepSource: Type.Optional(Type.Boolean()),
        mimeType: Type.Optional(Type.String()),
        stripBOM: Type.Optional(Type.Boolean()),
        useRawData: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

function parseJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (error) {
    throw new NodeOperationError('The binary data is not valid JSON', {
      description: (error as Error).message,
    });
  }
}

/**
 * n8n's legacy Move Binary Data (v1, 1.1; "Convert to/from binary data"): a binary file's text (or
 * JSON, or base64) into the item's JSON, or JSON (all of it or one field) into a binary file.
 */
export const n8nMoveBinaryDataNode = defineNode({
  type: 'n8n-nodes-base.moveBinaryData',
  versions: [1, 1.1],
  schema: MoveBinaryDataParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const o = p.options;
      if (p.mode === 'binaryToJson') {
        // The source key names a binary property; n8n 1.1 defaults it to `data` as well.
        if (!item.binary?.[p.sourceKey]) {
          out.push({
            json: item.json,
            ...(item.binary ? { binary: item.binary } : {}),
            pairedItem: { item: i },
          });
          continue;
        }
        const { bytes } = binaryBytes(item, p.sourceKey, i);
        assertSize('binary file', bytes.length, FILE_LIMITS.textBytes);
        const text = o.keepAsBase64
          ? bytes.toString('base64')
          : decodeText(bytes, o.encoding || 'utf8', o.stripBOM !== false);
        let json: Record<string, Json>;
        if (p.setAllData) {
          const parsed = parseJson(text);
          if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
            throw new NodeOperationError(
              'The binary data is not a JSON object, so it cannot be the whole item',
            );
          json = parsed;
        } else {
          json = structuredClone(item.json);
          setField(json, p.destinationKey, o.jsonParse && !o.keepAsBase64 ? parseJson(text) : text);
        }
        let binary: Record<string, BinaryData> | undefined = item.binary;
        if (!o.keepSource) {
          const { [p.sourceKey]: _moved, ...rest } = item.binary ?? {};
          binary = Object.keys(rest).length > 0 ? rest : undefined;
        }
        out.push({ json, ...(binary ? { binary } : {}), pairedItem: { item: i } });
        continue;
      }
      let bytes: Buffer;
      if (p.convertAllData) bytes = encodeText(JSON.stringify(item.json), o.encoding || 'utf8', o.addBOM);
      else {
        const value = getField(item.json, p.sourceKey);
        if (value === undefined) throw new NodeOperationError(`The item has no field '${p.sourceKey}'`);
        if (o.dataIsBase64 && typeof value === 'string') bytes = Buffer.from(value, 'base64');
        else {
          // n8n writes the value as JSON (a string keeps its quotes) unless `useRawData` is on.
          const text = o.useRawData && typeof value === 'string' ? value : JSON.stringify(value);
          bytes = encodeText(text, o.encoding || 'utf8', o.addBOM);
        }
      }
      let json: Record<string, Json> = {};
      if (o.keepSource) Object.assign(json, item.json);
      else if (!p.convertAllData) {
        // Only the converted field leaves the item's JSON (n8n's rule).
        json = structuredClone(item.json);
        unsetField(json, p.sourceKey);
      }
      const meta = binaryOf(bytes, o.mimeType || 'application/json', o.fileName);
      out.push({
        json,
        binary: { ...(item.binary ?? {}), [p.destinationKey]: meta },
        pairedItem: { item: i },
      });
    }
    return output(out);
  },
});
