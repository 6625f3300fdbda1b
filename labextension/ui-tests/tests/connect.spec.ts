/**
 * Connect from the panel: a kernel with no connection gets a connect form (a URL or a
 * configured name, a password for a URL without one); a wrong URL says why in the form;
 * the password goes to the kernel only, never into the page or the notebook.
 */
import { expect, openNotebook, openPanel, savedNotebook, test } from './sqlnb';

test('the panel connects a kernel that has no connection', async ({ page, request, tmpPath }) => {
  const secret = 'PanelSec' + 'ret-1937';
  const nb = await openNotebook(page, tmpPath, 'connect.ipynb', ['%load_ext sqlnb']);
  const panel = await openPanel(page);
  await expect(panel.locator('.sqlnb-banner')).toContainText('No database connection in this kernel yet');
  const form = panel.locator('.sqlnb-connect-form');
  await expect(form).toBeVisible();
  const error = panel.locator('.sqlnb-connect-error');

  // Nothing typed: the form says what it needs.
  await form.locator('.sqlnb-connect-submit').click();
  await expect(error).toContainText('Give a connection URL');

  // A malformed URL: the kernel's error, in the form; nothing is connected.
  await form.locator('.sqlnb-connect-target').fill('postgresql:/nowhere');
  await form.locator('.sqlnb-connect-submit').click();
  await expect(error).toContainText('Malformed connection URL');
  await expect(panel.locator('.sqlnb-connections option[value]:not([value=""])')).toHaveCount(0);

  // A URL without its password, and the password in its own field.
  await form.locator('.sqlnb-connect-target').fill('postgresql://sqlnb@127.0.0.1:5432/postgres');
  await form.locator('.sqlnb-connect-password').fill(secret);
  await form.locator('.sqlnb-connect-password').press('Enter');
  const option = panel.locator('.sqlnb-connections option[value]:not([value=""])');
  await expect(option).toHaveCount(1);
  await expect(option).toContainText('***'); // the kernel holds the password; the panel shows it redacted
  await expect(panel.locator('.sqlnb-connect-form')).toHaveCount(0); // connected: the form goes
  await expect(panel.locator('.sqlnb-banner')).toContainText('Connected');
  expect(await page.content()).not.toContain(secret);
  expect(await page.notebook.save()).toBe(true);
  expect(JSON.stringify(await savedNotebook(request, nb))).not.toContain(secret);
});
