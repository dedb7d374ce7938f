import { expect, test } from '@jupyterlab/galata';
import { approveUntilGate, waitForImpact } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 1500 } });

test.describe('Data co-pilot: the expert steers', () => {
  test('skips a step, sets the outlier threshold, adds a step, and chooses with the impact chart', async ({
    page
  }) => {
    test.setTimeout(420000);
    await page.notebook.createNew('steer.ipynb');
    // a leaked column, a constant one and a few extreme blood pressures
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(3)',
        'n = 400',
        'df = pd.DataFrame({"age": rng.normal(60, 10, n), "bp": rng.normal(130, 15, n),',
        '                   "dose": rng.integers(0, 3, n), "site": "A"})',
        'df.loc[:7, "bp"] = 400.0',
        'df["y"] = (0.05 * (df.age - 60) + 0.5 * df.dose + rng.normal(size=n) > 0.5).astype(int)',
        'df["leak"] = df.y + rng.normal(scale=0.3, size=n)'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('dcpilot:open');
    });
    const panel = page.locator('#jp-dcpilot-panel');
    // a wider side panel, as people use it for a co-pilot (drag the split handle left)
    const handle = page.locator('#jp-main-split-panel > .lm-SplitPanel-handle:visible').last();
    const box = await handle.boundingBox();
    if (box) {
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x - 220, box.y + box.height / 2, { steps: 5 });
      await page.mouse.up();
    }
    await panel.locator('.jp-dcpilot-frame[data-frame="df"]').click({ timeout: 30000 });
    const form = panel.locator('.jp-dcpilot-start');
    await expect(form).toBeVisible({ timeout: 30000 });
    await form.locator('select[name="target"]').selectOption('y');
    await form.locator('summary').click();
    await form.locator('select[name="approve"]').selectOption('ask');
    await form.getByRole('button', { name: 'Start co-pilot' }).click();

    // the first question (the task) waits: the plan can be edited now
    await expect(panel.locator('.jp-dcpilot-decision').first()).toBeVisible({ timeout: 120000 });
    const step = (episode: string) => panel.locator(`.jp-dcpilot-step[data-episode="${episode}"]`);

    // skip: the constant column stays (it does no harm), the step will not run
    await step('drop_uninformative').locator('.jp-dcpilot-skip').click();
    await expect(step('drop_uninformative')).toHaveAttribute('data-status', 'skipped');
    await expect(step('drop_uninformative').locator('.jp-dcpilot-step-note')).toContainText(
      'skipped by the user'
    );

    // the outlier threshold, before the step runs
    await step('outliers').locator('.jp-dcpilot-edit').click();
    const params = panel.locator('.jp-dcpilot-params');
    await params.locator('input[name="threshold"]').fill('3');
    await params.getByRole('button', { name: 'Set' }).click();
    await expect(params).toHaveCount(0);
    await expect(step('outliers').locator('.jp-dcpilot-by-user')).toContainText('params');
    await expect(page.locator('.jp-Notebook .jp-MarkdownCell', { hasText: 'threshold' })).toHaveCount(1, {
      timeout: 30000
    });

    // add a step from the library (one line each)
    const library = panel.locator('.jp-dcpilot-library');
    await library.locator('summary').click();
    const dedupe = library.locator('.jp-dcpilot-episode[data-episode="deduplicate"]');
    await expect(dedupe.locator('.jp-dcpilot-episode-line')).not.toBeEmpty();
    await dedupe.locator('.jp-dcpilot-add').click();
    await dedupe.locator('.jp-dcpilot-add-form').getByRole('button', { name: 'Add' }).click();
    await expect(step('deduplicate')).toHaveCount(1);
    await expect(step('deduplicate').locator('.jp-dcpilot-by-user')).toContainText('added');
    await library.locator('summary').click();

    // approve whatever comes before the leakage question (the task, ...)
    const leakCard = panel.locator('.jp-dcpilot-decision[data-gate="leakage"]');
    await approveUntilGate(panel, 'leakage');
    await expect(leakCard).toBeVisible();

    // the card is there at once; the impact chart fills in as each option is estimated
    const chart = leakCard.locator('.jp-dcpilot-impact');
    await expect(chart).toBeVisible({ timeout: 30000 });
    await waitForImpact(page, chart);
    const rows = chart.locator('.jp-dcpilot-impact-row');
    await expect(rows.locator('.jp-dcpilot-impact-bar')).toHaveCount(await rows.count());
    expect(await rows.count()).toBeGreaterThanOrEqual(2);
    const means = await rows.evaluateAll(gs =>
      gs.map(g => ({
        option: g.getAttribute('data-option') ?? '',
        mean: Number(g.getAttribute('data-mean'))
      }))
    );
    means.sort((a, b) => b.mean - a.mean);
    // the leaked column scores best; its flag says why that score means nothing
    expect(means[0].option).toBe('keep');
    await expect(chart.locator('.jp-dcpilot-impact-details li[data-option="keep"]')).toContainText('leak');
    await expect(chart.locator('.jp-dcpilot-impact-note')).toContainText('changes the');
    await leakCard.scrollIntoViewIfNeeded();
    await panel.screenshot({ path: '../docs/images/steer-plan-impact.png' });

    // the expert chooses the second-best score
    const second = means[1].option;
    await leakCard.locator(`.jp-dcpilot-option[data-option="${second}"]`).click();
    await expect(leakCard).toHaveCount(0, { timeout: 60000 });
    const leakStep = panel.locator('.jp-dcpilot-step[data-episode="remove_leakage"]');
    await expect(leakStep).toHaveAttribute('data-status', /running|done/, { timeout: 60000 });
    await expect(page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'kt.drop_columns' })).toHaveCount(1, {
      timeout: 60000
    });
  });
});
