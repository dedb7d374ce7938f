import { expect, test } from '@jupyterlab/galata';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
test.use({ autoGoto: true, sessions: null });

test.describe('Data co-pilot session', () => {
  test('asks about a leaked column, drops it in a new cell, and undoes that', async ({ page }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('copilot.ipynb');
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(0)',
        'y = rng.integers(0, 2, 200)',
        'df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200),',
        '                   "leak": y + rng.normal(scale=0.05, size=200), "y": y})'
      ].join('\n')
    );
    await page.notebook.runCell(0);

    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('dcpilot:open');
    });
    const panel = page.locator('#jp-dcpilot-panel');
    const item = panel.locator('.jp-dcpilot-frame[data-frame="df"]');
    await expect(item).toBeVisible({ timeout: 30000 });
    await item.click();
    await expect(panel.locator('[data-profile="df"]')).toBeVisible({ timeout: 30000 });

    const form = panel.locator('.jp-dcpilot-start');
    await form.locator('select[name="target"]').selectOption('y');
    await form.locator('select[name="approve"]').selectOption('ask');
    await form.getByRole('button', { name: 'Start co-pilot' }).click();

    // approve whatever comes before the leakage question (e.g. confirming the task)
    const leakCard = panel.locator('.jp-dcpilot-decision[data-gate="leakage"]');
    for (let i = 0; i < 5; i++) {
      const card = panel.locator('.jp-dcpilot-decision').first();
      await expect(card).toBeVisible({ timeout: 120000 });
      if ((await card.getAttribute('data-gate')) === 'leakage') {
        break;
      }
      const id = await card.getAttribute('data-decision');
      await card.locator('.jp-dcpilot-approve').click();
      await expect(panel.locator(`[data-decision="${id}"]`)).toHaveCount(0, {
        timeout: 30000
      });
    }
    await expect(leakCard).toBeVisible();
    await expect(leakCard).toContainText('leak');
    await expect(leakCard.locator('.jp-dcpilot-option.jp-mod-recommended')).toHaveCount(1);
    const step = await leakCard.getAttribute('data-step');

    const dropCell = page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'kt.drop_columns' });
    const started = Date.now();
    await leakCard.locator('.jp-dcpilot-approve').click();
    await expect(dropCell.locator('.jp-OutputArea-output').first()).toBeVisible({ timeout: 120000 });
    console.log(`approve -> drop_columns cell output: ${Date.now() - started} ms`);
    await expect(dropCell.locator('.jp-InputPrompt')).toHaveText(/\[\d+\]/);

    // undo to the checkpoint taken before the leakage step
    const undo = panel.locator(`.jp-dcpilot-checkpoint[data-step="${step}"] .jp-dcpilot-undo`);
    await expect(undo).toBeVisible({ timeout: 60000 });
    await undo.click({ timeout: 180000 });
    await expect(dropCell).toHaveCount(0, { timeout: 60000 });
    await expect(panel.locator(`.jp-dcpilot-checkpoint[data-step="${step}"]`)).toHaveCount(0, { timeout: 30000 });

    // the kernel's df has its column back: in the panel's profile, and in the notebook
    await expect(panel.locator('[data-profile="df"] tbody tr')).toHaveCount(4, { timeout: 30000 });
    await page.notebook.addCell('code', "'leak' in df.columns");
    const last = (await page.notebook.getCellCount()) - 1;
    await page.notebook.runCell(last);
    const output = await page.notebook.getCellTextOutput(last);
    expect(output?.join('').trim()).toBe('True');
    await page.screenshot({ path: 'test-results/copilot.png' });
  });
});
