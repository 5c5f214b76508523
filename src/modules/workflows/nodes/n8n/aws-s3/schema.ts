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
    // n8n's object-lock, encryption and copy fields (v1 and v2 alike).
    bucketObjectLockEnabled: Type.Optional(Type.Boolean()),
    grantFullControl: Type.Optional(Type.Boolean()),
    grantRead: Type.Optional(Type.Boolean()),
    grantReadAcp: Type.Optional(Type.Boolean()),
    grantWrite: Type.Optional(Type.Boolean()),
    grantWriteAcp: Type.Optional(Type.Boolean()),
    lockLegalHold: Type.Optional(Type.Boolean()),
    lockMode: Type.Optional(Type.String({ maxLength: 20 })),
    lockRetainUntilDate: Type.Optional(Type.String({ maxLength: 50 })),
    encryptionAwsKmsKeyId: Type.Optional(Type.String({ maxLength: 2_048 })),
    serverSideEncryptionContext: Type.Optional(Type.String({ maxLength: 4_096 })),
    serversideEncryptionCustomerAlgorithm: Type.Optional(Type.String({ maxLength: 50 })),
    serversideEncryptionCustomerKey: Type.Optional(Type.String({ maxLength: 1_024 })),
    serversideEncryptionCustomerKeyMD5: Type.Optional(Type.String({ maxLength: 100 })),
    taggingDirective: Type.Optional(Type.String({ maxLength: 20 })),
    metadataDirective: Type.Optional(Type.String({ maxLength: 20 })),
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
