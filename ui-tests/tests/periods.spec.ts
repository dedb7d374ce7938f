import { expect, test } from '@jupyterlab/galata';
import { answerRecommended, startCopilot } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions.
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 2000 } });

/**
 * Person-period rows whose layout is only a hint (40 subjects followed 3-8 periods, two ending in
 * the event: too few to tell from chance) stay a classification, asked: the task card offers
 * survival over the periods first, says why it is only a hint, and the answer "survival" reads the
 * layout, so the run goes on to one row per subject followed until its last period.
 * (The server and its kernels import the installed package; from a git worktree, run with
 * PYTHONPATH=<worktree> so both import the worktree's jupyter_dcpilot and kernel_tools.)
 */
test.describe('Data co-pilot: person-period rows that are only a hint', () => {
  test('offer survival first; choosing it collapses the periods per subject', async ({ page }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('periods.ipynb');
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(3)',
        'n = 40',
        'k = rng.integers(3, 9, n)',
        'df = pd.DataFrame({"id": np.repeat(np.arange(1, n + 1), k), "age": np.repeat(rng.normal(50, 10, n).round(), k),',
        '                   "dose": np.repeat(rng.choice(["a", "b"], n), k)})',
        'df["t"] = df.groupby("id").cumcount() + 1',
        'df["E"] = 0',
        'df.loc[df.groupby("id")["t"].idxmax().iloc[[4, 17]], "E"] = 1  # two subjects end in the event'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);

    const panel = await startCopilot(page, 'E', 'ask');
    const card = panel.locator('.jp-dcpilot-decision[data-gate="task"]');
    await expect(card).toBeVisible({ timeout: 120000 });
    await expect(card).toContainText("the rows may be periods of each 'id' ('t' rises by one");
    await expect(card).toContainText('2 events too few to tell that from chance');
    const options = await card
      .locator('.jp-dcpilot-option')
      .evaluateAll(els => els.map(e => e.getAttribute('data-option')));
    expect(options.slice(0, 2)).toEqual(['confirm', 'survival']);
    expect(options).not.toContain('regression'); // a 0/1 target is no score
    // each guess said once, then what was seen and what survival would do: short enough to read (the task
    // itself in short sentences, issue 26)
    const question = await card.locator('.jp-dcpilot-question').first().innerText();
    expect(question.length).toBeLessThanOrEqual(400);
    await expect(card).toContainText("Or survival: one row per 'id', followed until its last 't'?");
    const survival = card.locator('.jp-dcpilot-option[data-option="survival"]');
    await expect(survival).toContainText('It is survival');
    await expect(survival).toHaveAttribute('title', /One row per 'id', followed until its last 't'/);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/person-periods-question.png' });

    await survival.click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    // the run goes on as survival over the periods: one row per subject, followed until its last
    // period, is asked and recommended (the cards before it answered as recommended)
    const collapse = page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'aggregate_per_entity' });
    const periodsOption = '.jp-dcpilot-option[data-option="aggregate_periods"]';
    const periods = panel.locator(periodsOption);
    let asked = false;
    for (let i = 0; i < 40 && (await collapse.count()) === 0; i++) {
      if (await periods.isVisible()) {
        await expect(periods).toHaveClass(/jp-mod-recommended/);
        await expect(periods).toContainText('One row per entity (follow-up to its last period)');
        asked = true;
        await periods.click();
      } else {
        // never the periods card itself: the test answers and checks that one
        await answerRecommended(panel, periodsOption);
      }
      await page.waitForTimeout(3000);
    }
    expect(asked).toBe(true);
    await expect(collapse).toHaveCount(1, { timeout: 60000 });
    await expect(collapse).toContainText(/time=["']t["']/);
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });
});
