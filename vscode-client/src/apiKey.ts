import * as vscode from 'vscode';

const SECRET_NAME = 'pycapsule.apiKey';

/** The model endpoint's API key, kept in VS Code's secret storage and never in settings.json. */
export class ApiKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(): Thenable<string | undefined> {
    return this.secrets.get(SECRET_NAME);
  }

  /** Asks for the key; true when a new key was stored. */
  async promptAndStore(): Promise<boolean> {
    const key = await vscode.window.showInputBox({
      title: 'PyCapsule: API key of the model endpoint',
      prompt: 'Stored in VS Code\'s secret storage and passed to the language server in its environment only.',
      password: true,
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim() ? undefined : 'The key cannot be empty.'),
    });
    if (key === undefined) {
      return false;
    }
    await this.secrets.store(SECRET_NAME, key.trim());
    return true;
  }

  async clear(): Promise<void> {
    await this.secrets.delete(SECRET_NAME);
  }

  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((event) => {
      if (event.key === SECRET_NAME) {
        listener();
      }
    });
  }
}
