import type { HostApi } from '../host/hostApi';
import { Requests } from '../rpc/methods';
import type { Episode, MetricsRecord, TrajectoryProgressEvent, TrajectorySummary } from '../rpc/protocol';
import { iterationId } from './trajectoryNodes';

// What the Trajectories tree shows of each run, loaded from the host on demand and cached
// (trajectoryModel.ts turns it into the tree):
//   an iteration's episodes   trajectory.list filtered to that iteration, following cursors
//                              (1,000 per page), grouped into task groups;
//   an episode                trajectory.get (the full episode), the last 64 kept; one of the
//                              iteration in progress comes as it ended (provisional) and is
//                              dropped when that iteration is written or given up;
//   a run's metrics           run.metrics (one small request), which label the iteration rows.
// A live run's notifications add to what is already loaded; nothing else is fetched for them.
// The iteration a live run is playing is held apart (trajectory/progress): its episodes as they
// end, provisional, until the iteration's trajectory/added replaces them with the record.

const LIST_LIMIT = 1000;
const EPISODE_CACHE = 64;

/** An iteration's episodes, and their task groups. */
export interface IterationData {
  readonly summaries: TrajectorySummary[];
  readonly groups: Map<string, TaskGroup>;
}

/** The iteration a live run is playing: its episodes that have ended so far, provisional. */
export interface LiveIteration {
  readonly iteration: number;
  /** Episodes of the iteration ended so far, and how many it plays (the host's counts). */
  readonly done: number;
  readonly total: number;
  readonly data: IterationData;
}

/** An episode as trajectory.get gave it. */
export interface LoadedEpisode {
  readonly episode: Episode;
  /** Its iteration was still training: the episode as it ended, no novelty rewards, no tip yet. */
  readonly provisional: boolean;
}

export interface TaskGroup {
  readonly key: string;
  readonly task: string;
  readonly variation: number;
  readonly group: number | undefined;
  readonly episodes: TrajectorySummary[];
}

export class TrajectoryData {
  private readonly iterations = new Map<string, IterationData>();
  private readonly loadingIterations = new Map<string, Promise<IterationData>>();
  private readonly summaries = new Map<string, TrajectorySummary>();
  private readonly episodes = new Map<string, LoadedEpisode>();
  private readonly metrics = new Map<string, Map<number, MetricsRecord>>();
  private readonly loadingMetrics = new Map<string, Promise<void>>();
  /** Per run, the iteration in progress, until it is written. */
  private readonly live = new Map<string, LiveIteration>();

  /** `changed`: an iteration's episodes or metrics arrived (its row's label may change). */
  constructor(
    private readonly host: HostApi,
    private readonly changed: (runId: string, iteration: number) => void,
  ) {}

  /** Forgets everything cached (Refresh; a new host). */
  clear(): void {
    this.iterations.clear();
    this.loadingIterations.clear();
    this.summaries.clear();
    this.episodes.clear();
    this.metrics.clear();
    this.loadingMetrics.clear();
    this.live.clear();
  }

  iterationMetrics(runId: string, iteration: number): MetricsRecord | undefined {
    return this.metrics.get(runId)?.get(iteration);
  }

  /** The iteration's episodes if loaded (loadIteration loads them), or its ended ones while it plays. */
  iterationData(runId: string, iteration: number): IterationData | undefined {
    return this.iterations.get(iterationId(runId, iteration)) ?? this.liveIteration(runId, iteration)?.data;
  }

  /** The run's iteration in progress (of that number, when given), until it is written. */
  liveIteration(runId: string, iteration?: number): LiveIteration | undefined {
    const live = this.live.get(runId);
    return live && (iteration === undefined || live.iteration === iteration) ? live : undefined;
  }

  summary(runId: string, episodeId: string): TrajectorySummary | undefined {
    return this.summaries.get(`${runId}/${episodeId}`) ?? this.liveSummary(runId, episodeId);
  }

  /** Whether the episode is known only as it ended (its iteration is not written yet). */
  isProvisional(runId: string, episodeId: string): boolean {
    return !this.summaries.has(`${runId}/${episodeId}`) && this.liveSummary(runId, episodeId) !== undefined;
  }

  private liveSummary(runId: string, episodeId: string): TrajectorySummary | undefined {
    return this.live.get(runId)?.data.summaries.find((s) => s.id === episodeId);
  }

  /** The full episode if cached (episode() loads it). */
  cachedEpisode(runId: string, episodeId: string): Episode | undefined {
    return this.episodes.get(`${runId}/${episodeId}`)?.episode;
  }

  /** The full episode (cached, least recently used dropped first). */
  async episode(runId: string, episodeId: string): Promise<LoadedEpisode> {
    const key = `${runId}/${episodeId}`;
    const cached = this.episodes.get(key);
    if (cached) {
      // Refresh its place in the LRU order.
      this.episodes.delete(key);
      this.episodes.set(key, cached);
      return cached;
    }
    const { episode, provisional } = await this.host.request(Requests.trajectoryGet, { runId, episodeId });
    const loaded: LoadedEpisode = { episode, provisional: provisional === true };
    this.episodes.set(key, loaded);
    while (this.episodes.size > EPISODE_CACHE) {
      this.episodes.delete(this.episodes.keys().next().value as string);
    }
    return loaded;
  }

  /** The iteration's episodes: cached (or, while it plays, those ended), else one load however many ask at once. */
  loadIteration(runId: string, iteration: number): Promise<IterationData> {
    const key = iterationId(runId, iteration);
    const cached = this.iterationData(runId, iteration);
    if (cached) {
      return Promise.resolve(cached);
    }
    let loading = this.loadingIterations.get(key);
    if (!loading) {
      loading = this.fetchIteration(runId, iteration).finally(() => this.loadingIterations.delete(key));
      this.loadingIterations.set(key, loading);
      // The iteration's row is labelled from its episodes (successes), once they are here.
      void loading.then(
        () => this.changed(runId, iteration),
        () => undefined,
      );
    }
    return loading;
  }

  /** The run's metrics, once (a failure is tried again on the next call). */
  loadMetrics(runId: string): Promise<void> {
    let loading = this.loadingMetrics.get(runId);
    if (!loading) {
      loading = this.host
        .request(Requests.runMetrics, { runId })
        .then(({ records }) => {
          this.metrics.set(runId, new Map(records.map((record) => [record.iteration, record])));
          // Iteration rows are labelled from these: refresh each one VS Code already shows.
          for (const record of records) {
            this.changed(runId, record.iteration);
          }
        })
        .catch(() => {
          // Labels without modes are still a tree; try again on the next expansion.
          this.loadingMetrics.delete(runId);
        });
      this.loadingMetrics.set(runId, loading);
    }
    return loading;
  }

  /** run/metrics of a live run: added to a run whose metrics are loaded. */
  metricsArrived(runId: string, records: readonly MetricsRecord[]): void {
    const known = this.metrics.get(runId);
    if (known) {
      for (const record of records) {
        known.set(record.iteration, record);
        this.changed(runId, record.iteration);
      }
    }
  }

  /**
   * trajectory/added of a live run: added to the iterations already loaded. An iteration shown
   * in progress becomes the written one: a notification carries whole iterations, so its
   * summaries replace the provisional ones without a request.
   */
  trajectoriesAdded(runId: string, summaries: readonly TrajectorySummary[]): void {
    const byIteration = new Map<number, TrajectorySummary[]>();
    for (const summary of summaries) {
      byIteration.set(summary.iteration, [...(byIteration.get(summary.iteration) ?? []), summary]);
    }
    for (const [iteration, items] of byIteration) {
      const key = iterationId(runId, iteration);
      let data = this.iterations.get(key);
      if (!data && this.liveIteration(runId, iteration)) {
        data = { summaries: [], groups: new Map() };
        this.iterations.set(key, data);
      }
      const wasLive = this.dropLive(runId, iteration);
      if (data && (this.addSummaries(runId, data, items) || wasLive)) {
        this.changed(runId, iteration);
      }
    }
  }

  /**
   * trajectory/progress: episodes of the iteration a live run plays, as they end. A later
   * iteration replaces an earlier one still held; an iteration already written is left alone.
   * Returns true when the iteration is new here (its row appears).
   */
  episodesEnded(event: TrajectoryProgressEvent): boolean {
    const { runId, iteration } = event;
    if (this.iterations.has(iterationId(runId, iteration))) {
      return false;
    }
    const previous = this.live.get(runId);
    if (previous && previous.iteration > iteration) {
      return false;
    }
    const before = previous?.iteration === iteration ? previous.data.summaries : [];
    const known = new Set(before.map((s) => s.id));
    // In episode order, as the written iteration will list them: rows do not move when it comes.
    const summaries = [...before, ...event.summaries.filter((s) => !known.has(s.id))].sort((a, b) =>
      a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
    );
    const data: IterationData = { summaries: [], groups: new Map() };
    summaries.forEach((summary) => addToGroups(data, summary));
    this.live.set(runId, {
      iteration,
      done: Math.max(event.done, previous?.iteration === iteration ? previous.done : 0),
      total: event.total,
      data,
    });
    this.changed(runId, iteration);
    return previous?.iteration !== iteration;
  }

  /**
   * Forgets a run's iteration in progress (of that number, when given), and the episodes of the
   * run loaded as they ended: written, their records replace them; given up, they are gone.
   * True if an iteration was held.
   */
  dropLive(runId: string, iteration?: number): boolean {
    for (const [key, loaded] of this.episodes) {
      if (
        loaded.provisional &&
        key.startsWith(`${runId}/`) &&
        (iteration === undefined || loaded.episode.iteration === iteration)
      ) {
        this.episodes.delete(key);
      }
    }
    return this.liveIteration(runId, iteration) !== undefined && this.live.delete(runId);
  }

  private async fetchIteration(runId: string, iteration: number): Promise<IterationData> {
    const summaries: TrajectorySummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.host.request(Requests.trajectoryList, {
        runId,
        filter: { iteration },
        limit: LIST_LIMIT,
        ...(cursor ? { cursor } : {}),
      });
      summaries.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const data: IterationData = { summaries: [], groups: new Map() };
    this.iterations.set(iterationId(runId, iteration), data);
    this.addSummaries(runId, data, summaries);
    return data;
  }

  private addSummaries(runId: string, data: IterationData, summaries: readonly TrajectorySummary[]): boolean {
    let added = false;
    for (const summary of summaries) {
      const key = `${runId}/${summary.id}`;
      if (this.summaries.has(key)) {
        continue;
      }
      added = true;
      this.summaries.set(key, summary);
      addToGroups(data, summary);
    }
    return added;
  }
}

function addToGroups(data: IterationData, summary: TrajectorySummary): void {
  data.summaries.push(summary);
  const groupKey = groupKeyOf(summary);
  let group = data.groups.get(groupKey);
  if (!group) {
    group = { key: groupKey, task: summary.task, variation: summary.variation, group: summary.group, episodes: [] };
    data.groups.set(groupKey, group);
  }
  group.episodes.push(summary);
}

/** The N rollouts of one task: the trainer's group index, or task and variation. */
export function groupKeyOf(summary: Pick<TrajectorySummary, 'task' | 'variation' | 'group'>): string {
  return summary.group !== undefined
    ? `${summary.group}:${summary.task}/${summary.variation}`
    : `${summary.task}/${summary.variation}`;
}
