import path from 'node:path';
import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import { credentialOf } from '../credential-of.js';
import { mimeOf } from '../ftp/mime.js';
import { contentOf, operationOf, plan } from './operations.js';
import { type GithubTarget, githubRequest, githubRequestAll, targetOf } from './request.js';
import { GithubParameters, type GithubParams, OPERATIONS } from './schema.js';

/** Why the OAuth2 variant is refused: the platform keeps no OAuth2 tokens (no consent flow, no refresh). */
export const GITHUB_OAUTH2_REFUSED =
  "GitHub's OAuth2 authentication (githubOAuth2Api) is not supported here: the platform has no OAuth2 credential store. Use 'Access Token' with a githubApi credential (a personal access token)";

function problemsOf(p: GithubParams): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  if (p.authentication === 'oAuth2')
    problems.push({ path: 'parameters.authentication', message: GITHUB_OAUTH2_REFUSED });
  const op = operationOf(p);
  if (!isExpression(op) && !OPERATIONS[p.resource].includes(op))
    problems.push({
      path: p.operation === undefined ? 'parameters.resource' : 'parameters.operation',
      message:
        OPERATIONS[p.resource].length === 0
          ? `the resource '${p.resource}' is not supported here (it needs GitHub Actions or search, not served)`
          : `the operation '${op}' of '${p.resource}' is not supported here (supported: ${OPERATIONS[p.resource].join(', ')})`,
    });
  return problems;
}

const asRecord = (v: Json): Record<string, Json> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {};

/** The current blob of a file (edit and delete need it), on the branch the commit goes to. */
async function fileSha(t: GithubTarget, p: GithubParams): Promise<string> {
  const looked = plan({ ...p, operation: 'get', asBinaryProperty: false, additionalParameters: {} }, {});
  const branch = p.additionalParameters.branch?.branch;
  const found = asRecord(await githubRequest(t, { ...looked.call, query: branch ? { ref: branch } : {} }));
  if (typeof found.sha !== 'string') throw new NodeOperationError('Could not get the SHA of the file.');
  return found.sha;
}

/** file:get into a binary property, as n8n's prepareBinaryData names it from the file's path. */
function withFile(item: Item, answer: Json, property: string): Item {
  if (Array.isArray(answer) && answer.length > 1)
    throw new NodeOperationError('File Path is a folder, not a file.');
  const file = asRecord(Array.isArray(answer) ? (answer[0] ?? null) : answer);
  if (typeof file.content !== 'string')
    throw new NodeOperationError('GitHub sent no content for this file (over 1 MB, or not a file)');
  const filePath = typeof file.path === 'string' ? file.path : 'file';
  const bytes = Buffer.from(file.content, 'base64');
  return {
    json: item.json,
    binary: { ...item.binary, [property]: binaryOf(bytes, mimeOf(filePath), path.basename(filePath)) },
  };
}

/**
 * n8n's GitHub node (v1, v1.1) with an access token: files (create, edit, get, list, delete), issues,
 * releases, repositories, reviews, users and organizations, through the guarded outbound client to
 * api.github.com or the credential's server. Lists with "Return All" follow GitHub's Link header, bounded.
 */
export const githubNode = defineNode({
  type: 'n8n-nodes-base.github',
  versions: [1, 1.1],
  schema: GithubParameters,
  check: problemsOf,
  async execute(ctx) {
    const out: Item[] = [];
    let replaces = true;
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      if (p.authentication === 'oAuth2') throw new NodeOperationError(GITHUB_OAUTH2_REFUSED);
      const item = ctx.items[i] as Item;
      const t = targetOf(ctx.deps, await credentialOf(ctx.node, 'githubApi', (id) => ctx.credential(id)));
      const op = `${p.resource}:${operationOf(p)}`;
      const extra: { fileBody?: string; sha?: string } = {};
      if (op === 'file:create' || op === 'file:edit')
        extra.fileBody = p.binaryData
          ? binaryBytes(item, p.binaryPropertyName, i).bytes.toString('base64')
          : contentOf(p.fileContent);
      if (op === 'file:edit' || op === 'file:delete') extra.sha = await fileSha(t, p);
      const planned = plan(p, extra);
      replaces = planned.replaces;
      const answer: Json = planned.all
        ? await githubRequestAll(t, planned.call)
        : await githubRequest(t, planned.call);
      if (!planned.replaces) {
        out.push(item);
        continue;
      }
      if (planned.binaryProperty) {
        out.push({ ...withFile(item, answer, planned.binaryProperty), pairedItem: { item: i } });
        continue;
      }
      const json: Json = op === 'release:delete' ? { success: true } : answer;
      for (const one of Array.isArray(json) ? json : [json])
        out.push({ json: asRecord(one), pairedItem: { item: i } });
    }
    return output(replaces ? out : ctx.items);
  },
});
