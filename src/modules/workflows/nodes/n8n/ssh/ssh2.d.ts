/**
 * The part of `ssh2` (1.x, which ships no types) the SSH node and its test use: a client with exec
 * and SFTP, and the server its test starts in-process.
 */
declare module 'ssh2' {
  import type { EventEmitter } from 'node:events';
  import type { Duplex, Readable, Writable } from 'node:stream';

  export interface ClientChannel extends Duplex {
    stderr: Readable;
    on(event: 'close', listener: (code: number | null, signal?: string) => void): this;
    on(event: 'data', listener: (chunk: Buffer) => void): this;
    on(event: string, listener: (...args: never[]) => void): this;
  }

  export interface Stats {
    size: number;
    isFile(): boolean;
  }

  export interface SFTPWrapper extends EventEmitter {
    stat(path: string, cb: (err: Error | undefined, stats: Stats) => void): void;
    createReadStream(path: string): Readable;
    createWriteStream(path: string): Writable;
    end(): void;
  }

  export interface ConnectConfig {
    host: string;
    port?: number;
    username: string;
    password?: string;
    privateKey?: string | Buffer;
    passphrase?: string;
    readyTimeout?: number;
    keepaliveInterval?: number;
  }

  export class Client extends EventEmitter {
    connect(config: ConnectConfig): this;
    exec(command: string, cb: (err: Error | undefined, channel: ClientChannel) => void): boolean;
    sftp(cb: (err: Error | undefined, sftp: SFTPWrapper) => void): boolean;
    end(): this;
    destroy(): this;
  }

  export namespace utils {
    function generateKeyPairSync(
      type: 'ed25519' | 'rsa' | 'ecdsa',
      opts?: { bits?: number },
    ): { private: string; public: string };
    function parseKey(key: string | Buffer): ParsedKey | Error;
    const sftp: { OPEN_MODE: Record<string, number>; STATUS_CODE: Record<string, number> };
  }

  export interface ParsedKey {
    type: string;
    getPublicSSH(): Buffer;
    verify(data: Buffer, signature: Buffer, hashAlgo?: string): boolean;
  }

  export class Server extends EventEmitter {
    constructor(config: { hostKeys: Array<string | Buffer> }, listener?: (client: EventEmitter) => void);
    listen(port: number, host: string, cb?: () => void): this;
    address(): { port: number };
    close(cb?: () => void): this;
  }
}
