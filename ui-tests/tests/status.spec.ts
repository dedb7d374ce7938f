import { expect, test } from '@jupyterlab/galata';
import { answerRecommended, startCopilot } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions.
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 2000 } });

/**
 * A status of three codes next to a follow-up time (1 died of the disease, 2 alive, 3 died of
 * other causes) is survival with one code censored, asked: the task card offers each other code's
 * reading as an answer, and the one chosen is the code the recode cell treats as censored.
 */
test.describe('Data co-pilot: a status of several codes', () => {
  test('asks which code is censored and recodes with the one chosen', async ({ page }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('status.ipynb');
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(3)',
        'n = 240',
        'x = rng.normal(size=n)',
        'status = rng.choice([1, 2, 3], n, p=[0.3, 0.55, 0.15])',
        'time = np.where(status == 2, rng.uniform(1500, 5000, n), rng.exponential(900 * np.exp(-0.5 * x))).round()',
        'df = pd.DataFrame({"thickness": (2 + x).round(2), "age": rng.integers(30, 80, n), "time": time,',
        '                   "status": status})'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);

    const panel = await startCopilot(page, 'status', 'ask');
    const card = panel.locator('.jp-dcpilot-decision[data-gate="task"]');
    await expect(card).toBeVisible({ timeout: 120000 });
    await expect(card).toContainText("Which code of 'status' means censored: 2, ");
    await expect(card).toContainText("In 'status', 2 means censored and any other code is an event.");
    await expect(card.getByRole('button', { name: 'It is classification' })).toBeVisible();
    await expect(card).not.toContainText('It is regression');
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/competing-events-question.png' });

    await card.getByRole('button', { name: 'Survival with 3 censored' }).click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    const recode = page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'recode_status' });
    for (let i = 0; i < 30 && (await recode.count()) === 0; i++) {
      await answerRecommended(panel);
      await page.waitForTimeout(3000);
    }
    await expect(recode).toHaveCount(1, { timeout: 60000 });
    await expect(recode).toContainText('censored=3');
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });
});
