import * as vscode from 'vscode';
import { Disposable } from './common/lifecycle';
import type { HostManager } from './host/hostManager';
import type { RunsModel } from './runs/runsModel';
import { deviceLabel, statusText } from './statusText';

/**
 * The host in the status bar: state, device (CPU, or the GPU's name and memory), the current
 * run, its iteration and latest return. A click does the obvious next thing: start a stopped
 * host, show the log of a running one.
 */
export class HostStatusBar extends Disposable {
  private readonly item = this._register(vscode.window.createStatusBarItem('empo2.host', vscode.StatusBarAlignment.Left, 10));

  constructor(
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {
    super();
    this.item.name = 'EMPO² Host';
    this.render();
    this._register(host.state.onDidChange(() => this.render()));
    this._register(runs.onDidChangeCurrent(() => this.render()));
    this._register(runs.onDidChangeRuns(() => this.render()));
    this.item.show();
  }

  private render(): void {
    const state = this.host.state.state;
    const session = this.host.current;
    const run = session ? this.runs.current : undefined;
    this.item.text = statusText({ state, device: session?.init.serverInfo.device, remote: session?.remote, run });
    const up = state === 'running' || state === 'starting' || state === 'reconnecting';
    this.item.command = up ? 'empo2.showHostLog' : 'empo2.startHost';
    const device = deviceLabel(session?.init.serverInfo.device);
    this.item.tooltip = up
      ? `EMPO² training host${session ? ` ${session.init.serverInfo.version} at ${session.url}` : ''}${device ? ` on ${device}` : ''}${run ? `\nRun ${run.info.runId}: ${run.info.state}` : ''}\nClick to show its log`
      : 'EMPO² training host: click to start it';
    this.item.backgroundColor = state === 'crashed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }
}
