import { createHash } from 'node:crypto';
import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import {
  bucketName,
  DEFAULT_S3_MAX_DOWNLOAD_BYTES,
  listOf,
  objectKey,
  type S3Target,
  s3Request,
  xmlOf,
} from './request.js';
import type { S3Params } from './schema.js';

/** Objects or buckets one run returns (returnAll included): past it the node fails, naming it. */
export const MAX_LISTED = 10_000;

/** n8n's option values (`publicRead`, `standardIA`) as S3's header values. */
const kebab = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
const snakeUpper = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

function putHeaders(p: S3Params): Record<string, string> {
  const f = p.additionalFields;
  const h: Record<string, string> = {};
  if (f.acl) h['x-amz-acl'] = kebab(f.acl);
  if (f.storageClass) h['x-amz-storage-class'] = snakeUpper(f.storageClass);
  if (f.serverSideEncryption) h['x-amz-server-side-encryption'] = f.serverSideEncryption;
  if (f.encryptionAwsKmsKeyId) h['x-amz-server-side-encryption-aws-kms-key-id'] = f.encryptionAwsKmsKeyId;
  if (f.serverSideEncryptionContext)
    h['x-amz-server-side-encryption-context'] = f.serverSideEncryptionContext;
  if (f.serversideEncryptionCustomerAlgorithm)
    h['x-amz-server-side-encryption-customer-algorithm'] = f.serversideEncryptionCustomerAlgorithm;
  if (f.serversideEncryptionCustomerKey)
    h['x-amz-server-side-encryption-customer-key'] = f.serversideEncryptionCustomerKey;
  if (f.serversideEncryptionCustomerKeyMD5)
    h['x-amz-server-side-encryption-customer-key-MD5'] = f.serversideEncryptionCustomerKeyMD5;
  if (f.lockLegalHold) h['x-amz-object-lock-legal-hold'] = 'ON';
  if (f.lockMode) h['x-amz-object-lock-mode'] = f.lockMode.toUpperCase();
  if (f.lockRetainUntilDate) h['x-amz-object-lock-retain-until-date'] = f.lockRetainUntilDate;
  if (f.taggingDirective) h['x-amz-tagging-directive'] = f.taggingDirective.toUpperCase();
  if (f.metadataDirective) h['x-amz-metadata-directive'] = f.metadataDirective.toUpperCase();
  if (f.bucketObjectLockEnabled) h['x-amz-bucket-object-lock-enabled'] = 'true';
  // n8n's grant* switches send an empty grantee list, which S3 ignores: accepted, not sent.
  if (f.requesterPays) h['x-amz-request-payer'] = 'requester';
  const tags = p.tagsUi.tagsValues ?? [];
  if (tags.length > 0)
    h['x-amz-tagging'] = tags
      .map((t) => `${encodeURIComponent(t.key)}=${encodeURIComponent(t.value)}`)
      .join('&');
  return h;
}

type Listed = Record<string, Json>;

/** ListObjectsV2, following continuation tokens while more are wanted (bounded by MAX_LISTED). */
async function listObjects(
  t: S3Target,
  bucket: string,
  p: S3Params,
  prefix: string | undefined,
  delimiter?: string,
) {
  const want = p.returnAll ? MAX_LISTED + 1 : p.limit;
  const o = { ...p.additionalFields, ...p.options, ...(delimiter ? { delimiter } : {}) };
  const out: Listed[] = [];
  let token: string | undefined;
  do {
    const q = new URLSearchParams({ 'list-type': '2' });
    if (prefix) q.set('prefix', prefix);
    if (o.delimiter) q.set('delimiter', o.delimiter);
    if (o.startAfter) q.set('start-after', o.startAfter);
    if (o.fetchOwner) q.set('fetch-owner', 'true');
    if (o.encodingType) q.set('encoding-type', o.encodingType);
    if (token) q.set('continuation-token', token);
    q.set('max-keys', String(Math.min(1_000, want - out.length)));
    const res = await s3Request(t, { method: 'GET', bucket, query: q.toString() });
    const body = (await xmlOf(res.body)).ListBucketResult as
      | { Contents?: Listed | Listed[]; IsTruncated?: string; NextContinuationToken?: string }
      | undefined;
    out.push(...listOf(body?.Contents));
    token = body?.IsTruncated === 'true' ? body.NextContinuationToken : undefined;
  } while (token && out.length < want);
  if (out.length > MAX_LISTED)
    throw new NodeOperationError(`The bucket lists more than ${MAX_LISTED} objects: narrow it with a prefix`);
  return out.slice(0, want);
}

const done = (): Item[] => [{ json: { success: true } }];
const keyOf = (o: Listed) => String(o.Key ?? '');

/** `/bucket/key` (n8n's copy paths) as its parts. */
function pathParts(value: string, what: string): { bucket: string; key: string } {
  const [bucket, ...rest] = value.replace(/^\/+/, '').split('/');
  return { bucket: bucketName(bucket), key: objectKey(rest.join('/'), what) };
}

/** One item's operation, as n8n's AWS S3 node (v1 and v2) answers it. */
export async function runOperation(
  t: S3Target,
  p: S3Params,
  item: Item,
  index: number,
  version: number,
): Promise<Item[]> {
  const op = `${p.resource}:${p.operation}`;
  switch (op) {
    case 'bucket:create': {
      const region = p.additionalFields.region;
      const body =
        region && region !== 'us-east-1'
          ? `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>${region.replace(/[^a-z0-9-]/g, '')}</LocationConstraint></CreateBucketConfiguration>`
          : undefined;
      await s3Request(t, {
        method: 'PUT',
        bucket: bucketName(p.name),
        headers: putHeaders(p),
        ...(body ? { body } : {}),
      });
      return done();
    }
    case 'bucket:delete':
      await s3Request(t, { method: 'DELETE', bucket: bucketName(p.name) });
      return done();
    case 'bucket:getAll': {
      const res = await s3Request(t, { method: 'GET', bucket: null });
      const all = listOf(
        (
          (await xmlOf(res.body)).ListAllMyBucketsResult as
            | { Buckets?: { Bucket?: Listed | Listed[] } }
            | undefined
        )?.Buckets?.Bucket,
      );
      return (p.returnAll ? all.slice(0, MAX_LISTED) : all.slice(0, p.limit)).map((json) => ({ json }));
    }
    case 'bucket:search': {
      const found = await listObjects(t, bucketName(p.bucketName), p, p.additionalFields.prefix);
      return found.map((json) => ({ json }));
    }
    case 'file:upload': {
      const bucket = bucketName(p.bucketName);
      const parent = p.additionalFields.parentFolderKey?.replace(/^\/+|\/+$/g, '');
      let body: Buffer;
      // n8n's text upload is sent as text/html.
      let type = 'text/html';
      let name = p.fileName;
      if (p.binaryData) {
        const bin = binaryBytes(item, p.binaryPropertyName, index);
        body = bin.bytes;
        type = bin.meta.mimeType || 'application/octet-stream';
        // No file name: the binary's own (n8n's "if not set the binary data filename will be used").
        name = name || bin.meta.fileName || '';
      } else body = Buffer.from(p.fileContent, 'utf8');
      const key = objectKey(parent ? `${parent}/${name}` : name, 'File Name');
      await s3Request(t, {
        method: 'PUT',
        bucket,
        key,
        headers: {
          ...putHeaders(p),
          'Content-Type': type,
          'Content-MD5': createHash('md5').update(body).digest('base64'),
        },
        body,
      });
      return done();
    }
    case 'file:download': {
      const key = objectKey(p.fileKey);
      if (key.endsWith('/'))
        throw new NodeOperationError(
          'Downloading a whole directory is not yet supported, please provide a file key',
        );
      const res = await s3Request(t, {
        method: 'GET',
        bucket: bucketName(p.bucketName),
        key,
        download: { maxBytes: t.maxDownloadBytes ?? DEFAULT_S3_MAX_DOWNLOAD_BYTES },
      });
      const name = key.split('/').pop() ?? key;
      const type = res.headers['content-type'] ?? 'application/octet-stream';
      const bytes = res.bytes ?? Buffer.from(res.body, 'utf8');
      return [
        {
          json: item.json,
          binary: { ...(item.binary ?? {}), [p.binaryPropertyName]: binaryOf(bytes, type, name) },
        },
      ];
    }
    case 'file:copy': {
      const from = pathParts(p.sourcePath, 'Source Path');
      const to = pathParts(p.destinationPath, 'Destination Path');
      const res = await s3Request(t, {
        method: 'PUT',
        bucket: to.bucket,
        key: to.key,
        headers: { ...putHeaders(p), 'x-amz-copy-source': `/${from.bucket}/${encodeURI(from.key)}` },
      });
      const result = (await xmlOf(res.body)).CopyObjectResult as Record<string, Json> | undefined;
      return [{ json: result ?? { success: true } }];
    }
    case 'file:delete': {
      const version = p.options.versionId;
      await s3Request(t, {
        method: 'DELETE',
        bucket: bucketName(p.bucketName),
        key: objectKey(p.fileKey),
        ...(version ? { query: `versionId=${encodeURIComponent(version)}` } : {}),
      });
      return done();
    }
    case 'file:getAll': {
      // n8n's listing: one level (delimiter '/') under the folder key as given, no folder markers.
      const folder = p.options.folderKey?.replace(/^\/+/, '');
      const all = await listObjects(t, bucketName(p.bucketName), { ...p, returnAll: true }, folder, '/');
      const files = all.filter((o) => !keyOf(o).endsWith('/') && String(o.Size) !== '0');
      return (p.returnAll ? files : files.slice(0, p.limit)).map((json) => ({ json }));
    }
    case 'folder:getAll': {
      // n8n's listing: every level under the folder key, the empty `name/` markers, not the key itself.
      const folder = p.options.folderKey?.replace(/^\/+/, '');
      const all = await listObjects(t, bucketName(p.bucketName), { ...p, returnAll: true }, folder);
      const folders = all.filter(
        (o) => keyOf(o).endsWith('/') && String(o.Size) === '0' && keyOf(o) !== p.options.folderKey,
      );
      return (p.returnAll ? folders : folders.slice(0, p.limit)).map((json) => ({ json }));
    }
    case 'folder:create': {
      const parent = p.additionalFields.parentFolderKey?.replace(/^\/+|\/+$/g, '');
      const name = p.folderName.replace(/^\/+|\/+$/g, '');
      // v1 joins the parent key and the name as given (`docs/` + `a`); v2 with a slash between.
      const joined = version < 2 ? `${p.additionalFields.parentFolderKey ?? ''}${name}` : `${parent}/${name}`;
      const key = objectKey(parent ? `${joined.replace(/^\/+/, '')}/` : `${name}/`, 'Folder Name');
      await s3Request(t, { method: 'PUT', bucket: bucketName(p.bucketName), key, headers: putHeaders(p) });
      return done();
    }
    case 'folder:delete': {
      const bucket = bucketName(p.bucketName);
      const prefix = `${objectKey(p.folderKey, 'Folder Key').replace(/\/+$/, '')}/`;
      const keys = (
        await listObjects(t, bucket, { ...p, returnAll: true, options: {}, additionalFields: {} }, prefix)
      ).map(keyOf);
      if (keys.length === 0) {
        // Nothing under it: n8n deletes the key itself and names it.
        await s3Request(t, { method: 'DELETE', bucket, key: objectKey(p.folderKey, 'Folder Key') });
        return [{ json: { deleted: [{ Key: p.folderKey }] } }];
      }
      // DeleteObjects takes 1,000 keys a request and wants their MD5; n8n answers S3's Deleted list.
      const deleted: Json[] = [];
      for (let i = 0; i < keys.length; i += 1_000) {
        const objects = keys
          .slice(i, i + 1_000)
          .map(
            (k) =>
              `<Object><Key>${k.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</Key></Object>`,
          )
          .join('');
        const body = `<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${objects}</Delete>`;
        const res = await s3Request(t, {
          method: 'POST',
          bucket,
          query: 'delete=',
          headers: {
            'Content-MD5': createHash('md5').update(body).digest('base64'),
            'Content-Type': 'application/xml',
          },
          body,
        });
        const result = (await xmlOf(res.body)).DeleteResult as { Deleted?: Listed | Listed[] } | undefined;
        deleted.push(...listOf(result?.Deleted));
      }
      return [{ json: { deleted } }];
    }
    default:
      throw new NodeOperationError(
        `The operation '${p.operation}' is not supported for the resource '${p.resource}'`,
      );
  }
}
