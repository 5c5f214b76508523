// Generates src/modules/game/endpoint-table.ts and endpoint-bodies.ts from bungie-api-ts (a
// devDependency): every endpoint function, its method and upstream path template (api.js), its
// path and query parameters and body type (api.d.ts, read with the type checker). Runtime code
// reads only the generated files. Run: node scripts/game-endpoints.mjs
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const pkgDir = dirname(require.resolve('bungie-api-ts/package.json', { paths: [root] }));
const pkgVersion = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;

/**
 * The user OAuth scope of each endpoint that declares one, as Bungie's own OpenAPI document
 * (github.com/Bungie-net/api openapi.json, commit da14826) states in its `security`; bungie-api-ts
 * does not carry it. Endpoints not listed need no user token (it is attached when connected).
 */
const OAUTH_SCOPES = {
  'GET /App/ApiUsage/{applicationId}/': 'ReadUserData',
  'GET /User/GetMembershipsForCurrentUser/': 'ReadBasicUserProfile',
  'GET /GroupV2/GetUserClanInviteSetting/{mType}/': 'ReadUserData',
  'POST /GroupV2/Recommended/{groupType}/{createDateRange}/': 'ReadGroups',
  'POST /GroupV2/{groupId}/Edit/': 'AdminGroups',
  'POST /GroupV2/{groupId}/EditClanBanner/': 'AdminGroups',
  'POST /GroupV2/{groupId}/EditFounderOptions/': 'AdminGroups',
  'POST /GroupV2/{groupId}/OptionalConversations/Add/': 'AdminGroups',
  'POST /GroupV2/{groupId}/OptionalConversations/Edit/{conversationId}/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/{membershipType}/{membershipId}/SetMembershipType/{memberType}/':
    'AdminGroups',
  'POST /GroupV2/{groupId}/Members/{membershipType}/{membershipId}/Kick/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/{membershipType}/{membershipId}/Ban/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/{membershipType}/{membershipId}/Unban/': 'AdminGroups',
  'GET /GroupV2/{groupId}/Banned/': 'AdminGroups',
  'GET /GroupV2/{groupId}/EditHistory/': 'AdminGroups',
  'GET /GroupV2/{groupId}/Members/Pending/': 'AdminGroups',
  'GET /GroupV2/{groupId}/Members/InvitedIndividuals/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/ApproveAll/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/DenyAll/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/ApproveList/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/Approve/{membershipType}/{membershipId}/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/DenyList/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/IndividualInvite/{membershipType}/{membershipId}/': 'AdminGroups',
  'POST /GroupV2/{groupId}/Members/IndividualInviteCancel/{membershipType}/{membershipId}/': 'AdminGroups',
  'POST /Tokens/Partner/ForceDropsRepair/': 'PartnerOfferGrant',
  'POST /Tokens/Partner/ClaimOffer/': 'PartnerOfferGrant',
  'POST /Tokens/Partner/ApplyMissingOffers/{partnerApplicationId}/{targetBnetMembershipId}/':
    'PartnerOfferGrant',
  'GET /Tokens/Partner/History/{partnerApplicationId}/{targetBnetMembershipId}/': 'PartnerOfferGrant',
  'GET /Tokens/Partner/History/{targetBnetMembershipId}/Application/{partnerApplicationId}/':
    'PartnerOfferGrant',
  'GET /Tokens/Rewards/GetRewardsForUser/{membershipId}/': 'ReadAndApplyTokens',
  'GET /Tokens/Rewards/GetRewardsForPlatformUser/{membershipId}/{membershipType}/': 'ReadAndApplyTokens',
  'POST /Destiny2/Actions/Items/TransferItem/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Items/PullFromPostmaster/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Items/EquipItem/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Items/EquipItems/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Loadouts/EquipLoadout/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Loadouts/SnapshotLoadout/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Loadouts/UpdateLoadoutIdentifiers/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Loadouts/ClearLoadout/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Items/SetLockState/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Items/SetTrackedState/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Actions/Items/InsertSocketPlug/': 'AdvancedWriteActions',
  'POST /Destiny2/Actions/Items/InsertSocketPlugFree/': 'MoveEquipDestinyItems',
  'POST /Destiny2/Stats/PostGameCarnageReport/{activityId}/Report/': 'BnetWrite',
  'POST /Destiny2/Awa/Initialize/': 'AdvancedWriteActions',
  'GET /Destiny2/Awa/GetActionToken/{correlationId}/': 'AdvancedWriteActions',
  'GET /Fireteam/Clan/{groupId}/ActiveCount/': 'ReadGroups',
  'GET /Fireteam/Clan/{groupId}/Available/{platform}/{activityType}/{dateRange}/{slotFilter}/{publicOnly}/{page}/':
    'ReadGroups',
  'GET /Fireteam/Search/Available/{platform}/{activityType}/{dateRange}/{slotFilter}/{page}/': 'ReadGroups',
  'GET /Fireteam/Clan/{groupId}/My/{platform}/{includeClosed}/{page}/': 'ReadGroups',
  'GET /Fireteam/Clan/{groupId}/Summary/{fireteamId}/': 'ReadGroups',
  'GET /Social/Friends/': 'ReadUserData',
  'GET /Social/Friends/Requests/': 'ReadUserData',
  'POST /Social/Friends/Add/{membershipId}/': 'BnetWrite',
  'POST /Social/Friends/Requests/Accept/{membershipId}/': 'BnetWrite',
  'POST /Social/Friends/Requests/Decline/{membershipId}/': 'BnetWrite',
  'POST /Social/Friends/Remove/{membershipId}/': 'BnetWrite',
  'POST /Social/Friends/Requests/Remove/{membershipId}/': 'BnetWrite',
};

/** POST endpoints that only read (searches): game:read like every GET. */
const READ_POSTS = new Set([
  'searchDestinyPlayerByBungieName',
  'getRecruitmentThreadSummaries',
  'getRecommendedGroups',
  'groupSearch',
  'getGroupByNameV2',
  'searchByGlobalNamePost',
]);
/** GETs that administer (clan admin lists, partner offers, AWA tokens): game:write. */
const WRITE_SCOPES = new Set(['AdminGroups', 'PartnerOfferGrant', 'AdvancedWriteActions']);

const areas = readdirSync(pkgDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && readdirSync(join(pkgDir, d.name)).includes('api.js'))
  .map((d) => d.name)
  .sort();

const program = ts.createProgram(
  areas.map((a) => join(pkgDir, a, 'api.d.ts')),
  { strict: true, noEmit: true },
);
const checker = program.getTypeChecker();
const schemas = {};

const endpoints = [];
for (const area of areas) {
  for (const fn of readJs(area)) endpoints.push(describe(area, fn));
}
const seen = new Set();
for (const e of endpoints) {
  const key = `${e.method} ${e.path}`;
  if (seen.has(key)) throw new Error(`duplicate endpoint ${key}`);
  seen.add(key);
}
for (const key of Object.keys(OAUTH_SCOPES)) {
  if (!seen.has(key)) throw new Error(`scope listed for an endpoint bungie-api-ts does not have: ${key}`);
}

const outputs = {
  'src/modules/game/endpoint-table.ts': renderTable(endpoints),
  'src/modules/game/endpoint-bodies.ts': renderBodies(),
  'docs/game-endpoints.md': renderDocs(endpoints),
};
for (const [file, text] of Object.entries(outputs)) writeFileSync(join(root, file), text);
// In the repository's own format, so regenerating changes nothing when the sources did not.
execFileSync(
  join(root, 'node_modules/.bin/biome'),
  ['format', '--write', ...Object.keys(outputs).slice(0, 2)],
  {
    cwd: root,
    stdio: 'ignore',
  },
);
console.log(`${endpoints.length} endpoints from bungie-api-ts ${pkgVersion}`);

/** Method, path template and query conversions of each function in `<area>/api.js`. */
function readJs(area) {
  const file = join(pkgDir, area, 'api.js');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  let base = '';
  const out = [];
  for (const stmt of source.statements) {
    if (ts.isVariableStatement(stmt)) {
      const decl = stmt.declarationList.declarations[0];
      if (decl.name.getText() === 'API_BASE') base = decl.initializer.text;
    }
    if (!ts.isFunctionDeclaration(stmt) || !stmt.name) continue;
    let call;
    const lists = new Set();
    const sent = new Set();
    const visit = (node) => {
      if (
        ts.isPropertyAccessExpression(node) &&
        node.expression.getText() === 'strParams' &&
        ts.isBinaryExpression(node.parent) &&
        node.parent.left === node
      ) {
        sent.add(node.name.text);
      }
      if (ts.isCallExpression(node) && ['get', 'post'].includes(node.expression.getText())) call = node;
      if (
        ts.isPropertyAccessExpression(node) &&
        node.name.text === 'join' &&
        ts.isPropertyAccessExpression(node.expression)
      ) {
        lists.add(node.expression.name.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(stmt);
    const url = call.arguments[1];
    let template = '';
    if (ts.isNoSubstitutionTemplateLiteral(url)) template = url.text;
    else {
      template = url.head.text;
      for (const span of url.templateSpans) {
        const expr = span.expression.getText();
        template += expr === 'API_BASE' ? base : `{${expr.replace(/^params\./, '')}}`;
        template += span.literal.text;
      }
    }
    const path = template.replace(/^https:\/\/(www|stats)\.bungie\.net\/Platform/, '');
    if (!path.startsWith('/')) throw new Error(`${stmt.name.text}: unexpected URL ${template}`);
    out.push({
      name: stmt.name.text,
      method: call.expression.getText().toUpperCase(),
      path,
      host: /stats\.bungie\.net/.test(template) ? 'stats' : 'www',
      lists,
      sent,
    });
  }
  return out;
}

function describe(area, js) {
  const dts = program.getSourceFile(join(pkgDir, area, 'api.d.ts'));
  const decl = dts.statements.find((s) => ts.isFunctionDeclaration(s) && s.name?.text === js.name);
  const summary = docOf(decl);
  const paramsDecl = decl.parameters.find((p) => p.name.getText() === 'params');
  const bodyDecl = decl.parameters.find((p) => p.name.getText() === 'body');
  const pathNames = [...js.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const pathParams = [];
  const query = [];
  if (paramsDecl) {
    const type = checker.getTypeAtLocation(paramsDecl);
    for (const prop of checker.getPropertiesOfType(type)) {
      const propType = checker.getTypeOfSymbolAtLocation(prop, paramsDecl);
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      const kind = scalarKind(checker.getNonNullableType(propType));
      if (pathNames.includes(prop.name)) pathParams.push({ name: prop.name, ...kind });
      // Required only when the function sends it: a declared parameter it never sends (getMembersOfGroup's
      // currentpage) stays accepted, but a bungie-api-ts caller cannot be refused for leaving it out.
      else query.push({ name: prop.name, required: !optional && js.sent.has(prop.name), ...kind });
    }
  }
  // Path order, not declaration order.
  pathParams.sort((a, b) => pathNames.indexOf(a.name) - pathNames.indexOf(b.name));
  if (pathParams.length !== pathNames.length) throw new Error(`${js.name}: path params do not match`);
  let body = null;
  if (bodyDecl) {
    const type = checker.getTypeAtLocation(bodyDecl);
    const name = typeName(type);
    schemas[name] ??= schemaOf(type, bodyDecl, new Set());
    body = name;
  }
  const key = `${js.method} ${js.path}`;
  const oauthScope = OAUTH_SCOPES[key] ?? null;
  const write =
    (js.method === 'POST' && !READ_POSTS.has(js.name)) ||
    (oauthScope !== null && WRITE_SCOPES.has(oauthScope));
  return {
    name: js.name,
    area,
    method: js.method,
    path: js.path,
    ...(js.host === 'stats' ? { host: 'stats' } : {}),
    pathParams,
    query,
    body,
    oauth: write || oauthScope ? 'required' : 'optional',
    oauthScope,
    access: write ? 'write' : 'read',
    summary,
  };
}

function docOf(node) {
  const doc = ts.getJSDocCommentsAndTags(node).find(ts.isJSDoc);
  const text = typeof doc?.comment === 'string' ? doc.comment : '';
  const first = text.replace(/\s+/g, ' ').trim();
  const sentence = /^(.*?[.!?])(\s|$)/.exec(first)?.[1] ?? first;
  return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
}

function typeName(type) {
  return checker.typeToString(type).replace(/\[\]$/, 'List');
}

/** A path or query parameter: its kind, and the values of an enum. */
function scalarKind(type) {
  if (checker.isArrayType(type)) {
    const element = scalarKind(checker.getTypeArguments(type)[0]);
    return { type: element.type, list: true, ...(element.enum ? { enum: element.enum } : {}) };
  }
  if (type.flags & ts.TypeFlags.String) return { type: 'string' };
  if (type.flags & ts.TypeFlags.Number) return { type: 'number' };
  if (type.flags & ts.TypeFlags.Boolean || type.flags & ts.TypeFlags.BooleanLiteral)
    return { type: 'boolean' };
  const values = enumValues(type);
  if (values) return { type: 'enum', enum: values };
  throw new Error(`unsupported parameter type ${checker.typeToString(type)}`);
}

function enumValues(type) {
  const members = type.isUnion() ? type.types : [type];
  if (!members.every((t) => t.flags & ts.TypeFlags.NumberLiteral)) return null;
  return members.map((t) => t.value).sort((a, b) => a - b);
}

/** JSON schema of a request type; recursion cut at a repeated type (then any value). */
function schemaOf(type, at, stack) {
  if (type.flags & ts.TypeFlags.Any || type.flags & ts.TypeFlags.Unknown) return {};
  if (type.flags & ts.TypeFlags.String) return { type: 'string' };
  if (type.flags & ts.TypeFlags.Number) return { type: 'number' };
  if (type.flags & ts.TypeFlags.Boolean || type.flags & ts.TypeFlags.BooleanLiteral)
    return { type: 'boolean' };
  const values = enumValues(type);
  if (values) return { type: 'integer', enum: values };
  if (type.isUnion()) {
    const rest = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
    const nullable = rest.length < type.types.length;
    const inner =
      rest.length === 1 ? schemaOf(rest[0], at, stack) : { anyOf: rest.map((t) => schemaOf(t, at, stack)) };
    return nullable ? { anyOf: [inner, { type: 'null' }] } : inner;
  }
  if (checker.isArrayType(type)) {
    return { type: 'array', items: schemaOf(checker.getTypeArguments(type)[0], at, stack) };
  }
  if (stack.has(type)) return {};
  stack.add(type);
  const properties = {};
  const required = [];
  for (const prop of checker.getPropertiesOfType(type)) {
    const propType = checker.getTypeOfSymbolAtLocation(prop, at);
    properties[prop.name] = schemaOf(propType, at, stack);
    if ((prop.flags & ts.SymbolFlags.Optional) === 0) required.push(prop.name);
  }
  const index = checker.getIndexInfosOfType(type)[0];
  stack.delete(type);
  const schema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  // Upstream request types are closed; a dictionary type keeps its values' schema.
  schema.additionalProperties = index ? schemaOf(index.type, at, stack) : false;
  return schema;
}

function renderTable(list) {
  const lines = [
    `// Generated by scripts/game-endpoints.mjs from bungie-api-ts ${pkgVersion}: do not edit.`,
    "import type { GameEndpoint } from './endpoint-types.js';",
    '',
    `/** Every endpoint of the game platform's API (${list.length}), as bungie-api-ts lists them. */`,
    'export const GAME_ENDPOINTS: readonly GameEndpoint[] = [',
    ...list.map((e) => `  ${JSON.stringify(e)},`),
    '];',
    '',
  ];
  return lines.join('\n');
}

function renderBodies() {
  return [
    `// Generated by scripts/game-endpoints.mjs from bungie-api-ts ${pkgVersion}: do not edit.`,
    '',
    '/** JSON schemas of the request bodies, by bungie-api-ts type name. */',
    `export const GAME_BODY_SCHEMAS: Readonly<Record<string, object>> = ${JSON.stringify(schemas, null, 2)};`,
    '',
  ].join('\n');
}

function renderDocs(list) {
  const cell = (text) => text.replaceAll('|', '\\|');
  const rows = list.map((e) => {
    const query = e.query.map((q) => (q.required ? `${q.name}*` : q.name)).join(', ');
    const token =
      e.oauth === 'required' ? `required${e.oauthScope ? ` (${e.oauthScope})` : ''}` : 'if connected';
    return `| ${e.method} | \`/game${e.path}\` | ${query} | ${e.body ?? ''} | ${token} | game:${e.access} | ${e.name}: ${cell(e.summary)} |`;
  });
  return [
    '# Game-platform endpoints',
    '',
    `Generated by \`node scripts/game-endpoints.mjs\` from bungie-api-ts ${pkgVersion}: do not edit.`,
    '',
    `All ${list.length} endpoints of the game platform's API, served under \`/game\` with the upstream's path`,
    'shapes (the trailing slash is optional). `*` marks a required query parameter; the body column names',
    "the request type a POST is checked against; the token column says whether the caller's connected",
    'account is required (401 `GAME_AUTH_REQUIRED` without one) or attached when connected.',
    '`Destiny2/Manifest/` and `Destiny2/Manifest/{entityType}/{hashIdentifier}/` are served from the',
    'version-keyed manifest cache.',
    '',
    '| Method | Path | Query | Body | User token | Scope | Function: summary |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
