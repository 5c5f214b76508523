import type { Client, SFTPWrapper } from 'ssh2';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { HostAccess } from '../../../engine/types.js';

export interface SshLogin {
  host: string;
  port: number;
  username: string;
  password?: string;
  privateKey?: string;
  passphrase?: string;
}

/** A connected ssh2 client to an address the outbound guard let through; every wait is bounded. */
export class SshSession {
  private constructor(
    private readonly client: Client,
    private readonly access: HostAccess['ssh'],
  ) {}

  static async open(login: SshLogin, access: HostAccess): Promise<SshSession> {
    const target = await access.tcpTarget(login.host, login.port).catch((err: Error) => {
      throw new NodeOperationError(err.message);
    });
    // ssh2 loads on first use, not at every start.
    const { Client: SshClient } = await import('ssh2');
    const client = new SshClient();
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', (err: Error) =>
        reject(
          new NodeOperationError(`SSH connection to ${login.host}:${login.port} failed: ${err.message}`),
        ),
      );
      client.connect({
        host: target.address,
        port: login.port,
        username: login.username,
        ...(login.password !== undefined ? { password: login.password } : {}),
        ...(login.privateKey ? { privateKey: login.privateKey } : {}),
        ...(login.passphrase ? { passphrase: login.passphrase } : {}),
        readyTimeout: Math.min(access.ssh.timeoutMs, 20_000),
      });
    });
    return new SshSession(client, access.ssh);
  }

  /** Runs a command (in `cwd`), bounded in time and output, as node-ssh's execCommand answers it. */
  exec(
    command: string,
    cwd: string,
  ): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
    const full = cwd ? `cd ${shellQuote(cwd)} && ${command}` : command;
    return this.bounded('The command', (done, fail) => {
      this.client.exec(full, (err, channel) => {
        if (err) return fail(err);
        const out: Buffer[] = [];
        const errs: Buffer[] = [];
        let bytes = 0;
        const take = (list: Buffer[]) => (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > this.access.maxOutputBytes) {
            channel.destroy();
            fail(new Error(`its output passed ${this.access.maxOutputBytes} bytes`));
          } else list.push(chunk);
        };
        channel.on('data', take(out));
        channel.stderr.on('data', take(errs));
        channel.on('close', (code: number | null, signal?: string) =>
          done({
            code: code ?? null,
            signal: signal ?? null,
            stdout: Buffer.concat(out).toString('utf8').trim(),
            stderr: Buffer.concat(errs).toString('utf8').trim(),
          }),
        );
      });
    });
  }

  /** The bytes of a remote file, refused past `maxBytes`. */
  download(remotePath: string, maxBytes: number): Promise<Buffer> {
    return this.withSftp('The download', (sftp, done, fail) => {
      sftp.stat(remotePath, (err, stats) => {
        if (err) return fail(new Error(`'${remotePath}': ${err.message}`));
        if (stats.size > maxBytes) return fail(new Error(`'${remotePath}' is larger than ${maxBytes} bytes`));
        const chunks: Buffer[] = [];
        let size = 0;
        const stream = sftp.createReadStream(remotePath);
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            stream.destroy();
            fail(new Error(`'${remotePath}' is larger than ${maxBytes} bytes`));
          } else chunks.push(chunk);
        });
        stream.on('error', (e: Error) => fail(e));
        stream.on('end', () => done(Buffer.concat(chunks)));
      });
    });
  }

  upload(remotePath: string, bytes: Buffer): Promise<void> {
    return this.withSftp('The upload', (sftp, done, fail) => {
      const stream = sftp.createWriteStream(remotePath);
      stream.on('error', (e: Error) => fail(new Error(`'${remotePath}': ${e.message}`)));
      stream.on('close', () => done(undefined));
      stream.end(bytes);
    });
  }

  close(): void {
    this.client.end();
  }

  private withSftp<T>(
    what: string,
    run: (sftp: SFTPWrapper, done: (v: T) => void, fail: (e: Error) => void) => void,
  ): Promise<T> {
    return this.bounded(what, (done, fail) => {
      this.client.sftp((err, sftp) => {
        if (err) return fail(err);
        run(
          sftp,
          (v) => {
            sftp.end();
            done(v);
          },
          (e) => {
            sftp.end();
            fail(e);
          },
        );
      });
    });
  }

  private bounded<T>(
    what: string,
    run: (done: (v: T) => void, fail: (e: Error) => void) => void,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        this.client.destroy();
        reject(
          new NodeOperationError(`${what} took longer than ${this.access.timeoutMs} ms and was stopped`),
        );
      }, this.access.timeoutMs);
      run(
        (v) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(v);
        },
        (e) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(
            e instanceof NodeOperationError ? e : new NodeOperationError(`${what} failed: ${e.message}`),
          );
        },
      );
    });
  }
}

/** A POSIX shell single-quoted word. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
