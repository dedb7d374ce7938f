import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';

import { FramesModel } from './model';
import { NotebookBridge } from './bridge';
import { DataPilotPanel } from './panel';
import { SessionModel } from './session';
import { serverSessions } from './sessionApi';

/** Command ids. */
export namespace CommandIDs {
  export const open = 'dcpilot:open';
}

/** How long to wait after a cell ran before asking the kernel again (coalesces Run All). */
const REFRESH_DELAY_MS = 300;

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-dcpilot:plugin',
  description: 'A data-centric co-pilot: the DataFrames of the active notebook, diagnosed.',
  autoStart: true,
  requires: [INotebookTracker, ILabShell],
  optional: [ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    labShell: ILabShell,
    palette: ICommandPalette | null
  ) => {
    const model = new FramesModel();
    const bridge = new NotebookBridge(tracker, notebook => labShell.activateById(notebook.id));
    const copilot = new SessionModel(serverSessions, bridge);
    void copilot.loadStatus();
    const panel = new DataPilotPanel(model, copilot);
    labShell.add(panel, 'right', { rank: 600 });

    // The kernel is found through the server's session for the notebook, so ask with the
    // session's own path: it can lag behind the document's after a rename done elsewhere.
    const follow = () => {
      const current = tracker.currentWidget;
      const path = current
        ? (current.sessionContext.session?.path ?? current.context.path)
        : null;
      void model.setNotebook(path, current?.context.localPath.split('/').pop());
      void copilot.follow(path);
    };
    tracker.currentChanged.connect(follow);
    tracker.widgetAdded.connect((_, widget) => {
      // the path changes when a notebook is renamed
      widget.context.pathChanged.connect(() => {
        if (tracker.currentWidget === widget) {
          follow();
        }
      });
      // the kernel session's own path follows a rename a moment after the document's
      widget.sessionContext.propertyChanged.connect((_, property) => {
        if (property === 'path' && tracker.currentWidget === widget) {
          follow();
        }
      });
      // a fresh kernel has no frames until a cell runs; also covers kernel restarts
      widget.sessionContext.sessionChanged.connect(() => {
        if (tracker.currentWidget === widget) {
          follow();
        }
      });
      widget.sessionContext.kernelChanged.connect(() => {
        if (tracker.currentWidget === widget) {
          void model.refresh();
        }
      });
    });
    follow();

    let timer: number | undefined;
    NotebookActions.executed.connect((_, { notebook }) => {
      const current = tracker.currentWidget;
      if (!current || current.content !== notebook) {
        return;
      }
      window.clearTimeout(timer);
      timer = window.setTimeout(() => void model.refresh(), REFRESH_DELAY_MS);
    });

    app.commands.addCommand(CommandIDs.open, {
      label: 'Open Data co-pilot',
      caption: 'Show the DataFrames of the active notebook and their profile',
      execute: () => {
        labShell.activateById(panel.id);
        follow();
        void model.refresh();
      }
    });
    palette?.addItem({ command: CommandIDs.open, category: 'Data co-pilot' });
  }
};

export default plugin;
