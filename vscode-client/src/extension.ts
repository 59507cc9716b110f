import * as vscode from 'vscode';
import { ApiKeyStore } from './apiKey';
import { ServerConnection } from './client';
import { registerCommands, SHOW_OUTPUT } from './commands';
import { modelLabel, SECTION } from './settings';
import { type ServerStatus, StatusBar } from './status';

/** What the extension returns from `activate`: used by its tests and by other extensions. */
export interface PycapsuleApi {
  /** Resolves once the first start attempt has ended (started or failed). */
  readonly started: Promise<void>;
  readonly statusText: () => string;
  readonly startError: () => string | undefined;
  /** Every `pycapsule/status` notification received since activation, oldest first. */
  readonly statusHistory: readonly ServerStatus[];
}

let connection: ServerConnection | undefined;

export function activate(context: vscode.ExtensionContext): PycapsuleApi {
  const output = vscode.window.createOutputChannel('PyCapsule');
  const statusBar = new StatusBar(SHOW_OUTPUT);
  statusBar.setModel(modelLabel());
  const apiKeys = new ApiKeyStore(context.secrets);
  const server = new ServerConnection(output, statusBar, apiKeys);
  connection = server;
  const statusHistory: ServerStatus[] = [];
  server.onStatus((status) => statusHistory.push(status));

  context.subscriptions.push(
    output,
    statusBar,
    server,
    ...registerCommands(server, apiKeys, output),
    // The key reaches the server only through its environment, so a new key needs a new process
    // (also when another window changed it).
    apiKeys.onDidChange(() => void server.restartForNewKey()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) {
        statusBar.setModel(modelLabel());
      }
      if (event.affectsConfiguration(`${SECTION}.server`) || event.affectsConfiguration(`${SECTION}.apiKeyEnv`)) {
        void server.restart();
      }
    }),
  );

  return {
    started: server.start(),
    statusText: () => statusBar.text,
    startError: () => server.startError,
    statusHistory,
  };
}

export async function deactivate(): Promise<void> {
  await connection?.stop();
  connection = undefined;
}
