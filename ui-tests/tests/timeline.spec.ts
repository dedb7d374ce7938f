import { expect, test } from '@jupyterlab/galata';
import { startCopilot } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions.
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 2000 } });

/**
 * The column timeline card (issue 26, item 5) in the panel: the server's session carries the
 * timeline its diagnosis inferred, each column with its evidence; the expert moves a column and
 * the server's answer shows it where the expert put it.
 */
test.describe('Data co-pilot: the column timeline card', () => {
  test('groups the columns with their evidence; the expert moves one', async ({ page }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('timeline.ipynb');
    // a cohort with a copy of the follow-up time, a (time, indicator) pair of a reoperation, and
    // two measures whose names say they were taken after the index
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(4)',
        'n = 200',
        'marker = rng.normal(size=n)',
        'futime = (rng.exponential(400, n) * np.exp(-0.5 * marker)).round() + 30',
        'df = pd.DataFrame({"id": np.arange(n), "age": rng.normal(60, 10, n), "marker": marker,',
        '                   "futime": futime, "death": (marker + rng.normal(scale=0.7, size=n) > 0).astype(int)})',
        'df["reop"] = (rng.random(n) < 0.3).astype(int)',
        'df["reop_time"] = np.where(df.reop == 1, (futime * rng.uniform(0.1, 0.9, n)).round(), futime)',
        'df["crp_postop"] = marker * 2 + rng.normal(size=n)',
        'df["weight_followup"] = rng.normal(70, 10, n)',
        'df["futime2"] = futime'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);

    const panel = await startCopilot(page, 'death', 'ask');
    await expect(panel.locator('.jp-dcpilot-decision').first()).toBeVisible({ timeout: 120000 });

    const card = panel.locator('.jp-dcpilot-timeline');
    await expect(card).toBeVisible({ timeout: 30000 });
    await expect(card).toHaveAttribute('open', ''); // columns to confirm: open
    const group = (name: string) => card.locator(`.jp-dcpilot-timeline-group[data-group="${name}"]`);
    const column = (name: string) => card.locator(`.jp-dcpilot-timeline-column[data-column="${name}"]`);
    await expect(group('at_or_after_outcome').locator('.jp-dcpilot-timeline-column')).toHaveCount(2);
    await expect(column('futime2')).toContainText(
      "equal to the duration 'futime' on 100% of rows (the data)"
    );
    await expect(column('reop')).toContainText("says whether 'reop_time' ended before the follow-up did");
    await expect(group('during_follow_up').locator('.jp-dcpilot-timeline-unsure')).toHaveCount(2);
    await expect(column('crp_postop')).toContainText('(its name)');
    // nothing cut at the panel's default width
    const cut = await card
      .locator('summary, .jp-dcpilot-timeline-group-title, .jp-dcpilot-timeline-head')
      .evaluateAll(els => els.filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.textContent));
    expect(cut).toEqual([]);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/timeline-card.png' });
    await page.theme.setDarkTheme();
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/timeline-card-dark.png' });
    await page.theme.setLightTheme();

    // the expert knows the CRP was measured before the operation: it moves to baseline
    await column('crp_postop').locator('select').selectOption('baseline');
    await expect(group('baseline').locator('[data-column="crp_postop"]')).toHaveCount(1, { timeout: 30000 });
    await expect(group('during_follow_up').locator('[data-column="crp_postop"]')).toHaveCount(0);
    await expect(column('crp_postop')).toHaveAttribute('data-confidence', 'given');
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });

  test("shows Claude's proposal; a move through the card changes the verdict", async ({ page }) => {
    test.setTimeout(360000);
    await page.notebook.createNew('proposal.ipynb');
    // a marker measured "post-op" by its name only: the rules place it in follow-up, unsure
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(4)',
        'n = 300',
        'marker = rng.normal(size=n)',
        'df = pd.DataFrame({"id": np.arange(n), "age": rng.normal(60, 10, n), "marker": marker,',
        '                   "y": (marker + rng.normal(scale=0.7, size=n) > 0).astype(int)})',
        'df["crp_postop"] = marker * 0.5 + rng.normal(size=n)'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);

    const panel = await startCopilot(page, 'y', 'recommended', 'claude');
    const verdict = panel.locator('.jp-dcpilot-validity');
    await expect(verdict).toBeVisible({ timeout: 240000 });
    const check = (name: string) => verdict.locator(`li[data-check="${name}"]`);
    await expect(check('structure_confirmed')).toHaveAttribute('data-passed', 'no');
    await expect(check('structure_confirmed')).toContainText("the timing of 'crp_postop'");
    await expect(check('known_at_index')).toHaveAttribute('data-passed', 'yes');

    const card = panel.locator('.jp-dcpilot-timeline');
    const group = (name: string) => card.locator(`.jp-dcpilot-timeline-group[data-group="${name}"]`);
    const column = card.locator('.jp-dcpilot-timeline-column[data-column="crp_postop"]');
    const proposal = column.locator('.jp-dcpilot-timeline-proposal');
    // Claude's proposal, from the schema: shown as Claude's, nothing moved
    await expect(proposal).toContainText('proposed by Claude');
    await expect(proposal).toContainText('Baseline: measured before the operation in this study');
    await expect(group('during_follow_up').locator('[data-column="crp_postop"]')).toHaveCount(1);
    await expect(column).toHaveAttribute('data-confidence', 'low');
    await column.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/timeline-proposal.png' });

    // the expert takes it: baseline, moved by them, and nothing left to confirm
    await proposal.locator('.jp-dcpilot-timeline-take').click();
    await expect(group('baseline').locator('[data-column="crp_postop"]')).toHaveCount(1, { timeout: 30000 });
    await expect(column.locator('.jp-dcpilot-timeline-given')).toHaveText('moved by you');
    await expect(column.locator('.jp-dcpilot-timeline-moved')).toHaveText(
      'moved here from during follow-up by you in the panel'
    );
    await expect(proposal).toHaveCount(0);
    await expect(check('structure_confirmed')).toHaveAttribute('data-passed', 'yes', { timeout: 30000 });

    // then learns it was measured after the outcome: the recommended answer had followed the
    // rules' guess and dropped it, so the verdict says it is kept out of the model (the card
    // folds once nothing is left to confirm: opened again)
    await expect(card).not.toHaveAttribute('open', '');
    await card.locator('summary').first().click();
    await column.locator('select').selectOption('at_or_after_outcome');
    await expect(group('at_or_after_outcome').locator('[data-column="crp_postop"]')).toHaveCount(1, {
      timeout: 30000
    });
    await expect(check('known_at_index')).toHaveAttribute('data-passed', 'yes');
    await expect(check('no_follow_up')).toContainText("kept out of the features: 'crp_postop'", {
      timeout: 30000
    });
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });
});
