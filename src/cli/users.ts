import type { AuthApi } from '../modules/auth/index.js';
import type { PortalApi } from '../modules/portal/index.js';
import { firstKeyBox, USERS_USAGE as USAGE } from './help.js';

type Print = (line: string) => void;

/** The first line of what stdin holds (a piped password), without its line ending. */
export async function readFirstLine(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

/**
 * `platform users …`: the operator's way into the portal, on the same database as the server.
 * `notice` takes what is not the command's answer (the first-start key).
 */
export async function usersCommand(
  apis: { auth: AuthApi; portal: PortalApi },
  argv: string[],
  print: Print,
  readPassword: () => Promise<string> = () => readFirstLine(),
  notice: Print = print,
): Promise<number> {
  const [sub, email, ...extra] = argv;
  if (sub === 'help' || sub === '--help') {
    print(USAGE);
    return 0;
  }
  if ((sub !== 'setup-link' && sub !== 'set-password') || !email || extra.length > 0) {
    notice(USAGE);
    return 2;
  }
  // On an empty database: the owner account and key first (its own setup link is replaced below).
  const boot = await apis.auth.bootstrap();
  if (boot.createdKey) notice(firstKeyBox(boot.createdKey));
  const { members } = apis.portal;
  if (sub === 'setup-link') {
    const link = await members.setupLink(email);
    print(`One-time link that sets the password of ${link.member.email} (valid until ${link.expiresAt}):`);
    print(link.url);
    // The command cannot see the running server: without PUBLIC_URL the address is made from PORT here.
    if (!process.env.PUBLIC_URL)
      notice(
        `The link's address comes from PORT (${new URL(link.url).origin}), PUBLIC_URL being unset: if the portal is reached at another address, run this again with PUBLIC_URL=<that address> (the server's own setting).`,
      );
    return 0;
  }
  const member = await members.setPassword(email, await readPassword());
  print(`Password of ${member.email} set; their sessions were ended.`);
  return 0;
}
