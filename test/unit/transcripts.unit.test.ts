import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { RpcClient } from '../../src/rpc/client';
import { RpcError } from '../../src/rpc/errors';
import { Notifications, Requests, type NotificationType, type RequestType } from '../../src/rpc/methods';
import { FakeTransport } from '../builders/fakeTransport';
import { repoRoot, schemaErrors, schemaRequestMethods } from '../builders/schema';

// Replays recorded sessions with the real host through RpcClient: the shared example transcripts
// of protocol/examples/ and our own recording, test/fixtures/transcripts/
// (test/tools/recordTranscript.ts). Format (protocol/README.md, "Transcripts"): one JSON line per
// frame, `{"direction", "connection", "message"}`, or `raw` for a frame that is not JSON.
//
// 1. Every message is validated against the schema: host messages always; a client message
//    unless the host rejected it as malformed (answered it with an error).
// 2. For each connection, RpcClient sends every well-formed recorded request (same method and
//    params) to a fake transport that plays the host's recorded frames back in their order; it
//    must read the same results and errors, and dispatch the same notifications in the same order.

interface Line {
  readonly fromClient: boolean;
  readonly connection: number;
  /** Undefined for a frame that was not JSON (`raw`). */
  readonly message: unknown;
}

type JsonObject = Record<string, unknown>;

function readTranscript(file: string): Line[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as JsonObject)
    .map((entry) => ({
      fromClient: String(entry.direction).startsWith('client'),
      connection: typeof entry.connection === 'number' ? entry.connection : 1,
      message: 'raw' in entry ? undefined : entry.message,
    }));
}

function transcriptFiles(): string[] {
  const folders = [path.join(repoRoot, 'protocol', 'examples'), path.join(repoRoot, 'test', 'fixtures', 'transcripts')];
  return folders.filter(existsSync).flatMap((folder) =>
    readdirSync(folder)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .map((f) => path.join(folder, f)),
  );
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const byMethod = new Map<string, RequestType<unknown, unknown>>(
  Object.values(Requests).map((type) => [type.method, type as RequestType<unknown, unknown>]),
);
const responseDefinition = new Map(
  [...schemaRequestMethods()].map(([method, request]) => [method, request.replace(/Request$/, 'Response')]),
);

/** Host error responses by request id on one connection (to tell rejected client frames). */
function errorIds(lines: Line[], connection: number): Set<unknown> {
  return new Set(
    lines
      .filter((l) => !l.fromClient && l.connection === connection && isObject(l.message) && 'error' in l.message)
      .map((l) => (l.message as JsonObject).id),
  );
}

/** A request our client can send as recorded: a known method, and valid per the schema. */
function replayable(message: unknown): message is JsonObject {
  return (
    isObject(message) &&
    typeof message.method === 'string' &&
    'id' in message &&
    byMethod.has(message.method) &&
    schemaErrors('ClientMessage', message).length === 0
  );
}

describe('recorded transcripts', () => {
  const files = transcriptFiles();

  it('include the shared examples and our own recording of a training session', () => {
    assert.ok(
      files.some((f) => f.endsWith('training-session.jsonl')),
      files.join(', '),
    );
  });

  for (const file of files) {
    const name = path.relative(repoRoot, file);
    const lines = readTranscript(file);
    const connections = [...new Set(lines.map((l) => l.connection))];

    it(`${name}: every message matches the schema`, () => {
      for (const connection of connections) {
        const rejected = errorIds(lines, connection);
        const methods = new Map<unknown, string>();
        for (const { fromClient, message } of lines.filter((l) => l.connection === connection)) {
          if (fromClient) {
            if (isObject(message) && typeof message.method === 'string') {
              methods.set(message.id, message.method);
            }
            const errors = message === undefined ? ['not JSON'] : schemaErrors('ClientMessage', message);
            const id = isObject(message) ? message.id : null;
            assert.ok(
              errors.length === 0 || rejected.has(id) || rejected.has(null),
              `a malformed request the host accepted: ${JSON.stringify(message)?.slice(0, 200)}`,
            );
          } else if (isObject(message) && 'error' in message) {
            assert.deepEqual(schemaErrors('ErrorResponse', message), []);
          } else if (isObject(message) && 'result' in message) {
            const definition = responseDefinition.get(methods.get(message.id) ?? '') ?? 'SuccessResponse';
            assert.deepEqual(
              schemaErrors(definition, message),
              [],
              `${definition}: ${JSON.stringify(message).slice(0, 200)}`,
            );
          } else {
            assert.deepEqual(schemaErrors('Notification', message), [], JSON.stringify(message).slice(0, 200));
          }
        }
      }
    });

    it(`${name}: replays through RpcClient with the same results, errors and notifications`, async () => {
      for (const connection of connections) {
        const mine = lines.filter((l) => l.connection === connection);
        const transport = new FakeTransport();
        const client = new RpcClient(transport, { defaultTimeoutMs: 2_000 });
        const seen: string[] = [];
        for (const type of Object.values(Notifications)) {
          client.on(type as NotificationType<{ seq?: number }>, (params) => seen.push(`${type.method}#${params.seq}`));
        }
        const sentIds = new Map<unknown, number>();
        const outcomes: Array<{
          recorded: JsonObject;
          index: number;
          outcome: Promise<{ result?: unknown; error?: unknown }>;
        }> = [];
        for (const [index, { fromClient, message }] of mine.entries()) {
          if (fromClient) {
            if (replayable(message)) {
              const outcome = client.request(byMethod.get(message.method as string)!, message.params ?? {}).then(
                (result) => ({ result }),
                (error: unknown) => ({ error }),
              );
              const sent = transport.sent[transport.sent.length - 1];
              assert.deepEqual(
                { method: sent.method, params: sent.params },
                { method: message.method, params: message.params ?? {} },
              );
              sentIds.set(message.id, sent.id as number);
              outcomes.push({ recorded: message, index, outcome });
            }
            continue;
          }
          if (!isObject(message)) {
            continue;
          }
          if ('id' in message) {
            // A response: to a request we replayed (with our id), else not ours to deliver.
            // Ids may be reused once answered, so each mapping serves one response.
            if (sentIds.has(message.id)) {
              transport.receive({ ...message, id: sentIds.get(message.id) });
              sentIds.delete(message.id);
            }
          } else {
            transport.receive(message);
          }
        }
        for (const { recorded, index, outcome } of outcomes) {
          const answer = mine
            .slice(index + 1)
            .find((l) => !l.fromClient && isObject(l.message) && l.message.id === recorded.id)?.message as
            JsonObject | undefined;
          const got = await outcome;
          if (answer && 'error' in answer) {
            assert.ok(
              got.error instanceof RpcError,
              `${recorded.method} (id ${recorded.id}) fails as recorded: ${JSON.stringify(got).slice(0, 200)}`,
            );
            assert.equal(got.error.code, (answer.error as { code: number }).code);
          } else if (answer) {
            assert.deepEqual(got, { result: answer.result }, `${recorded.method} (id ${recorded.id})`);
          }
        }
        const expected = mine
          .filter(
            (l) => !l.fromClient && isObject(l.message) && !('id' in l.message) && typeof l.message.method === 'string',
          )
          .map((l) => {
            const m = l.message as { method: string; params: { seq?: number } };
            return `${m.method}#${m.params?.seq}`;
          });
        assert.deepEqual(seen, expected, `notifications on connection ${connection}`);
        client.dispose();
      }
    });
  }
});
