import type * as vscode from 'vscode';
import { registerCommands } from '../common/command';
import type { HostFeature } from '../host/activate';
import type { RunsFeature } from '../runs/activate';
import { OpenInTensorBoardCommand, OpenRootInTensorBoardCommand, tensorBoardServers } from './openInTensorBoard';

/** Open in TensorBoard and Open All Runs in TensorBoard, and the TensorBoard servers they start. */
export function activateTensorBoard(
  context: vscode.ExtensionContext,
  { settings, hostLog, host, runs }: HostFeature & RunsFeature,
): void {
  const projectRoot = context.extensionUri.fsPath;
  const servers = tensorBoardServers(settings, hostLog, projectRoot);
  const services = { settings, hostLog, host, runs, projectRoot, servers };
  context.subscriptions.push(
    servers,
    registerCommands(
      [OpenInTensorBoardCommand, OpenRootInTensorBoardCommand].map((TensorBoard) => new TensorBoard(services)),
    ),
  );
}
