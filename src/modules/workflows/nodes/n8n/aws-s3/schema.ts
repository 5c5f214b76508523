import { type Static, Type } from 'typebox';

const Fields = Type.Object(
  {
    acl: Type.Optional(Type.String({ maxLength: 50 })),
    storageClass: Type.Optional(Type.String({ maxLength: 50 })),
    parentFolderKey: Type.Optional(Type.String({ maxLength: 1_024 })),
    region: Type.Optional(Type.String({ maxLength: 50 })),
    prefix: Type.Optional(Type.String({ maxLength: 1_024 })),
    delimiter: Type.Optional(Type.String({ maxLength: 10 })),
    startAfter: Type.Optional(Type.String({ maxLength: 1_024 })),
    fetchOwner: Type.Optional(Type.Boolean()),
    encodingType: Type.Optional(Type.String({ maxLength: 10 })),
    requesterPays: Type.Optional(Type.Boolean()),
    serverSideEncryption: Type.Optional(Type.String({ maxLength: 50 })),
    folderKey: Type.Optional(Type.String({ maxLength: 1_024 })),
    versionId: Type.Optional(Type.String({ maxLength: 1_024 })),
  },
  { additionalProperties: false, default: {} },
);

export const AwsS3Parameters = Type.Object(
  {
    resource: Type.Enum(['bucket', 'file', 'folder'] as const, { default: 'file' }),
    operation: Type.Enum(['copy', 'create', 'delete', 'download', 'getAll', 'search', 'upload'] as const, {
      default: 'download',
    }),
    name: Type.String({ default: '', maxLength: 63 }),
    bucketName: Type.String({ default: '', maxLength: 63 }),
    fileKey: Type.String({ default: '', maxLength: 1_024 }),
    fileName: Type.String({ default: '', maxLength: 1_024 }),
    folderName: Type.String({ default: '', maxLength: 1_024 }),
    folderKey: Type.String({ default: '', maxLength: 1_024 }),
    sourcePath: Type.String({ default: '', maxLength: 1_100 }),
    destinationPath: Type.String({ default: '', maxLength: 1_100 }),
    binaryData: Type.Boolean({ default: true }),
    binaryPropertyName: Type.String({ default: 'data', maxLength: 200 }),
    fileContent: Type.String({ default: '' }),
    returnAll: Type.Boolean({ default: false }),
    limit: Type.Integer({ default: 100, minimum: 1, maximum: 10_000 }),
    additionalFields: Fields,
    options: Fields,
    tagsUi: Type.Object(
      {
        tagsValues: Type.Optional(
          Type.Array(
            Type.Object({ key: Type.String({ maxLength: 128 }), value: Type.String({ maxLength: 256 }) }),
            {
              maxItems: 10,
            },
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
export type S3Params = Static<typeof AwsS3Parameters>;
