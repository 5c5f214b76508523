import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import { Type } from 'typebox';
import { type JwtCredential, signingKey, verifyingKey } from '../../../credentials/jwt.js';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import { credentialRefOf, type Item, type Json } from '../../../engine/types.js';
import { JWT_ALGORITHMS } from '../../../schemas.js';

/** A token longer than this is refused before it is parsed. */
const MAX_TOKEN_CHARS = 64 * 1024;

const DEFAULT_CLAIMS_JSON = '{\n  "my_field_1": "value 1",\n  "my_field_2": "value 2"\n}\n';

const JwtParameters = Type.Object(
  {
    operation: Type.Enum(['decode', 'sign', 'verify'] as const, { default: 'sign' }),
    useJson: Type.Boolean({ default: false }),
    claims: Type.Object(
      {
        audience: Type.Optional(Type.String()),
        expiresIn: Type.Optional(Type.Number({ minimum: 0 })),
        issuer: Type.Optional(Type.String()),
        jwtid: Type.Optional(Type.String()),
        notBefore: Type.Optional(Type.Number({ minimum: 0 })),
        subject: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
    claimsJson: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())], {
      default: DEFAULT_CLAIMS_JSON,
    }),
    /** Extra protected-header fields (JSON), over the `kid` option. */
    headerClaims: Type.Optional(Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())])),
    token: Type.String({ default: '' }),
    options: Type.Object(
      {
        complete: Type.Optional(Type.Boolean()),
        ignoreExpiration: Type.Optional(Type.Boolean()),
        ignoreNotBefore: Type.Optional(Type.Boolean()),
        clockTolerance: Type.Optional(Type.Number({ minimum: 0 })),
        kid: Type.Optional(Type.String()),
        algorithm: Type.Optional(Type.Enum(JWT_ALGORITHMS)),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = {
  operation: 'decode' | 'sign' | 'verify';
  useJson: boolean;
  claims: Record<string, unknown>;
  claimsJson: string | Record<string, unknown>;
  headerClaims?: string | Record<string, unknown>;
  token: string;
  options: {
    complete?: boolean;
    ignoreExpiration?: boolean;
    ignoreNotBefore?: boolean;
    clockTolerance?: number;
    kid?: string;
    algorithm?: string;
  };
};

function jsonObject(
  value: string | Record<string, unknown> | undefined,
  name: string,
): Record<string, unknown> {
  if (value === undefined || value === '') return {};
  if (typeof value !== 'string') return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new NodeOperationError(`The parameter '${name}' is not valid JSON`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new NodeOperationError(`The parameter '${name}' must be a JSON object`);
  return parsed as Record<string, unknown>;
}

/** The token parameter, checked: present, bounded, and not an unsigned (`alg: none`) token. */
function tokenOf(p: Params): { token: string; header: Record<string, unknown> } {
  const token = p.token;
  if (!token)
    throw new NodeOperationError('The JWT token was not provided', {
      description: "Be sure to add a valid JWT token to the 'Token' parameter",
    });
  if (token.length > MAX_TOKEN_CHARS)
    throw new NodeOperationError(`The JWT token is longer than ${MAX_TOKEN_CHARS} characters`);
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token) as Record<string, unknown>;
  } catch {
    throw new NodeOperationError('The JWT token is malformed');
  }
  if (typeof header.alg !== 'string' || header.alg.toLowerCase() === 'none')
    throw new NodeOperationError("The JWT token is unsigned (alg 'none'): refused", {
      description: 'Only tokens signed with HS, RS, ES or PS algorithms are accepted',
    });
  return { token, header };
}

async function sign(p: Params, c: JwtCredential): Promise<Json> {
  const payload = p.useJson ? jsonObject(p.claimsJson, 'claimsJson') : p.claims;
  const alg = p.options.algorithm ?? c.algorithm ?? 'HS256';
  const header = {
    alg,
    typ: 'JWT',
    ...(p.options.kid ? { kid: p.options.kid } : {}),
    ...jsonObject(p.headerClaims, 'headerClaims'),
  };
  // As jsonwebtoken: an `iat` claim unless the payload has one.
  const jwt = new SignJWT(payload).setProtectedHeader(header as { alg: string });
  if (payload.iat === undefined) jwt.setIssuedAt();
  try {
    return { token: await jwt.sign(signingKey(c)) };
  } catch (err) {
    throw new NodeOperationError(
      `Could not sign the JWT with the credential's key: ${(err as Error).message}`,
    );
  }
}

async function verify(p: Params, c: JwtCredential): Promise<Json> {
  const { token, header } = tokenOf(p);
  const alg = p.options.algorithm ?? c.algorithm ?? 'HS256';
  let payload: Record<string, unknown>;
  try {
    const key = verifyingKey(c);
    try {
      payload = (await jwtVerify(token, key, { algorithms: [alg], clockTolerance: p.options.clockTolerance }))
        .payload;
    } catch (err) {
      // jose has no "ignore" switches: a claim failure comes after the signature held.
      const ignored =
        (err instanceof errors.JWTExpired && p.options.ignoreExpiration) ||
        (err instanceof errors.JWTClaimValidationFailed && err.claim === 'nbf' && p.options.ignoreNotBefore);
      if (!ignored) throw err;
      payload = decodeJwt(token);
    }
  } catch (err) {
    if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JOSEAlgNotAllowed)
      throw new NodeOperationError("The JWT token can't be verified", {
        description:
          'Be sure that the provided JWT token is correctly encoded and matches the selected credentials',
      });
    throw new NodeOperationError((err as Error).message);
  }
  return complete(p, token, header, payload);
}

function decode(p: Params): Json {
  const { token, header } = tokenOf(p);
  let payload: Record<string, unknown> | null;
  try {
    payload = decodeJwt(token);
  } catch {
    payload = null;
  }
  return complete(p, token, header, payload);
}

/** `{ payload }`, or with `complete` jsonwebtoken's `{ header, payload, signature }`. */
function complete(p: Params, token: string, header: Record<string, unknown>, payload: unknown): Json {
  if (!p.options.complete || payload === null) return { payload } as Json;
  return { header, payload, signature: token.split('.')[2] ?? '' } as unknown as Json;
}

async function credentialOf(ctx: NodeExecutionContext<unknown>): Promise<JwtCredential> {
  const ref = credentialRefOf(ctx.node.credentials?.jwtAuth);
  if (!ref) throw new NodeOperationError('Node does not have any credentials set for "jwtAuth"');
  return (await ctx.credential(ref)) as JwtCredential;
}

/**
 * n8n's JWT node: sign claims (or JSON) with the node's jwtAuth credential, decode a token, or verify
 * it (expiry, not-before and clock tolerance as jsonwebtoken) — with `jose`. Unsigned tokens are refused.
 */
export const jwtNode = defineNode({
  type: 'n8n-nodes-base.jwt',
  versions: [1],
  schema: JwtParameters,
  async execute(ctx) {
    const credential = await credentialOf(ctx as NodeExecutionContext<unknown>);
    const out: Item[] = [];
    const operation = (await ctx.params(0)).operation;
    for (const [i, item] of ctx.items.entries()) {
      try {
        const p = (await ctx.params(i)) as Params;
        const json =
          operation === 'sign'
            ? await sign(p, credential)
            : operation === 'verify'
              ? await verify(p, credential)
              : decode(p);
        out.push({ json: json as Item['json'] });
      } catch (err) {
        if (ctx.node.continueOnFail !== true) throw err;
        out.push({ json: item.json });
      }
    }
    return output(out);
  },
});
