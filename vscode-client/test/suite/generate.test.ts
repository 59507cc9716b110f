// Runs in the extension host of real VS Code (code-server), against the real `pycapsule serve` and the
// scripted model server that tests/editors/test_vscode.py starts: a wrong first answer, then a right one.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activeApi, hoverText, lineOf, waitFor, workspaceFile } from './helpers';

const STUB = workspaceFile('stubs.py');
/** The body of the scripted second (correct) answer; see tests/editors/scripts.py. */
const CORRECT_BODY = 'return sum(int(digit) for digit in str(abs(n)))';
const GENERATE_TITLE = 'Generate & self-debug';

/** How many requests the scripted model server holds open right now (its test-only route). */
async function requestsHangingAtTheModel(): Promise<number> {
  const response = await fetch(`${process.env.OPENAI_BASE_URL}/_fake/hanging`);
  return ((await response.json()) as { hanging: number }).hanging;
}

async function codeActionsAt(uri: vscode.Uri, line: number): Promise<vscode.CodeAction[]> {
  const range = new vscode.Range(line, 4, line, 4);
  return (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, range)) ?? [];
}

describe('Generate & self-debug in VS Code', () => {
  let document: vscode.TextDocument;

  before(async () => {
    document = await vscode.workspace.openTextDocument(STUB);
    await vscode.window.showTextDocument(document);
    const api = await activeApi();
    assert.equal(api.startError(), undefined);
  });

  it('shows the endpoint the server uses and "idle" in the status bar once the server runs', async () => {
    const api = await activeApi();
    const endpoint = new URL(process.env.OPENAI_BASE_URL ?? 'http://unset');
    const expected = `PyCapsule: http://127.0.0.1:${endpoint.port}/v1 (model fake-coder) · idle`;
    await waitFor(`"${expected}" in the status bar`, () => api.statusText().includes(expected));
  });

  it('offers the action on a stub function', async () => {
    const actions = await waitFor('the code action', async () => {
      const found = await codeActionsAt(document.uri, lineOf(document, 'def digit_sum'));
      return found.some((action) => action.title === GENERATE_TITLE) ? found : undefined;
    });
    const action = actions.find((candidate) => candidate.title === GENERATE_TITLE);
    assert.equal(action?.command?.command, 'pycapsule.generate');
  });

  it('does not offer it on a function that has a body', async () => {
    const actions = await codeActionsAt(document.uri, lineOf(document, 'def already_written'));
    assert.deepEqual(actions.map((action) => action.title).filter((title) => title === GENERATE_TITLE), []);
  });

  it('applying it leaves the body whose doctests pass, after one failed attempt', async () => {
    const api = await activeApi();
    const action = (await codeActionsAt(document.uri, lineOf(document, 'def digit_sum'))).find(
      (candidate) => candidate.title === GENERATE_TITLE,
    );
    assert.ok(action?.command, 'no "Generate & self-debug" action');
    const answer = await vscode.commands.executeCommand<{ status: string; runId: string; message: string }>(
      action.command.command,
      ...((action.command.arguments ?? []) as unknown[]),
    );
    assert.equal(answer?.status, 'started', JSON.stringify(answer));
    const end = await waitFor('the end of the run', () =>
      api.statusHistory.find((status) => status.runId === answer.runId && status.outcome),
    );
    assert.equal(end.outcome, 'passed', JSON.stringify(end));
    assert.equal(end.attempts, 2);
    await waitFor('the edit in the buffer', () => document.getText().includes(CORRECT_BODY));
    assert.ok(!document.getText().includes('return len(str(n))'), 'the failed first body was left in the file');
    assert.ok(await document.save(), 'saving the generated file failed');

    const generating = api.statusHistory.filter((status) => status.state === 'generating' && status.attempt !== null);
    assert.deepEqual(
      [...new Set(generating.map((status) => `${status.attempt}/${status.maxAttempts}`))],
      ['1/3', '2/3'],
    );
    await waitFor('an idle status bar after the run', () => api.statusText().includes('· idle'));
  });

  it('no longer offers generation once the function has a body', async () => {
    const actions = await codeActionsAt(document.uri, lineOf(document, 'def digit_sum'));
    assert.ok(!actions.some((action) => action.title === GENERATE_TITLE));
  });

  it('hover on the name shows the attempt history', async () => {
    const line = lineOf(document, 'def digit_sum');
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
      'vscode.executeHoverProvider',
      document.uri,
      new vscode.Position(line, 'def digit'.length),
    );
    const text = hoverText(hovers ?? []);
    assert.match(text, /attempts at\*\* `digit_sum`/);
    assert.match(text, /\*\*passed\*\* \(attempt 2/);
    assert.match(text, /\(attempt 1, generate\)/);
  });

  it('"Cancel all generations" from the palette stops a run started at the cursor', async () => {
    const api = await activeApi();
    const editor = await vscode.window.showTextDocument(document);
    const line = lineOf(document, 'def slow_stub');
    editor.selection = new vscode.Selection(line, 4, line, 4);
    const before = document.getText();

    const run = vscode.commands.executeCommand<{ status: string } | undefined>('pycapsule.generateAtCursor');
    await waitFor('the slow run to start', () =>
      api.statusHistory.some((status) => status.state === 'generating' && status.name === 'slow_stub'),
    );
    // cancelling while the model is being asked is the case that matters (an HTTP request in flight)
    await waitFor('the slow run to ask the model', async () => (await requestsHangingAtTheModel()) > 0);
    await vscode.commands.executeCommand('pycapsule.cancelAll');
    const answer = await run;

    assert.equal(answer?.status, 'cancelled', JSON.stringify(answer));
    assert.equal(document.getText(), before);
  });
});
