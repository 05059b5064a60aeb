import * as vscode from 'vscode';

/**
 * One palette command. Each implementation has a static `id` (also in package.json) and gets
 * what it needs through its constructor, so activate() shows every dependency.
 */
export interface Command {
  readonly id: string;
  execute(...args: unknown[]): unknown;
}

/** Registers each command under its id; the returned disposable unregisters them all. */
export function registerCommands(commands: readonly Command[]): vscode.Disposable {
  return vscode.Disposable.from(
    ...commands.map((command) =>
      vscode.commands.registerCommand(command.id, (...args: unknown[]) => command.execute(...args)),
    ),
  );
}
