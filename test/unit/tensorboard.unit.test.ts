import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  lacksTensorBoard,
  noMirrorMessage,
  notInstalledMessage,
  servingUrl,
  startTensorBoardProcess,
  TensorBoardError,
  TensorBoardServers,
  tensorBoardArgs,
  type RunningTensorBoard,
} from '../../src/tensorboard/tensorboardServer';

// Open in TensorBoard (src/tensorboard/): the serving line, one TensorBoard per log folder reused
// and restarted when it died, the sentences for a run without a mirror and a Python without
// TensorBoard; then the real TensorBoard of the project's venv serving a run's event files.

const repoRoot = path.resolve(__dirname, '../../../..');
const venvPython = path.join(repoRoot, '.venv', 'bin', 'python');

/** A start that hands out fake servers on ports 7001, 7002, ... and records what it did. */
function fakeStarts() {
  const started: Array<{ logdir: string; url: string; alive: boolean; stopped: boolean }> = [];
  const start = async (logdir: string): Promise<RunningTensorBoard> => {
    const server = { logdir, url: `http://127.0.0.1:${7001 + started.length}/`, alive: true, stopped: false };
    started.push(server);
    return {
      url: server.url,
      alive: () => server.alive,
      stop: () => {
        server.stopped = true;
        server.alive = false;
      },
    };
  };
  return { started, start };
}

/** An executable that prints `output` to stderr and then sleeps (`exit` undefined) or exits. */
function fakePython(dir: string, output: string, exit?: number): string {
  const file = path.join(dir, `python-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    file,
    `#!/bin/sh\nprintf '%s\\n' '${output}' >&2\n${exit === undefined ? 'exec sleep 30' : `exit ${exit}`}\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

describe('Open in TensorBoard', () => {
  it('reads the address TensorBoard serves at from its start line, and nothing from other lines', () => {
    assert.equal(
      servingUrl('TensorBoard 2.21.0 at http://127.0.0.1:40123/ (Press CTRL+C to quit)\n'),
      'http://127.0.0.1:40123/',
    );
    assert.equal(servingUrl('W1207 something\nTensorBoard 2.21.0 at http://127.0.0.1:5/'), 'http://127.0.0.1:5/');
    assert.equal(servingUrl('TensorFlow installation not found - running with reduced feature set.\n'), undefined);
    assert.equal(
      servingUrl('TensorBoard 2.21.0 at http://127.0.0.1:401'),
      undefined,
      'half a line is not an address yet',
    );
  });

  it('starts TensorBoard from the given Python on loopback, on a port the system picks', () => {
    assert.deepEqual(tensorBoardArgs('/runs/r1/tensorboard'), [
      '-m',
      'tensorboard.main',
      '--logdir',
      '/runs/r1/tensorboard',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
    ]);
  });

  it('says in one sentence what to do when a run has no mirror, or TensorBoard is not installed', () => {
    assert.equal(
      noMirrorMessage('builtin-3'),
      'EMPO²: run builtin-3 mirrors to no TensorBoard (its folder has no tensorboard/); train with report_to=tensorboard.',
    );
    assert.equal(
      notInstalledMessage('/p/.venv/bin/python', '/p'),
      'EMPO²: TensorBoard is not installed in /p/.venv/bin/python; install the trackers extra with: /p/.venv/bin/python -m pip install --require-hashes -r /p/host/requirements-trackers.lock',
    );
    assert.ok(lacksTensorBoard('/usr/bin/python3: No module named tensorboard\n'));
    assert.ok(lacksTensorBoard("ModuleNotFoundError: No module named 'tensorboard'"));
    assert.ok(!lacksTensorBoard('OSError: [Errno 98] Address already in use'));
  });

  it('reuses one TensorBoard per log folder, started once even when two Opens race', async () => {
    const { started, start } = fakeStarts();
    const servers = new TensorBoardServers(start);
    const [a, b] = await Promise.all([servers.open('/runs/r1/tensorboard'), servers.open('/runs/r1/tensorboard/')]);
    assert.equal(a, 'http://127.0.0.1:7001/');
    assert.equal(b, a);
    assert.equal(await servers.open('/runs/r1/tensorboard'), a);
    assert.equal(await servers.open('/runs'), 'http://127.0.0.1:7002/', 'another folder, another TensorBoard');
    assert.deepEqual(
      started.map((s) => s.logdir),
      ['/runs/r1/tensorboard', '/runs'],
    );
    servers.dispose();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      started.map((s) => s.stopped),
      [true, true],
      'the window stops every TensorBoard it started',
    );
  });

  it('starts TensorBoard again when the one it had died, and tries again after a failed start', async () => {
    const { started, start } = fakeStarts();
    let fail = true;
    const servers = new TensorBoardServers(async (logdir) => {
      if (fail) {
        fail = false;
        throw new TensorBoardError('EMPO²: TensorBoard did not start.');
      }
      return start(logdir);
    });
    await assert.rejects(servers.open('/runs/r1/tensorboard'), /did not start/);
    assert.equal(servers.size, 0, 'a failed start is not kept');
    assert.equal(await servers.open('/runs/r1/tensorboard'), 'http://127.0.0.1:7001/');
    started[0].alive = false; // killed from outside
    assert.equal(await servers.open('/runs/r1/tensorboard'), 'http://127.0.0.1:7002/');
    assert.equal(servers.size, 1);
    servers.dispose();
  });

  describe('the process', function () {
    this.timeout(120_000);
    let dir: string;
    before(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'empo2-tensorboard-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('resolves with the address a (fake) TensorBoard prints, and stop() ends it', async () => {
      const running = await startTensorBoardProcess(
        fakePython(dir, 'TensorBoard 2.21.0 at http://127.0.0.1:40123/ (Press CTRL+C to quit)'),
        '/p',
        dir,
        10_000,
      );
      assert.equal(running.url, 'http://127.0.0.1:40123/');
      assert.ok(running.alive());
      running.stop();
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok(!running.alive());
    });

    it('rejects with the install command when the Python has no TensorBoard', async () => {
      const error = await startTensorBoardProcess(
        fakePython(dir, '/p/.venv/bin/python: No module named tensorboard', 1),
        '/p',
        dir,
        10_000,
      ).catch((e: unknown) => e);
      assert.ok(error instanceof TensorBoardError);
      assert.ok(error.notInstalled);
      assert.match(
        error.message,
        /is not installed in .*; install the trackers extra with: .* -m pip install --require-hashes -r \/p\/host\/requirements-trackers\.lock$/,
      );
    });

    it('rejects with the last line of a TensorBoard that stopped before it served', async () => {
      const error = await startTensorBoardProcess(
        fakePython(dir, 'OSError: [Errno 98] Address already in use', 2),
        '/p',
        dir,
        10_000,
      ).catch((e: unknown) => e);
      assert.ok(error instanceof TensorBoardError);
      assert.ok(!error.notInstalled);
      assert.match(error.message, /stopped before it served: OSError: \[Errno 98\] Address already in use$/);
    });

    it("serves a run's mirrored scalars from the venv's real TensorBoard, reused, restarted after a kill, stopped on dispose", async () => {
      // Event files as report_to=tensorboard writes them (the host's own TensorBoard sink).
      const run = path.join(dir, 'runs', 'r1');
      execFileSync(
        venvPython,
        [
          '-c',
          [
            'import sys; from pathlib import Path',
            'from empo2.trackers.sinks import TensorBoardSink, TrackerRun',
            'sink = TensorBoardSink(); sink.open(TrackerRun(name="r1", folder=Path(sys.argv[1]), config={"seed": 1}, group="r1"))',
            'sink.metrics({"iteration": 1, "env_steps": 64, "train/return_mean": 0.25}, 1, 64)',
            'sink.metrics({"iteration": 2, "env_steps": 128, "train/return_mean": 0.5}, 2, 128)',
            'sink.close()',
          ].join('\n'),
          run,
        ],
        { env: { ...process.env, PYTHONPATH: path.join(repoRoot, 'host') }, timeout: 100_000 },
      );
      const logdir = path.join(run, 'tensorboard');
      const started: RunningTensorBoard[] = [];
      const servers = new TensorBoardServers(async (folder) => {
        const running = await startTensorBoardProcess(venvPython, repoRoot, folder);
        started.push(running);
        return running;
      });
      try {
        const url = await servers.open(logdir);
        assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
        assert.notEqual(url, 'http://127.0.0.1:0/');
        assert.equal((await fetch(url)).status, 200, 'the page responds');
        const scalars = await waitForScalars(url);
        assert.deepEqual(
          scalars.map((point) => point[2]),
          [0.25, 0.5],
        );
        assert.deepEqual(
          scalars.map((point) => point[1]),
          [1, 2],
        );
        assert.equal(await servers.open(logdir), url, 'a second Open reuses it');
        started[0].stop();
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const again = await servers.open(logdir);
        assert.equal(started.length, 2, 'a killed TensorBoard is started again');
        assert.equal((await fetch(again)).status, 200);
      } finally {
        servers.dispose();
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.deepEqual(
        started.map((s) => s.alive()),
        [false, false],
        'disposing stops it',
      );
    });
  });
});

/** `[wall_time, step, value]` of train/return_mean, once TensorBoard has read the event files. */
async function waitForScalars(url: string): Promise<Array<[number, number, number]>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(
      `${url}data/plugin/scalars/scalars?run=.&tag=${encodeURIComponent('train/return_mean')}`,
    );
    if (response.ok) {
      return (await response.json()) as Array<[number, number, number]>;
    }
    if (Date.now() > deadline) {
      throw new Error(`TensorBoard at ${url} served no train/return_mean: ${response.status} ${await response.text()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
