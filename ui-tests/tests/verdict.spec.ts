import { expect, test } from '@jupyterlab/galata';
import { startCopilot } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
test.use({ autoGoto: true, sessions: null });

test.describe('Data co-pilot verdict', () => {
  test('ends with the verdict as a list of checks', async ({ page }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('verdict.ipynb');
    // one record per patient with an R-style row number and a column filled only for the
    // patients the outcome happened to (recorded because of it)
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(1)',
        'n = 400',
        'df = pd.DataFrame({"rownames": np.arange(1, n + 1), "age": rng.normal(60, 10, n),',
        '                   "bp": rng.normal(130, 15, n), "dose": rng.integers(0, 3, n)})',
        'df["y"] = (0.05 * (df.age - 60) + 0.5 * df.dose + rng.normal(size=n) > 0.5).astype(int)',
        'df["discharge_code"] = np.where(df.y == 1, rng.choice(["A", "B"], n), None)'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);
    const panel = await startCopilot(page, 'y', 'recommended');

    const verdict = panel.locator('.jp-dcpilot-validity');
    await expect(verdict).toBeVisible({ timeout: 240000 });
    const checks = verdict.locator('li[data-check]');
    // every check of the verdict is listed by name (others may follow: a codebook's, the structure's)
    await expect(checks.first()).toBeVisible();
    const names = await checks.evaluateAll(items => items.map(item => item.getAttribute('data-check')));
    for (const name of [
      'model_trained',
      'diagnosis_complete',
      'no_identifiers',
      'no_follow_up',
      'no_leakage',
      'entities_together',
      'known_at_index',
      'task_metric',
      'holdout_confirms_cv',
      'test_untouched',
      'no_suspect_score',
      'approved_steps_ran'
    ]) {
      expect(names).toContain(name);
    }
    // the identifier and the leaked column were found and kept out of the model
    await expect(verdict.locator('li[data-check="no_identifiers"]')).toHaveAttribute('data-passed', 'yes');
    await expect(verdict.locator('li[data-check="no_identifiers"]')).toContainText('rownames');
    await expect(verdict.locator('li[data-check="no_leakage"]')).toContainText('discharge_code');
    await expect(verdict.locator('li[data-check="holdout_confirms_cv"]')).toContainText('roc_auc holdout');
    // it reads the same as the report: valid only when no check failed
    const failed = await checks.filter({ has: page.locator('[aria-label="failed"]') }).count();
    await expect(verdict.locator('.jp-dcpilot-validity-verdict')).toHaveText(
      failed === 0
        ? `Valid model: all ${names.length} checks passed`
        : `Not a valid model: ${failed} of ${names.length} checks failed`
    );
    await verdict.scrollIntoViewIfNeeded();
    await panel.screenshot({ path: 'test-results/copilot-verdict.png' });
  });
});
