import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import { HostState, HostStateModel } from '../host/hostState';

const TEXT: Record<HostState, string> = {
  stopped: 'EMPO²: host stopped',
  starting: 'EMPO²: host starting…',
  running: 'EMPO²: host running',
  stopping: 'EMPO²: host stopping…',
  crashed: 'EMPO²: host crashed',
};

/**
 * The host's state in the status bar; a click does the obvious next thing. Device, run,
 * iteration and latest return join the text once the host reports them.
 */
export class HostStatusBar extends Disposable {
  private readonly item = this._register(vscode.window.createStatusBarItem('empo2.host', vscode.StatusBarAlignment.Left, 10));

  constructor(hostState: HostStateModel) {
    super();
    this.item.name = 'EMPO² Host';
    this.render(hostState.state);
    this._register(hostState.onDidChange((state) => this.render(state)));
    this.item.show();
  }

  private render(state: HostState): void {
    this.item.text = TEXT[state];
    const running = state === 'running' || state === 'starting';
    this.item.command = running ? 'empo2.showHostLog' : 'empo2.startHost';
    this.item.tooltip = running ? 'EMPO² training host: show its log' : 'EMPO² training host: click to start it';
    this.item.backgroundColor =
      state === 'crashed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }
}
