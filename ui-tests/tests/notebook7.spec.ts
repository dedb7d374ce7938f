import { expect, test } from '@jupyterlab/galata';
import type { Locator, Page } from '@playwright/test';
import { LEAK_FRAME } from './start';

/**
 * The magics' decision cards in Notebook 7 (the same server galata starts serves /notebooks/):
 * a card is drawn as ipywidgets, with what each option does to the model; a click records the
 * answer, which %dcstatus then reads back.
 */

// the notebook is opened in a page of its own (galata's page drives JupyterLab, not Notebook 7)
test.use({ autoGoto: false, sessions: null, viewport: { width: 1400, height: 1600 } });

const FRAME = [...LEAK_FRAME, 'df.shape'];

function notebook(cells: string[][]): string {
  return JSON.stringify({
    cells: cells.map((source, i) => ({
      cell_type: 'code',
      id: `cell-${i}`,
      execution_count: null,
      metadata: {},
      outputs: [],
      source: source.join('\n')
    })),
    metadata: {
      kernelspec: { display_name: 'Python 3 (ipykernel)', language: 'python', name: 'python3' }
    },
    nbformat: 4,
    nbformat_minor: 5
  });
}

/** Run the cell at ``index`` as a person would: click into it, Shift+Enter. */
async function runCell(page: Page, index: number): Promise<Locator> {
  const cell = page.locator('.jp-Notebook .jp-CodeCell').nth(index);
  await cell.locator('.jp-InputArea-editor').click();
  await page.keyboard.press('Shift+Enter');
  return cell.locator('.jp-Cell-outputArea');
}

test.describe('Data co-pilot inline in Notebook 7', () => {
  test('a card is a widget with its impact chart; a click is recorded in the decision log', async ({
    page,
    context,
    tmpPath
  }) => {
    test.setTimeout(480000);
    const path = `${tmpPath}/nb7.ipynb`;
    await page.contents.uploadContent(
      notebook([FRAME, ['%load_ext jupyter_dcpilot', '%dcplan df --target y --approve ask'], ['%dcstatus']]),
      'text',
      path
    );
    const nb = await context.newPage();
    await nb.goto(`notebooks/${path}`);
    // Notebook 7's own shell, not JupyterLab's
    await expect(nb.locator('#main-panel .jp-NotebookPanel')).toBeVisible({ timeout: 60000 });
    await expect(nb.locator('.jp-LabShell')).toHaveCount(0);

    // the first run waits for the page and its kernel to be ready: tried again until it shows
    await expect(async () => {
      const shape = await runCell(nb, 0);
      await expect(shape).toContainText('(200, 4)', { timeout: 20000 });
    }).toPass({ timeout: 150000 });
    const output = await runCell(nb, 1);

    // answer what comes before the leakage question (confirming the task), with the ★ button
    const headers = output.locator('.widget-html', { hasText: 'Decision (' });
    const recommended = output.locator('button.widget-button', { hasText: '★' });
    const leakHeader = output.locator('.widget-html', { hasText: 'Decision (leakage)' });
    for (let i = 0; i < 5; i++) {
      await expect(recommended.first()).toBeVisible({ timeout: 120000 });
      if ((await leakHeader.count()) > 0) {
        break;
      }
      const asked = await headers.first().textContent();
      await recommended.first().click();
      await expect(headers.first()).not.toHaveText(asked ?? '', { timeout: 120000 });
    }
    await expect(leakHeader).toContainText('leak');
    await expect(headers).toHaveCount(1); // one question at a time
    // the innermost box holding the leakage header is its card
    const card = output
      .locator('.widget-vbox', { has: nb.locator('.widget-html', { hasText: 'Decision (leakage)' }) })
      .last();

    // the impact chart, in the card, with the recommended option marked
    const chart = card.locator('.dcpilot-impact');
    await expect(chart).toContainText('What each option does to the model (AUROC', { timeout: 180000 });
    await expect(chart.locator('.dcpilot-impact-row', { hasText: 'recommended' })).toHaveCount(1);
    await card.screenshot({ path: 'test-results/notebook7-card.png' });

    const star = card.locator('button.widget-button', { hasText: '★' });
    await card.locator('.widget-text input').fill('recorded after the outcome');
    await star.click();
    // the card takes no second answer (it leaves the widget once the run goes on to its end)
    for (const button of await card.locator('button.widget-button').all()) {
      await expect(button).toBeDisabled();
    }
    // the answer ran in the kernel: the drop's code shows under the magic
    await expect(output).toContainText('kt.drop_columns', { timeout: 120000 });
    // the run resumes and ends (the status said "blocked" before the click, so wait for its end)
    await expect(output.locator('.widget-html', { hasText: 'dcpilot' }).first()).toContainText(': finished', {
      timeout: 240000
    });

    // the decision log has it: %dcstatus lists the leakage step's answer, by the user, and the
    // card it draws again has no live button (a stale card never rewrites the log)
    const status = await runCell(nb, 2);
    // the leakage step, titled by its answer ('Drop leak')
    const row = status.locator('tr', { hasText: /leak/i }).first();
    await expect(row).toBeVisible({ timeout: 60000 });
    await expect(row).toContainText('done');
    await expect(row).toContainText('drop (by user)');
    // no card is drawn again with live buttons for an answered question
    await expect(status.locator('button.widget-button:not([disabled])')).toHaveCount(0);
    await nb.screenshot({ path: 'test-results/notebook7.png', fullPage: true });
  });
});
