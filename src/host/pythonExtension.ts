import * as vscode from 'vscode';

// The interpreter selected in the Python extension (ms-python.python), when it is installed.
// Its API has changed shape over the years; we try the current `environments` API, then the
// older `settings.getExecutionDetails`, and treat anything unexpected as "no choice made".

const PYTHON_EXTENSION_ID = 'ms-python.python';

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(path: string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand?: string[] } | undefined;
  };
}

export async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const active = api.environments?.getActiveEnvironmentPath(resource);
    if (active?.path) {
      const resolved = await api.environments?.resolveEnvironment(active.path);
      return resolved?.executable?.uri?.fsPath ?? active.path;
    }
    return api.settings?.getExecutionDetails(resource)?.execCommand?.[0];
  } catch {
    return undefined;
  }
}
