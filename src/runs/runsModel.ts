import { Emitter } from '../common/event';
import { Disposable } from '../common/lifecycle';
import type { HostApi } from '../host/hostApi';
import { describeError } from '../rpc/errors';
import { Notifications, Requests } from '../rpc/methods';
import type { MetricsRecord, Progress, RunInfo, RunState, RunStatus } from '../rpc/protocol';

// The runs the connected host knows (run.list, run.open, run.start), kept current by run/state,
// run/progress and run/metrics notifications, and which one is "current": the one the tips and
// metrics views and the run commands act on (the live run, else the one the user opened or
// selected last). Free of vscode.

export interface RunEntry {
  readonly info: RunInfo;
  readonly progress: Progress | null;
  readonly latestMetrics: MetricsRecord | null;
  /** The newest iteration with trajectories the host reported (may run ahead of info.iteration). */
  readonly trajectoryIteration: number;
  /** The resolved config, once a run.status or run.open result carried it. */
  readonly config: Record<string, unknown> | undefined;
}

export class RunsModel extends Disposable {
  private readonly runs = new Map<string, RunEntry>();
  private currentId: string | undefined;
  private readonly _onDidChangeRuns = this._register(new Emitter<void>());
  /** The set of runs or their order changed. */
  readonly onDidChangeRuns = this._onDidChangeRuns.event;
  private readonly _onDidChangeRun = this._register(new Emitter<RunEntry>());
  /** One run's state, progress or metrics changed. */
  readonly onDidChangeRun = this._onDidChangeRun.event;
  private readonly _onDidChangeCurrent = this._register(new Emitter<RunEntry | undefined>());
  readonly onDidChangeCurrent = this._onDidChangeCurrent.event;
  private readonly _onDidFailToLoad = this._register(new Emitter<string>());
  readonly onDidFailToLoad = this._onDidFailToLoad.event;

  constructor(private readonly host: HostApi) {
    super();
    this._register(host.onDidConnect(() => void this.reload()));
    this._register(
      host.onDidDisconnect(() => {
        // Runs stay listed (their folders are still there), but none is live any more.
        for (const [id, entry] of this.runs) {
          if (entry.info.live) {
            this.runs.set(id, { ...entry, info: { ...entry.info, live: false }, progress: null });
          }
        }
        this._onDidChangeRuns.fire();
        this.announceHostGone();
      }),
    );
    this._register(host.health.onDidChange((health) => health.kind === 'none' && this.announceHostGone()));
    this._register(
      host.on(Notifications.runState, ({ run }) => this.upsert(run, { progress: isActive(run) ? undefined : null })),
    );
    this._register(host.on(Notifications.runProgress, ({ runId, progress }) => this.update(runId, { progress })));
    this._register(
      host.on(Notifications.runMetrics, ({ runId, records }) => {
        const entry = this.runs.get(runId);
        const last = records[records.length - 1];
        if (entry && last) {
          this.update(runId, {
            latestMetrics: last,
            info: { ...entry.info, iteration: Math.max(entry.info.iteration, last.iteration) },
          });
        }
      }),
    );
    this._register(
      host.on(Notifications.trajectoryAdded, ({ runId, summaries }) => {
        const entry = this.runs.get(runId);
        const newest = Math.max(0, ...summaries.map((s) => s.iteration));
        if (entry && newest > entry.trajectoryIteration) {
          this.update(runId, { trajectoryIteration: newest });
        }
      }),
    );
  }

  list(): RunEntry[] {
    // The live run first, then the most recently updated.
    return [...this.runs.values()].sort(
      (a, b) =>
        Number(b.info.live) - Number(a.info.live) ||
        (b.info.updated ?? 0) - (a.info.updated ?? 0) ||
        a.info.runId.localeCompare(b.info.runId),
    );
  }

  get(runId: string): RunEntry | undefined {
    return this.runs.get(runId);
  }

  get live(): RunEntry | undefined {
    return [...this.runs.values()].find((entry) => entry.info.live);
  }

  get current(): RunEntry | undefined {
    return (this.currentId ? this.runs.get(this.currentId) : undefined) ?? this.live ?? this.list()[0];
  }

  /** Makes a run current (the user opened or selected it). */
  select(runId: string): void {
    const entry = this.runs.get(runId);
    if (entry && this.currentId !== runId) {
      this.currentId = runId;
      this._onDidChangeCurrent.fire(this.current);
      if (!entry.config) {
        void this.refreshStatus(runId);
      }
    }
  }

  /** Reads one run's full status (config, latest metrics, progress) from the host. */
  async refreshStatus(runId: string): Promise<RunEntry | undefined> {
    try {
      const { run } = await this.host.request(Requests.runStatus, { runId });
      return run ? this.absorbStatus(run) : undefined;
    } catch {
      return undefined; // A run the host no longer knows keeps what we had.
    }
  }

  /**
   * The host is gone (stopped, or it exited by itself), not just the link for a moment: each run
   * it was training, as last heard, changes for its views, so what they showed as live (a
   * provisional iteration row, "● live", a progress item) goes. A link that is being restored
   * keeps them, greyed. Called on both events, in whichever order they come, once both are in.
   */
  private announceHostGone(): void {
    if (this.host.health.health.kind !== 'none') {
      return;
    }
    for (const entry of this.runs.values()) {
      if (!entry.info.live && inActiveState(entry.info)) {
        this._onDidChangeRun.fire(entry);
      }
    }
  }

  /** Reads the run list and the live run's status from the host. */
  async reload(): Promise<void> {
    try {
      const before = this.current?.info.runId;
      const { runs } = await this.host.request(Requests.runList, {});
      const known = new Set(runs.map((run) => run.runId));
      for (const id of [...this.runs.keys()]) {
        if (!known.has(id)) {
          this.runs.delete(id);
        }
      }
      for (const run of runs) {
        this.upsert(run, {}, /* quiet */ true);
      }
      const live = runs.find(isActive);
      if (live) {
        const { run } = await this.host.request(Requests.runStatus, { runId: live.runId });
        if (run) {
          this.absorbStatus(run);
        }
      }
      this._onDidChangeRuns.fire();
      if (this.current?.info.runId !== before) {
        this._onDidChangeCurrent.fire(this.current);
      }
    } catch (error) {
      this._onDidFailToLoad.fire(`cannot list runs: ${describeError(error)}`);
    }
  }

  /** A run the host opened (run.open) or started (run.start). */
  absorbStatus(status: RunStatus): RunEntry {
    return this.upsert(status, {
      progress: status.progress,
      latestMetrics: status.latestMetrics,
      config: status.config,
    });
  }

  absorbInfo(info: RunInfo): RunEntry {
    return this.upsert(info, {});
  }

  private upsert(full: RunInfo, changes: Partial<Omit<RunEntry, 'info'>>, quiet = false): RunEntry {
    const info = runInfoOf(full);
    const previous = this.runs.get(info.runId);
    const entry: RunEntry = {
      info: {
        ...info,
        iteration: Math.max(info.iteration, previous?.info.live && info.live ? previous.info.iteration : 0),
      },
      progress: changes.progress === undefined ? (previous?.progress ?? null) : changes.progress,
      latestMetrics: changes.latestMetrics === undefined ? (previous?.latestMetrics ?? null) : changes.latestMetrics,
      trajectoryIteration: Math.max(
        previous?.trajectoryIteration ?? 0,
        changes.trajectoryIteration ?? 0,
        info.iteration,
      ),
      config: changes.config ?? previous?.config,
    };
    this.runs.set(info.runId, entry);
    if (!quiet) {
      if (!previous || previous.info.live !== entry.info.live) {
        this._onDidChangeRuns.fire();
      }
      this._onDidChangeRun.fire(entry);
      // `current` answers an entry of the map, and the map holds `entry` for this run now.
      if (this.current === entry) {
        this._onDidChangeCurrent.fire(entry);
      }
    }
    return entry;
  }

  /** Changes a run it lists (a notification about a run it does not list is dropped). */
  private update(runId: string, changes: Partial<RunEntry>): void {
    const entry = this.runs.get(runId);
    if (entry) {
      const next = { ...entry, ...changes };
      this.runs.set(runId, next);
      this._onDidChangeRun.fire(next);
      if (this.current === next) {
        this._onDidChangeCurrent.fire(next);
      }
    }
  }
}

/** The states only a host that trains the run moves it out of. */
const ACTIVE_STATES: ReadonlySet<RunState> = new Set(['starting', 'running', 'pausing', 'paused', 'stopping']);

/** A run in a state that a host training it holds (whether or not that host is heard now). */
export function inActiveState(run: RunInfo): boolean {
  return ACTIVE_STATES.has(run.state);
}

export function isActive(run: RunInfo): boolean {
  return run.live && inActiveState(run);
}

/** A run in an active state that this host does not train: another process (a terminal's
 *  `empo2-host train`, another window's host) trains it, and the host follows its files. */
export function trainedElsewhere(run: RunInfo): boolean {
  return !run.live && inActiveState(run);
}

/** The number the status bar and tree show as "latest return": the iteration's mean return. */
export function latestReturn(metrics: MetricsRecord | null): number | undefined {
  const value = metrics?.['rollout/return'];
  return typeof value === 'number' ? value : undefined;
}

/**
 * The RunInfo fields of a RunInfo or RunStatus (a status also carries config, checkpoints, …),
 * `live` only while the run is in a state a training host holds. The host says a run's end
 * (finished, stopped, failed) in a run/state that still has `live: true`, since it lets go of
 * the run a moment later, and no notification follows: taken as it came, every run trained
 * since the host (re)started stayed "live", `live` was the first of them, and Show Metrics drew
 * that finished run instead of the current one (and Pause/Stop saw "no run is training" while a
 * later run trained).
 */
function runInfoOf(run: RunInfo): RunInfo {
  // A RunStatus is a RunInfo with more fields: keep only the RunInfo ones (a branch's parent too).
  const { runId, path, state, iteration, iterations, updated, error, parent } = run;
  return {
    runId,
    path,
    state,
    iteration,
    iterations,
    live: isActive(run),
    updated,
    ...(error !== undefined ? { error } : {}),
    ...(parent !== undefined ? { parent } : {}),
  };
}
