import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { URLExt } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { DEFAULT_SETTINGS, ISqlnbSettings } from './chat';
import { sqlnbIcon } from './icons';
import { SqlnbModel } from './model';
import { ModelServerStatus } from './modelserver';
import { ChatPanel } from './panel';
import { SqlnbStatus } from './statusbar';

export { sqlnbIcon };

const PLUGIN_ID = 'sqlnb:plugin';

const CommandIDs = {
  open: 'sqlnb:open'
} as const;

/**
 * `GET /sqlnb/model` on this Jupyter server (sqlnb's server extension): its JSON, or null
 * when the server has no such route.
 */
function modelStatusRequest(): () => Promise<unknown | null> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'sqlnb', 'model');
  return async () => {
    const response = await ServerConnection.makeRequest(url, {}, settings);
    if (!response.ok) {
      return null;
    }
    return response.json();
  };
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'sqlnb: ask your database a question from a sidebar, get back a runnable SQL cell.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [
    ISettingRegistry,
    ILayoutRestorer,
    IStatusBar,
    ICommandPalette,
    IRenderMimeRegistry,
    IEditorLanguageRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    rendermime: IRenderMimeRegistry | null,
    languages: IEditorLanguageRegistry | null
  ) => {
    const model = new SqlnbModel(tracker);
    model.focusNotebook = nb => app.shell.activateById(nb.id);
    const modelServer = new ModelServerStatus(modelStatusRequest());
    const panel = new ChatPanel({ model, rendermime, languages, modelServer });
    panel.title.icon = sqlnbIcon;
    // works in JupyterLab and on Notebook 7's notebook page (both have a right area)
    app.shell.add(panel, 'right', { rank: 650 });
    if (restorer) {
      restorer.add(panel, 'sqlnb-chat-panel');
    }

    const open = () => {
      app.shell.activateById(panel.id);
      panel.focusInput();
    };
    app.commands.addCommand(CommandIDs.open, {
      label: 'Ask sqlnb',
      caption: 'Open the sqlnb panel and ask a question about your data',
      icon: sqlnbIcon,
      execute: open
    });
    if (palette) {
      palette.addItem({ command: CommandIDs.open, category: 'sqlnb' });
    }

    if (settingRegistry) {
      void settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = () =>
            model.updateSettings({
              ...(settings.composite as unknown as Partial<ISqlnbSettings>),
              maxIterationsSet: settings.user.maxIterations !== undefined
            });
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.warn('sqlnb: settings could not be loaded; using the defaults.', reason);
          model.updateSettings(DEFAULT_SETTINGS);
        });
    }

    if (statusBar) {
      const item = new SqlnbStatus(model, open);
      statusBar.registerStatusItem('sqlnb:statusbar', {
        item,
        align: 'left',
        rank: 4,
        isActive: () => item.isActive,
        activeStateChanged: model.currentConnectionChanged
      });
    }
  }
};

export default plugin;
