import * as vscode from 'vscode';
import type { HostManager } from '../host/hostManager';
import { describeError, isRpcError } from '../rpc/errors';
import { Requests } from '../rpc/methods';
import { ErrorCodes, type EnvironmentInfo, type PolicyInfo } from '../rpc/protocol';
import { CONFIG_FILE_GLOB, isRunConfigText, NOT_CONFIG_FOLDERS_GLOB } from './runConfigFiles';
import { readRunConfigurations } from './runConfigurationFile';
import {
  describeChoice,
  formatOverrides,
  parseOverrides,
  startParams,
  type RunChoice,
  type RunConfiguration,
} from './runConfigurations';

// New Training Run's questions: the environment (the host's env.list), the model (policy.list,
// or a local Hugging Face folder), the preset, then optional overrides that the host checks
// (config.check) before the flow ends, its sentence shown in the input until they pass. The first
// question also offers what starts a run at once: a saved run configuration, or a config file.

const TITLE = 'EMPO²: New Training Run';
const STEPS = 4;

/** What the person chose: a checked choice, a saved configuration, or a config file to read. */
export type NewRunSetup =
  | { readonly kind: 'choice'; readonly choice: RunChoice }
  | { readonly kind: 'saved'; readonly configuration: RunConfiguration }
  | { readonly kind: 'file'; readonly file: string };

interface FirstItem extends vscode.QuickPickItem {
  readonly env?: EnvironmentInfo;
  readonly saved?: RunConfiguration;
  readonly file?: vscode.Uri;
  readonly browse?: boolean;
}

interface ModelItem extends vscode.QuickPickItem {
  readonly policy?: PolicyInfo;
  readonly browse?: boolean;
}

interface PresetItem extends vscode.QuickPickItem {
  readonly preset?: string;
}

/** Asks the questions; undefined when the person cancelled one (or was told why it cannot go on). */
export async function askNewRun(host: HostManager): Promise<NewRunSetup | undefined> {
  const first = await pickFirst(host);
  if (!first) {
    return undefined;
  }
  if (first.saved) {
    return { kind: 'saved', configuration: first.saved };
  }
  if (first.file || first.browse) {
    const file =
      first.file ??
      (
        await vscode.window.showOpenDialog({
          title: 'EMPO²: config file',
          canSelectMany: false,
          filters: { 'JSON config': ['json'] },
          openLabel: 'Train',
        })
      )?.[0];
    return file && { kind: 'file', file: file.fsPath };
  }
  const env = first.env!.name;
  const model = await pickModel(host);
  if (!model) {
    return undefined;
  }
  const preset = await pickPreset(host, env);
  if (!preset) {
    return undefined;
  }
  const choice = await askOverrides(host, { env, model: model.model, preset, overrides: model.overrides });
  return choice && { kind: 'choice', choice };
}

/** Step 1: the environment, or something that starts a run as it is. */
async function pickFirst(host: HostManager): Promise<FirstItem | undefined> {
  const items = (async (): Promise<FirstItem[]> => {
    const [{ environments }, saved, files] = await Promise.all([
      host.request(Requests.envList, {}),
      readRunConfigurations(),
      configFiles(host.current?.init.capabilities.configFields),
    ]);
    if ('problem' in saved) {
      void vscode.window.showWarningMessage(`EMPO²: ${saved.problem}`);
    }
    const configurations = 'problem' in saved ? [] : saved.configurations;
    return [
      { label: 'Environments', kind: vscode.QuickPickItemKind.Separator },
      ...environments.map((env) => ({
        label: env.error ? `$(warning) ${env.name}` : env.name,
        description: env.source,
        detail: env.error ?? (env.tasks.length ? `tasks: ${env.tasks.join(', ')}` : undefined),
        env,
      })),
      { label: 'Or start from', kind: vscode.QuickPickItemKind.Separator },
      ...configurations.map((saved) => ({
        label: `$(bookmark) ${saved.name}`,
        description: 'saved run configuration',
        detail: describeChoice(saved),
        saved,
      })),
      ...files.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), description: 'config file', file: uri })),
      { label: '$(folder-opened) Choose a config file…', browse: true },
    ];
  })();
  for (;;) {
    const picked = await vscode.window.showQuickPick(items, {
      title: `${TITLE} (1/${STEPS}): environment`,
      placeHolder: 'The environment to train in, or a saved configuration or config file to start as it is',
      matchOnDescription: true,
      ignoreFocusOut: true,
    });
    if (!picked?.env?.error) {
      return picked;
    }
    await vscode.window.showWarningMessage(`EMPO²: ${picked.env.name} cannot be used here: ${picked.env.error}`);
  }
}

/** Step 2: a model of policy.list, or a local folder. */
async function pickModel(host: HostManager): Promise<{ model: string; overrides: readonly string[] } | undefined> {
  const items = (async (): Promise<ModelItem[]> => {
    const { policies } = await host.request(Requests.policyList, {});
    return [
      ...policies.map((policy) => ({
        label: policy.error ? `$(warning) ${policy.title}` : policy.title,
        description: policy.title !== policy.model ? policy.model : undefined,
        detail: policy.error ?? policy.description,
        policy,
      })),
      { label: '', kind: vscode.QuickPickItemKind.Separator },
      {
        label: '$(folder-opened) Local Hugging Face folder…',
        detail: 'a folder with config.json and weights (save_pretrained)',
        browse: true,
      },
    ];
  })();
  for (;;) {
    const picked = await vscode.window.showQuickPick(items, {
      title: `${TITLE} (2/${STEPS}): model`,
      placeHolder: 'The policy to train',
      matchOnDescription: true,
      ignoreFocusOut: true,
    });
    if (!picked) {
      return undefined;
    }
    if (picked.policy?.error) {
      await vscode.window.showWarningMessage(
        `EMPO²: ${picked.policy.title} cannot be used here: ${picked.policy.error}`,
      );
      continue;
    }
    if (picked.policy) {
      return { model: picked.policy.model, overrides: picked.policy.overrides };
    }
    const folder = (
      await vscode.window.showOpenDialog({
        title: 'EMPO²: a Hugging Face model folder',
        canSelectFiles: false,
        canSelectFolders: true,
        canSelectMany: false,
        openLabel: 'Train This Model',
      })
    )?.[0];
    if (folder) {
      return { model: folder.fsPath, overrides: [] };
    }
  }
}

/** Step 3: a host preset; those named after the environment first. */
async function pickPreset(host: HostManager, env: string): Promise<string | undefined> {
  const presets = host.current?.init.capabilities.presets ?? [];
  const own = presets.filter((preset) => preset === env || preset.startsWith(`${env}-`));
  const others = presets.filter((preset) => !own.includes(preset));
  const row = (preset: string): PresetItem => ({
    label: preset,
    description:
      preset === 'builtin' ? 'the built-in default: small text worlds, a small policy, trains on a CPU' : undefined,
    preset,
  });
  const items: PresetItem[] = [
    ...own.map(row),
    ...(others.length
      ? [
          {
            label: own.length
              ? 'Other presets (trained in the chosen environment)'
              : 'Presets (trained in the chosen environment)',
            kind: vscode.QuickPickItemKind.Separator,
          },
        ]
      : []),
    ...others.map(row),
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: `${TITLE} (3/${STEPS}): preset`,
    placeHolder: `The settings to start from (${env}, with the chosen model)`,
    ignoreFocusOut: true,
  });
  return picked?.preset;
}

/**
 * Step 4: optional overrides, checked by the host on Enter. A refusal's sentence stays in the
 * input until the text changes; the input closes only on a choice that passes (or Escape).
 */
function askOverrides(host: HostManager, start: RunChoice): Promise<RunChoice | undefined> {
  const input = vscode.window.createInputBox();
  input.title = `${TITLE} (4/${STEPS}): overrides`;
  input.prompt = `Optional key=value settings, separated by spaces (e.g. iterations=5 algo.group_size=4); Enter checks them with the host and starts the run. ${describeChoice({ ...start, overrides: [] })}`;
  input.placeholder = 'iterations=5 algo.p_memory=0.5';
  input.value = formatOverrides(start.overrides);
  input.ignoreFocusOut = true;
  return new Promise<RunChoice | undefined>((resolve) => {
    let settled = false;
    const finish = (choice: RunChoice | undefined): void => {
      if (!settled) {
        settled = true;
        resolve(choice);
        input.dispose();
      }
    };
    input.onDidChangeValue(() => (input.validationMessage = undefined));
    input.onDidHide(() => finish(undefined));
    input.onDidAccept(async () => {
      if (input.busy) {
        return;
      }
      const typed = input.value;
      const parsed = parseOverrides(typed);
      if ('problem' in parsed) {
        input.validationMessage = parsed.problem;
        return;
      }
      const choice = { ...start, overrides: parsed.overrides };
      input.busy = true;
      input.enabled = false;
      try {
        await host.request(Requests.configCheck, startParams(choice));
        finish(choice);
      } catch (error) {
        if (!isRpcError(error, ErrorCodes.ConfigInvalid)) {
          finish(undefined);
          void vscode.window.showErrorMessage(`EMPO²: Checking the run's settings failed: ${describeError(error)}`);
          return;
        }
        if (input.value === typed) {
          input.validationMessage = describeError(error);
        }
      } finally {
        if (!settled) {
          input.busy = false;
          input.enabled = true;
        }
      }
    });
    input.show();
  });
}

/** The workspace's config files (runConfigFiles.ts says which files are). */
async function configFiles(configFields: readonly string[] | undefined): Promise<vscode.Uri[]> {
  const candidates = await vscode.workspace.findFiles(CONFIG_FILE_GLOB, NOT_CONFIG_FOLDERS_GLOB, 200);
  const decoder = new TextDecoder();
  const checked = await Promise.all(
    candidates.map(async (uri) => {
      try {
        return isRunConfigText(decoder.decode(await vscode.workspace.fs.readFile(uri)), configFields) ? uri : undefined;
      } catch {
        return undefined; // unreadable: not offered
      }
    }),
  );
  return checked.filter((uri): uri is vscode.Uri => uri !== undefined).slice(0, 50);
}
