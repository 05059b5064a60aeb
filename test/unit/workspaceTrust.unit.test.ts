import * as assert from 'node:assert/strict';
import { CONNECT_REMOTE, MANAGE_TRUST, WorkspaceTrustGuard } from '../../src/host/workspaceTrust';

// Fakes stand in for vscode.workspace, vscode.window and vscode.commands, which exist only
// inside VS Code.

function aGuard(fields: { isTrusted?: boolean; answer?: string } = {}) {
  const { isTrusted, answer } = { isTrusted: false, answer: undefined, ...fields };
  const warnings: Array<{ message: string; items: string[] }> = [];
  const executed: string[] = [];
  const guard = new WorkspaceTrustGuard(
    { isTrusted },
    {
      showWarningMessage: async (message: string, ...items: string[]) => {
        warnings.push({ message, items });
        return answer;
      },
    },
    {
      executeCommand: async (command: string) => {
        executed.push(command);
        return undefined;
      },
    },
    'connect-remote',
  );
  return { guard, warnings, executed };
}

describe('workspace trust guard', () => {
  it('lets a trusted workspace start a host without asking', async () => {
    const { guard, warnings } = aGuard({ isTrusted: true });
    assert.equal(await guard.ensureTrusted('Starting the training host'), true);
    assert.deepEqual(warnings, []);
  });

  it('refuses in Restricted Mode and says why and what to do', async () => {
    const { guard, warnings, executed } = aGuard();
    assert.equal(await guard.ensureTrusted('Starting the training host'), false);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0].message, /^EMPO²: Starting the training host runs this workspace's Python code/);
    assert.match(warnings[0].message, /trusted workspace/);
    assert.deepEqual(warnings[0].items, [MANAGE_TRUST, CONNECT_REMOTE]);
    assert.deepEqual(executed, []);
  });

  it('opens Workspace Trust when asked', async () => {
    const { guard, executed } = aGuard({ answer: MANAGE_TRUST });
    assert.equal(await guard.ensureTrusted('Starting the training host'), false);
    assert.deepEqual(executed, ['workbench.trust.manage']);
  });

  it('offers a remote host instead', async () => {
    const { guard, executed } = aGuard({ answer: CONNECT_REMOTE });
    await guard.ensureTrusted('Starting a training run');
    assert.deepEqual(executed, ['connect-remote']);
  });
});
