import { expect, test } from '@jupyterlab/galata';
import { startCopilot } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
test.use({ autoGoto: true, sessions: null });

test.describe('Data co-pilot progress', () => {
  test('shows the running step with its elapsed time, and Interrupt stops it', async ({ page }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('interrupt.ipynb');
    // large enough that fitting the model takes a while on two cores
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(0)',
        'n = 60000',
        'X = rng.normal(size=(n, 6))',
        'df = pd.DataFrame(X, columns=list("abcdef"))',
        'df["y"] = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=n) > 0).astype(int)'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);
    const panel = await startCopilot(page, 'y', 'recommended');

    // the model fit is the long step: its progress line names it and counts seconds
    const progress = panel.locator('.jp-dcpilot-progress', { hasText: 'Train and evaluate' });
    await expect(progress).toBeVisible({ timeout: 240000 });
    const step = await progress.getAttribute('data-step');
    await expect(progress.locator('.jp-dcpilot-elapsed')).toHaveText(/^\d+ s$/);
    await page.screenshot({ path: 'test-results/progress-step.png' });
    await progress.locator('.jp-dcpilot-interrupt').click();

    const item = panel.locator(`.jp-dcpilot-step[data-step="${step}"]`);
    await expect(item).toHaveAttribute('data-status', 'failed', { timeout: 60000 });
    await expect(item).toContainText('interrupted by the user');
    await expect(panel.locator('.jp-dcpilot-progress')).toHaveCount(0, { timeout: 60000 });
    // the kernel is free again: the user's own cells run
    await page.notebook.addCell('code', 'df.shape');
    const last = (await page.notebook.getCellCount()) - 1;
    await page.notebook.runCell(last, true);
    expect((await page.notebook.getCellTextOutput(last))?.join('').trim()).toBe('(60000, 7)');

    // the approval policy chosen above is still chosen after a reload (JupyterLab's settings);
    // what may be sent to an LLM starts again from "schema only"
    await page.reload({ waitForIsReady: false }); // the restored layout has no launcher to wait for
    await expect(page.locator('.jp-NotebookPanel')).toBeVisible({ timeout: 60000 });
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('dcpilot:open');
    });
    const reloaded = page.locator('#jp-dcpilot-panel');
    await reloaded.locator('.jp-dcpilot-frame[data-frame="df"]').click({ timeout: 60000 });
    await reloaded.locator('.jp-dcpilot-new').click({ timeout: 60000 });
    const again = reloaded.locator('.jp-dcpilot-start');
    await expect(again).toBeVisible({ timeout: 30000 });
    await again.locator('summary').click();
    await expect(again.locator('select[name="approve"]')).toHaveValue('recommended');
    await expect(again.locator('select[name="planner"]')).toHaveValue('rules');
    await expect(again.locator('select[name="share"]')).toHaveValue('schema');
    await expect(again.locator('.jp-dcpilot-settings-summary')).toContainText('take the recommended option');
    await page.screenshot({ path: 'test-results/settings-after-reload.png' });
  });
});
