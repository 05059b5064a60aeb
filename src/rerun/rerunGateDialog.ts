import * as vscode from 'vscode';
import type { HostApi } from '../host/hostApi';
import type { RunsModel } from '../runs/runsModel';
import { pauseAndWait, stopAndWait } from '../runs/liveRunWait';
import type { RerunJobs } from './rerunJobs';
import { PAUSE_AND_RERUN, rerunObstacle } from './rerunGate';

/**
 * Before the rerun's first question: says what is in the way (rerunGate.ts) and, when the person
 * picks a way out, pauses or stops the training run and waits for it. True: the rerun may go on.
 */
export async function clearTheWayForRerun(host: HostApi, runs: RunsModel, jobs: RerunJobs): Promise<boolean> {
  const live = runs.live;
  const obstacle = rerunObstacle(live, jobs.running);
  if (!obstacle) {
    return true;
  }
  if (!live || !obstacle.wayOut.length) {
    void vscode.window.showInformationMessage(`EMPO²: ${obstacle.message} ${obstacle.detail}`);
    return false;
  }
  const choice = await vscode.window.showWarningMessage(
    obstacle.message,
    { modal: true, detail: obstacle.detail },
    ...obstacle.wayOut,
  );
  if (!choice) {
    return false;
  }
  return choice === PAUSE_AND_RERUN
    ? pauseAndWait(host, runs, live.info.runId)
    : stopAndWait(host, runs, live.info.runId);
}
