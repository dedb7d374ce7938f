import { expect, test } from '@jupyterlab/galata';
import { approveUntilGate } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
test.use({ autoGoto: true, sessions: null, viewport: { width: 1280, height: 800 } });

test.describe('The study codebook', () => {
  test('is picked next to the notebook and its line is the evidence of the leakage question', async ({
    page
  }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('codebook.ipynb');
    // a length of stay counted from enrolment is only mildly related to the outcome: only the
    // codebook says it is known after the prediction time
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(0)',
        'frailty = rng.normal(size=300)',
        'y = (rng.random(300) < 1 / (1 + np.exp(-(frailty - 1.5)))).astype(int)',
        'df = pd.DataFrame({"age": rng.integers(40, 90, 300), "sbp": rng.normal(135, 18, 300).round(),',
        '                   "stay": rng.poisson(np.exp(0.6 + 0.25 * frailty)), "died": y})',
        'with open("codebook.md", "w") as f:',
        '    f.write("| variable | description |\\n|---|---|\\n| age | Age at enrolment (years) |\\n"',
        '            "| sbp | Systolic blood pressure at baseline |\\n"',
        '            "| stay | Length of hospital stay since enrolment (days) |\\n| died | Died within a year |\\n")'
      ].join('\n')
    );
    await page.notebook.runCell(0);

    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('dcpilot:open');
    });
    const panel = page.locator('#jp-dcpilot-panel');
    const handle = page.locator('#jp-main-split-panel > .lm-SplitPanel-handle:visible').last();
    const box = await handle.boundingBox();
    if (box) {
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x - 120, box.y + box.height / 2, { steps: 5 });
      await page.mouse.up();
    }
    const item = panel.locator('.jp-dcpilot-frame[data-frame="df"]');
    await expect(item).toBeVisible({ timeout: 30000 });
    await item.click();
    const form = panel.locator('.jp-dcpilot-start');
    await expect(form).toBeVisible({ timeout: 30000 });
    await form.locator('select[name="target"]').selectOption('died');
    const picker = form.locator('select[name="dictionary"]');
    await expect(picker.locator('option[value="codebook.md"]')).toHaveCount(1, { timeout: 30000 });
    await picker.selectOption('codebook.md');
    await page.screenshot({ path: 'test-results/codebook-start-form.png' });
    await form.getByRole('button', { name: 'Start co-pilot' }).click();

    const leakCard = panel.locator('.jp-dcpilot-decision[data-gate="leakage"]');
    await approveUntilGate(panel, 'leakage');
    await expect(leakCard).toBeVisible();
    await expect(leakCard).toContainText('stay');
    await expect(leakCard).toContainText('codebook.md');
    await page.screenshot({ path: 'test-results/codebook-leakage-card.png' });
  });
});
