import * as vscode from 'vscode';
import * as path from 'node:path';
import type { Settings } from '../common/settings';
import type { HostLog } from './hostLog';
import { runHostSetup } from './hostSetup';
import { chooseInterpreter, checkHostInstalled, hostSources, type Interpreter } from './interpreter';
import { pythonExtensionInterpreter } from './pythonExtension';

// Finding the Python that runs the host, and the dialogs where there is none: a broken
// empo2.pythonPath is named; a missing host is offered an install into .venv next to host/, as
// the Python tools offer to create an environment.

const SHOW_LOG = 'Show Host Log';
const CREATE_ENV = 'Create Environment and Install';
const OPEN_SETTINGS = 'Open Settings';

/** The interpreter to use, after offering to install the host where it is missing. */
export async function findHostInterpreter(
  settings: Settings,
  projectRoot: string,
  log: HostLog,
): Promise<Interpreter | undefined> {
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  let fromPython = await pythonExtensionInterpreter(resource);
  if (fromPython && !settings.pythonPath && (await checkHostInstalled(fromPython)).kind !== 'ok') {
    // The Python extension's interpreter lacks the host; the project's .venv may have it.
    log.info(`The Python extension's interpreter (${fromPython}) has no EMPO² host; trying the project's .venv.`);
    fromPython = undefined;
  }
  const interpreter = chooseInterpreter({
    settingPath: settings.pythonPath,
    pythonExtensionPath: fromPython,
    projectRoot,
  });
  const check = await checkHostInstalled(interpreter.python);
  if (check.kind === 'ok') {
    return interpreter;
  }
  log.warn(`Cannot start the host: ${check.detail}.`);
  if (interpreter.source === 'setting' && check.kind === 'no-interpreter') {
    const choice = await vscode.window.showErrorMessage(
      `EMPO²: the Python interpreter in the setting empo2.pythonPath cannot run (${check.detail}). ` +
        "Point the setting at a Python 3.10+ interpreter, or clear it to use the project's own virtual environment.",
      OPEN_SETTINGS,
    );
    if (choice === OPEN_SETTINGS) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'empo2.pythonPath');
    }
    return undefined;
  }
  return offerSetup(interpreter, check.detail, projectRoot, log);
}

/** Offers to create .venv next to host/ and install the host into it. */
async function offerSetup(
  interpreter: Interpreter,
  detail: string,
  projectRoot: string,
  log: HostLog,
): Promise<Interpreter | undefined> {
  const sources = hostSources(projectRoot);
  if (!sources) {
    await vscode.window.showErrorMessage(
      `EMPO²: ${detail}, and this copy of the extension does not ship the host's sources. ` +
        'Install it with `pip install -e host` from the EMPO² Studio repository, then set empo2.pythonPath.',
      OPEN_SETTINGS,
    );
    return undefined;
  }
  const venv = path.join(projectRoot, '.venv');
  const choice = await vscode.window.showWarningMessage(
    `EMPO²: the training host is not installed (${detail}). Create a virtual environment in ${venv} ` +
      'and install the host with its pinned dependencies into it? This downloads PyTorch and takes a few minutes.',
    CREATE_ENV,
    OPEN_SETTINGS,
  );
  if (choice === OPEN_SETTINGS) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'empo2.pythonPath');
    return undefined;
  }
  if (choice !== CREATE_ENV) {
    return undefined;
  }
  const installed = await runHostSetup(sources.setupScript, log);
  if (!installed) {
    return undefined;
  }
  const venvInterpreter = chooseInterpreter({ settingPath: '', pythonExtensionPath: undefined, projectRoot });
  const check = await checkHostInstalled(venvInterpreter.python);
  if (check.kind !== 'ok') {
    await vscode.window
      .showErrorMessage(
        `EMPO²: the host still cannot run after the install (${check.detail}). See the host log.`,
        SHOW_LOG,
      )
      .then((c) => c === SHOW_LOG && log.show());
    return undefined;
  }
  if (interpreter.source !== 'project-venv') {
    log.info(`Using ${venvInterpreter.python}; the interpreter chosen before (${interpreter.python}) has no host.`);
  }
  return venvInterpreter;
}
