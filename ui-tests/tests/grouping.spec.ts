import { expect, test } from '@jupyterlab/galata';
import { approveAndWait, startCopilot } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions.
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 2000 } });

/**
 * A column naming a group of subjects that is not the entity (here a matched set) is asked in the
 * panel: drop it, group the split by it, or keep it; the expert groups the split, and the split
 * cell the co-pilot writes keeps each matched set on one side.
 */
test.describe('Data co-pilot: a column that groups subjects', () => {
  test('is a question on the identifiers; grouping by it groups the split', async ({ page }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('grouping.ipynb');
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(7)',
        'n = 240',
        'x = rng.normal(size=n)',
        'df = pd.DataFrame({"patient_id": np.arange(1000, 1000 + n), "match_id": np.repeat(np.arange(1, 81), 3),',
        '                   "age": rng.normal(60, 10, n).round(), "marker": x,',
        '                   "case": (x + rng.normal(scale=0.8, size=n) > 0).astype(int)})'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);

    const panel = await startCopilot(page, 'case', 'ask');
    const card = panel.locator('.jp-dcpilot-decision[data-gate="identifiers"]', { hasText: 'match_id' });
    // approve the cards before it (the task), never the grouping card itself
    const other = panel.locator('.jp-dcpilot-decision').filter({ hasNotText: 'match_id' }).first();
    for (let i = 0; i < 60 && !(await card.isVisible()); i++) {
      if (await other.isVisible()) {
        await approveAndWait(panel, other);
      } else {
        await page.waitForTimeout(2000);
      }
    }
    await expect(card).toBeVisible();
    await expect(card).toContainText('it groups rows');
    await expect(card.locator('.jp-dcpilot-option[data-option="group"]')).toBeVisible();
    await expect(card.locator('.jp-dcpilot-option.jp-mod-recommended')).toHaveCount(1);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/grouping-question.png' });

    await card.locator('.jp-dcpilot-option[data-option="group"]').click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    // approve what follows until the split has been written
    const split = page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'kt.split' });
    for (let i = 0; i < 8 && (await split.count()) === 0; i++) {
      const next = panel.locator('.jp-dcpilot-decision').first();
      if (await next.isVisible()) {
        await approveAndWait(panel, next);
      } else {
        await page.waitForTimeout(2000);
      }
    }
    await expect(split).toHaveCount(1, { timeout: 60000 });
    await expect(split).toContainText('match_id');
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });
});
