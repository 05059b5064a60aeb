import * as assert from 'node:assert/strict';
import { Requests } from '../../src/rpc/methods';
import type { MemoryAddParams, MemoryUpdateParams } from '../../src/rpc/protocol';
import { RunsModel } from '../../src/runs/runsModel';
import { accountName, PersonName, type Authentication } from '../../src/tips/personName';
import { TipsModel } from '../../src/tips/tipsModel';
import { FakeHost } from '../builders/fakeHost';
import { aRunInfo, aTip } from '../builders/protocol';

// VS Code's sign-in cannot run outside VS Code, so a stand-in for `vscode.authentication` plays
// the signed-in accounts: sessions by provider and scope set, as the real providers match them.
function signedIn(sessions: Record<string, string>, failing: readonly string[] = []) {
  const asked: Array<{ provider: string; scopes: string; silent: boolean }> = [];
  let fire: (event: { provider: { id: string } }) => void = () => undefined;
  const auth: Authentication = {
    getSession: async (provider, scopes, options) => {
      asked.push({ provider, scopes: scopes.join(' '), silent: options.silent });
      if (failing.includes(provider)) {
        throw new Error(`No authentication provider '${provider}' is currently registered.`);
      }
      const label = sessions[`${provider}:${scopes.join(' ')}`];
      return label ? { account: { label } } : undefined;
    },
    onDidChangeSessions: (listener) => {
      fire = listener;
      return { dispose: () => (fire = () => undefined) };
    },
  };
  return { auth, asked, sessions, changed: (provider: string) => fire({ provider: { id: provider } }) };
}

describe("who a person's edits are by", () => {
  it("the GitHub account's name, asked for silently (never a prompt)", async () => {
    const { auth, asked } = signedIn({ 'github:user:email': 'ada' });
    assert.equal(await accountName(auth), 'ada');
    assert.ok(asked.every((a) => a.silent));
  });

  it('the Microsoft account when there is no GitHub one, even where a provider is missing', async () => {
    const { auth } = signedIn({ 'microsoft:openid profile': 'ada@example.org' }, ['github']);
    assert.equal(await accountName(auth), 'ada@example.org');
  });

  it('nobody named when no one is signed in: the host then records "you"', async () => {
    const { auth, asked } = signedIn({}, ['microsoft']);
    assert.equal(await accountName(auth), undefined);
    assert.ok(asked.length > 1, 'every provider was asked');
  });

  it('follows a sign-in while the extension runs', async () => {
    const account = signedIn({});
    const person = new PersonName(account.auth);
    assert.equal(await person.current(), undefined);
    account.sessions['github:read:user'] = 'grace';
    account.changed('github');
    assert.equal(await person.current(), 'grace');
    person.dispose();
  });

  it("is sent as the author of a person's add, edit and delete", async () => {
    const sent: Array<string | undefined> = [];
    const host = new FakeHost()
      .handle(Requests.runList, () => ({ runs: [aRunInfo()], roots: ['/home/ada/project/.empo2/runs'] }))
      .handle(Requests.runStatus, () => ({ run: null }))
      .handle(Requests.memoryList, () => ({ items: [aTip()], nextCursor: null, total: 1 }))
      .handle(
        Requests.memoryAdd,
        (params: MemoryAddParams) => (
          sent.push(params.author),
          { tip: aTip({ id: 't000002', author: params.author ?? 'you' }) }
        ),
      )
      .handle(
        Requests.memoryUpdate,
        (params: MemoryUpdateParams) => (sent.push(params.author), { tip: aTip({ version: 2, text: params.text }) }),
      )
      .handle(
        Requests.memoryDelete,
        (params) => (sent.push(params.author), { tip: aTip({ version: 3, deleted: true }) }),
      );
    const runs = new RunsModel(host);
    const person = new PersonName(signedIn({ 'github:user:email': 'ada' }).auth);
    const model = new TipsModel(host, runs, () => person.current());
    await runs.reload();
    await model.whenLoaded();
    await model.add('power-device/0', 'the lamp is in the office');
    await model.update({ tipId: 't000001', text: 'edited', expectedVersion: 1 });
    await model.delete({ tipId: 't000001', expectedVersion: 2 });
    assert.deepEqual(sent, ['ada', 'ada', 'ada']);
    person.dispose();
  });
});
