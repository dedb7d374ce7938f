import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { LEAK_FRAME } from './start';

/** Append a code cell, run it in place, and return its index. */
async function run(page: IJupyterLabPageFixture, source: string): Promise<number> {
  await page.notebook.addCell('code', source);
  const index = (await page.notebook.getCellCount()) - 1;
  await page.notebook.runCell(index, true);
  return index;
}

/**
 * A new notebook `name` whose first cell makes `df` (a column `leak` recorded after the outcome
 * `y`) and whose second starts the co-pilot on it with `options`; the second cell's index.
 */
async function planInline(page: IJupyterLabPageFixture, name: string, options: string): Promise<number> {
  await page.notebook.createNew(name);
  await page.notebook.setCell(0, 'code', LEAK_FRAME.join('\n'));
  await page.notebook.runCell(0, true);
  return run(page, `%load_ext jupyter_dcpilot\n%dcplan df --target y ${options}`);
}

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
test.use({ autoGoto: true, sessions: null });

test.describe('Data co-pilot inline (magics)', () => {
  test('%dcplan shows decision cards as widgets; approving drops the leak, %dcundo brings it back', async ({
    page
  }) => {
    test.setTimeout(300000);
    const plan = await planInline(page, 'inline.ipynb', '--approve ask');

    const cells = page.locator('.jp-Notebook .jp-CodeCell');
    const output = cells.nth(plan).locator('.jp-Cell-outputArea');
    const headers = output.locator('.widget-html', { hasText: 'Decision (' });
    const recommended = output.locator('button.widget-button', { hasText: '★' });
    const leakHeader = output.locator('.widget-html', { hasText: 'Decision (leakage)' });

    // approve whatever comes before the leakage question (e.g. confirming the task)
    for (let i = 0; i < 5; i++) {
      await expect(recommended.first()).toBeVisible({ timeout: 120000 });
      if ((await leakHeader.count()) > 0) {
        break;
      }
      const asked = await headers.first().textContent();
      await recommended.first().click();
      await expect(headers.first()).not.toHaveText(asked ?? '', { timeout: 120000 });
    }
    await expect(leakHeader).toBeVisible();
    await expect(leakHeader).toContainText('leak');
    // the innermost box holding the leakage header is its card
    const card = output
      .locator('.widget-vbox', { has: page.locator('.widget-html', { hasText: 'Decision (leakage)' }) })
      .last();
    await expect(card.locator('button.widget-button')).not.toHaveCount(0);
    // one question at a time, with what each option does to the model, as the panel's card shows it
    await expect(headers).toHaveCount(1);
    const chart = card.locator('.dcpilot-impact');
    await expect(chart).toContainText('What each option does to the model (AUROC');
    await expect(chart.locator('.dcpilot-impact-row', { hasText: 'recommended' })).toHaveCount(1);
    await card.screenshot({ path: '../docs/images/inline-card-impact.png' });
    await card.locator('.widget-text input').fill('recorded after the outcome');
    // the status line still says 'blocked' from before the click: wait for the line the run ends with
    const status = output.locator('.widget-html', { hasText: 'dcpilot' }).first();
    const before = (await status.textContent()) ?? '';
    await card.locator('button.widget-button', { hasText: '★' }).click();

    // the drop ran in the kernel: its code and report show under the magic
    await expect(output).toContainText('kt.drop_columns', { timeout: 120000 });
    // a cell of the user's own, run while the click drives the run, keeps its output
    const mine = await run(page, "print('my own output')");
    expect((await page.notebook.getCellTextOutput(mine))?.join('')).toContain('my own output');
    await expect(status).not.toHaveText(before, { timeout: 180000 });
    await expect(status).toContainText(/: (blocked|finished|failed)/);
    await expect(output).not.toContainText('my own output');
    const dropped = await run(page, "'leak' in df.columns");
    expect((await page.notebook.getCellTextOutput(dropped))?.join('').trim()).toBe('False');

    // undo to the checkpoint taken before the leakage step
    const listed = await run(page, '%dccheckpoints');
    const row = cells.nth(listed).locator('.jp-RenderedMarkdown tr', { hasText: 'leak' }).first();
    await expect(row).toBeVisible({ timeout: 30000 });
    const checkpoint = (await row.locator('td').first().textContent())?.trim();
    expect(checkpoint).toBeTruthy();
    const undone = await run(page, `%dcundo ${checkpoint}`);
    expect((await page.notebook.getCellTextOutput(undone))?.join('')).toContain(
      `Restored checkpoint ${checkpoint}`
    );

    // the kernel has the column back
    const back = await run(page, "'leak' in df.columns");
    expect((await page.notebook.getCellTextOutput(back))?.join('').trim()).toBe('True');
    await page.screenshot({ path: 'test-results/inline.png' });
  });
});

test.describe('Data co-pilot inline (magics), interrupted', () => {
  // galata's mock of /api/kernels reads every answer as JSON: an interrupt's (204, empty) failed the test
  test.use({ kernels: null });

  test('Kernel → Interrupt stops a step a card started: the card says so, the frame is as before it', async ({
    page
  }) => {
    test.setTimeout(300000);
    // the cards' impact charts are the first test's: here their model fits would only slow the run
    const plan = await planInline(page, 'inline-interrupt.ipynb', '--approve ask --no-impact');
    const cells = page.locator('.jp-Notebook .jp-CodeCell');
    const output = cells.nth(plan).locator('.jp-Cell-outputArea');
    const headers = output.locator('.widget-html', { hasText: 'Decision (' });
    const recommended = output.locator('button.widget-button', { hasText: '★' });
    await expect(recommended.first()).toBeVisible({ timeout: 120000 });
    // a slow step that drops a column, then sleeps: an expert's custom step, asked by a card
    await run(
      page,
      [
        'from jupyter_dcpilot.engine.session import Step',
        "pilot = get_ipython().magics_manager.registry['DCPilotMagics'].pilot",
        'pilot.session.plan.append(Step(id=pilot.session.new_id("s"), episode="custom", title="Slow custom step",',
        '    gate="custom_code", code="df = df.drop(columns=[\'a\'])\\nimport time\\ntime.sleep(120)",',
        '    reason="the expert asked", params={"changes": ["df"]}))'
      ].join('\n')
    );
    const slowHeader = output.locator('.widget-html', { hasText: 'Decision (custom_code)' });
    for (let i = 0; i < 5; i++) {
      await expect(recommended.first()).toBeVisible({ timeout: 120000 });
      if ((await slowHeader.count()) > 0) {
        break;
      }
      const asked = await headers.first().textContent();
      await recommended.first().click();
      await expect(headers.first()).not.toHaveText(asked ?? '', { timeout: 120000 });
    }
    await expect(slowHeader).toBeVisible();
    await recommended.first().click(); // "Run this code"
    await expect(output.locator('.widget-html', { hasText: 'Running s' })).toContainText('Slow custom step', {
      timeout: 120000
    });
    await page.waitForTimeout(1000); // the cell has dropped 'a' and sleeps
    await page.evaluate(async () => {
      await (window as any).jupyterapp.commands.execute('notebook:interrupt-kernel');
    });
    const status = output.locator('.widget-html', { hasText: 'dcpilot' }).first();
    await expect(status).toContainText('Interrupted by you: s', { timeout: 60000 });
    await expect(status).toContainText('Slow custom step) stopped; nothing it changed is kept');
    // the kernel runs the next cell, on the frame as it was before the step
    const columns = await run(page, 'print(list(df.columns))');
    expect((await page.notebook.getCellTextOutput(columns))?.join('').trim()).toBe("['a', 'b', 'leak', 'y']");
  });
});
