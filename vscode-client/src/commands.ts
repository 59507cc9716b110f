import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import type { ApiKeyStore } from './apiKey';
import { describe, type ServerConnection } from './client';
import type { ServerStatus } from './status';

/** What `pycapsule.generate` / `pycapsule.selfDebug` answer (at once: "started" with the run's id, or
 * why nothing started), and what `runAtCursor` returns once the run has ended. */
interface RunAnswer {
  status: string;
  message: string;
  attempts?: number;
  runId?: string;
}

export const SHOW_OUTPUT = 'pycapsule.showOutput';

/** The palette commands. The server's own commands need a target, so these supply the cursor's. */
export function registerCommands(
  server: ServerConnection,
  apiKeys: ApiKeyStore,
  output: vscode.OutputChannel,
): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('pycapsule.generateAtCursor', () => runAtCursor(server, 'pycapsule.generate')),
    vscode.commands.registerCommand('pycapsule.selfDebugAtCursor', () => runAtCursor(server, 'pycapsule.selfDebug')),
    vscode.commands.registerCommand('pycapsule.cancelAll', async () => {
      const client = server.running;
      if (client) {
        await client.sendRequest(ExecuteCommandRequest.type, { command: 'pycapsule.cancel', arguments: [] });
      }
    }),
    vscode.commands.registerCommand('pycapsule.setApiKey', async () => {
      if (await apiKeys.promptAndStore()) {
        await server.restartForNewKey();
        void vscode.window.showInformationMessage('PyCapsule: API key stored; the language server uses it now.');
      }
    }),
    vscode.commands.registerCommand('pycapsule.clearApiKey', async () => {
      await apiKeys.clear();
      await server.restartForNewKey();
      void vscode.window.showInformationMessage('PyCapsule: API key removed from the secret storage.');
    }),
    vscode.commands.registerCommand('pycapsule.restartServer', () => server.restart()),
    vscode.commands.registerCommand(SHOW_OUTPUT, () => output.show(true)),
  ];
}

async function runAtCursor(server: ServerConnection, command: string): Promise<RunAnswer | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showWarningMessage('PyCapsule: put the cursor in a Python function first.');
    return undefined;
  }
  const client = server.running;
  if (!client) {
    void vscode.window.showErrorMessage(server.startError ?? 'PyCapsule: the language server is not running.');
    return undefined;
  }
  const position = editor.selection.active;
  const target = {
    uri: editor.document.uri.toString(),
    position: { line: position.line, character: position.character },
  };
  try {
    // Listen before asking: a quick run may end before the answer arrives.
    const ends = new Map<string, ServerStatus>();
    const listening = server.onStatus((status) => {
      if (status.runId && status.outcome) {
        ends.set(status.runId, status);
      }
    });
    let answer = (await client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [target],
    })) as RunAnswer;
    listening.dispose();
    if (answer.status === 'started' && answer.runId) {
      const end = ends.get(answer.runId) ?? (await server.runEnd(answer.runId));
      answer = { status: end.outcome ?? 'error', message: end.message, attempts: end.attempts ?? 0, runId: answer.runId };
    }
    const show = answer.status === 'passed' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(`PyCapsule: ${answer.message}`);
    return answer;
  } catch (error) {
    void vscode.window.showErrorMessage(`PyCapsule: ${describe(error)}`);
    return undefined;
  }
}
