import type {
  MetricsRecord,
  Progress,
  RolloutMode,
  RunInfo,
  RunState,
  TrajectorySummary,
  UpdateMode,
} from '../rpc/protocol';
import { formatReturn, SCORE, SCORE_SCALE } from '../common/quantities';
import { runContextValue } from '../runs/runContext';
import { inActiveState, latestReturn, trainedElsewhere } from '../runs/runsModel';
import type { LiveIteration } from './trajectoryData';
import type { TrajectoryModel } from './trajectoryModel';
import type { TrajectoryNode } from './trajectoryNodes';

// How each row of the Trajectories tree reads: label, description, icon, tooltip. Pure (no
// vscode), so unit tests check what a person sees; trajectoryTreeProvider.ts turns it into a
// TreeItem. Icons are codicon ids; colours are theme colour ids.
//
// A row is read at a default sidebar width (about 300 px), where VS Code cuts the label and
// description at the right edge: what a person scans for comes first and short, the rest (and
// every number in full) is in the tooltip. Iterations and episodes: the icon's shape is the
// rollout mode (lightbulb: with memory; circle: memory-free), an episode's colour its outcome
// (green success, red failure); the tooltip says the mode in words and what the icon means.

export interface NodePresentation {
  readonly label: string;
  readonly description?: string;
  readonly icon?: { readonly id: string; readonly color?: string };
  /** Markdown. */
  readonly tooltip?: string;
  /** 'expanded' opens a row VS Code shows for the first time; it keeps a person's choice after. */
  readonly collapsible: 'none' | 'collapsed' | 'expanded';
  readonly contextValue: string;
  /** A click opens this episode (at this step) in the episode view. */
  readonly open?: { readonly runId: string; readonly episodeId: string; readonly step?: number };
}

const ROLLOUT: Record<RolloutMode, string> = { memory: 'with memory', 'memory-free': 'memory-free' };
const UPDATE: Record<UpdateMode, string> = {
  'on-policy': 'on-policy',
  'on-policy-with-tips': 'on-policy with tips',
  'off-policy': 'off-policy',
};
const RUN_ICON: Record<RunState, { id: string; color?: string }> = {
  created: { id: 'circle-large-outline' },
  starting: { id: 'loading~spin' },
  running: { id: 'sync~spin', color: 'charts.blue' },
  pausing: { id: 'debug-pause' },
  paused: { id: 'debug-pause', color: 'charts.yellow' },
  stopping: { id: 'loading~spin' },
  stopped: { id: 'debug-stop' },
  interrupted: { id: 'debug-disconnect', color: 'charts.orange' },
  finished: { id: 'pass-filled', color: 'testing.iconPassed' },
  failed: { id: 'error', color: 'testing.iconFailed' },
};

export function rolloutLabel(mode: RolloutMode): string {
  return ROLLOUT[mode] ?? mode;
}

export function updateLabel(mode: UpdateMode): string {
  return UPDATE[mode] ?? mode;
}

// The one name of an episode's final score, and its scale (src/common/quantities.ts).
export { formatReturn, SCORE, SCORE_SCALE };

export function present(node: TrajectoryNode, model: TrajectoryModel): NodePresentation {
  switch (node.kind) {
    case 'run':
      return presentRun(node.runId, model, node.parent?.kind === 'run' ? node.parent.runId : undefined);
    case 'range':
      return {
        label: `Iterations ${node.first}–${Math.min(node.last, model.iterationCount(node.runId))}`,
        icon: { id: 'list-tree' },
        collapsible: 'collapsed',
        contextValue: 'empo2.range',
      };
    case 'iteration':
      return presentIteration(node.runId, node.iteration, model);
    case 'taskGroup': {
      const group = model.group(node);
      const episodes = group?.episodes ?? [];
      const successes = episodes.filter((e) => e.success).length;
      const mean = episodes.length ? episodes.reduce((sum, e) => sum + e.return, 0) / episodes.length : undefined;
      const label = group ? groupLabel(model, node.runId, node.iteration, group) : node.groupKey;
      return {
        label,
        description: `${successes}/${episodes.length} ✓ · ${SCORE} ${formatReturn(mean)}`,
        icon: { id: 'layers', color: successes > 0 ? 'testing.iconPassed' : undefined },
        tooltip: `**Task group** ${label}${group?.group !== undefined ? ` (group ${group.group})` : ''}\n\nThe ${episodes.length} rollouts of one task in iteration ${node.iteration}; GRPO compares their returns.\n\n${successes}/${episodes.length} succeeded, mean ${SCORE} ${formatReturn(mean)} (${SCORE_SCALE})`,
        collapsible: 'collapsed',
        contextValue: 'empo2.taskGroup',
      };
    }
    case 'episode': {
      const summary = model.summary(node.runId, node.episodeId);
      const open = { runId: node.runId, episodeId: node.episodeId };
      if (summary && model.isProvisional(node.runId, node.episodeId)) {
        return { ...presentEndedEpisode(summary), open };
      }
      return summary
        ? { ...presentEpisode(summary), open }
        : { label: node.episodeId, collapsible: 'collapsed', contextValue: 'empo2.episode', open };
    }
    case 'step': {
      const step = model.step(node);
      const open = { runId: node.runId, episodeId: node.episodeId, step: node.t };
      if (!step) {
        return { label: `t${node.t}`, collapsible: 'none', contextValue: 'empo2.step', open };
      }
      const executed = step.executed_action && step.executed_action !== step.action ? ` → ${step.executed_action}` : '';
      // Its episode's iteration still trains: the novelty reward is not computed yet.
      const intrinsic = model.isProvisional(node.runId, node.episodeId) ? 'pending' : formatSigned(step.intrinsic);
      const tips = step.tips.length ? ` · ${step.tips.length} tip${step.tips.length === 1 ? '' : 's'}` : '';
      return {
        label: `t${step.t}: ${step.action || '(empty action)'}${executed}`,
        description: `reward ${formatSigned(step.reward)}${step.intrinsic ? ` · intrinsic ${formatSigned(step.intrinsic)}` : ''}${tips}`,
        icon: {
          id: step.reward > 0 ? 'arrow-up' : step.reward < 0 ? 'arrow-down' : 'arrow-small-right',
          color: step.reward > 0 ? 'testing.iconPassed' : step.reward < 0 ? 'testing.iconFailed' : undefined,
        },
        tooltip: `**Step ${step.t}**\n\n*Observation:* ${escapeMarkdown(step.observation)}\n\n*Action:* \`${escapeMarkdown(step.action)}\`${executed ? ` (executed: \`${escapeMarkdown(step.executed_action ?? '')}\`)` : ''}\n\n*Reward:* ${formatSigned(step.reward)}, intrinsic ${intrinsic}`,
        collapsible: 'none',
        contextValue: 'empo2.step',
        open,
      };
    }
    case 'more': {
      const remaining = model.remaining(node);
      return {
        label: `${remaining} more ${node.what}…`,
        icon: { id: 'ellipsis' },
        collapsible: 'collapsed',
        contextValue: 'empo2.more',
      };
    }
  }
}

/**
 * A run's row. A branch under its parent (`shownUnder`) is named by what its id adds to the
 * parent's ("branch-1" for "<parent>-branch-1"): the parent's id is on the row above, and the
 * whole id left no room for the state at a default sidebar width. The tooltip has the whole id.
 */
function presentRun(runId: string, model: TrajectoryModel, shownUnder?: string): NodePresentation {
  const label = shownUnder && runId.startsWith(`${shownUnder}-`) ? runId.slice(shownUnder.length + 1) : runId;
  const entry = model.run(runId);
  if (!entry) {
    return { label, collapsible: 'collapsed', contextValue: 'empo2.run' };
  }
  const { info } = entry;
  // A branch goes past its parent's configured total (a rerun at the last checkpoint): "4", not "4/3".
  const total = info.iterations && info.iterations >= info.iteration ? `/${info.iterations}` : '';
  const ret = latestReturn(entry.latestMetrics);
  // The state alone (it is what changes), then for a branch where it comes from: a run id of
  // the editor's form (`builtin-20261204-212233`) leaves about 8 characters at a default
  // sidebar, and anything after the state made VS Code's ellipsis eat its last letters
  // ("runnin…"). Iterations and score are in the tooltip (and, for the run that trains, in
  // the status bar and its iteration's row). While the link is down, or the host has stopped, a
  // run's last known state is shown, without a spinner that would claim it is moving. (The runs
  // model clears `live` when the link drops, so the state says it.)
  const unheard = !model.hostConnected && inActiveState(info);
  const parts = [info.state + (unheard ? (model.linkDown ? ' (reconnecting…)' : ' (no host)') : '')];
  if (info.parent) {
    parts.push(
      `${info.parent.adopted ? 'adopted branch' : 'branch'} of ${info.parent.runId} at ${info.parent.checkpoint}`,
    );
  }
  const waiting = model.waiting(entry);
  const resumable =
    info.parent && !info.parent.adopted
      ? branchNext(info.state)
      : info.state === 'interrupted'
        ? '\n\nIts host stopped mid-run: **Resume Run** continues it from its last checkpoint.'
        : '';
  return {
    label,
    description: parts.join(' · '),
    icon: unheard
      ? { id: 'debug-disconnect', color: 'disabledForeground' }
      : (RUN_ICON[info.state] ?? { id: 'circle-large-outline' }),
    tooltip: runTooltip(runId, info, model.hostConnected, total, ret, waiting, resumable),
    // Open while it waits for its first episode, so the row that says what it waits for shows
    // (a run another process trains always has an iteration in the making: left as it is).
    collapsible: waiting && !trainedElsewhere(info) ? 'expanded' : 'collapsed',
    contextValue: runContextValue(entry),
  };
}

/** A run row's tooltip: where it is, its state and progress, what it branched from, what it waits
 *  for and what can be done with it, and its error. */
function runTooltip(
  runId: string,
  info: RunInfo,
  hostConnected: boolean,
  total: string,
  ret: number | undefined,
  waiting: string | undefined,
  resumable: string,
): string {
  const where = info.live
    ? ' (training in this host)'
    : trainedElsewhere(info) && hostConnected
      ? ' (trained by another process; the host follows what it writes)'
      : '';
  const latest = ret !== undefined ? `, latest mean ${SCORE} ${formatReturn(ret)} (${SCORE_SCALE})` : '';
  const parent = info.parent
    ? `\n\n${info.parent.adopted ? 'Adopted branch' : 'Branch'} of ${info.parent.runId} at its checkpoint ${info.parent.checkpoint}`
    : '';
  return (
    `**Run** ${runId}\n\n${info.path}\n\nState: ${info.state}${where}, ${info.iteration}${total} iterations done${latest}` +
    `${parent}${waiting ? `\n\n${waiting}` : ''}${resumable}${info.error ? `\n\nError: ${escapeMarkdown(info.error)}` : ''}`
  );
}

/** What a branch's state means and what can be done with it (the branch's context menu). */
function branchNext(state: RunState): string {
  switch (state) {
    case 'finished':
      return '\n\nIts rerun finished: **Compare with Parent** shows before and after; **Adopt Branch** keeps it as a run of its own; **Delete Branch** removes it.';
    case 'stopped':
    case 'interrupted':
      return `\n\nIts rerun ${state === 'stopped' ? 'was stopped' : 'was cut off'} before it finished: **Rerun Off-Policy Update…** on this branch continues it from its last checkpoint.`;
    default:
      return '';
  }
}

function presentIteration(runId: string, iteration: number, model: TrajectoryModel): NodePresentation {
  const live = model.liveIteration(runId, iteration);
  if (live) {
    return presentLiveIteration(live, model.run(runId)?.progress ?? null);
  }
  const metrics: MetricsRecord | undefined = model.iterationMetrics(runId, iteration);
  const data = model.iterationData(runId, iteration);
  const first = data?.summaries[0];
  const rollout = (metrics?.rollout_mode as RolloutMode | undefined) ?? first?.rollout_mode;
  const update = (metrics?.update_mode as UpdateMode | undefined) ?? first?.update_mode;
  const ret =
    latestReturn(metrics ?? null) ??
    (data?.summaries.length ? data.summaries.reduce((s, e) => s + e.return, 0) / data.summaries.length : undefined);
  const share = successText(metrics, data?.summaries);
  // Success and score first (what a person scans the iterations for), then the rollout mode in
  // words; the icon shows the mode too, and the tooltip says what the icon means.
  const short: string[] = [];
  if (share) {
    short.push(share);
  }
  if (ret !== undefined) {
    short.push(`${SCORE} ${formatReturn(ret)}`);
  }
  if (rollout) {
    short.push(rolloutLabel(rollout));
  }
  const counted = data?.summaries.length
    ? ` (${data.summaries.filter((e) => e.success).length} of ${data.summaries.length} episodes)`
    : '';
  return {
    label: `Iteration ${iteration}`,
    description: short.join(' · '),
    icon: rolloutIcon(rollout),
    tooltip:
      `**Iteration ${iteration}**` +
      (rollout ? `\n\nRollout: ${rolloutLabel(rollout)} (${rolloutLegend(rollout)})` : '') +
      (update ? `\n\nUpdate: ${updateLabel(update)}` : '') +
      (share ? `\n\nSucceeded: ${share.replace(' ✓', '')}${counted}` : '') +
      (ret !== undefined ? `\n\nMean ${SCORE} ${formatReturn(ret)} (${SCORE_SCALE})` : ''),
    collapsible: 'collapsed',
    contextValue: 'empo2.iteration',
  };
}

/** An iteration's icon: its rollout mode (the tooltip's legend says which is which). */
function rolloutIcon(rollout: RolloutMode | undefined): NodePresentation['icon'] {
  return rollout === 'memory' ? { id: 'lightbulb', color: 'charts.yellow' } : { id: 'circle-large-outline' };
}

/** The icon legend of a rollout mode, in the tooltips. */
function rolloutLegend(rollout: RolloutMode): string {
  return rollout === 'memory'
    ? 'the lightbulb icon; memory-free rollouts have a circle'
    : 'the circle icon; rollouts with memory have a lightbulb';
}

/**
 * The iteration a live run is playing, as its episodes end: "rollout 5/8 episodes", then the
 * phase it is in once all have ended ("reflection · 8/8 episodes").
 */
export function presentLiveIteration(live: LiveIteration, progress: Progress | null): NodePresentation {
  const phase = progress?.iteration === live.iteration ? progress.phase : 'rollout';
  const counted = `${live.done}/${live.total} episodes`;
  const successes = live.data.summaries.filter((e) => e.success).length;
  const rollout = live.data.summaries[0]?.rollout_mode;
  // The share of the ended episodes, as every written iteration row says it (successText).
  const share = successText(undefined, live.data.summaries);
  return {
    label: `Iteration ${live.iteration}`,
    description: [
      phase === 'rollout' ? `rollout ${counted}` : `${phase} · ${counted}`,
      ...(share ? [share] : []),
      ...(rollout ? [rolloutLabel(rollout)] : []),
    ].join(' · '),
    icon: { id: 'loading~spin' },
    tooltip: `**Iteration ${live.iteration}** — in progress (${phase})${rollout ? `\n\nRollout: ${rolloutLabel(rollout)}` : ''}\n\n${live.done} of its ${live.total} episodes have ended (${successes} succeeded); each is shown as it ends and opens as it ended; their novelty rewards and tips come once the iteration is written.`,
    collapsible: 'collapsed',
    contextValue: 'empo2.liveIteration',
  };
}

/** An episode of the iteration in progress, as it ended: it opens (trajectory.get serves it provisional) and lists its steps. */
export function presentEndedEpisode(summary: TrajectorySummary): NodePresentation {
  const episode = presentEpisode(summary);
  return {
    ...episode,
    tooltip: `${episode.tooltip}\n\n*Ended; its iteration is still training: it opens as it ended, its novelty reward and tip come when the iteration is written.*`,
    // No episode menus (debug, rerun): they read the written record.
    contextValue: 'empo2.liveEpisode',
  };
}

export function presentEpisode(summary: TrajectorySummary): NodePresentation {
  const index = summary.id.split('-e')[1] ?? summary.id;
  const outcome = summary.success ? 'succeeded' : 'failed';
  return {
    label: `Episode ${index}`,
    // Outcome and score: what fits beside the label four levels deep; steps and modes in the tooltip.
    description: `${summary.success ? '✓' : '✗'} ${SCORE} ${formatReturn(summary.return)}`,
    icon: {
      id: summary.rollout_mode === 'memory' ? 'lightbulb' : 'circle-filled',
      color: summary.success ? 'testing.iconPassed' : 'testing.iconFailed',
    },
    tooltip:
      `**Episode ${summary.id}** — ${outcome}\n\n` +
      `Task ${summary.task}/${summary.variation}, ${SCORE} ${formatReturn(summary.return)} (${SCORE_SCALE})${summary.intrinsic !== undefined ? `, intrinsic ${formatReturn(summary.intrinsic)}` : ''}\n\n` +
      `Rollout ${rolloutLabel(summary.rollout_mode)}, update ${updateLabel(summary.update_mode)}, ${summary.steps} steps\n\n` +
      `*Icon:* lightbulb, rollout with memory; dot, memory-free; green, succeeded; red, failed` +
      (summary.tip_id ? `\n\nWrote tip ${summary.tip_id}` : ''),
    collapsible: summary.steps > 0 ? 'collapsed' : 'none',
    contextValue: 'empo2.episode',
  };
}

/**
 * An iteration's successes as a share ("75% ✓"): from its metrics, else counted from its
 * episodes. One form whether or not its episodes are loaded (expanding a row must not turn
 * "9% ✓" into "3/32 ✓" beside rows that keep "13% ✓"); the counts are in the tooltip.
 */
export function successText(
  metrics: MetricsRecord | undefined,
  summaries: readonly TrajectorySummary[] | undefined,
): string | undefined {
  const recorded = metrics?.['rollout/success'];
  const share =
    typeof recorded === 'number'
      ? recorded
      : summaries?.length
        ? summaries.filter((e) => e.success).length / summaries.length
        : undefined;
  return share === undefined ? undefined : `${Math.round(100 * share)}% ✓`;
}

/** A task group's label, unique among its iteration's groups (one task variation may be drawn twice). */
function groupLabel(
  model: TrajectoryModel,
  runId: string,
  iteration: number,
  group: { task: string; variation: number; group?: number },
): string {
  const base = `${group.task}/${group.variation}`;
  const summaries = model.iterationData(runId, iteration)?.summaries ?? [];
  const groups = new Set(
    summaries.filter((s) => s.task === group.task && s.variation === group.variation).map((s) => s.group),
  );
  return groups.size > 1 && group.group !== undefined ? `${base} · group ${group.group}` : base; // numbered as the episode view does
}

function formatSigned(value: number): string {
  const text = formatReturn(value);
  return value > 0 ? `+${text}` : text;
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}
