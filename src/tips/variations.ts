// Helpers of the Memory Tips view that need no vscode (unit-tested in plain Node).

/** task/variation keys a run trains on, from its config (built-in: variations 0–4). */
export function configuredVariations(config: Record<string, unknown> | undefined): string[] {
  const env = (config?.env ?? {}) as { tasks?: unknown; train_variations?: unknown; name?: unknown };
  const tasks = Array.isArray(env.tasks) ? env.tasks.filter((t): t is string => typeof t === 'string') : [];
  const given = Array.isArray(env.train_variations)
    ? env.train_variations.filter((v): v is number => typeof v === 'number')
    : [];
  const variations = given.length ? given : env.name === undefined || env.name === 'builtin' ? [0, 1, 2, 3, 4] : [];
  return tasks.flatMap((task) => variations.map((variation) => `${task}/${variation}`));
}
