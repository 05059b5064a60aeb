import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

// src/rpc/generated/protocol.ts is generated from protocol/empo2-protocol.schema.json and checked
// in; this fails while it is stale (the schema changed and nobody ran `npm run gen:protocol`).

const root = path.resolve(__dirname, '../../../..');

describe('generated protocol types', () => {
  it('match protocol/empo2-protocol.schema.json', function () {
    this.timeout(60_000); // loads the generator and prettier
    const check = spawnSync(process.execPath, [path.join(root, 'scripts', 'gen-protocol.mjs'), '--check'], { cwd: root, encoding: 'utf8' });
    assert.equal(check.status, 0, check.stderr || check.stdout);
  });
});
