import { describeHealth, type ConnectionHealth } from './host/connectionHealth';
import type { HostState } from './host/hostState';
import type { DeviceInfo } from './rpc/protocol';
import { latestReturn, trainedElsewhere, type RunEntry } from './runs/runsModel';
import { iterationText, runIcon } from './runs/runText';
import { formatReturn, SCORE } from './trajectories/presentation';

// The status bar's words, as a pure function (unit-tested): host state, device, run, iteration
// and latest mean score, e.g. "EMPO²: CPU · builtin-20260101 · iter 3/40 rollout · score 42.0"
// (a run another process trains: no device, "iter 3/40 rollout elsewhere").

const STATE_TEXT: Record<HostState, string> = {
  stopped: 'EMPO²: host stopped',
  starting: 'EMPO²: host starting…',
  running: 'EMPO²: host running',
  reconnecting: 'EMPO²: reconnecting…',
  stopping: 'EMPO²: host stopping…',
  crashed: 'EMPO²: host crashed',
};

const STATE_ICON: Record<HostState, string> = {
  stopped: '$(circle-slash)',
  starting: '$(loading~spin)',
  running: '$(pulse)',
  reconnecting: '$(loading~spin)',
  stopping: '$(loading~spin)',
  crashed: '$(error)',
};

export function deviceLabel(device: DeviceInfo | undefined): string | undefined {
  if (!device) {
    return undefined;
  }
  if (device.kind === 'cpu') {
    return 'CPU';
  }
  const memory = device.memoryBytes ? ` ${Math.round(device.memoryBytes / 2 ** 30)} GB` : '';
  const count = device.count && device.count > 1 ? ` ×${device.count}` : '';
  return `${device.name}${memory}${count}`;
}

export interface StatusInputs {
  readonly state: HostState;
  /** The link's health; while it is down the text says so, whatever the host state. */
  readonly health?: ConnectionHealth;
  readonly device?: DeviceInfo;
  readonly remote?: boolean;
  readonly run?: RunEntry;
}

export function statusText({ state, health, device, remote, run }: StatusInputs, now: number = Date.now()): string {
  if (health?.kind === 'reconnecting') {
    return `$(loading~spin) EMPO²: ${describeHealth(health, now)}`;
  }
  if (health?.kind === 'lost') {
    return `$(debug-disconnect) EMPO²: ${describeHealth(health, now)}`;
  }
  if (state !== 'running') {
    return `${STATE_ICON[state]} ${STATE_TEXT[state]}`;
  }
  // This host's device says nothing of a run another process trains (a terminal's may use a GPU).
  const parts =
    run && trainedElsewhere(run.info) ? [] : [deviceLabel(device) ?? (remote ? 'remote host' : 'host running')];
  if (run) {
    parts.push(run.info.runId, iterationText(run, true));
    const ret = latestReturn(run.latestMetrics);
    if (ret !== undefined) {
      parts.push(`${SCORE} ${formatReturn(ret)}`);
    }
  }
  const icon = run ? runIcon(run) : STATE_ICON.running;
  return `${icon} EMPO²: ${parts.join(' · ')}`;
}
