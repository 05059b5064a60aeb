import { CommandBase } from '../common/command';
import type { EpisodeBrowser } from './episodeBrowser';

/**
 * Opens an episode in the episode view, scrolled to a step if one is given. The Trajectories
 * tree runs it when an episode or step row is clicked (so a click opens the episode even when
 * the row is already selected); hidden from the palette, which has no episode to name.
 */
export class OpenEpisodeCommand extends CommandBase<{ episodes: EpisodeBrowser }> {
  static readonly id = 'empo2.openEpisode';

  async execute(runId?: unknown, episodeId?: unknown, step?: unknown): Promise<void> {
    if (typeof runId === 'string' && typeof episodeId === 'string') {
      await this.services.episodes.show(runId, episodeId, typeof step === 'number' ? step : undefined);
    }
  }
}
