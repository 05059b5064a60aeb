import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { TIPS_PANEL_COMMANDS } from '../../src/tips/tipsMessages';
import { TIP_VARIABLE_CONTEXT } from '../../src/debug/tipVariables';
import { HAS_BRANCH_CONTEXT } from '../../src/rerun/branches';
import type { HostState } from '../../src/host/hostState';

/** The when-clause forms the manifest uses: `a || b`, `a && b`, `!key`, `key`, `key == value`,
 * `key =~ /regex/` (VS Code's precedence: && before ||). */
function whenHolds(when: string, context: Record<string, unknown>): boolean {
  return when.split('||').some((any) =>
    any.split('&&').every((term) => {
      const t = term.trim();
      const equals = /^(\S+)\s*==\s*(\S+)$/.exec(t);
      if (equals) {
        return String(context[equals[1]]) === equals[2];
      }
      const matches = /^(\S+)\s*=~\s*\/(.*)\/$/.exec(t);
      if (matches) {
        return context[matches[1]] !== undefined && new RegExp(matches[2]).test(String(context[matches[1]]));
      }
      return t.startsWith('!') ? !context[t.slice(1)] : Boolean(context[t]);
    }),
  );
}

// Checks package.json against the commands the extension offers and against src/, without VS Code. The
// integration tier checks the same commands are really registered in a running VS Code.

const root = path.resolve(__dirname, '../../../..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** The foundation: host, runs, trajectories and tips. */
const CORE_COMMANDS = [
  'empo2.startHost',
  'empo2.stopHost',
  'empo2.restartHost',
  'empo2.connectRemote',
  'empo2.newRun',
  'empo2.startSavedRun',
  'empo2.pauseRun',
  'empo2.resumeRun',
  'empo2.stopRun',
  'empo2.openRunFolder',
  'empo2.showMetrics',
  'empo2.refresh',
  'empo2.addTip',
  'empo2.editTip',
  'empo2.deleteTip',
  'empo2.showTipHistory',
  'empo2.showHostLog',
];

/** Rerun the off-policy update, and the branch runs it makes. */
const RERUN_COMMANDS = ['empo2.rerunUpdate', 'empo2.compareWithParent', 'empo2.adoptBranch', 'empo2.deleteBranch'];

/** Dial a host again after its link dropped. */
const RECONNECT_COMMANDS = ['empo2.reconnect'];

/** The metrics view overlays several runs (from the palette, and on runs in the tree). */
const COMPARE_COMMANDS = ['empo2.compareMetrics'];

/** A run, or every run of a root, in TensorBoard (src/tensorboard/). */
const TENSORBOARD_COMMANDS = ['empo2.openInTensorBoard', 'empo2.openRootInTensorBoard'];

/** The episode debugger (src/debug/). */
const DEBUGGER_COMMANDS = [
  'empo2.debugEpisode',
  'empo2.showTokens',
  'empo2.showTipInMemoryTips',
  'empo2.scoreEpisodeLocally',
];

/** Commands that act on what a menu was opened on (a variable); hidden from the palette. */
const MENU_ONLY_COMMANDS = ['empo2.showTipInMemoryTips'];

/** Commands the extension runs itself (a click on a tree row); hidden from the palette. */
const INTERNAL_COMMANDS = ['empo2.openEpisode'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('package.json', () => {
  const commands: Array<{ command: string; title: string; category: string }> = manifest.contributes.commands;

  it('contributes every command of the host, runs, tips, comparison, rerun, reconnect and the debugger, under the EMPO² category', () => {
    assert.deepEqual(
      commands.map((c) => c.command).sort(),
      [
        ...CORE_COMMANDS,
        ...COMPARE_COMMANDS,
        ...TENSORBOARD_COMMANDS,
        ...RERUN_COMMANDS,
        ...RECONNECT_COMMANDS,
        ...DEBUGGER_COMMANDS,
        ...INTERNAL_COMMANDS,
      ].sort(),
    );
    for (const command of commands) {
      assert.equal(command.category, 'EMPO²', command.command);
      assert.ok(command.title.length > 0, command.command);
    }
  });

  it('hides the internal commands from the palette', () => {
    const hidden = (manifest.contributes.menus.commandPalette ?? [])
      .filter((m: { when: string }) => m.when === 'false')
      .map((m: { command: string }) => m.command);
    assert.deepEqual(hidden.sort(), [...INTERNAL_COMMANDS, ...MENU_ONLY_COMMANDS].sort());
  });

  it("offers Compare Runs' Metrics on the runs of the Trajectories tree, which lets several be selected", () => {
    const menu: Array<{ command: string; when: string }> = manifest.contributes.menus['view/item/context'];
    const entry = menu.find((m) => m.command === 'empo2.compareMetrics');
    assert.ok(entry, 'a view/item/context entry');
    assert.equal(entry.when, 'view == empo2.trajectories && viewItem =~ /^empo2\\.run/');
    const trajectories = readFileSync(path.join(root, 'src', 'trajectories', 'activate.ts'), 'utf8');
    assert.match(trajectories, /createTreeView\(TrajectoryTreeProvider\.viewId, \{[^}]*canSelectMany: true/);
  });

  it('offers Open in TensorBoard and Open All Runs in TensorBoard on every run of the Trajectories tree, and the latter in its title menu', () => {
    const onRun = (manifest.contributes.menus['view/item/context'] as Array<{ command: string; when: string }>).filter(
      (m) => TENSORBOARD_COMMANDS.includes(m.command),
    );
    assert.deepEqual(onRun.map((m) => m.command).sort(), [...TENSORBOARD_COMMANDS].sort());
    for (const menu of onRun) {
      for (const viewItem of ['empo2.run.finished', 'empo2.run.live.running', 'empo2.run.stopped.branch']) {
        assert.ok(whenHolds(menu.when, { view: 'empo2.trajectories', viewItem }), `${menu.command} on ${viewItem}`);
      }
      assert.ok(
        !whenHolds(menu.when, { view: 'empo2.trajectories', viewItem: 'empo2.episode' }),
        `${menu.command} on an episode`,
      );
    }
    const title = (manifest.contributes.menus['view/title'] as Array<{ command: string; when: string }>).filter((m) =>
      TENSORBOARD_COMMANDS.includes(m.command),
    );
    assert.deepEqual(
      title.map((m) => m.command),
      ['empo2.openRootInTensorBoard'],
    );
  });

  it("offers New Training Run and Start Saved Run Configuration in the Trajectories view's title menu, the latter also in the palette with no condition", () => {
    const title = (manifest.contributes.menus['view/title'] as Array<{ command: string; when: string }>).filter((m) =>
      ['empo2.newRun', 'empo2.startSavedRun'].includes(m.command),
    );
    assert.deepEqual(title.map((m) => [m.command, m.when]).sort(), [
      ['empo2.newRun', 'view == empo2.trajectories'],
      ['empo2.startSavedRun', 'view == empo2.trajectories'],
    ]);
    assert.equal(
      (manifest.contributes.menus.commandPalette as Array<{ command: string }>).some(
        (m) => m.command === 'empo2.startSavedRun',
      ),
      false,
    );
  });

  it('offers "Show Tip in Memory Tips" on a retrieved tip in the debugger\'s Variables view', () => {
    const menu: Array<{ command: string; when: string }> = manifest.contributes.menus['debug/variables/context'];
    const entry = menu.find((m) => m.command === 'empo2.showTipInMemoryTips');
    assert.ok(entry, 'a debug/variables/context entry');
    assert.match(entry.when, /debugType == empo2/);
    assert.match(
      entry.when,
      new RegExp(`debugProtocolVariableMenuContext == ${TIP_VARIABLE_CONTEXT.replace('.', '\\.')}`),
    );
  });

  it('has one Command class with a static id for each contributed command', () => {
    const source = sourceFiles(path.join(root, 'src'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const declared = [...source.matchAll(/static readonly id = '([^']+)'/g)].map((m) => m[1]).sort();
    assert.deepEqual(declared, commands.map((c) => c.command).sort());
  });

  it('offers host and run commands in the palette only where they apply (when clauses on context keys)', () => {
    const palette = new Map<string, string>(
      (manifest.contributes.menus.commandPalette ?? []).map((m: { command: string; when: string }) => [
        m.command,
        m.when,
      ]),
    );
    for (const command of [
      'empo2.startHost',
      'empo2.stopHost',
      'empo2.restartHost',
      'empo2.pauseRun',
      'empo2.resumeRun',
      'empo2.stopRun',
      'empo2.addTip',
      'empo2.editTip',
      'empo2.deleteTip',
      'empo2.showTipHistory',
    ]) {
      assert.match(palette.get(command) ?? '', /empo2\.(hostState|liveRunState|runState|runLive)/, command);
    }
    assert.match(palette.get('empo2.startHost')!, /stopped\|crashed/);
    assert.match(palette.get('empo2.pauseRun')!, /liveRunState =~ \/\^\(starting\|running\)\$\//);
    const title: Array<{ command: string; when: string; group: string }> = manifest.contributes.menus['view/title'];
    const pause = title.find((m) => m.command === 'empo2.pauseRun')!;
    const resume = title.find((m) => m.command === 'empo2.resumeRun')!;
    assert.equal(resume.group, pause.group, 'Resume sits where Pause was');
    assert.match(resume.when, /paused/);
    const inline: Array<{ command: string; when: string; group: string }> =
      manifest.contributes.menus['view/item/context'];
    assert.ok(
      inline.some((m) => m.command === 'empo2.resumeRun' && m.group.startsWith('inline') && /interrupted/.test(m.when)),
    );
  });

  it('offers Stop Run in the context menu of a live run, a paused one included, and Pause Run where it can pause', () => {
    const menu: Array<{ command: string; when: string; group: string }> =
      manifest.contributes.menus['view/item/context'];
    const inContextMenu = (command: string, viewItem: string) =>
      menu.some(
        (m) =>
          m.command === command &&
          !m.group.startsWith('inline') &&
          whenHolds(m.when, { view: 'empo2.trajectories', viewItem }),
      );
    for (const state of ['starting', 'running', 'pausing', 'paused']) {
      assert.ok(inContextMenu('empo2.stopRun', `empo2.run.live.${state}`), `Stop Run on a ${state} run`);
    }
    assert.ok(inContextMenu('empo2.pauseRun', 'empo2.run.live.running'));
    assert.equal(inContextMenu('empo2.pauseRun', 'empo2.run.live.paused'), false);
    assert.equal(inContextMenu('empo2.stopRun', 'empo2.run.finished'), false);
  });

  it('offers Reconnect, Show Tokens and the branch commands in the palette only where they apply', () => {
    const palette = new Map<string, string>(
      (manifest.contributes.menus.commandPalette ?? []).map((m: { command: string; when: string }) => [
        m.command,
        m.when,
      ]),
    );
    assert.equal(palette.get('empo2.reconnect'), 'empo2.connection =~ /^(reconnecting|lost)$/', 'not while connected');
    assert.equal(palette.get('empo2.showTokens'), 'empo2.debugTurn', 'not once the debug session ended');
    for (const command of ['empo2.compareWithParent', 'empo2.adoptBranch', 'empo2.deleteBranch']) {
      assert.equal(palette.get(command), `empo2.hostState == running && ${HAS_BRANCH_CONTEXT}`, command);
    }
  });

  it('welcomes an empty Trajectories view with what the host is doing: Start Host only while it is stopped', () => {
    const welcomes = manifest.contributes.viewsWelcome.filter(
      (v: { view: string }) => v.view === 'empo2.trajectories',
    ) as Array<{ when: string; contents: string }>;
    const states: Array<HostState | undefined> = [
      undefined,
      'stopped',
      'crashed',
      'starting',
      'running',
      'reconnecting',
      'stopping',
    ];
    for (const state of states) {
      const context = { isWorkspaceTrusted: true, 'empo2.hostState': state };
      const shown = welcomes.filter((w) => whenHolds(w.when, context));
      assert.equal(shown.length, 1, `one welcome for host state ${state}`);
      const offersStart = shown[0].contents.includes('command:empo2.startHost');
      assert.equal(
        offersStart,
        state === undefined || state === 'stopped' || state === 'crashed',
        `Start Host offered for ${state}`,
      );
    }
    assert.ok(
      welcomes
        .find((w) => whenHolds(w.when, { isWorkspaceTrusted: true, 'empo2.hostState': 'running' }))
        ?.contents.includes('command:empo2.newRun'),
    );
  });

  it('reads in its when clauses only the context keys the extension sets', () => {
    const source = sourceFiles(path.join(root, 'src'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const menus = Object.values<Array<{ when?: string }>>(manifest.contributes.menus).flat();
    const clauses = [
      ...menus.map((m) => m.when ?? ''),
      ...manifest.contributes.viewsWelcome.map((v: { when: string }) => v.when),
    ];
    // A key, not a value compared with one (view == empo2.trajectories) or a quoted or regex literal.
    const keys = new Set(
      clauses.flatMap((when) =>
        [...when.replace(/'[^']*'|\/[^/]*\//g, '').matchAll(/(?<![=~]\s*)\b(empo2\.[A-Za-z]+)\b/g)].map((m) => m[1]),
      ),
    );
    assert.ok(keys.size >= 7, [...keys].join(', '));
    for (const key of keys) {
      assert.ok(source.includes(`'${key}'`), `${key} is set by the extension`);
    }
  });

  it('documents a launch.json whose every attribute the empo2 debug type declares, and the port setting the scripts read', () => {
    const doc = readFileSync(path.join(root, 'docs', 'debugging.md'), 'utf8');
    const example = /```jsonc\n([\s\S]*?)```/.exec(doc);
    assert.ok(example, 'a launch.json example in docs/debugging.md');
    const launch = JSON.parse(example[1].replace(/\/\/.*$/gm, '')) as {
      configurations: Array<Record<string, unknown>>;
    };
    const debuggerType = manifest.contributes.debuggers.find((d: { type: string }) => d.type === 'empo2');
    const declared = new Set([
      'type',
      'request',
      'name',
      ...Object.keys(debuggerType.configurationAttributes.launch.properties),
    ]);
    assert.ok(launch.configurations.length >= 2);
    for (const configuration of launch.configurations) {
      assert.equal(configuration.type, 'empo2');
      assert.equal(configuration.request, 'launch');
      for (const key of Object.keys(configuration)) {
        assert.ok(declared.has(key), `${key} is a declared launch attribute`);
      }
    }
    for (const key of declared) {
      assert.ok(
        doc.includes(`\`${key}\``) || ['type', 'request', 'name'].includes(key),
        `docs/debugging.md names ${key}`,
      );
    }
    const script = readFileSync(path.join(root, 'scripts', 'vscode-open.sh'), 'utf8');
    assert.match(script, /EMPO2_VSCODE_PORT:-8765/);
    assert.match(readFileSync(path.join(root, 'README.md'), 'utf8'), /EMPO2_VSCODE_PORT=\d+ \.\/scripts\/run\.sh/);
  });

  it('puts commands, views and settings under the empo2. prefix', () => {
    const views = manifest.contributes.views.empo2.map((v: { id: string }) => v.id);
    assert.deepEqual(views, ['empo2.trajectories', 'empo2.tips']);
    const settings = Object.keys(manifest.contributes.configuration.properties);
    assert.deepEqual(settings.sort(), [
      'empo2.autoStart',
      'empo2.autoStartLaunch',
      'empo2.autoStartRun',
      'empo2.hostArgs',
      'empo2.pythonPath',
      'empo2.remote.backgroundRetryMinutes',
      'empo2.remoteUrl',
      'empo2.resumeAfterRestart',
      'empo2.runRoot',
    ]);
    for (const [key, setting] of Object.entries<Record<string, unknown>>(
      manifest.contributes.configuration.properties,
    )) {
      assert.ok(setting.description || setting.markdownDescription, `${key} has a description`);
    }
  });

  it('only lets the tips panel run commands that exist', () => {
    for (const command of TIPS_PANEL_COMMANDS) {
      assert.ok(CORE_COMMANDS.includes(command), command);
    }
  });

  it('supports untrusted workspaces in a limited way, ignoring workspace values that run code', () => {
    const trust = manifest.capabilities.untrustedWorkspaces;
    assert.equal(trust.supported, 'limited');
    assert.ok(trust.description.length > 20);
    assert.ok(trust.restrictedConfigurations.includes('empo2.pythonPath'));
    assert.ok(trust.restrictedConfigurations.includes('empo2.hostArgs'));
  });

  it('targets the VS Code its types describe and ships no sunset toolkit', () => {
    assert.equal(manifest.engines.vscode, '^1.95.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '1.95.0');
    assert.equal(manifest.dependencies['@vscode/webview-ui-toolkit'], undefined);
    for (const [name, version] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
      assert.match(String(version), /^\d+\.\d+\.\d+$/, `${name} is pinned exactly`);
    }
  });

  it('points every walkthrough step at a file that exists', () => {
    for (const walkthrough of manifest.contributes.walkthroughs) {
      for (const step of walkthrough.steps) {
        const media = step.media.markdown ?? step.media.image ?? step.media.svg;
        assert.ok(readFileSync(path.join(root, media), 'utf8').length > 0, media);
      }
    }
  });
});
