import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { PycapsuleApi } from '../../src/extension';

export const EXTENSION_ID = 'pycapsule.pycapsule';

export async function activeApi(): Promise<PycapsuleApi> {
  const extension = vscode.extensions.getExtension<PycapsuleApi>(EXTENSION_ID);
  assert.ok(extension, `extension ${EXTENSION_ID} is not installed`);
  const api = await extension.activate();
  await api.started;
  return api;
}

export function workspaceFile(name: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the test workspace folder is not open');
  return vscode.Uri.joinPath(folder.uri, name);
}

/** Polls `condition` until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, condition: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function lineOf(document: vscode.TextDocument, text: string): number {
  const offset = document.getText().indexOf(text);
  assert.ok(offset >= 0, `"${text}" is not in ${document.uri.fsPath}`);
  return document.positionAt(offset).line;
}

export function hoverText(hovers: vscode.Hover[]): string {
  return hovers
    .flatMap((hover) => hover.contents)
    .map((content) => (typeof content === 'string' ? content : content.value))
    .join('\n');
}
