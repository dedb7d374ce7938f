import { expect, test } from '@jupyterlab/galata';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
test.use({ autoGoto: true, sessions: null });

test.describe('Data co-pilot panel', () => {
  test('lists a DataFrame made in the notebook, with its shape and profile', async ({ page }) => {
    await page.notebook.createNew('frames.ipynb');
    await page.notebook.setCell(
      0,
      'code',
      [
        'import pandas as pd',
        'patients = pd.DataFrame({"id": [1, 1, 2, 3], "age": [50.0, None, 61.0, 47.0], "sex": list("fmmf")})'
      ].join('\n')
    );
    await page.notebook.runCell(0);

    // open the panel through the command palette, as a user would
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('dcpilot:open');
    });
    const panel = page.locator('#jp-dcpilot-panel');
    await expect(panel).toBeVisible();

    const item = panel.locator('.jp-dcpilot-frame[data-frame="patients"]');
    await expect(item).toBeVisible({ timeout: 30000 });
    await expect(item.locator('.jp-dcpilot-frame-shape')).toHaveText('4 × 3');

    // the list follows the kernel: a new frame appears after the cell that makes it runs
    await page.notebook.addCell('code', 'visits = patients.head(2)');
    await page.notebook.runCell((await page.notebook.getCellCount()) - 1);
    await expect(panel.locator('.jp-dcpilot-frame[data-frame="visits"] .jp-dcpilot-frame-shape')).toHaveText(
      '2 × 3',
      { timeout: 30000 }
    );

    await item.click();
    const profile = panel.locator('[data-profile="patients"]');
    await expect(profile).toBeVisible();
    await expect(profile.locator('tbody tr')).toHaveCount(3);
    await expect(profile.locator('tbody tr').nth(1)).toContainText('25.0%');

    await page.screenshot({ path: 'test-results/panel-light.png' });

    // the panel only uses JupyterLab's CSS variables: in the dark theme its text stays readable
    await page.theme.setDarkTheme();
    const colors = await panel.evaluate(element => {
      const style = getComputedStyle(element);
      return { background: style.backgroundColor, text: style.color };
    });
    const brightness = (rgb: string) =>
      (rgb.match(/\d+/g) ?? []).slice(0, 3).reduce((sum, v) => sum + Number(v), 0) / 3;
    expect(brightness(colors.background)).toBeLessThan(100);
    expect(brightness(colors.text)).toBeGreaterThan(150);
    await page.screenshot({ path: 'test-results/panel-dark.png' });
    await page.theme.setLightTheme();

    // the start form's remembered settings are JupyterLab settings: the Settings Editor shows them
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('settingeditor:open', { query: 'Data co-pilot' });
    });
    const editor = page.locator('.jp-SettingsPanel, .jp-SettingsEditor').first();
    await expect(editor.getByText('Approval policy').first()).toBeVisible({ timeout: 30000 });
    await expect(editor.getByText('Planner', { exact: true }).first()).toBeVisible();
    await page.screenshot({ path: 'test-results/settings-editor.png' });
  });
});

test.describe('Data co-pilot panel across a reload', () => {
  test('an open panel is open again after the page reloads', async ({ page }) => {
    // JupyterLab saves the layout to the workspace a moment after it changes: wait for the save
    // that names the panel (the layout restorer's key) before reloading
    const saved = (closed: boolean) =>
      page.waitForRequest(request => {
        if (request.method() !== 'PUT' || !request.url().includes('/api/workspaces')) {
          return false;
        }
        const right = JSON.parse(request.postData() ?? '{}')?.data?.['layout-restorer:data']?.right;
        const shown = !!right && !right.collapsed && String(right.current).includes('jupyter-dcpilot-panel');
        return shown === !closed;
      });
    const opened = saved(false);
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('dcpilot:open');
    });
    const panel = page.locator('#jp-dcpilot-panel');
    await expect(panel).toBeVisible();
    await opened;

    await page.reload();
    await page.waitForSelector('#jupyterlab-splash', { state: 'detached' });
    // the layout restorer brings it back: no command, no click
    await expect(page.locator('#jp-dcpilot-panel')).toBeVisible({ timeout: 30000 });
    await page.screenshot({ path: 'test-results/panel-after-reload.png' });

    // and a closed panel stays closed (the restored state is the workspace's, not a default)
    const closedSave = saved(true);
    await page.evaluate(async () => {
      (window.jupyterapp.shell as unknown as { collapseRight(): void }).collapseRight();
    });
    await expect(page.locator('#jp-dcpilot-panel')).toBeHidden();
    await closedSave;
    await page.reload();
    await page.waitForSelector('#jupyterlab-splash', { state: 'detached' });
    await expect(page.locator('#jp-dcpilot-panel')).toBeHidden();
  });
});
