import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

// src/rpc/generated/protocol.ts is generated from protocol/empo2-protocol.schema.json and checked
// in; this fails while it is stale (the schema changed and nobody ran `npm run gen:protocol`).

const root = path.resolve(__dirname, '../../../..');

describe('generated protocol types', () => {
  it('match protocol/empo2-protocol.schema.json', function () {
    this.timeout(60_000); // loads the generator and prettier
    const check = spawnSync(process.execPath, [path.join(root, 'scripts', 'gen-protocol.mjs'), '--check'], {
      cwd: root,
      encoding: 'utf8',
    });
    assert.equal(check.status, 0, check.stderr || check.stdout);
  });

  it('keep every field of each object the schema defines, whatever the field is called', () => {
    // The generator strips keywords such as `title` from the schema; a field of that name (a
    // policy's `title`) is data, and its type must keep it.
    const schema = JSON.parse(readFileSync(path.join(root, 'protocol', 'empo2-protocol.schema.json'), 'utf8')) as {
      $defs: Record<string, { properties?: Record<string, unknown> }>;
    };
    const generated = readFileSync(path.join(root, 'src', 'rpc', 'generated', 'protocol.ts'), 'utf8');
    const missing: string[] = [];
    let checked = 0;
    for (const [name, def] of Object.entries(schema.$defs)) {
      const start = generated.indexOf(`export interface ${name} {`);
      if (!def.properties || start < 0) {
        continue;
      }
      const body = generated.slice(start, generated.indexOf('\n}\n', start));
      for (const field of Object.keys(def.properties)) {
        checked += 1;
        if (!new RegExp(`^\\s+(readonly )?${field.replace(/[$]/g, '\\$')}\\??:`, 'm').test(body)) {
          missing.push(`${name}.${field}`);
        }
      }
    }
    assert.ok(checked > 100, `only ${checked} fields found to check`);
    assert.deepEqual(missing, []);
  });
});
