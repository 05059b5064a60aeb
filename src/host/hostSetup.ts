import * as vscode from 'vscode';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { HostLog } from './hostLog';

// Creates the project's virtual environment and installs the host into it by running the
// repository's own scripts/setup-host.sh (the same script the README's commands use), with a
// cancellable progress notification that shows what the script is doing.

export async function runHostSetup(setupScript: string, log: HostLog): Promise<boolean> {
  log.info(`Installing the host: bash ${setupScript}`);
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: 'EMPO²: installing the training host into a virtual environment',
      cancellable: true,
    },
    (progress, token) =>
      new Promise<boolean>((resolve) => {
        const child = spawn('bash', [setupScript], { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
        const lines: string[] = [];
        const onLine = (line: string) => {
          lines.push(line);
          log.info(`[setup] ${line}`);
          progress.report({ message: line.replace(/^empo2:\s*/, '').slice(0, 120) });
        };
        createInterface({ input: child.stdout }).on('line', onLine);
        createInterface({ input: child.stderr }).on('line', onLine);
        const cancel = token.onCancellationRequested(() => child.kill('SIGTERM'));
        child.once('error', (error) => {
          cancel.dispose();
          log.error(`Cannot run bash: ${error.message}`);
          void vscode.window.showErrorMessage(
            `EMPO²: cannot run the setup script (${error.message}). Install bash and Python 3.10+, or set empo2.pythonPath.`,
          );
          resolve(false);
        });
        child.once('exit', (code) => {
          cancel.dispose();
          if (code === 0) {
            log.info('The host is installed.');
            resolve(true);
            return;
          }
          const why = token.isCancellationRequested ? 'cancelled' : (lines.slice(-1)[0] ?? `exit code ${code}`);
          log.error(`The host's setup failed: ${why}`);
          void vscode.window
            .showErrorMessage(`EMPO²: installing the host failed: ${why}`, 'Show Host Log')
            .then((choice) => {
              if (choice) {
                log.show();
              }
            });
          resolve(false);
        });
      }),
  );
}
