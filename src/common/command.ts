import * as vscode from 'vscode';

/** One palette command, registered under its id (implementations extend CommandBase). */
export interface Command {
  readonly id: string;
  execute(...args: unknown[]): unknown;
}

/**
 * The base of every command class: the static `id` names it (activate() and package.json use the
 * class's), and the services it works with come in one object built by activate().
 */
export abstract class CommandBase<Services> implements Command {
  readonly id: string;

  constructor(protected readonly services: Services) {
    this.id = (new.target as unknown as { readonly id: string }).id;
  }

  abstract execute(...args: unknown[]): unknown;
}

/**
 * The steps most commands take, each stated by the command: what it acts on, a question, the
 * request, what it reports, what a failure says. `target` resolving to undefined (it has said why,
 * or a pick was cancelled) or `confirm` to false ends the command with undefined.
 */
export interface CommandAction<Target, Result> {
  /** What the command acts on: its argument's, else picked. */
  readonly target: () => Target | undefined | Promise<Target | undefined>;
  readonly confirm?: (target: Target) => boolean | Promise<boolean>;
  /** The title of a notification shown while the request runs. */
  readonly progress?: (target: Target) => string;
  readonly request: (target: Target) => Promise<Result>;
  /** What the person sees when it worked (a failure here counts as the request's). */
  readonly report?: (result: Result, target: Target) => unknown;
  /**
   * Says what went wrong (one sentence), or answers a particular failure another way; what it
   * resolves to is the command's result. Without it the failure rejects the command.
   */
  readonly failed?: (error: unknown, target: Target) => Promise<Result | undefined | void> | Result | undefined | void;
}

/** A `target` with nothing to act on: says what is missing (an information message), and ends. */
export function noTarget(message: string): undefined {
  void vscode.window.showInformationMessage(message);
  return undefined;
}

/** Runs a command's steps; resolves to the request's result, or undefined when a step ended it. */
export async function performAction<Target, Result>(
  action: CommandAction<Target, Result>,
): Promise<Result | undefined> {
  const target = await action.target();
  if (target === undefined || (action.confirm && !(await action.confirm(target)))) {
    return undefined;
  }
  try {
    const title = action.progress?.(target);
    const result = await (title === undefined
      ? action.request(target)
      : vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () =>
          action.request(target),
        ));
    await action.report?.(result, target);
    return result;
  } catch (error) {
    if (!action.failed) {
      throw error;
    }
    return ((await action.failed(error, target)) ?? undefined) as Result | undefined;
  }
}

/** Registers each command under its id; the returned disposable unregisters them all. */
export function registerCommands(commands: readonly Command[]): vscode.Disposable {
  return vscode.Disposable.from(
    ...commands.map((command) =>
      vscode.commands.registerCommand(command.id, (...args: unknown[]) => command.execute(...args)),
    ),
  );
}
