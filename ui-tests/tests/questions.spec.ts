import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';
import { answerRecommended, startCopilot } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions.
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 2000 } });

/**
 * The questions session 16 added, each on a small generated table, reached, read and answered in
 * the panel at its default width: an ordered-levels target, a two-code status whose "event" rows
 * were followed longest, dose rows of a long cohort, and a measure named between the start and the
 * target's time. (The server and its kernels import the installed package; from a git worktree,
 * run with PYTHONPATH=<worktree> so both import the worktree's jupyter_dcpilot and kernel_tools.)
 */

/** Make `df` in a new notebook from `source` (one statement a line: the editor indents blocks). */
async function makeFrame(page: IJupyterLabPageFixture, name: string, source: string[]): Promise<void> {
  await page.notebook.createNew(name);
  await page.notebook.setCell(0, 'code', source.join('\n'));
  await page.notebook.runCell(0, true);
}

/**
 * Answer every card before the one on `gate` holding `option` with its recommended option; that card
 * is returned (a card holding `option` is never answered here: resolved again at the click).
 */
async function reach(panel: Locator, gate: string, option: string, rounds = 40): Promise<Locator> {
  const has = panel.page().locator(option);
  const card = panel.locator(`.jp-dcpilot-decision[data-gate="${gate}"]`, { has });
  for (let i = 0; i < rounds && !(await card.isVisible()); i++) {
    await answerRecommended(panel, option);
    await panel.page().waitForTimeout(2000);
  }
  await expect(card).toBeVisible({ timeout: 60000 });
  return card;
}

/** Answer each card that follows with its recommended option until the verdict shows; it is returned. */
async function verdictAfter(panel: Locator, rounds = 60): Promise<Locator> {
  const verdict = panel.locator('.jp-dcpilot-validity');
  for (let i = 0; i < rounds && !(await verdict.isVisible()); i++) {
    await answerRecommended(panel);
    await panel.page().waitForTimeout(2000);
  }
  await expect(verdict).toBeVisible({ timeout: 120000 });
  return verdict;
}

/** The ids of a card's options, in the order it shows them. */
async function optionIds(card: Locator): Promise<(string | null)[]> {
  return card.locator('.jp-dcpilot-option').evaluateAll(els => els.map(e => e.getAttribute('data-option')));
}

/** The card fits the panel at its default width: nothing wider than the card itself. */
async function expectFits(card: Locator): Promise<void> {
  const overflow = await card.evaluate(el => el.scrollWidth - el.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

/** The notebook's code cell holding `text`, run (an execution count), and its output. */
async function ranCell(page: IJupyterLabPageFixture, text: string): Promise<Locator> {
  const cell = page.locator('.jp-Notebook .jp-CodeCell', { hasText: text });
  await expect(cell).toHaveCount(1, { timeout: 120000 });
  await expect(cell.locator('.jp-InputPrompt')).toHaveText(/\[\d+\]/, { timeout: 60000 });
  await expect(
    cell.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
  ).toHaveCount(0);
  return cell;
}

const STATUS_FRAME = [
  'import numpy as np, pandas as pd',
  'rng = np.random.default_rng(0); n = 400',
  'x = rng.normal(size=n)',
  'event_time = rng.exponential(40 * np.exp(-0.7 * x)); end_of_study = rng.uniform(60, 80, n)',
  '# 1 marks the censored (followed to the study end), 0 the event: the reverse of the convention',
  'df = pd.DataFrame({"age": rng.normal(60, 10, n).round(), "marker": x.round(3),',
  '                   "time": np.minimum(event_time, end_of_study).round(1) + 0.1,',
  '                   "status": np.where(event_time <= end_of_study, 0, 1)})'
];

test.describe('Data co-pilot: the questions of session 16, in the panel', () => {
  test('ordered levels: the task asks, with the order as evidence, and ranks the levels when confirmed', async ({
    page
  }) => {
    test.setTimeout(300000);
    await makeFrame(page, 'levels.ipynb', [
      'import numpy as np, pandas as pd',
      'rng = np.random.default_rng(0); n = 300',
      'x = rng.normal(size=n)',
      'grades = np.array(["none", "mild", "moderate", "severe"])',
      'level = np.digitize(x + rng.normal(scale=0.5, size=n), np.quantile(x, [0.25, 0.5, 0.75]))',
      'df = pd.DataFrame({"age": rng.normal(50, 10, n).round(), "crp": x.round(2), "severity": grades[level]})'
    ]);
    const panel = await startCopilot(page, 'severity', 'ask');
    const card = await reach(panel, 'task', '.jp-dcpilot-option[data-option="confirm"]');
    await expect(card.locator('.jp-dcpilot-question')).toContainText(
      'a regression on the ranks (none < mild < moderate < severe)'
    );
    // the recommended reading keeps the order (a regression on the ranks); classes are the alternative
    expect(await optionIds(card)).toEqual(['confirm', 'classification']);
    await expect(card.locator('.jp-dcpilot-option[data-option="confirm"]')).toHaveClass(/jp-mod-recommended/);
    await expect(card.locator('.jp-dcpilot-option[data-option="confirm"]')).toContainText(
      'Regression on the ranks'
    );
    await expectFits(card);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/ordered-levels-question.png' });

    await card.locator('.jp-dcpilot-option[data-option="confirm"]').click();
    await ranCell(page, "kt.rank_levels(df, column='severity'");
    await ranCell(page, "kt.split(df, target='severity')");
    const verdict = await verdictAfter(panel);
    const confirmed = verdict.locator('li[data-check="structure_confirmed"]');
    await expect(confirmed).toHaveAttribute('data-passed', 'yes');
    await expect(confirmed).toContainText('by the user in the panel');
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });

  test('a two-code status, unconfirmed, keeps the run not valid under the recommended answers', async ({
    page
  }) => {
    test.setTimeout(300000);
    await makeFrame(page, 'status-policy.ipynb', STATUS_FRAME);
    const panel = await startCopilot(page, 'status', 'recommended');
    const verdict = panel.locator('.jp-dcpilot-validity');
    await expect(verdict).toBeVisible({ timeout: 240000 });
    const confirmed = verdict.locator('li[data-check="structure_confirmed"]');
    await expect(confirmed).toHaveAttribute('data-passed', 'no');
    await expect(confirmed).toContainText('the task');
    await ranCell(page, "kt.recode_status(df, column='status', censored=1)");
  });

  test('which code is censored: each code with its share and follow-up; the other code chosen recodes', async ({
    page
  }) => {
    test.setTimeout(300000);
    await makeFrame(page, 'status.ipynb', STATUS_FRAME);
    const panel = await startCopilot(page, 'status', 'ask');
    const card = await reach(panel, 'task', '.jp-dcpilot-option[data-option="censored:0"]');
    await expect(card).toHaveAttribute('data-gate', 'task');
    await expect(card.locator('.jp-dcpilot-question')).toContainText(
      "Which code of 'status' means censored: 1 or 0? Or none, if the codes are classes?"
    );
    const evidence = card.locator('.jp-dcpilot-evidence');
    await expect(evidence).toContainText(
      '0 on 78% of rows (median time 18.2), 1 on 22% of rows (median time 67.8)'
    );
    await expect(evidence).toContainText('1 is likely censored');
    // the readings ranked, the recommended one named by what it reads (not a bare "Confirm")
    expect(await optionIds(card)).toEqual(['confirm', 'censored:0', 'classification']);
    const recommended = card.locator('.jp-dcpilot-option[data-option="confirm"]');
    await expect(recommended).toHaveClass(/jp-mod-recommended/);
    await expect(recommended).toHaveText('Survival with 1 censored (recommended)');
    const other = card.locator('.jp-dcpilot-option[data-option="censored:0"]');
    await expect(other).toHaveText('Survival with 0 censored');
    await expect(other).toHaveAttribute('title', /its rows were followed 18.2 \(median\) against 67.8 for 1/);
    await expectFits(card);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/censored-code-question.png' });

    // the expert knows 0 marks the censored here: not the recommended reading
    await other.click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    const recode = await ranCell(page, "kt.recode_status(df, column='status', censored=0)");
    await expect(recode.locator('.jp-OutputArea-output')).not.toHaveCount(0);
    const verdict = await verdictAfter(panel);
    const confirmed = verdict.locator('li[data-check="structure_confirmed"]');
    await expect(confirmed).toHaveAttribute('data-passed', 'yes');
    await expect(confirmed).toContainText('by the user in the panel');
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });

  test('dose rows: said in words, and each measurement given its dose history', async ({ page }) => {
    test.setTimeout(360000);
    await makeFrame(page, 'doses.ipynb', [
      'import numpy as np, pandas as pd',
      'rng = np.random.default_rng(1); n, k = 40, 8  # 40 patients, a dose every 12 h, a level 6 h after each',
      'patient = np.repeat(np.arange(1, n + 1), 2 * k); weight = np.repeat(rng.normal(3, 0.5, n).round(2), 2 * k)',
      'hours = np.tile(np.ravel([[12.0 * i, 12.0 * i + 6] for i in range(k)]), n)',
      'given = rng.uniform(5, 15, n * k).round(1); dose_row = np.tile([True, False], n * k)',
      'so_far = np.repeat(given.reshape(n, k).cumsum(axis=1).ravel(), 2)',
      'df = pd.DataFrame({"patient": patient, "hours": hours, "dose_mg": np.where(dose_row, np.repeat(given, 2), np.nan),',
      '                   "level": np.where(dose_row, np.nan, (so_far / (weight * 10) + rng.normal(0, 0.3, 2 * n * k)).round(2)),',
      '                   "weight": weight})'
    ]);
    const panel = await startCopilot(page, 'level', 'ask');
    const option = '.jp-dcpilot-option[data-option="dose_history"]';
    const card = await reach(panel, 'row_removal', option);
    await expect(card).toHaveAttribute('data-gate', 'row_removal');
    await expect(card.locator('.jp-dcpilot-question')).toContainText(
      "320 rows are dose records, not measurements: the target 'level' is missing on all of them"
    );
    await expect(card.locator(option)).toHaveClass(/jp-mod-recommended/);
    // the records' time is no survival time (the card said "The survival time: 'hours'")
    await expect(card.locator('.jp-dcpilot-evidence')).toContainText('Record time: hours');
    await expect(card.locator('.jp-dcpilot-evidence')).not.toContainText('survival');
    await expect(card.locator('.jp-dcpilot-advice')).toContainText(
      "Give each measurement row the dose_mg so far of its 'patient', the last dose_mg"
    );
    await expectFits(card);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/dose-rows-question.png' });

    await card.locator(option).click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    await ranCell(page, "kt.dose_history(df, id='patient', time='hours', dose='dose_mg')");
    const verdict = await verdictAfter(panel);
    await expect(verdict.locator('li[data-check="structure_confirmed"]')).toHaveAttribute(
      'data-passed',
      'yes'
    );
    await expect(verdict.locator('li[data-check="model_trained"]')).toContainText('features');
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });

  test('a measure named between the start and the target: asked, kept by the expert', async ({ page }) => {
    test.setTimeout(300000);
    await makeFrame(page, 'between.ipynb', [
      'import numpy as np, pandas as pd',
      'rng = np.random.default_rng(5); n = 400',
      'pain = rng.integers(0, 11, n)',
      'df = pd.DataFrame({"age": rng.normal(55, 12, n).round(), "score_d0": rng.integers(0, 11, n),',
      '                   "analgesia_48h": (5 * pain + rng.normal(0, 5, n)).round(1), "pain_day3": pain})'
    ]);
    const panel = await startCopilot(page, 'pain_day3', 'ask');
    const card = await reach(panel, 'leakage', '.jp-dcpilot-option[data-option="keep"]');
    const question = card.locator('.jp-dcpilot-question');
    await expect(question).toContainText("named at '48h', after the start and before the target's 'day3'");
    await expect(question).toContainText(
      'known at the prediction time only when the prediction is made after it'
    );
    // every evidence line says something (an empty "Rationale:" was shown)
    const lines = await card.locator('.jp-dcpilot-evidence li').allInnerTexts();
    expect(lines.filter(line => /:\s*$/.test(line))).toEqual([]);
    expect(await optionIds(card)).toEqual(['drop', 'keep']);
    await expectFits(card);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/between-times-question.png' });

    // the expert knows the dose is decided before the prediction: kept, not the recommended drop
    await card.locator('.jp-dcpilot-option[data-option="keep"]').click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    const fit = await ranCell(page, 'kt.fit_evaluate(');
    await expect(page.locator('.jp-Notebook .jp-CodeCell', { hasText: 'drop_columns' })).toHaveCount(0);
    await expect(fit).toBeVisible();
    const verdict = await verdictAfter(panel);
    const confirmed = verdict.locator('li[data-check="structure_confirmed"]');
    await expect(confirmed).toHaveAttribute('data-passed', 'yes');
    await expect(confirmed).toContainText('by the user in the panel');
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });

  test('the window over clock times: each with the stays it sees; a shorter one chosen summarises 6 h', async ({
    page
  }) => {
    test.setTimeout(360000);
    // two frames of one ICU: a row per stay (the target), vital signs stamped with clock times over 72 h
    await makeFrame(page, 'window.ipynb', [
      'import numpy as np, pandas as pd',
      'rng = np.random.default_rng(0); n = 300',
      'df = pd.DataFrame({"stay_id": np.arange(1001, 1001 + n), "age": rng.integers(20, 90, n),',
      '                      "admit_time": pd.Timestamp("2130-01-01") + pd.to_timedelta(rng.uniform(0, 8760, n).round(2), unit="h")})',
      'k = rng.poisson(10, n) + 1; sick = rng.normal(size=n)',
      'vitals = pd.DataFrame({"stay_id": np.repeat(df["stay_id"].to_numpy(), k),',
      '                       "chart_time": np.repeat(df["admit_time"].to_numpy(), k) + pd.to_timedelta(rng.uniform(0, 72, k.sum()).round(2), unit="h"),',
      '                       "item": rng.choice(["heart_rate", "resp_rate", "sbp"], k.sum())})',
      'vitals["value"] = (np.repeat(sick, k) * 10 + rng.normal(80, 10, k.sum())).round(1)',
      'df["died"] = (sick + rng.normal(0, 1, n) > 1.2).astype(int)',
      'df["admit_time"] = df["admit_time"].astype(str); vitals["chart_time"] = vitals["chart_time"].astype(str)'
    ]);
    const panel = await startCopilot(page, 'died', 'ask', 'rules', ['vitals']);
    const six = '.jp-dcpilot-option[data-option="summarize_then_join_6h"]';
    const card = await reach(panel, 'join', six);
    await expect(card.locator('.jp-dcpilot-question')).toContainText(
      "How long after 'admit_time' the prediction is made is the expert's choice"
    );
    const windows = ['summarize_then_join_6h', 'summarize_then_join', 'summarize_then_join_48h'];
    expect((await optionIds(card)).filter(id => windows.includes(id ?? ''))).toEqual(windows);
    const day = card.locator('.jp-dcpilot-option[data-option="summarize_then_join"]');
    await expect(day).toHaveClass(/jp-mod-recommended/);
    await expect(day).toContainText('over the first 24 h');
    // each window says how many stays it sees (the evidence a choice needs)
    await expect(card.locator(six)).toHaveAttribute('title', /187 of 300 'df'/);
    // and shows it where the advice is when pointed at, not in a tooltip only
    await card.locator(six).hover();
    await expect(card.locator('.jp-dcpilot-advice')).toContainText(
      "Summarise vitals over the first 6 h, then join: One row per 'stay_id'"
    );
    await expect(card.locator('.jp-dcpilot-advice')).toContainText("187 of 300 'df' rows have records in it");
    // the key candidates are the question's words, never a Python repr in the evidence
    await expect(card.locator('.jp-dcpilot-evidence')).not.toContainText('{');
    await expectFits(card);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/window-question.png' });

    await card.locator(six).click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    // the pair of frames: the records over the first 6 h after each stay's admission, then the join
    await ranCell(page, "kt.summarize_records(vitals, id='stay_id', time='chart_time', until=6,");
    await ranCell(page, "kt.join_frames(df, vitals, on='stay_id', how='left')");
    const verdict = await verdictAfter(panel);
    await expect(verdict.locator('li[data-check="model_trained"]')).toContainText('features');
    await expect(panel.locator('.jp-dcpilot-error')).toHaveCount(0);
  });
});
