import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';

// Which Python runs the training host, and whether the host is installed in it. Free of vscode:
// the Python extension's choice comes in as a plain path (pythonExtension.ts reads it).
//
// Order: the empo2.pythonPath setting; else the interpreter selected in the Python extension
// (when it is installed and has one); else the project's own virtual environment, .venv next to
// host/ in the folder the extension ships in (this repository, or the installed extension).

export type InterpreterSource = 'setting' | 'python-extension' | 'project-venv';

export interface Interpreter {
  readonly python: string;
  readonly source: InterpreterSource;
}

export interface InterpreterInputs {
  /** empo2.pythonPath, trimmed; empty when unset. */
  readonly settingPath: string;
  /** The Python extension's selected interpreter, if it is installed and has one. */
  readonly pythonExtensionPath: string | undefined;
  /** The folder that holds host/ and scripts/setup-host.sh (the extension's own folder). */
  readonly projectRoot: string;
  readonly platform?: NodeJS.Platform;
}

export function projectVenvPython(projectRoot: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32'
    ? path.join(projectRoot, '.venv', 'Scripts', 'python.exe')
    : path.join(projectRoot, '.venv', 'bin', 'python');
}

export function chooseInterpreter(inputs: InterpreterInputs): Interpreter {
  if (inputs.settingPath) {
    return { python: inputs.settingPath, source: 'setting' };
  }
  if (inputs.pythonExtensionPath) {
    return { python: inputs.pythonExtensionPath, source: 'python-extension' };
  }
  return { python: projectVenvPython(inputs.projectRoot, inputs.platform), source: 'project-venv' };
}

/** The host's sources ship here; setup-host.sh installs them into <projectRoot>/.venv. */
export function hostSources(projectRoot: string): { pyproject: string; setupScript: string } | undefined {
  const pyproject = path.join(projectRoot, 'host', 'pyproject.toml');
  const setupScript = path.join(projectRoot, 'scripts', 'setup-host.sh');
  return existsSync(pyproject) && existsSync(setupScript) ? { pyproject, setupScript } : undefined;
}

export type HostCheck =
  | { readonly kind: 'ok'; readonly version: string }
  /** The interpreter does not exist or cannot run. */
  | { readonly kind: 'no-interpreter'; readonly detail: string }
  /** Python runs, but the empo2 package is not installed in it. */
  | { readonly kind: 'no-host'; readonly detail: string };

const CHECK_SCRIPT = [
  'import importlib.util, sys',
  'if importlib.util.find_spec("empo2") is None: sys.exit(3)',
  'if importlib.util.find_spec("empo2.server") is None: sys.exit(3)',
  'import empo2; print(getattr(empo2, "__version__", "?"))',
].join('\n');

/** Asks the interpreter whether it can run `empo2-host serve` (about 50 ms). */
export function checkHostInstalled(python: string, timeoutMs = 20_000): Promise<HostCheck> {
  return new Promise((resolve) => {
    execFile(python, ['-c', CHECK_SCRIPT], { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      if (!error) {
        resolve({ kind: 'ok', version: stdout.trim() });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EACCES') {
        resolve({ kind: 'no-interpreter', detail: `${python} does not exist or cannot be run (${code})` });
      } else if ((error as { code?: unknown }).code === 3) {
        resolve({ kind: 'no-host', detail: `the EMPO² host (Python package empo2) is not installed in ${python}` });
      } else {
        const last = stderr.trim().split('\n').slice(-1)[0] ?? error.message;
        resolve({ kind: 'no-interpreter', detail: `${python} failed to run: ${last}` });
      }
    });
  });
}
