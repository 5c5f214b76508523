import { utils } from 'ssh2';

/**
 * An ed25519 key pair that ssh2 itself can read back. ssh2's generator strips leading zero bytes of the
 * public key, so about 1 pair in 256 does not parse (mscdex/ssh2#1513): a test would fail at random.
 */
export function sshKeyPair(): { private: string; public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(pair.private) instanceof Error) && !(utils.parseKey(pair.public) instanceof Error))
      return pair;
  }
}
