import type { RunStartParams } from '../rpc/protocol';

// What New Training Run asks for (an environment, a model, a preset, `key=value` overrides), how
// that becomes run.start's params, and the workspace file that keeps such choices by name, in
// the spirit of launch.json. No vscode import (unit-tested as it is).

/** Where a workspace keeps its run configurations, relative to its folder. */
export const RUN_CONFIGURATIONS_FILE = '.vscode/empo2-runs.json';

/** The file's format version; a file of another version is refused, never rewritten. */
export const RUN_CONFIGURATIONS_VERSION = 1;

/** What a run is set up with: `env.name`, `policy.model`, a host preset, and overrides on top. */
export interface RunChoice {
  readonly env: string;
  readonly model: string;
  readonly preset: string;
  /** `key=value`, dotted keys, applied after the environment and the model. */
  readonly overrides: readonly string[];
}

/** A run choice saved under a name in RUN_CONFIGURATIONS_FILE. */
export interface RunConfiguration extends RunChoice {
  readonly name: string;
}

const FIELDS: ReadonlyArray<keyof RunConfiguration> = ['name', 'env', 'model', 'preset', 'overrides'];

/**
 * The run.start (and config.check) params of a choice: the preset, then the environment and the
 * model as overrides, then the person's own, which win (the host applies them in order).
 */
export function startParams(choice: RunChoice): Required<Pick<RunStartParams, 'preset' | 'overrides'>> {
  return {
    preset: choice.preset,
    overrides: [`env.name=${choice.env}`, `policy.model=${choice.model}`, ...choice.overrides],
  };
}

/** A choice in one line: environment · model · preset, and the overrides when there are any. */
export function describeChoice(choice: RunChoice): string {
  return [
    choice.env,
    choice.model,
    choice.preset,
    ...(choice.overrides.length ? [formatOverrides(choice.overrides)] : []),
  ].join(' · ');
}

/**
 * The overrides typed in one line: separated by spaces, as in a terminal; a part in single or
 * double quotes keeps its spaces and loses its quotes (`'env.tasks=["a", "b"]'`). Whether each
 * is a known key with a good value is the host's to say (config.check); here only the quoting.
 */
export function parseOverrides(text: string): { readonly overrides: string[] } | { readonly problem: string } {
  const overrides: string[] = [];
  let token: string | undefined;
  let quote: string | undefined;
  for (const char of text) {
    if (quote) {
      if (char === quote) {
        quote = undefined;
      } else {
        token += char;
      }
    } else if (char === '"' || char === "'") {
      quote = char;
      token ??= '';
    } else if (/\s/.test(char)) {
      if (token !== undefined) {
        overrides.push(token);
        token = undefined;
      }
    } else {
      token = (token ?? '') + char;
    }
  }
  if (quote) {
    return { problem: `A quote (${quote}) is opened and not closed.` };
  }
  if (token !== undefined) {
    overrides.push(token);
  }
  return { overrides };
}

/** Overrides as parseOverrides reads them back: one with a space or a quote goes in quotes. */
export function formatOverrides(overrides: readonly string[]): string {
  return overrides
    .map((item) => (/[\s'"]/.test(item) || item === '' ? (item.includes("'") ? `"${item}"` : `'${item}'`) : item))
    .join(' ');
}

/** RUN_CONFIGURATIONS_FILE's content read: its configurations, or the one sentence that says why not. */
export type ParsedRunConfigurations = { readonly configurations: RunConfiguration[] } | { readonly problem: string };

/** Reads RUN_CONFIGURATIONS_FILE's text; a problem names the file and what to fix. */
export function parseRunConfigurations(text: string): ParsedRunConfigurations {
  const parsed = readObject(text);
  if ('problem' in parsed) {
    return parsed;
  }
  const { version, configurations } = parsed.object;
  if (version !== RUN_CONFIGURATIONS_VERSION) {
    const has = version === undefined ? 'no "version"' : `"version": ${JSON.stringify(version)}`;
    return {
      problem: `${RUN_CONFIGURATIONS_FILE} has ${has}, and this extension reads version ${RUN_CONFIGURATIONS_VERSION}.`,
    };
  }
  if (!Array.isArray(configurations)) {
    return { problem: `${RUN_CONFIGURATIONS_FILE} has no "configurations" list.` };
  }
  const read: RunConfiguration[] = [];
  for (const [index, entry] of configurations.entries()) {
    const configuration = readConfiguration(entry, index);
    if (typeof configuration === 'string') {
      return { problem: configuration };
    }
    if (read.some((other) => other.name === configuration.name)) {
      return { problem: `${RUN_CONFIGURATIONS_FILE} has two configurations named "${configuration.name}".` };
    }
    read.push(configuration);
  }
  return { configurations: read };
}

/**
 * The file's new text with `configuration` saved: one of the same name is replaced where it
 * stands, else it goes last; anything else in the file is kept. `text` undefined: no file yet.
 * A file that does not read is left as it is: the problem comes back instead.
 */
export function withConfiguration(
  text: string | undefined,
  configuration: RunConfiguration,
): { readonly text: string } | { readonly problem: string } {
  if (text === undefined) {
    return { text: serialise({ version: RUN_CONFIGURATIONS_VERSION, configurations: [entryOf(configuration)] }) };
  }
  const checked = parseRunConfigurations(text);
  if ('problem' in checked) {
    return checked;
  }
  const object = (readObject(text) as { object: Record<string, unknown> }).object;
  const entries = object.configurations as unknown[];
  const at = checked.configurations.findIndex((other) => other.name === configuration.name);
  const configurations =
    at < 0
      ? [...entries, entryOf(configuration)]
      : entries.map((entry, index) => (index === at ? entryOf(configuration) : entry));
  return { text: serialise({ ...object, configurations }) };
}

function readObject(text: string): { readonly object: Record<string, unknown> } | { readonly problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { problem: `${RUN_CONFIGURATIONS_FILE} is not valid JSON (${(error as Error).message}).` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { problem: `${RUN_CONFIGURATIONS_FILE} does not hold a JSON object.` };
  }
  return { object: parsed as Record<string, unknown> };
}

/** One entry, or the sentence that says what is wrong with it. */
function readConfiguration(entry: unknown, index: number): RunConfiguration | string {
  const which = `configuration ${index + 1} of ${RUN_CONFIGURATIONS_FILE}`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    return `The ${which} is not a JSON object.`;
  }
  const fields = entry as Record<string, unknown>;
  const named =
    typeof fields.name === 'string' && fields.name.trim() ? `The ${which} ("${fields.name}")` : `The ${which}`;
  const unknown = Object.keys(fields).find((key) => !(FIELDS as readonly string[]).includes(key));
  if (unknown !== undefined) {
    return `${named} has an unknown key "${unknown}" (its keys: ${FIELDS.join(', ')}).`;
  }
  for (const key of ['name', 'env', 'model', 'preset'] as const) {
    if (typeof fields[key] !== 'string' || !(fields[key] as string).trim()) {
      return `${named} needs "${key}", a non-empty string.`;
    }
  }
  const overrides = fields.overrides ?? [];
  if (!Array.isArray(overrides) || !overrides.every((item) => typeof item === 'string')) {
    return `${named} has "overrides" that are not a list of "key=value" strings.`;
  }
  return {
    name: fields.name as string,
    env: fields.env as string,
    model: fields.model as string,
    preset: fields.preset as string,
    overrides,
  };
}

function entryOf(configuration: RunConfiguration): Record<string, unknown> {
  return Object.fromEntries(FIELDS.map((key) => [key, configuration[key]]));
}

function serialise(object: Record<string, unknown>): string {
  return JSON.stringify(object, null, 2) + '\n';
}
