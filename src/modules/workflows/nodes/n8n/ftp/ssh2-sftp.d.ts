/** The SFTP calls the FTP node makes besides those the SSH node declares (ssh/ssh2.d.ts; merged). */
declare module 'ssh2' {
  export interface FileEntry {
    filename: string;
    longname: string;
    attrs: { mode: number; size: number; uid: number; gid: number; atime: number; mtime: number };
  }

  export interface SFTPWrapper {
    readdir(path: string, cb: (err: Error | undefined, list: FileEntry[]) => void): void;
    unlink(path: string, cb: (err: Error | undefined) => void): void;
    rmdir(path: string, cb: (err: Error | undefined) => void): void;
    mkdir(path: string, cb: (err: Error | undefined) => void): void;
    rename(from: string, to: string, cb: (err: Error | undefined) => void): void;
    lstat(path: string, cb: (err: Error | undefined, stats: { isDirectory(): boolean }) => void): void;
  }
}
