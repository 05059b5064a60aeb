import * as assert from 'node:assert/strict';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// A person opens VS Code with EMPO² Studio installed (from its .vsix) and looks around.

describe('EMPO² views, as a person sees them', () => {
  const workbench = new Workbench();

  it('shows the host state in the status bar', async () => {
    await workbench.statusBarItem('EMPO²: host stopped').waitFor();
  });

  it('opens the EMPO² container from the activity bar, with Trajectories and Memory Tips', async () => {
    await workbench.openViewContainer('EMPO²');
    await workbench.viewHeader('Trajectories').waitFor();
    await workbench.viewHeader('Memory Tips').waitFor();
    await workbench.webviewFrame('empo2-tips-panel'); // the webview paints a moment later
    await workbench.screenshot('01-empo2-container');
  });

  it('explains the empty Trajectories view and offers the next steps', async () => {
    await workbench.openViewContainer('EMPO²');
    const welcome = workbench.welcomeView();
    await welcome.filter({ hasText: 'No training runs yet' }).waitFor();
    const buttons = await welcome.locator('a.monaco-button, .monaco-button').allInnerTexts();
    assert.deepEqual(
      buttons.map((text) => text.trim()),
      ['Start Host', 'Open Run Folder'],
    );
    assert.match(await welcome.innerText(), /first-run walkthrough/);
  });

  it('opens the first-run walkthrough from the welcome text', async () => {
    await workbench.openViewContainer('EMPO²');
    await workbench.welcomeView().locator('a', { hasText: 'first-run walkthrough' }).click();
    const editor = workbench.page.locator('.part.editor');
    await editor.getByText('Train your first agent with EMPO²').first().waitFor();
    await editor.getByText('Start the training host').first().waitFor();
    // The step's markdown (media/walkthrough/start-host.md) renders in a webview of its own.
    await workbench.webviewFrame('text=drives a Python process');
    await workbench.screenshot('02-walkthrough');
    await workbench.runCommand('View: Close All Editors');
  });

  it('renders the Memory Tips webview from its embedded state', async () => {
    await workbench.openViewContainer('EMPO²');
    const frame = await workbench.webviewFrame('empo2-tips-panel');
    const panel = frame.locator('empo2-tips-panel');
    await panel.getByText('Memory tips appear here once a run is open.').waitFor();
    assert.equal(await panel.locator('vscode-button').count(), 2);
    await workbench.screenshot('03-memory-tips-panel');
  });

  it('loads the webview without breaking its Content Security Policy', async () => {
    await workbench.webviewFrame('empo2-tips-panel');
    const violations = e2eSession().consoleMessages.filter((line) => /Content Security Policy|Refused to/i.test(line));
    assert.deepEqual(violations, []);
  });

  it('runs a command from a button in the webview, through the message bridge', async () => {
    await workbench.openViewContainer('EMPO²');
    const frame = await workbench.webviewFrame('empo2-tips-panel');
    await frame.locator('empo2-tips-panel vscode-button', { hasText: 'Open Run Folder' }).click();
    // The button's request reached the extension, which ran Open Run Folder: its picker is open.
    await workbench.quickInputTitle().filter({ hasText: 'EMPO²: Open Run Folder' }).waitFor();
    await workbench.screenshot('04-open-run-folder-from-tips-panel');
    await workbench.closeQuickInput();
  });
});
