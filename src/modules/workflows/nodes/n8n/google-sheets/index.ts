import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, ValidationProblem } from '../../../engine/types.js';
import { SpreadsheetClient } from './client.js';
import { resolveSheet, spreadsheetIdOf } from './locator.js';
import { GoogleSheetsParameters, type SheetsParams } from './schema.js';
import { googleTarget } from './target.js';
import { runV1 } from './v1.js';
import { createSheets, createSpreadsheets, deleteSpreadsheets, removeSheet } from './v4/admin.js';
import { appendRows } from './v4/append.js';
import { clearSheet } from './v4/clear.js';
import { deleteDimension } from './v4/delete.js';
import type { SheetOp } from './v4/op.js';
import { readRows } from './v4/read.js';
import { updateRows } from './v4/update.js';

const V1_SHEET = ['append', 'clear', 'create', 'delete', 'lookup', 'read', 'remove', 'update', 'upsert'];
const V4_SHEET = ['append', 'appendOrUpdate', 'clear', 'create', 'delete', 'read', 'remove', 'update'];

const operationOf = (p: SheetsParams) => p.operation ?? (p.resource === 'spreadsheet' ? 'create' : 'read');

/**
 * n8n's Google Sheets node, every version n8n has: v1–v2 (a spreadsheet id and an A1 range) and
 * v3–v4.7 (document and sheet locators, the resource mapper), on the Sheets API v4 (and Drive to delete a
 * spreadsheet), through the outbound client and its address guard. Credentials: a service account
 * (`googleApi`, its token from the JWT-bearer grant, cached) or OAuth2 (`googleSheetsOAuth2Api`).
 */
export const googleSheetsNode = defineNode({
  type: 'n8n-nodes-base.googleSheets',
  versions: [1, 2, 3, 4, 4.1, 4.2, 4.3, 4.4, 4.5, 4.6, 4.7],
  schema: GoogleSheetsParameters,
  check(p) {
    const problems: ValidationProblem[] = [];
    const op = operationOf(p);
    const served =
      p.resource === 'spreadsheet'
        ? ['create', 'deleteSpreadsheet']
        : [...new Set([...V1_SHEET, ...V4_SHEET])];
    if (!served.includes(op))
      problems.push({
        path: 'parameters.operation',
        message: `'${op}' is not an operation of the ${p.resource} resource`,
      });
    return problems;
  },
  async execute(ctx) {
    const version = ctx.node.typeVersion ?? 1;
    const items: Item[] = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    const params: SheetsParams[] = [];
    for (let i = 0; i < items.length; i++) params.push(await ctx.params(i));
    const p = params[0] as SheetsParams;
    const operation = operationOf(p);
    const target = await googleTarget(ctx, p.authentication);

    if (p.resource === 'spreadsheet') {
      if (operation === 'create') return output(await createSpreadsheets(target, params));
      return output(
        await deleteSpreadsheets(
          target,
          params.map((q) => spreadsheetIdOf(q.documentId)),
        ),
      );
    }
    if (version < 3) {
      if (!V1_SHEET.includes(operation))
        throw new NodeOperationError(`'${operation}' is not an operation of Google Sheets v${version}`);
      const client = new SpreadsheetClient(target, spreadsheetIdOf(p.sheetId, 'Spreadsheet ID'), false);
      return output(await runV1(client, operation, items, params));
    }
    if (!V4_SHEET.includes(operation))
      throw new NodeOperationError(`'${operation}' is not an operation of Google Sheets v${version}`);
    const client = new SpreadsheetClient(target, spreadsheetIdOf(p.documentId));
    if (operation === 'create') return output(await createSheets(client, params));
    const sheet = await resolveSheet(client, p.sheetName);
    if (operation === 'remove') return output(await removeSheet(client, sheet.sheetId, items.length));
    const op: SheetOp = { client, sheet, items, params, version };
    if (operation === 'read') return output(await readRows(op));
    if (operation === 'append') return output(await appendRows(op));
    if (operation === 'update') return output(await updateRows(op, false));
    if (operation === 'appendOrUpdate') return output(await updateRows(op, true));
    if (operation === 'clear') return output(await clearSheet(op));
    return output(await deleteDimension(op));
  },
});
