/** The panel's icons. */
import { LabIcon } from '@jupyterlab/ui-components';

const DATABASE_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
  '<g class="jp-icon3" fill="#616161">' +
  '<path d="M12 2C7.6 2 4 3.3 4 5v14c0 1.7 3.6 3 8 3s8-1.3 8-3V5c0-1.7-3.6-3-8-3zm0 2c3.9 0 6 1.1 6 1s-2.1 1-6 1-6-1-6-1 2.1-1 6-1zM6 7.3C7.5 8 9.6 8.3 12 8.3s4.5-.4 6-1V11c0 .1-2.1 1.3-6 1.3S6 11.1 6 11zm0 6c1.5.7 3.6 1 6 1s4.5-.3 6-1V19c0 .1-2.1 1-6 1s-6-.9-6-1z"/>' +
  '</g></svg>';

/** The sidebar's tab and the command's icon. */
export const sqlnbIcon = new LabIcon({ name: 'sqlnb:icon', svgstr: DATABASE_SVG });

/** Material Design's "thumb_up" (Apache 2.0), in the text colour: the Remember button. */
export const thumbsUpIcon = new LabIcon({
  name: 'sqlnb:thumbs-up',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="14" height="14" viewBox="0 0 24 24">' +
    '<path fill="currentColor" d="M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z"/>' +
    '</svg>'
});
