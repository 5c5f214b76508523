import path from 'node:path';
import { Type } from 'typebox';
import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import { credentialRefOf, type HostAccess, type Item } from '../../../engine/types.js';
import { FILE_LIMITS } from '../file-helpers/limits.js';
import { type SshLogin, SshSession } from './session.js';

const SshParameters = Type.Object(
  {
    authentication: Type.Union([Type.Literal('password'), Type.Literal('privateKey')], {
      default: 'password',
    }),
    resource: Type.Union([Type.Literal('command'), Type.Literal('file')], { default: 'command' }),
    operation: Type.Union([Type.Literal('execute'), Type.Literal('download'), Type.Literal('upload')], {
      default: 'execute',
    }),
    command: Type.Optional(Type.String()),
    cwd: Type.Optional(Type.String()),
    path: Type.Optional(Type.String()),
    binaryPropertyName: Type.Optional(Type.String()),
    options: Type.Object(
      { fileName: Type.Optional(Type.String()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** The problem (at save) or error (at run) of this node while the instance has it off. */
export const SSH_OFF =
  'The SSH node is off on this instance: set WORKFLOW_SSH_ENABLED=true to allow it (it runs commands on other machines)';

/**
 * n8n's SSH node (v1): execute a command, upload or download a file on a host reached with the
 * sshPassword or sshPrivateKey credential, through the outbound-address guard (a private address is
 * refused unless OUTBOUND_ALLOW_HOSTS names it). Off unless WORKFLOW_SSH_ENABLED; every step bounded.
 */
export const sshNode = defineNode({
  type: 'n8n-nodes-base.ssh',
  versions: [1],
  schema: SshParameters,
  check: (_params, limits) => (limits.host?.ssh.enabled ? [] : [{ path: 'parameters', message: SSH_OFF }]),
  async execute(ctx) {
    const access = ctx.deps.host;
    if (!access?.ssh.enabled) throw new NodeOperationError(SSH_OFF);
    const first = await ctx.params(0);
    const kind = first.authentication === 'privateKey' ? 'sshPrivateKey' : 'sshPassword';
    const ref = credentialRefOf(ctx.node.credentials?.[kind]);
    if (!ref) throw new NodeOperationError(`Node does not have any credentials set for "${kind}"`);
    const session = await SshSession.open(loginOf(await ctx.credential(ref)), access);
    try {
      const out: Item[] = [];
      for (let i = 0; i < ctx.items.length; i++) {
        const p = i === 0 ? first : await ctx.params(i);
        out.push(await runOne(session, p, ctx.items[i] as Item, i, access));
      }
      return output(out);
    } finally {
      session.close();
    }
  },
});

type Params = {
  resource: 'command' | 'file';
  operation: 'execute' | 'download' | 'upload';
  command?: string | undefined;
  cwd?: string | undefined;
  path?: string | undefined;
  binaryPropertyName?: string | undefined;
  options: { fileName?: string | undefined };
};

async function runOne(
  session: SshSession,
  p: Params,
  item: Item,
  index: number,
  _access: HostAccess,
): Promise<Item> {
  if (p.resource === 'command') {
    const command = String(p.command ?? '');
    if (command.trim() === '') throw new NodeOperationError("The parameter 'Command' is empty");
    return { json: await session.exec(command, p.cwd ?? '/') };
  }
  const property = p.binaryPropertyName || 'data';
  const remote = String(p.path ?? '');
  if (remote === '') throw new NodeOperationError("The parameter 'Path' is empty");
  if (p.operation === 'download') {
    const bytes = await session.download(remote, FILE_LIMITS.outputBytes);
    const name = p.options.fileName || path.posix.basename(remote);
    return {
      json: item.json,
      binary: { ...(item.binary ?? {}), [property]: binaryOf(bytes, 'application/octet-stream', name) },
    };
  }
  const { bytes, meta } = binaryBytes(item, property, index);
  const name = p.options.fileName || meta.fileName;
  if (!name) throw new NodeOperationError('The file to upload has no name: set the "File Name" option');
  await session.upload(`${remote}${remote.endsWith('/') ? '' : '/'}${name}`, bytes);
  return { json: { success: true } };
}

function loginOf(data: Record<string, string>): SshLogin {
  const port = Number(data.port ?? 22);
  if (!data.host || !data.username)
    throw new NodeOperationError('The SSH credential needs a host and a username');
  return {
    host: data.host,
    port: Number.isInteger(port) ? port : 22,
    username: data.username,
    ...(data.password !== undefined ? { password: data.password } : {}),
    ...(data.privateKey ? { privateKey: data.privateKey } : {}),
    ...(data.passphrase ? { passphrase: data.passphrase } : {}),
  };
}
