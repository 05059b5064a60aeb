import * as vscode from 'vscode';
import { describeError } from '../rpc/errors';
import {
  parseRunConfigurations,
  RUN_CONFIGURATIONS_FILE,
  withConfiguration,
  type ParsedRunConfigurations,
  type RunConfiguration,
} from './runConfigurations';

// The workspace's run configurations file (runConfigurations.ts says what it holds): read, and
// written only by saving one configuration into a file that reads well.

/** The file in the window's (first) workspace folder; undefined when no folder is open. */
export function runConfigurationsUri(): vscode.Uri | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder && vscode.Uri.joinPath(folder.uri, RUN_CONFIGURATIONS_FILE);
}

/** The saved configurations: none when there is no file (or no folder); a problem when it does not read. */
export async function readRunConfigurations(): Promise<ParsedRunConfigurations> {
  const uri = runConfigurationsUri();
  const text = uri && (await readText(uri));
  if (text === undefined) {
    return { configurations: [] };
  }
  return typeof text === 'string' ? parseRunConfigurations(text) : text;
}

/** Saves `configuration` (replacing one of its name); resolves to the problem, if any, the file untouched. */
export async function saveRunConfiguration(configuration: RunConfiguration): Promise<string | undefined> {
  const uri = runConfigurationsUri();
  if (!uri) {
    return 'Run configurations are saved in a workspace folder: open a folder first.';
  }
  const text = await readText(uri);
  if (typeof text === 'object') {
    return text.problem;
  }
  const saved = withConfiguration(text, configuration);
  if ('problem' in saved) {
    return saved.problem;
  }
  try {
    await vscode.workspace.fs.createDirectory(vscode.Uri.joinPath(uri, '..'));
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(saved.text));
  } catch (error) {
    return `Cannot write ${RUN_CONFIGURATIONS_FILE}: ${describeError(error)}.`;
  }
  return undefined;
}

/** The file's text; undefined when it does not exist; a problem when it cannot be read. */
async function readText(uri: vscode.Uri): Promise<string | undefined | { readonly problem: string }> {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(await vscode.workspace.fs.readFile(uri));
  } catch (error) {
    if (error instanceof vscode.FileSystemError && error.code === 'FileNotFound') {
      return undefined;
    }
    return { problem: `Cannot read ${RUN_CONFIGURATIONS_FILE}: ${describeError(error)}.` };
  }
}
