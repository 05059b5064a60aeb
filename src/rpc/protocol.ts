// The EMPO² host protocol's types and constants, generated from
// protocol/empo2-protocol.schema.json into ./generated/protocol.ts (npm run gen:protocol): one
// type per schema definition, same names, plus the schema's constants (PROTOCOL_VERSION,
// ErrorCodes, every enum as a list). Import them from here; what follows the re-export is only
// what the schema has no name for.
//
// Protocol fields are camelCase; records read from a run folder (metrics, trajectory summaries,
// episodes, configs) travel verbatim in the run folder's snake_case (docs/run-folder.md).

import type { InitializeResult, Tip } from './generated/protocol';

export * from './generated/protocol';

/** The host process (name, version, pid, device) as `initialize` reports it. */
export type ServerInfo = InitializeResult['serverInfo'];

/** The host's compute device, when the host reports it (protocol 1.1). */
export type DeviceInfo = NonNullable<ServerInfo['device']>;

/** Where a tip came from: run, iteration, episode, step, score (policy tips). */
export type TipProvenance = Tip['provenance'];
