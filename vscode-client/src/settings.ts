import * as vscode from 'vscode';

export const SECTION = 'pycapsule';

/** Settings only this extension reads; the server would warn about them as unknown keys. */
const CLIENT_ONLY_KEYS = new Set(['server', 'trace']);

export interface LaunchSettings {
  /** A Python with pycapsule installed; empty means use `command`. */
  python: string;
  /** The pycapsule executable. */
  command: string;
}

export function launchSettings(): LaunchSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return {
    python: (config.get<string>('server.python') ?? '').trim(),
    command: (config.get<string>('server.command') ?? '').trim() || 'pycapsule',
  };
}

/** The server's part of a `pycapsule` settings object: client-only keys and unset (null) values dropped. */
export function serverSettings(section: unknown): Record<string, unknown> {
  if (typeof section !== 'object' || section === null) {
    return {};
  }
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(section)) {
    if (!CLIENT_ONLY_KEYS.has(key) && value !== null && value !== undefined && typeof value !== 'function') {
      values[key] = value;
    }
  }
  return values;
}

export function currentServerSettings(): Record<string, unknown> {
  // A plain copy: WorkspaceConfiguration also carries methods (get, has, inspect, update).
  return serverSettings(JSON.parse(JSON.stringify(vscode.workspace.getConfiguration(SECTION))));
}

/** The environment variable the server reads the API key from. */
export function apiKeyVariable(): string {
  const configured = vscode.workspace.getConfiguration(SECTION).get<string | null>('apiKeyEnv');
  return configured?.trim() || 'OPENAI_API_KEY';
}

/** What the status bar calls the model: the configured name, or where the server will find one. */
export function modelLabel(env: NodeJS.ProcessEnv = process.env): string {
  const config = vscode.workspace.getConfiguration(SECTION);
  const model = config.get<string | null>('model')?.trim() || env.PYCAPSULE_MODEL?.trim();
  if (model) {
    return model;
  }
  const endpoint = config.get<string | null>('baseUrl')?.trim() || env.OPENAI_BASE_URL?.trim();
  return endpoint ? 'endpoint model' : 'embedded model';
}
