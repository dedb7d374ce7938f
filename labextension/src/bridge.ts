import type { ICodeCellModel } from '@jupyterlab/cells';
import type { PartialJSONObject } from '@lumino/coreutils';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

import { cellOutcome } from './outcome';
import { IHostHandler, IHostRequest } from './session';

/** How often to look again whether the user's cells are still running. */
const POLL_MS = 100;
/** Run anyway after waiting this long for the user's cells (they may run forever). */
const MAX_WAIT_MS = 120000;

/**
 * The co-pilot's hands in the open notebook: inserts its cells after its last one, runs them
 * in the notebook's kernel once the user's cells are done, and deletes only its own cells.
 */
export class NotebookBridge implements IHostHandler {
  /** `activate` brings the notebook to the front (the shell's activateById). */
  constructor(
    readonly tracker: INotebookTracker,
    readonly activate: (panel: NotebookPanel) => void = () => undefined
  ) {}

  hasStep(path: string, stepId: string): boolean {
    const panel = this._find(path);
    return !!panel && stepCellIndex(panel, stepId) >= 0;
  }

  async selectStep(path: string, stepId: string): Promise<boolean> {
    const panel = this._find(path);
    const index = panel ? stepCellIndex(panel, stepId) : -1;
    if (!panel || index < 0) {
      return false;
    }
    const notebook = panel.content;
    this.activate(panel);
    notebook.mode = 'command';
    notebook.deselectAll();
    notebook.activeCellIndex = index;
    await notebook.scrollToItem(index, 'center');
    return true;
  }

  async handle(request: IHostRequest, path: string): Promise<{ [key: string]: unknown }> {
    const panel = this._find(path);
    if (!panel) {
      throw new Error(`the notebook ${path} is not open`);
    }
    switch (request.type) {
      case 'run_cell':
        return this._run(panel, request);
      case 'insert_markdown':
        return {
          type: 'cell_result',
          cell_id: this._insert(panel, 'markdown', request),
          outputs: [],
          error: null
        };
      case 'delete_cells':
        return { type: 'cells_deleted', deleted: this._delete(panel, request.cell_ids as string[]) };
    }
    throw new Error(`unknown request ${request.type}`);
  }

  private _find(path: string): NotebookPanel | null {
    let found: NotebookPanel | null = null;
    this.tracker.forEach(panel => {
      if (!found && (panel.context.path === path || panel.sessionContext.session?.path === path)) {
        found = panel;
      }
    });
    return found;
  }

  private _insert(panel: NotebookPanel, kind: 'code' | 'markdown', request: IHostRequest): string {
    const model = panel.content.model;
    if (!model) {
      throw new Error('the notebook has no model yet');
    }
    let index = model.cells.length;
    for (let i = model.cells.length - 1; i >= 0; i--) {
      if (model.cells.get(i).getMetadata('dcpilot') !== undefined) {
        index = i + 1;
        break;
      }
    }
    // the server names the cell it asks for, so it can delete it even if this panel never
    // answers (its kernel died under the cell)
    const cell = model.sharedModel.insertCell(index, {
      cell_type: kind,
      source: String(request.source ?? ''),
      metadata: (request.metadata as PartialJSONObject | undefined) ?? {},
      ...(typeof request.cell_id === 'string' ? { id: request.cell_id } : {})
    });
    return cell.id;
  }

  private async _run(panel: NotebookPanel, request: IHostRequest): Promise<{ [key: string]: unknown }> {
    await this._userCellsDone(panel);
    const id = this._insert(panel, 'code', request);
    const cell = panel.content.widgets.find(w => w.model.id === id);
    if (!cell) {
      throw new Error('the inserted cell has no view');
    }
    await NotebookActions.runCells(panel.content, [cell], panel.sessionContext);
    const outputs = (cell.model as ICodeCellModel).outputs.toJSON() as unknown as {
      [key: string]: unknown;
    }[];
    return { type: 'cell_result', cell_id: id, ...cellOutcome(outputs) };
  }

  private _delete(panel: NotebookPanel, ids: string[]): string[] {
    const model = panel.content.model;
    if (!model) {
      return [];
    }
    const deleted: string[] = [];
    for (let i = model.cells.length - 1; i >= 0; i--) {
      const cell = model.cells.get(i);
      if (ids.includes(cell.id) && cell.getMetadata('dcpilot') !== undefined) {
        model.sharedModel.deleteCell(i);
        deleted.push(cell.id);
      }
    }
    return deleted;
  }

  /** Wait while the kernel is busy with the user's cells (never run in the middle of them). */
  private async _userCellsDone(panel: NotebookPanel): Promise<void> {
    const start = Date.now();
    const busy = () => {
      const model = panel.content.model;
      const running =
        !!model &&
        Array.from({ length: model.cells.length }, (_, i) => model.cells.get(i)).some(
          c => c.type === 'code' && (c as ICodeCellModel).executionState === 'running'
        );
      return running || panel.sessionContext.session?.kernel?.status === 'busy';
    };
    while (busy() && Date.now() - start < MAX_WAIT_MS) {
      // the kernel's status changes the moment it is idle again (the co-pilot's own silent
      // request just before a cell makes it busy for a few milliseconds): wake up then
      await new Promise<void>(resolve => {
        const status = panel.sessionContext.statusChanged;
        const done = () => {
          window.clearTimeout(timer);
          status.disconnect(done);
          resolve();
        };
        const timer = window.setTimeout(done, POLL_MS);
        status.connect(done);
      });
    }
  }
}

/** The cell a step wrote: its code cell if it has one, else its first cell (e.g. its decision). */
function stepCellIndex(panel: NotebookPanel, stepId: string): number {
  const model = panel.content.model;
  if (!model) {
    return -1;
  }
  let first = -1;
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    const tag = cell.getMetadata('dcpilot') as { step?: string } | undefined;
    if (tag && tag.step === stepId) {
      if (cell.type === 'code') {
        return i;
      }
      first = first < 0 ? i : first;
    }
  }
  return first;
}
