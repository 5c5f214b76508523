import { Type } from 'typebox';
import { pem } from '../../../credentials/jwt.js';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import { credentialRefOf, type Item } from '../../../engine/types.js';
import { type CryptoParams, cryptoItem, cryptoParameters } from './actions.js';

/** n8n's Crypto v2: hmac and sign take their secret and private key from a `crypto` credential. */
const CryptoV2Parameters = Type.Object(cryptoParameters(2), { additionalProperties: false });

/** The node's `crypto` credential (hmacSecret, signPrivateKey), read only for hmac and sign. */
async function secretsOf(ctx: NodeExecutionContext<unknown>, action: CryptoParams['action']) {
  const secrets = { hmacSecret: '', privateKey: '' };
  if (action !== 'hmac' && action !== 'sign') return secrets;
  const ref = credentialRefOf(ctx.node.credentials?.crypto);
  if (!ref) throw new NodeOperationError('Node does not have any credentials set for "crypto"');
  const data = await ctx.credential(ref);
  if (action === 'hmac') {
    if (!data.hmacSecret)
      throw new NodeOperationError(
        'No HMAC secret set in credentials. Please add an HMAC secret to your Crypto credentials.',
      );
    secrets.hmacSecret = data.hmacSecret;
  } else {
    if (!data.signPrivateKey)
      throw new NodeOperationError(
        'No private key set in credentials. Please add a private key to your Crypto credentials.',
      );
    secrets.privateKey = pem(data.signPrivateKey);
  }
  return secrets;
}

/**
 * n8n's Crypto v2: generate (uuid, ascii, base64, hex), hash and hmac (text or a binary property, hex
 * or base64), sign with a private key — Node's crypto. With continueOnFail a failing item becomes
 * `{ error: { message, name } }`, as in n8n v2.
 */
export const cryptoV2Node = defineNode({
  type: 'n8n-nodes-base.crypto',
  versions: [2],
  schema: CryptoV2Parameters,
  async execute(ctx) {
    const first = await ctx.params(0);
    const secrets = await secretsOf(ctx as NodeExecutionContext<unknown>, first.action);
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      try {
        const p = i === 0 ? first : await ctx.params(i);
        out.push(cryptoItem(item, i, { ...p, action: first.action }, secrets));
      } catch (err) {
        if (ctx.node.continueOnFail !== true) throw err;
        const e = err as Error;
        out.push({ json: { error: { message: e.message, name: e.name } } });
      }
    }
    return output(out);
  },
});
