import * as vscode from 'vscode';

/** Params of the server's `pycapsule/status` notification. */
export interface ServerStatus {
  state: 'idle' | 'generating' | 'error';
  attempt: number | null;
  maxAttempts: number | null;
  name: string | null;
  message: string;
  running?: number;
  /** The run this notification is about; its last one also carries `outcome` and `attempts`. */
  runId?: string | null;
  outcome?: string | null;
  attempts?: number | null;
}

interface Shown {
  icon: string;
  state: string;
  tooltip: string;
  isError: boolean;
}

/** One status-bar item: the model and what the server is doing (idle, generating n/N, error). */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('pycapsule.status', vscode.StatusBarAlignment.Right, 100);
  private model = '';
  private shown: Shown = { icon: '$(loading~spin)', state: 'starting', tooltip: '', isError: false };

  constructor(showOutputCommand: string) {
    this.item.name = 'PyCapsule';
    this.item.command = showOutputCommand;
    this.starting();
    this.item.show();
  }

  get text(): string {
    return this.item.text;
  }

  setModel(model: string): void {
    this.model = model;
    this.render();
  }

  starting(): void {
    this.show({ icon: '$(loading~spin)', state: 'starting', tooltip: 'Starting the language server.', isError: false });
  }

  failed(reason: string): void {
    this.show({ icon: '$(error)', state: 'error', tooltip: reason, isError: true });
  }

  update(status: ServerStatus): void {
    if (status.state === 'generating') {
      const progress = status.attempt && status.maxAttempts ? ` ${status.attempt}/${status.maxAttempts}` : '';
      this.show({ icon: '$(sync~spin)', state: `generating${progress}`, tooltip: status.message, isError: false });
    } else if (status.state === 'error') {
      this.failed(status.message);
    } else {
      this.show({ icon: '$(sparkle)', state: 'idle', tooltip: status.message || 'Ready.', isError: false });
    }
  }

  private show(shown: Shown): void {
    this.shown = shown;
    this.render();
  }

  private render(): void {
    const { icon, state, tooltip, isError } = this.shown;
    this.item.text = `${icon} PyCapsule: ${this.model} · ${state}`;
    this.item.tooltip = `${tooltip}\nClick to show the PyCapsule output.`;
    this.item.backgroundColor = isError ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
