import type { OutboundHttp } from '../../../../../core/http/outbound.js';
import type { CredentialTestResult } from '../../credential-tests.js';
import { type AwsCredential, type SignedRequest, signedRequest } from './request.js';

/** A credential test gives up after this. */
const TEST_TIMEOUT_MS = 15_000;

/**
 * The request that tests an `aws` credential. n8n's: a signed STS GetCallerIdentity (POST, the
 * credential's region, `cn-` regions on amazonaws.com.cn). With custom endpoints and an `s3Endpoint`
 * (MinIO and other S3-compatible stores, which serve no STS) a signed ListBuckets there instead: the
 * same keys and signature checked, at the only endpoint such a credential is used for here.
 */
export function awsTestRequest(data: AwsCredential): SignedRequest {
  const custom = data.customEndpoints === 'true' || data.customEndpoints === '1';
  if (custom && data.s3Endpoint) {
    let url: URL;
    try {
      url = new URL(String(data.s3Endpoint));
    } catch {
      throw new Error(`The credential's S3 endpoint '${String(data.s3Endpoint).slice(0, 100)}' is not a URL`);
    }
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/`;
    url.search = '';
    return { service: 's3', method: 'GET', url };
  }
  const region = data.region || 'us-east-1';
  const host = region.startsWith('cn-') ? `sts.${region}.amazonaws.com.cn` : `sts.${region}.amazonaws.com`;
  return {
    service: 'sts',
    method: 'POST',
    url: new URL(`https://${host}/?Action=GetCallerIdentity&Version=2011-06-15`),
  };
}

/** n8n's credential test for `aws`, through the guarded outbound client. */
export async function testAwsCredential(
  data: AwsCredential,
  http: OutboundHttp | undefined,
): Promise<CredentialTestResult> {
  if (!http) return { status: 'Error', message: 'Credential tests over HTTP are not available here' };
  try {
    await signedRequest(
      { credential: data, http, deadlineAt: Date.now() + TEST_TIMEOUT_MS },
      awsTestRequest(data),
    );
    return { status: 'OK', message: 'Connection tested successfully' };
  } catch (err) {
    return { status: 'Error', message: (err as Error).message };
  }
}
