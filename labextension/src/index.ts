import { ILabShell, ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { contentsLister } from './codebooks';
import { FramesModel } from './model';
import { NotebookBridge } from './bridge';
import { DataPilotPanel } from './panel';
import { SessionModel } from './session';
import { connectSettings } from './settings';
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
  optional: [ICommandPalette, ISettingRegistry, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    labShell: ILabShell,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null
  ) => {
    const model = new FramesModel();
    const bridge = new NotebookBridge(tracker, notebook => labShell.activateById(notebook.id));
    const copilot = new SessionModel(serverSessions, bridge);
    void copilot.loadStatus();
    settingRegistry
      ?.load(plugin.id)
      .then(settings => connectSettings(copilot, settings))
      .catch(reason => console.warn('jupyter-dcpilot: the co-pilot settings could not be loaded', reason));
    const panel = new DataPilotPanel(model, copilot, contentsLister(app.serviceManager.contents));
    labShell.add(panel, 'right', { rank: 600 });
    // remembered in the workspace: a panel open before a reload is open after it
    restorer?.add(panel, 'jupyter-dcpilot-panel');

    // The co-pilot's session belongs to the notebook file (the server moves it when the file
    // is renamed), and the server finds the notebook's kernel by its kernel session's path.
    // JupyterLab can leave that path on an old name (a notebook renamed while its kernel was
    // starting, e.g. "Untitled.ipynb"): align it with the file first, so both agree.
    let followed: NotebookPanel | null = null;
    const follow = async () => {
      const current = tracker.currentWidget;
      const path = current ? current.context.localPath : null;
      const session = current?.sessionContext.session;
      if (session && path !== null && session.path !== path) {
        try {
          await session.setPath(path);
        } catch (reason) {
          console.warn('jupyter-dcpilot: could not give the kernel session the notebook path', reason);
        }
        if (tracker.currentWidget !== current) {
          return; // another notebook became current meanwhile: its own follow runs
        }
      }
      const label = path?.split('/').pop();
      if (current && current === followed && path !== null && path !== model.path) {
        void model.rename(path, label); // the same notebook, renamed: keep the selected frame
      } else {
        void model.setNotebook(path, label);
      }
      followed = current;
      void copilot.follow(path);
    };
    tracker.currentChanged.connect(() => void follow());
    tracker.widgetAdded.connect((_, widget) => {
      // the path changes when a notebook is renamed
      widget.context.pathChanged.connect(() => {
        if (tracker.currentWidget === widget) {
          void follow();
        }
      });
      // the kernel session's path moved (a rename, or another client): realign, and ask the
      // kernel again (a lookup by the new name may have failed while the path lagged)
      widget.sessionContext.propertyChanged.connect((_, property) => {
        if (property === 'path' && tracker.currentWidget === widget) {
          void follow().then(() => model.refresh());
        }
      });
      // a fresh kernel has no frames until a cell runs; also covers kernel restarts
      widget.sessionContext.sessionChanged.connect(() => {
        if (tracker.currentWidget === widget) {
          void follow();
        }
      });
      widget.sessionContext.kernelChanged.connect(() => {
        if (tracker.currentWidget === widget) {
          model.warmUp(); // a new kernel: its imports ahead of the co-pilot's first step
          void model.refresh();
        }
      });
    });
    void follow();

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
        void follow();
        model.warmUp();
        void model.refresh();
      }
    });
    palette?.addItem({ command: CommandIDs.open, category: 'Data co-pilot' });
  }
};

export default plugin;
