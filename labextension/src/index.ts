import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { LabIcon } from '@jupyterlab/ui-components';
import { DEFAULT_SETTINGS, ISqlnbSettings, SqlnbModel } from './model';
import { ChatPanel } from './panel';
import { SqlnbStatus } from './statusbar';

const PLUGIN_ID = 'sqlnb:plugin';

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
  '<g class="jp-icon3" fill="#616161">' +
  '<path d="M12 2C7.6 2 4 3.3 4 5v14c0 1.7 3.6 3 8 3s8-1.3 8-3V5c0-1.7-3.6-3-8-3zm0 2c3.9 0 6 1.1 6 1s-2.1 1-6 1-6-1-6-1 2.1-1 6-1zM6 7.3C7.5 8 9.6 8.3 12 8.3s4.5-.4 6-1V11c0 .1-2.1 1.3-6 1.3S6 11.1 6 11zm0 6c1.5.7 3.6 1 6 1s4.5-.3 6-1V19c0 .1-2.1 1-6 1s-6-.9-6-1z"/>' +
  '</g></svg>';

export const sqlnbIcon = new LabIcon({ name: 'sqlnb:icon', svgstr: ICON_SVG });

const CommandIDs = {
  open: 'sqlnb:open'
} as const;

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'sqlnb: ask your database a question from a sidebar, get back a runnable SQL cell.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ISettingRegistry, ILayoutRestorer, IStatusBar, ICommandPalette, IRenderMimeRegistry],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    rendermime: IRenderMimeRegistry | null
  ) => {
    const model = new SqlnbModel(tracker);
    model.focusNotebook = nb => app.shell.activateById(nb.id);
    const panel = new ChatPanel(model, rendermime);
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
        activeStateChanged: model.stateChanged
      });
    }
  }
};

export default plugin;
