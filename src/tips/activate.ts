import * as vscode from 'vscode';
import { registerCommands } from '../common/command';
import { Emitter, type Event } from '../common/event';
import type { HostFeature } from '../host/activate';
import type { RunsFeature } from '../runs/activate';
import { PersonName } from './personName';
import { AddTipCommand, DeleteTipCommand, EditTipCommand, ShowTipHistoryCommand } from './tipCommands';
import { TipHistoryDocuments } from './tipHistoryDocuments';
import { TipsModel } from './tipsModel';
import { TipsViewProvider } from './tipsViewProvider';

/** The memory tips and what later features take from them. */
export interface TipsFeature {
  readonly tips: TipsModel;
  /** Shows a tip's card in the Memory Tips view, scrolled to and highlighted. */
  readonly revealTip: (tipId: string) => Promise<void>;
  /** A tip's provenance link was clicked: the episode that wrote it is to be opened (by the
   *  Trajectories feature, activated after this one). */
  readonly onDidAskToOpenEpisode: Event<{ readonly runId: string; readonly episodeId: string }>;
}

/** The tips model, the Memory Tips view, the tip commands and the tips' history documents. */
export function activateTips(context: vscode.ExtensionContext, shared: HostFeature & RunsFeature): TipsFeature {
  const { host, hostState, runs } = shared;
  const person = new PersonName(vscode.authentication);
  const tips = new TipsModel(host, runs, () => person.current());
  const histories = new TipHistoryDocuments();
  const askToOpenEpisode = new Emitter<{ readonly runId: string; readonly episodeId: string }>();
  const tipsView = new TipsViewProvider(
    context.extensionUri,
    hostState,
    host.health,
    tips,
    runs,
    (runId, episodeId) => {
      askToOpenEpisode.fire({ runId, episodeId });
      return Promise.resolve();
    },
  );
  const services = { host, tips, runs, histories };
  context.subscriptions.push(
    person,
    tips,
    askToOpenEpisode,
    tipsView,
    histories,
    vscode.window.registerWebviewViewProvider(TipsViewProvider.viewType, tipsView, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    registerCommands(
      [AddTipCommand, EditTipCommand, DeleteTipCommand, ShowTipHistoryCommand].map((Tip) => new Tip(services)),
    ),
  );
  return { tips, revealTip: (tipId) => tipsView.reveal(tipId), onDidAskToOpenEpisode: askToOpenEpisode.event };
}
