import { execFile } from 'node:child_process';
import type { Executable } from 'vscode-languageclient/node';
import type { LaunchSettings } from './settings';

export interface Launch {
  command: string;
  args: string[];
  /** How the user would type it, for messages. */
  display: string;
}

export function launchFor(settings: LaunchSettings): Launch {
  if (settings.python) {
    return { command: settings.python, args: ['-m', 'pycapsule'], display: `${settings.python} -m pycapsule` };
  }
  return { command: settings.command, args: [], display: settings.command };
}

export function executable(launch: Launch, env: NodeJS.ProcessEnv): Executable {
  // No `transport`: vscode-languageclient would append `--stdio`, which `serve` accepts but does not need.
  return { command: launch.command, args: [...launch.args, 'serve'], options: { env } };
}

const PREFLIGHT_TIMEOUT_MS = 20_000;

/**
 * Runs `<launch> --version` so that a wrong command or a Python without pycapsule becomes one plain
 * sentence, instead of the language client's "connection closed" after the server dies at start.
 * Resolves to undefined when the command works, else to the sentence.
 */
export function preflight(launch: Launch, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const setting = launch.args.length ? 'pycapsule.server.python' : 'pycapsule.server.command';
  return new Promise((resolve) => {
    execFile(
      launch.command,
      [...launch.args, '--version'],
      { env, timeout: PREFLIGHT_TIMEOUT_MS, windowsHide: true },
      (error, _stdout, stderr) => {
        if (!error) {
          resolve(undefined);
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          resolve(
            `PyCapsule cannot start its language server: the command "${launch.command}" was not found. ` +
              `Install pycapsule (pip install pycapsule) or set "${setting}".`,
          );
        } else if (code === 'EACCES') {
          resolve(`PyCapsule cannot start its language server: "${launch.command}" is not executable; check "${setting}".`);
        } else if (error.killed) {
          resolve(`PyCapsule cannot start its language server: "${launch.display} --version" did not answer in ${PREFLIGHT_TIMEOUT_MS / 1000} s.`);
        } else {
          const lastLine = stderr.trim().split(/\r?\n/).pop()?.trim() || `exit code ${String(error.code)}`;
          resolve(`PyCapsule cannot start its language server: "${launch.display} --version" failed (${lastLine}); check "${setting}".`);
        }
      },
    );
  });
}
