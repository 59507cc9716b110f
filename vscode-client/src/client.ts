import * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions, State } from 'vscode-languageclient/node';
import type { ApiKeyStore } from './apiKey';
import { executable, launchFor, preflight } from './serverLaunch';
import { apiKeyVariable, currentServerSettings, launchSettings, SECTION, serverSettings } from './settings';
import type { ServerStatus, StatusBar } from './status';

const STATUS_NOTIFICATION = 'pycapsule/status';

/** The language client for `pycapsule serve`: started, restarted with new secrets, stopped. */
export class ServerConnection implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private lastError: string | undefined;
  private readonly statusListeners: ((status: ServerStatus) => void)[] = [];
  /** The API key the running server got in its environment (compared, never shown). */
  private startedWithKey: string | undefined;
  /** Starts and stops run one after another: settings changes can ask for several restarts at once. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly statusBar: StatusBar,
    private readonly apiKeys: ApiKeyStore,
  ) {}

  /** The sentence shown when the server last failed to start, if it did. */
  get startError(): string | undefined {
    return this.lastError;
  }

  get running(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  onStatus(listener: (status: ServerStatus) => void): vscode.Disposable {
    this.statusListeners.push(listener);
    return new vscode.Disposable(() => {
      const index = this.statusListeners.indexOf(listener);
      if (index >= 0) {
        this.statusListeners.splice(index, 1);
      }
    });
  }

  /** The end of run `runId`: the last `pycapsule/status` of that run carries its outcome. */
  runEnd(runId: string): Promise<ServerStatus> {
    return new Promise((resolve) => {
      const subscription = this.onStatus((status) => {
        if (status.runId === runId && status.outcome) {
          subscription.dispose();
          resolve(status);
        }
      });
    });
  }

  start(): Promise<void> {
    return this.enqueue(() => this.startNow());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.stopNow());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.stopNow();
      await this.startNow();
    });
  }

  dispose(): void {
    void this.stop();
  }

  /** Restarts when the stored key is not the one the server has: it reads the key only at start. */
  restartForNewKey(): Promise<void> {
    return this.enqueue(async () => {
      if ((await this.apiKeys.get()) !== this.startedWithKey) {
        await this.stopNow();
        await this.startNow();
      }
    });
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  private async startNow(): Promise<void> {
    this.lastError = undefined;
    this.statusBar.starting();
    const launch = launchFor(launchSettings());
    const env = await this.serverEnvironment();
    const problem = await preflight(launch, env);
    if (problem) {
      this.fail(problem);
      return;
    }
    const client = new LanguageClient('pycapsule', 'PyCapsule', executable(launch, env), this.clientOptions());
    client.onNotification(STATUS_NOTIFICATION, (status: ServerStatus) => {
      this.statusBar.update(status);
      this.statusListeners.forEach((listener) => listener(status));
    });
    client.onDidChangeState((event) => {
      if (this.client !== client) {
        return; // a client this connection has already replaced
      }
      if (event.newState === State.Running) {
        // also after the language client restarted a crashed server by itself
        this.statusBar.update({ state: 'idle', attempt: null, maxAttempts: null, name: null, message: 'Ready.' });
      } else if (event.newState === State.Stopped && !this.lastError) {
        this.statusBar.failed('The language server stopped; run "PyCapsule: Restart language server".');
      }
    });
    this.client = client;
    this.output.appendLine(`Starting "${launch.display} serve".`);
    try {
      await client.start();
    } catch (error) {
      this.fail(`PyCapsule's language server "${launch.display} serve" failed to start: ${describe(error)}`);
    }
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    // dispose, not just stop: each start makes a new client, so this one also drops its listeners.
    await client?.dispose().catch((error: unknown) => this.output.appendLine(`Stopping the server: ${describe(error)}`));
  }

  private fail(message: string): void {
    this.lastError = message;
    this.output.appendLine(message);
    this.statusBar.failed(message);
    void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output').then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.server`);
      } else if (choice === 'Show Output') {
        this.output.show();
      }
    });
  }

  /** The editor's environment plus the stored API key, in the variable the server reads it from. */
  private async serverEnvironment(): Promise<NodeJS.ProcessEnv> {
    const env = { ...process.env };
    const key = await this.apiKeys.get();
    this.startedWithKey = key;
    if (key) {
      env[apiKeyVariable()] = key;
    }
    return env;
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      outputChannel: this.output,
      initializationOptions: currentServerSettings(),
      synchronize: { configurationSection: SECTION },
      middleware: {
        workspace: {
          // The server asks for the whole "pycapsule" section; leave out what only this extension reads.
          configuration: async (params, token, next) => {
            const answer = await next(params, token);
            return Array.isArray(answer) ? answer.map((section) => serverSettings(section)) : answer;
          },
        },
      },
    };
  }
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
