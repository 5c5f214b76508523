import { type Static, Type } from 'typebox';
import { ALL_SERVICES } from '../../config.js';
import { ROLES } from '../../core/auth/principal.js';
import { documentedOnly } from '../../core/http/openapi-route.js';
import { Nullable, Timestamp } from '../../core/http/schemas.js';

const ServiceName = Type.Enum([...ALL_SERVICES, '*'] as const);
const Role = Type.Enum(ROLES);
const KeyTypeSchema = Type.Enum(['development', 'production'] as const);
/** Names of `llm` models, as keys and their scopes list them. */
const MODEL_NAME_PATTERN = '^[A-Za-z0-9._:/@+-]+$';
const ModelName = Type.String({ minLength: 1, maxLength: 100, pattern: MODEL_NAME_PATTERN });
const Models = Type.Array(ModelName, {
  maxItems: 100,
  uniqueItems: true,
  description: 'Models the key may use on the llm service; empty = any model',
});
const TokenBudget = Type.Integer({
  minimum: 1,
  maximum: 1_000_000_000,
  description: 'Language-model tokens (prompt + completion) per UTC day',
});
const OperationScope = Type.String({ pattern: '^[a-z*]+:(read|write|delete|admin)$', maxLength: 40 });
/**
 * A key's scope: `service:operation`, or `llm:model:<name>` (restricts the llm service to that
 * model; grants nothing on its own).
 */
const Scope = Type.String({
  pattern: '^(?:[a-z*]+:(?:read|write|delete|admin)|llm:model:[A-Za-z0-9._:/@+-]{1,100}|credentials:use)$',
  maxLength: 110,
});
/**
 * A timestamp or null as a list of types rather than `anyOf`: the response serializer then picks
 * the branch by the value's type instead of running a schema validator on every field it writes.
 */
const NullableTimestamp = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  format: 'date-time',
  description: 'ISO 8601 UTC',
});
const Cidr = Type.String({ minLength: 2, maxLength: 64, description: 'IPv4 or IPv6 address or CIDR' });

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    type: KeyTypeSchema,
    services: Type.Array(ServiceName, {
      minItems: 1,
      maxItems: 16,
      uniqueItems: true,
      description: "'*' (all services) stands alone",
    }),
    role: Role,
    scopes: Type.Optional(
      Type.Array(Scope, {
        maxItems: 64,
        uniqueItems: true,
        description:
          'Only with the Custom role, which needs at least one `service:operation` scope; each scope names ' +
          'a service of the key (or `*`). `llm:model:<name>` scopes only narrow the llm service. ' +
          '`credentials:use` (any role): the key may use every credential of the account, not only its own and shared ones.',
      }),
    ),
    allowedIps: Type.Optional(Type.Array(Cidr, { maxItems: 100 })),
    expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
    dailyQuota: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
    models: Type.Optional(Models),
    dailyTokenBudget: Type.Optional(TokenBudget),
  },
  { additionalProperties: false },
);
export type CreateKeyInput = Static<typeof CreateKeyBody>;

export const UpdateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    role: Type.Optional(Role),
    scopes: Type.Optional(Type.Array(Scope, { maxItems: 64, uniqueItems: true })),
    services: Type.Optional(Type.Array(ServiceName, { minItems: 1, maxItems: 16, uniqueItems: true })),
    allowedIps: Type.Optional(Type.Array(Cidr, { maxItems: 100 })),
    dailyQuota: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 100_000_000 }))),
    models: Type.Optional(Models),
    dailyTokenBudget: Type.Optional(Nullable(TokenBudget)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateKeyInput = Static<typeof UpdateKeyBody>;

export const RotateKeyBody = Type.Object(
  { gracePeriodSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 86_400 })) },
  { additionalProperties: false },
);

export const ApiKeyView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: KeyTypeSchema,
    prefix: Type.String(),
    last4: Type.String(),
    services: Type.Array(Type.String()),
    role: Role,
    scopes: Type.Array(Type.String()),
    allowedIps: Type.Array(Type.String()),
    dailyQuota: Type.Integer({ description: 'Effective requests per UTC day' }),
    models: Type.Array(Type.String(), { description: 'Models of the llm service; empty = any' }),
    dailyTokenBudget: Type.Unsafe<number | null>({
      type: ['integer', 'null'],
      description: 'Language-model tokens (prompt + completion) per UTC day; null = none',
    }),
    status: Type.Enum(['active', 'expired', 'revoked'] as const),
    expiresAt: Timestamp,
    revokedAt: NullableTimestamp,
    lastUsedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  {
    required: [
      'id',
      'name',
      'type',
      'prefix',
      'last4',
      'services',
      'role',
      'models',
      'dailyTokenBudget',
      'status',
      'expiresAt',
      'createdAt',
    ],
  },
);
export type ApiKeyViewT = Static<typeof ApiKeyView>;

export const ApiKeyWithSecret = Type.Intersect([
  ApiKeyView,
  Type.Object({ key: Type.String({ description: 'The full key; shown only in this response' }) }),
]);

export const CreateTokenBody = Type.Object(
  {
    customerId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:@-]+$' }),
    // A token has its key's models: model scopes are refused here (400), not narrowed per token.
    scopes: Type.Array(OperationScope, { minItems: 1, maxItems: 32, uniqueItems: true }),
    ttlSeconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        description:
          "Lifetime in seconds; at most the server's CUSTOMER_TOKEN_MAX_TTL_SECONDS (86400 unless set), " +
          '(a larger value is a 400); the token still ends no later than its key',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateTokenInput = Static<typeof CreateTokenBody>;

/**
 * CreateTokenBody with this server's ttlSeconds maximum in the document. Validation stays the service's
 * (its message names the setting), so the maximum is documented only.
 */
export function createTokenBodyFor(maxTtlSeconds: number): typeof CreateTokenBody {
  const ttl = CreateTokenBody.properties.ttlSeconds;
  return Type.Object(
    {
      ...CreateTokenBody.properties,
      ttlSeconds: Type.Optional(Type.Integer({ ...ttl, ...documentedOnly({ maximum: maxTtlSeconds }) })),
    },
    { additionalProperties: false },
  ) as unknown as typeof CreateTokenBody;
}

export const TokenView = Type.Object({
  token: Type.String(),
  tokenType: Type.Literal('Bearer'),
  customerId: Type.String(),
  scopes: Type.Array(Type.String()),
  expiresAt: Timestamp,
});

export const UsageQuery = Type.Object(
  {
    keyId: Type.Optional(Type.String({ maxLength: 100 })),
    from: Type.Optional(Type.String({ format: 'date' })),
    to: Type.Optional(Type.String({ format: 'date' })),
  },
  { additionalProperties: false },
);

export const UsageView = Type.Object({
  from: Type.String(),
  to: Type.String(),
  data: Type.Array(
    Type.Object({
      keyId: Type.String(),
      day: Type.String(),
      service: Type.String(),
      requests: Type.Integer(),
      rejected: Type.Integer(),
    }),
  ),
  tokens: Type.Array(
    Type.Object({
      keyId: Type.String(),
      day: Type.String(),
      model: Type.String({ description: 'The model that answered' }),
      requests: Type.Integer(),
      promptTokens: Type.Integer(),
      completionTokens: Type.Integer(),
      estimatedRequests: Type.Integer({
        description: 'Calls whose tokens were estimated (no upstream counts)',
      }),
      costUsd: Nullable(
        Type.Number({
          description: "US dollars at the model registry's prices (`pricing`); null without a price",
        }),
      ),
    }),
    { description: 'Language-model tokens per key, day and answering model' },
  ),
  totals: Type.Object({
    requests: Type.Integer(),
    rejected: Type.Integer(),
    promptTokens: Type.Integer(),
    completionTokens: Type.Integer(),
  }),
});
