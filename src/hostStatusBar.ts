import * as vscode from 'vscode';
import { Disposable } from './common/lifecycle';
import { describeHealth } from './host/connectionHealth';
import { ReconnectCommand, RestartHostCommand, StartHostCommand } from './host/hostCommands';
import type { HostManager } from './host/hostManager';
import { ShowHostLogCommand } from './host/showHostLog';
import { trainedElsewhere, type RunsModel } from './runs/runsModel';
import { deviceLabel, statusText } from './statusText';

/**
 * The host in the status bar: state, device (CPU, or the GPU's name and memory), the current
 * run, its iteration and latest return. A click does the obvious next thing: start a stopped
 * host, show the log of a running one; for a lost link, Reconnect (remote) or Restart (spawned).
 */
export class HostStatusBar extends Disposable {
  private readonly item = this._register(
    vscode.window.createStatusBarItem('empo2.host', vscode.StatusBarAlignment.Left, 10),
  );

  constructor(
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {
    super();
    this.item.name = 'EMPO² Host';
    this.render();
    this._register(host.state.onDidChange(() => this.render()));
    this._register(host.health.onDidChange(() => this.render()));
    // "reconnecting… (12 s, next try in 1 s)" counts; re-render each second while it does.
    const ticker = setInterval(() => this.host.health.isInterrupted && this.render(), 1_000);
    this._register({ dispose: () => clearInterval(ticker) });
    this._register(runs.onDidChangeCurrent(() => this.render()));
    this._register(runs.onDidChangeRuns(() => this.render()));
    this.item.show();
  }

  private render(): void {
    const state = this.host.state.state;
    const session = this.host.current;
    const run = session ? this.runs.current : undefined;
    const health = this.host.health.health;
    this.item.text = statusText({
      state,
      health,
      device: session?.init.serverInfo.device,
      remote: session?.remote,
      run,
    });
    if (health.kind === 'reconnecting' || health.kind === 'lost') {
      const lost = health.kind === 'lost';
      this.item.command = health.remote || !lost ? ReconnectCommand.id : RestartHostCommand.id;
      this.item.tooltip = `EMPO²: ${describeHealth(health)}${health.reason ? ` (${health.reason})` : ''}.\n${health.remote ? `The host at ${health.url} keeps training on its own. ` : ''}Click to ${health.remote || !lost ? 'reconnect now' : 'restart the host'}`;
      this.item.backgroundColor = new vscode.ThemeColor(
        lost ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground',
      );
      return;
    }
    const up = state === 'running' || state === 'starting';
    this.item.command = up ? ShowHostLogCommand.id : StartHostCommand.id;
    const device = deviceLabel(session?.init.serverInfo.device);
    this.item.tooltip = up
      ? `EMPO² training host${session ? ` ${session.init.serverInfo.version} at ${session.url}` : ''}${device ? ` on ${device}` : ''}${run ? `\nRun ${run.info.runId}: ${run.info.state}${trainedElsewhere(run.info) ? ', trained by another process' : ''}` : ''}\nClick to show its log`
      : 'EMPO² training host: click to start it';
    this.item.backgroundColor =
      state === 'crashed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }
}
