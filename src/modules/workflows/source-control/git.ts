import { execFile } from 'node:child_process';
import { AppError } from '../../../core/errors.js';

export interface GitOptions {
  /** Longest one git command may take before it is killed. */
  timeoutMs: number;
  /** Whether `file://` remotes may be used (tests, a checkout on the same machine). */
  allowFile: boolean;
  /** A temporary HOME: no user or system configuration of the server reaches the command. */
  home: string;
}

/** A remote URL without its user info (a token in `https://token@host/…` never reaches an answer or a log). */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1***@');
}

/**
 * Runs `git` without a shell, with a timeout, no prompts, no hooks, no redirects, and only the
 * protocols allowed (https; file when configured). A missing git is a 503 naming it.
 */
export function git(args: string[], cwd: string, options: GitOptions, remote: string): Promise<string> {
  const protocols = options.allowFile ? 'https:file' : 'https';
  const config = [
    '-c',
    'core.hooksPath=/dev/null',
    '-c',
    'http.followRedirects=false',
    '-c',
    'credential.helper=',
    '-c',
    `protocol.file.allow=${options.allowFile ? 'always' : 'never'}`,
    '-c',
    'core.symlinks=false',
  ];
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...config, ...args],
      {
        cwd,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 4 * 1024 * 1024,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: options.home,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_TERMINAL_PROMPT: '0',
          GIT_ALLOW_PROTOCOL: protocols,
          GIT_AUTHOR_NAME: 'workflow platform',
          GIT_AUTHOR_EMAIL: 'source-control@localhost',
          GIT_COMMITTER_NAME: 'workflow platform',
          GIT_COMMITTER_EMAIL: 'source-control@localhost',
        },
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT')
          return reject(
            new AppError(
              'SERVICE_UNAVAILABLE',
              'Source control needs the git command, which this server does not have',
              {
                dependency: 'git',
              },
            ),
          );
        const detail = String(stderr || error.message)
          .split(remote)
          .join(redactUrl(remote))
          .trim()
          .slice(0, 500);
        if (error.killed)
          return reject(
            new AppError('GATEWAY_TIMEOUT', `git ${args[0]} took longer than ${options.timeoutMs} ms`, {
              command: args[0],
            }),
          );
        reject(new GitError(args[0] ?? 'git', detail));
      },
    );
  });
}

/** A git command that failed; `detail` is its stderr with the remote's credentials removed. */
export class GitError extends Error {
  constructor(
    readonly command: string,
    readonly detail: string,
  ) {
    super(`git ${command} failed: ${detail}`);
    this.name = 'GitError';
  }
}
