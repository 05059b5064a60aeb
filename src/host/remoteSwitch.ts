// Connect to Remote Host while a host is connected. The host in use stays until the remote one
// has answered, so a wrong URL or token leaves everything as it was; and a host spawned here,
// whose run would be interrupted, stops only once the run guard's question is answered (Cancel
// leaves it training). No vscode import: HostManager and the run guard provide the steps, and
// the unit tests fake them.

/** The steps of a switch to a remote host, in the order switchToRemote takes them. */
export interface RemoteSwitch {
  /** The host connected now: none, one spawned here (stopping it interrupts its run), or a remote one. */
  readonly connected: 'none' | 'local' | 'remote';
  /** Dials the remote host and hangs up; throws when it cannot be reached or refuses the token. */
  probe(): Promise<void>;
  /** The run guard's question before a host spawned here stops; undefined: cancelled. */
  beforeStop(): Promise<{ readonly now: boolean } | undefined>;
  /** Stops (or, for a remote one, leaves) the host in use and connects to the remote one. */
  connect(now: boolean): Promise<void>;
}

/** True once connected, false when the person cancelled; what probe or connect throws, thrown. */
export async function switchToRemote(steps: RemoteSwitch): Promise<boolean> {
  if (steps.connected !== 'none') {
    await steps.probe();
  }
  const choice = steps.connected === 'local' ? await steps.beforeStop() : { now: false };
  if (!choice) {
    return false;
  }
  await steps.connect(choice.now);
  return true;
}
