import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import { credentialRefOf, type Item } from '../../../engine/types.js';
import { base32Bytes, totp } from './rfc6238.js';

const ALGORITHMS = [
  'SHA1',
  'SHA224',
  'SHA256',
  'SHA3-224',
  'SHA3-256',
  'SHA3-384',
  'SHA3-512',
  'SHA384',
  'SHA512',
] as const;

const TotpOptions = Type.Object(
  {
    algorithm: Type.Optional(Type.Enum(ALGORITHMS)),
    digits: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    period: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
  },
  { additionalProperties: false, default: {} },
);

const TotpParameters = Type.Object(
  {
    operation: Type.Enum(['generateSecret'] as const, { default: 'generateSecret' }),
    options: TotpOptions,
    /** The name early exports of the node carry for `options`. */
    additionalOptions: Type.Optional(TotpOptions),
  },
  { additionalProperties: false },
);

/**
 * n8n's TOTP node: the current time-based one-time password of the node's totpApi credential (`label`
 * `issuer:username`, base32 `secret`) and the seconds it stays valid, on every item (RFC 6238 here,
 * with node:crypto).
 */
export const totpNode = defineNode({
  type: 'n8n-nodes-base.totp',
  versions: [1],
  schema: TotpParameters,
  async execute(ctx) {
    const ref = credentialRefOf(ctx.node.credentials?.totpApi);
    if (!ref) throw new NodeOperationError('Node does not have any credentials set for "totpApi"');
    const credential = await ctx.credential(ref);
    if (!String(credential.label ?? '').includes(':'))
      throw new NodeOperationError('Malformed label - expected `issuer:username`');
    const secret = base32Bytes(String(credential.secret ?? ''));
    if (!secret || secret.length === 0)
      throw new NodeOperationError('The TOTP secret is not a base32 string');
    const p = await ctx.params(0);
    const o = { ...p.additionalOptions, ...p.options };
    const period = o.period || 30;
    const now = Date.now();
    const token = totp(secret, now, o.algorithm || 'SHA1', o.digits || 6, period);
    const secondsRemaining = Math.trunc(period * (1 - ((now / 1000 / period) % 1)));
    return output(ctx.items.map((): Item => ({ json: { token, secondsRemaining } })));
  },
});
