import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { nodeCredential } from '../sql/credential.js';
import { runOperation } from './operations.js';
import { AwsS3Parameters } from './schema.js';

/**
 * n8n's AWS S3 node, v1 and v2 (credential `aws`; the two share their parameters): buckets (create,
 * delete, getAll, search), files (upload, download, copy, delete, getAll) and folders (create, delete,
 * getAll), SigV4-signed, through the platform's outbound HTTP client and its address guard. A custom `s3Endpoint` (MinIO and other
 * S3-compatible stores) is addressed path-style. A download is bounded by S3_MAX_DOWNLOAD_BYTES.
 */
export const awsS3Node = defineNode({
  type: 'n8n-nodes-base.awsS3',
  versions: [1, 2],
  schema: AwsS3Parameters,
  async execute(ctx) {
    const credential = await nodeCredential(ctx, 'aws');
    const target = {
      credential,
      http: ctx.deps.http,
      deadlineAt: ctx.deadlineAt,
      maxDownloadBytes: ctx.deps.s3MaxDownloadBytes,
    };
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++)
      out.push(
        ...(await runOperation(
          target,
          await ctx.params(i),
          ctx.items[i] as Item,
          i,
          ctx.node.typeVersion ?? 2,
        )),
      );
    return output(out);
  },
});
