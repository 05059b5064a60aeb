/** A request made while no host is connected (or while the link is being restored). */
export class HostNotRunningError extends Error {
  constructor(what: string, reconnecting = false) {
    super(
      reconnecting
        ? `${what}: the connection to the training host is being restored (reconnecting…); try again in a moment.`
        : `${what} needs a running training host; start it first (EMPO²: Start Host).`,
    );
    this.name = 'HostNotRunningError';
  }
}

/** How a request names what it does, for a sentence a person reads ("memory.update" → "saving a tip"). */
const ACTIONS: Record<string, string> = {
  'memory.update': 'Saving a tip',
  'memory.add': 'Adding a tip',
  'memory.delete': 'Deleting a tip',
  'memory.list': 'Loading the tips',
  'memory.history': "Reading a tip's history",
  'run.start': 'Starting a run',
  'run.pause': 'Pausing the run',
  'run.resume': 'Resuming the run',
  'run.stop': 'Stopping the run',
  'run.metrics': 'Loading the metrics',
  'trajectory.list': 'Loading trajectories',
  'trajectory.get': 'Opening an episode',
};

/** What a request does, for a sentence a person reads; its method's name when there is none. */
export function requestAction(method: string): string {
  return ACTIONS[method] ?? `'${method}'`;
}
