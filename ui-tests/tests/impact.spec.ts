import { expect, test } from '@jupyterlab/galata';
import { startCopilot, approveUntilGate, waitForImpact } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
// a tall page, so the whole card shows; the panel keeps JupyterLab's default width
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 2000 } });

test.describe('Data co-pilot: the impact chart', () => {
  test('reads at the panel’s default width: whole labels, the recommended option marked, best only among valid ones', async ({
    page
  }) => {
    test.setTimeout(420000);
    await page.notebook.createNew('impact.ipynb');
    // a survival cohort seen at four visits: the later visits' marker tells more about the
    // outcome, so "mean over records" scores best — by using each patient's future
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(4)',
        'n = 150',
        'ids = np.repeat(np.arange(n), 4)',
        'visit = np.tile([0, 90, 180, 270], n)',
        'risk = np.repeat(rng.normal(size=n), 4)',
        'df = pd.DataFrame({"id": ids, "days": visit, "age": np.repeat(rng.normal(60, 10, n), 4),',
        '                   "marker": risk * visit / 270 + rng.normal(scale=0.5, size=4 * n)})',
        'df["futime"] = np.repeat(rng.exponential(400, n).round() + 300, 4)',
        'df["death"] = (risk + rng.normal(scale=0.7, size=4 * n) > 0).astype(int)',
        'df["death"] = df.groupby("id").death.transform("first")'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);
    const panel = await startCopilot(page, 'death', 'ask');

    // approve what comes before the question of one row per patient (the task, ...)
    const card = panel.locator('.jp-dcpilot-decision[data-gate="aggregation"]');
    await approveUntilGate(panel, 'aggregation');
    const chart = card.locator('.jp-dcpilot-impact');
    await waitForImpact(page, chart);

    // metric names in words
    await expect(chart.locator('.jp-dcpilot-impact-title')).toContainText('C-index');
    await expect(chart).not.toContainText('c_index');

    // every label whole, inside the card, at the panel's default width
    const rows = chart.locator('.jp-dcpilot-impact-row');
    expect(await rows.count()).toBeGreaterThanOrEqual(4);
    const box = (await chart.boundingBox())!;
    expect(box.width).toBeLessThan(400); // the default width, not a widened panel
    for (const name of await chart.locator('.jp-dcpilot-impact-name').all()) {
      const fits = await name.evaluate(
        el => el.scrollWidth <= el.clientWidth + 1 && el.scrollHeight <= el.clientHeight + 1
      );
      expect(fits).toBe(true);
      const own = (await name.boundingBox())!;
      expect(own.x).toBeGreaterThanOrEqual(box.x);
      expect(own.x + own.width).toBeLessThanOrEqual(box.x + box.width + 0.5);
    }
    await expect(rows.filter({ hasText: 'One row per entity (first record)' })).toHaveCount(1);
    // nor is any button's text cut (e.g. "Reject (...)" under the card)
    const cut = await card
      .locator('button, .jp-dcpilot-decision-title')
      .evaluateAll(els => els.filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.textContent));
    expect(cut).toEqual([]);

    // the recommended option is marked; the best colour goes to the best option that leaves a
    // valid model, never to a flagged one
    const recommended = rows.locator('.jp-dcpilot-impact-recommended');
    await expect(recommended).toHaveCount(1);
    await expect(rows.filter({ has: page.locator('.jp-dcpilot-impact-recommended') })).toHaveAttribute(
      'data-option',
      'aggregate_first'
    );
    const scored = await rows.evaluateAll(items =>
      items.map(li => ({
        option: li.getAttribute('data-option'),
        mean: Number(li.getAttribute('data-mean') || NaN),
        best: li.getAttribute('data-best') === 'yes',
        flagged: li.getAttribute('data-flagged') === 'yes'
      }))
    );
    const valid = scored.filter(s => !s.flagged && !Number.isNaN(s.mean));
    const top = valid.reduce((a, b) => (b.mean > a.mean ? b : a));
    expect(scored.filter(s => s.best).map(s => s.option)).toEqual([top.option]);
    // the scenario of issue 29: a flagged summary over every record scores above the recommended one
    const mean = scored.find(s => s.option === 'aggregate_mean')!;
    expect(mean.flagged).toBe(true);
    expect(mean.best).toBe(false);
    await expect(chart.locator('.jp-dcpilot-impact-bar.jp-mod-best.jp-mod-flagged')).toHaveCount(0);

    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/impact-chart.png' });
    await page.theme.setDarkTheme();
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/impact-chart-dark.png' });
    await page.theme.setLightTheme();
  });
});
