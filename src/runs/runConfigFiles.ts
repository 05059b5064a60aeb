// Which workspace files "New Training Run" offers as run configurations. A file is offered when
// its name says EMPO² (the glob) and its content is a config the host would read: a JSON object
// whose every key is a top-level config field the host names (its `configFields` capability).
// Outputs that share the name (a bench's probes/empo2-*.json, a policy's empo2_build.json) fail
// the content test; the folders that hold only outputs or dependencies are not searched at all.
// No vscode import (unit-tested as it is).

/** Files whose name may hold a run configuration. */
export const CONFIG_FILE_GLOB = '{.empo2/configs/*.json,**/empo2*.json,**/*.empo2.json}';

/** Folders of outputs and dependencies, never searched: run folders, benches' results, builds. */
export const NOT_CONFIG_FOLDERS_GLOB =
  '{**/node_modules/**,**/.venv/**,**/out/**,**/.git/**,.empo2/runs/**,docs/bench/**}';

/**
 * Whether a file's text is a run configuration: a JSON object with at least one key, every key
 * among `configFields` (undefined: a host too old to name them, and any JSON object passes).
 */
export function isRunConfigText(text: string, configFields: readonly string[] | undefined): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return false;
  }
  const keys = Object.keys(parsed);
  return keys.length > 0 && (configFields === undefined || keys.every((key) => configFields.includes(key)));
}
