import { expect, test } from '@jupyterlab/galata';
import { answerRecommended, startCopilot } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions.
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 2000 } });

/**
 * A hidden panel answered with one click (issue 26): 80 households surveyed 6 years each, written
 * out household by household with no id (province, tenure and schooling fixed, the head's age
 * rising by one). The task card offers, recommended, to group the rows in blocks of 6; choosing it
 * writes one cell numbering the blocks, and the split is grouped by that number. Taken by the approval
 * policy instead, the panel's structure section asks the entity with the card's own two options, the
 * blocks in force; keeping them confirms it.
 * (From a git worktree, run with PYTHONPATH=<worktree>, as periods.spec.ts says.)
 */
const HOUSEHOLDS = [
  'import numpy as np, pandas as pd',
  'rng = np.random.default_rng(3)',
  'n, k = 80, 6',
  'school = np.repeat(rng.integers(6, 18, n), k)',
  'df = pd.DataFrame({"province": np.repeat(rng.choice(list("ABCDE"), n), k),',
  '                   "tenure": np.repeat(rng.choice(["own", "rent"], n), k), "schooling": school,',
  '                   "head_age": np.repeat(rng.integers(25, 60, n), k) + np.tile(np.arange(k), n),',
  '                   "members": rng.integers(1, 7, n * k)})',
  'df["income"] = (20 + 3 * school + rng.normal(0, 2, n * k)).round(2)'
].join('\n');

test.describe('Data co-pilot: rows in blocks of one entity with no id', () => {
  test('group the rows in blocks of k: a block id, the split grouped by it', async ({ page }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('blocks.ipynb');
    await page.notebook.setCell(0, 'code', HOUSEHOLDS);
    await page.notebook.runCell(0, true);

    const panel = await startCopilot(page, 'income', 'ask');
    const card = panel.locator('.jp-dcpilot-decision[data-gate="task"]');
    await expect(card).toBeVisible({ timeout: 120000 });
    await expect(card).toContainText('Unsure of the entity: rows may be blocks of 6 records of one entity');
    await expect(card).not.toContainText('Or head age'); // a column rejected as the id is no answer
    const options = await card
      .locator('.jp-dcpilot-option')
      .evaluateAll(els => els.map(e => e.getAttribute('data-option')));
    expect(options.slice(0, 3)).toEqual(['confirm', 'blocks', 'entity:none']);
    const blocks = card.locator('.jp-dcpilot-option[data-option="blocks"]');
    await expect(blocks).toHaveClass(/jp-mod-recommended/);
    await expect(blocks).toContainText('Group the rows in blocks of 6 consecutive records (one entity each)');
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/hidden-panel-question.png' });

    await blocks.click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    const numbered = page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'number_blocks' });
    await expect(numbered).toHaveCount(1, { timeout: 60000 });
    await expect(numbered).toContainText(/size=6/);
    const split = page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'kt.split(' });
    for (let i = 0; i < 20 && (await split.count()) === 0; i++) {
      await answerRecommended(panel);
      await page.waitForTimeout(3000);
    }
    await expect(split).toContainText(/groups=["']block["']/, { timeout: 60000 });
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });

  test('the structure section offers the same blocks: in force once the policy took them, kept there', async ({
    page
  }) => {
    test.setTimeout(300000);
    await page.notebook.createNew('blocks2.ipynb');
    await page.notebook.setCell(0, 'code', HOUSEHOLDS);
    await page.notebook.runCell(0, true);
    const panel = await startCopilot(page, 'income', 'recommended');
    const question = panel.locator('.jp-dcpilot-structure[data-what="entity"]');
    await expect(question).toBeVisible({ timeout: 180000 });
    const choices = question.locator('.jp-dcpilot-structure-choice');
    await expect(choices).toHaveCount(2); // the card's two options, not the columns rejected as the id
    await expect(choices.nth(0)).toContainText(
      'Group the rows in blocks of 6 consecutive records (one entity each)'
    );
    await expect(choices.nth(0)).toContainText('in force');
    await expect(choices.nth(1)).toContainText('The rows are independent: each row is its own subject');
    await question.scrollIntoViewIfNeeded();
    await question.screenshot({ path: 'test-results/hidden-panel-structure.png' });
    await choices.nth(0).getByRole('button', { name: 'Keep it' }).click();
    await expect(question).toHaveCount(0, { timeout: 60000 }); // confirmed: nothing left to ask
    await expect(page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'number_blocks' })).toHaveCount(1);
  });
});
