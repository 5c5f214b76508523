import { type Static, Type } from 'typebox';

/** n8n's resource locator (`{__rl, mode, value}`: list, url, id or name) or a plain value. */
const Locator = Type.Union([
  Type.String({ maxLength: 2_000 }),
  Type.Number(),
  Type.Object(
    {
      __rl: Type.Optional(Type.Boolean()),
      __regex: Type.Optional(Type.String({ maxLength: 500 })),
      mode: Type.Optional(Type.String({ maxLength: 50 })),
      value: Type.Union([Type.String({ maxLength: 2_000 }), Type.Number(), Type.Null()]),
      cachedResultName: Type.Optional(Type.String({ maxLength: 1_000 })),
      cachedResultUrl: Type.Optional(Type.String({ maxLength: 2_000 })),
    },
    { additionalProperties: false },
  ),
]);
export type LocatorValue = Static<typeof Locator>;

const RowNumber = Type.Union([
  Type.Integer({ minimum: 1, maximum: 10_000_000 }),
  Type.String({ maxLength: 20 }),
]);

const Options = Type.Object(
  {
    // Writing (append, update, appendOrUpdate; v1's valueInputMode)
    cellFormat: Type.Optional(Type.Enum(['RAW', 'USER_ENTERED'] as const)),
    valueInputMode: Type.Optional(Type.Enum(['RAW', 'USER_ENTERED'] as const)),
    handlingExtraData: Type.Optional(Type.Enum(['insertInNewColumn', 'ignoreIt', 'error'] as const)),
    useAppend: Type.Optional(Type.Boolean()),
    locationDefine: Type.Optional(
      Type.Object(
        {
          values: Type.Optional(
            Type.Object(
              { headerRow: Type.Optional(RowNumber), firstDataRow: Type.Optional(RowNumber) },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    // Reading
    dataLocationOnSheet: Type.Optional(
      Type.Object(
        {
          values: Type.Optional(
            Type.Object(
              {
                rangeDefinition: Type.Optional(
                  Type.Enum(['detectAutomatically', 'specifyRange', 'specifyRangeA1'] as const),
                ),
                readRowsUntil: Type.Optional(Type.Enum(['firstEmptyRow', 'lastRowInSheet'] as const)),
                headerRow: Type.Optional(RowNumber),
                firstDataRow: Type.Optional(RowNumber),
                range: Type.Optional(Type.String({ maxLength: 100 })),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    outputFormatting: Type.Optional(
      Type.Object(
        {
          values: Type.Optional(
            Type.Object(
              {
                general: Type.Optional(
                  Type.Enum(['UNFORMATTED_VALUE', 'FORMATTED_VALUE', 'FORMULA'] as const),
                ),
                date: Type.Optional(Type.Enum(['FORMATTED_STRING', 'SERIAL_NUMBER'] as const)),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    valueRenderMode: Type.Optional(Type.Enum(['UNFORMATTED_VALUE', 'FORMATTED_VALUE', 'FORMULA'] as const)),
    /** Before v4.5 a choice; from v4.5 `returnFirstMatch` (a switch) says the opposite. */
    returnAllMatches: Type.Optional(
      Type.Union([Type.Boolean(), Type.Enum(['returnFirstMatch', 'returnAllMatches'] as const)]),
    ),
    returnFirstMatch: Type.Optional(Type.Boolean()),
    // v1
    usePathForKeyRow: Type.Optional(Type.Boolean()),
    continue: Type.Optional(Type.Boolean()),
    // Creating a sheet or a spreadsheet
    hidden: Type.Optional(Type.Boolean()),
    rightToLeft: Type.Optional(Type.Boolean()),
    sheetId: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String({ maxLength: 20 })])),
    index: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    tabColor: Type.Optional(Type.String({ maxLength: 20 })),
    locale: Type.Optional(Type.String({ maxLength: 20 })),
    autoRecalc: Type.Optional(Type.Enum(['', 'ON_CHANGE', 'MINUTE', 'HOUR'] as const)),
  },
  { additionalProperties: false, default: {} },
);

const Filters = Type.Object(
  {
    values: Type.Optional(
      Type.Array(
        Type.Object(
          {
            lookupColumn: Type.Union([Type.String({ maxLength: 500 }), Type.Number()]),
            lookupValue: Type.Optional(
              Type.Union([Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean(), Type.Null()]),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

/** n8n's resource mapper (v4+): which columns get which values, and which to match rows on. */
const Columns = Type.Object(
  {
    mappingMode: Type.Optional(Type.Enum(['defineBelow', 'autoMapInputData'] as const)),
    value: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    matchingColumns: Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 50 })),
    schema: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 2_000 })),
    attemptToConvertTypes: Type.Optional(Type.Boolean()),
    convertFieldsToString: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** v3's "Values to Send" (fieldsUi.values: column/fieldValue; append's fieldValues: fieldId/fieldValue). */
const FieldsUi = Type.Object(
  {
    values: Type.Optional(
      Type.Array(
        Type.Object(
          {
            column: Type.Optional(Type.String({ maxLength: 500 })),
            columnName: Type.Optional(Type.String({ maxLength: 500 })),
            fieldValue: Type.Optional(Type.Unknown()),
          },
          { additionalProperties: false },
        ),
        { maxItems: 500 },
      ),
    ),
    fieldValues: Type.Optional(
      Type.Array(
        Type.Object(
          {
            fieldId: Type.Optional(Type.String({ maxLength: 500 })),
            fieldValue: Type.Optional(Type.Unknown()),
          },
          { additionalProperties: false },
        ),
        { maxItems: 500 },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

/** A spreadsheet's sheets when creating it (v4: title/hidden; v1: propertiesUi). */
const SheetsUi = Type.Object(
  {
    sheetValues: Type.Optional(
      Type.Array(
        Type.Object(
          {
            title: Type.Optional(Type.String({ maxLength: 100 })),
            hidden: Type.Optional(Type.Boolean()),
            propertiesUi: Type.Optional(
              Type.Object(
                {
                  title: Type.Optional(Type.String({ maxLength: 100 })),
                  hidden: Type.Optional(Type.Boolean()),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: 200 },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

/** v1's rows/columns to delete (a fixed collection); v4 names the dimension (`rows`/`columns`). */
const V1Dimension = Type.Array(
  Type.Object(
    {
      sheetId: Type.Optional(Type.Union([Type.String({ maxLength: 20 }), Type.Integer({ minimum: 0 })])),
      startIndex: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
      amount: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
    },
    { additionalProperties: false },
  ),
  { maxItems: 100 },
);

export const GoogleSheetsParameters = Type.Object(
  {
    authentication: Type.Optional(Type.Enum(['serviceAccount', 'oAuth2'] as const)),
    resource: Type.Enum(['sheet', 'spreadsheet'] as const, { default: 'sheet' }),
    /** Its default is the resource's: read for sheet, create for spreadsheet. */
    operation: Type.Optional(
      Type.Enum([
        'append',
        'appendOrUpdate',
        'clear',
        'create',
        'delete',
        'deleteSpreadsheet',
        'lookup',
        'read',
        'remove',
        'update',
        'upsert',
      ] as const),
    ),
    // v3 and v4
    documentId: Type.Optional(Locator),
    sheetName: Type.Optional(Locator),
    columns: Type.Optional(Columns),
    filtersUI: Filters,
    combineFilters: Type.Enum(['AND', 'OR'] as const, { default: 'OR' }),
    dataMode: Type.Optional(Type.Enum(['autoMapInputData', 'defineBelow', 'nothing'] as const)),
    fieldsUi: FieldsUi,
    columnToMatchOn: Type.Optional(Type.String({ maxLength: 500 })),
    valueToMatchOn: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Number()])),
    clear: Type.Enum(['wholeSheet', 'specificRows', 'specificColumns', 'specificRange'] as const, {
      default: 'wholeSheet',
    }),
    keepFirstRow: Type.Boolean({ default: false }),
    rowsToDelete: Type.Integer({ default: 1, minimum: 1, maximum: 10_000_000 }),
    columnsToDelete: Type.Integer({ default: 1, minimum: 1, maximum: 20_000 }),
    toDelete: Type.Optional(
      Type.Union([
        Type.Enum(['rows', 'columns'] as const),
        Type.Object(
          { columns: Type.Optional(V1Dimension), rows: Type.Optional(V1Dimension) },
          { additionalProperties: false },
        ),
      ]),
    ),
    startIndex: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 10_000_000 }), Type.String({ maxLength: 20 })]),
    ),
    numberToDelete: Type.Integer({ default: 1, minimum: 1, maximum: 10_000_000 }),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    sheetsUi: SheetsUi,
    // v1 and v2
    sheetId: Type.Optional(Type.String({ maxLength: 2_000 })),
    range: Type.Optional(Type.String({ maxLength: 200 })),
    rawData: Type.Boolean({ default: false }),
    dataProperty: Type.String({ default: 'data', maxLength: 200 }),
    dataStartRow: Type.Integer({ default: 1, minimum: 0, maximum: 10_000_000 }),
    keyRow: Type.Integer({ default: 0, minimum: 0, maximum: 10_000_000 }),
    key: Type.String({ default: 'id', maxLength: 500 }),
    lookupColumn: Type.Optional(Type.String({ maxLength: 500 })),
    lookupValue: Type.Optional(
      Type.Union([Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean()]),
    ),
    /** Parameters of other nodes some v1 exports carry along; n8n ignores them. */
    values: Type.Optional(Type.String({ maxLength: 1_000 })),
    updateOperation: Type.Optional(Type.String({ maxLength: 50 })),
    valueInputMode: Type.Optional(Type.String({ maxLength: 50 })),
    options: Options,
  },
  { additionalProperties: false },
);
export type SheetsParams = Static<typeof GoogleSheetsParameters>;
