// What "Rerun Off-Policy Update…" was invoked on, read from its arguments. No vscode import
// (unit-tested as it is). Sources: the palette (nothing), the Memory Tips view's context menu
// (the tip card's `data-vscode-context`: tipId, variationKey, runId, and the keys of every
// selected tip), the Trajectories tree (a task-group node: runId and groupKey "g:task/variation",
// or a run node), or a script/test passing a full request (update.rerun's params).

import type { UpdateRerunParams } from '../rpc/protocol';

export interface RerunArgs {
  readonly runId: string | undefined;
  /** Prefilled answers of the quick picks. */
  readonly request: Partial<UpdateRerunParams>;
  /** True when the request needs no questions (a script passed `episodes`, `iterations` and `dryRun`). */
  readonly complete: boolean;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null;
}

function variationOfGroup(groupKey: string): string {
  const colon = groupKey.indexOf(':');
  return colon >= 0 ? groupKey.slice(colon + 1) : groupKey;
}

export function rerunArgs(arg: unknown, more?: unknown): RerunArgs {
  if (!isObject(arg)) {
    return { runId: typeof arg === 'string' ? arg : undefined, request: {}, complete: false };
  }
  const runId = typeof arg.runId === 'string' ? arg.runId : undefined;
  if (arg.kind === 'taskGroup' && typeof arg.groupKey === 'string') {
    return { runId, request: { variations: [variationOfGroup(arg.groupKey)] }, complete: false };
  }
  if (arg.kind === 'run') {
    return { runId, request: {}, complete: false };
  }
  if (typeof arg.tipId === 'string' || Array.isArray(arg.variationKeys) || typeof arg.variationKey === 'string') {
    const keys = [
      ...(Array.isArray(arg.variationKeys) ? arg.variationKeys.filter((k): k is string => typeof k === 'string') : []),
      ...(typeof arg.variationKey === 'string' ? [arg.variationKey] : []),
      // VS Code passes the selected items of a multi-selection as the second argument.
      ...(Array.isArray(more)
        ? more
            .filter(isObject)
            .map((m) => m.variationKey)
            .filter((k): k is string => typeof k === 'string')
        : []),
    ];
    return { runId, request: { variations: [...new Set(keys)] }, complete: false };
  }
  const request: Partial<UpdateRerunParams> = {
    ...(typeof arg.checkpoint === 'number' ? { checkpoint: arg.checkpoint } : {}),
    ...(Array.isArray(arg.variations)
      ? { variations: arg.variations.filter((k): k is string => typeof k === 'string') }
      : {}),
    ...(typeof arg.episodes === 'number' ? { episodes: arg.episodes } : {}),
    ...(typeof arg.iterations === 'number' ? { iterations: arg.iterations } : {}),
    ...(typeof arg.evalEpisodes === 'number' ? { evalEpisodes: arg.evalEpisodes } : {}),
    ...(typeof arg.dryRun === 'boolean' ? { dryRun: arg.dryRun } : {}),
    ...(typeof arg.name === 'string' ? { name: arg.name } : {}),
  };
  const complete = request.episodes !== undefined && request.iterations !== undefined && request.dryRun !== undefined;
  return { runId, request, complete };
}
