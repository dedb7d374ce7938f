import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

/** The source of a cell making `df`: two features, `leak` (recorded after the outcome `y`) and `y`. */
export const LEAK_FRAME = [
  'import numpy as np, pandas as pd',
  'rng = np.random.default_rng(0)',
  'y = rng.integers(0, 2, 200)',
  'df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200),',
  '                   "leak": y + rng.normal(scale=0.05, size=200), "y": y})'
];

/**
 * Open the co-pilot's panel, pick the DataFrame `df` of the open notebook, and start a session
 * predicting `target` under the `approve` policy, planned by `planner` (Claude: the fake API the
 * test server configures, ui-tests/fake_claude.py), joined with the notebook's frames `join`
 * (ticked on the form); the panel's locator is returned.
 */
export async function startCopilot(
  page: IJupyterLabPageFixture,
  target: string,
  approve: 'ask' | 'recommended',
  planner: 'rules' | 'claude' = 'rules',
  join: string[] = []
): Promise<Locator> {
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('dcpilot:open');
  });
  const panel = page.locator('#jp-dcpilot-panel');
  await panel.locator('.jp-dcpilot-frame[data-frame="df"]').click({ timeout: 30000 });
  const form = panel.locator('.jp-dcpilot-start');
  await expect(form).toBeVisible({ timeout: 30000 });
  await form.locator('select[name="target"]').selectOption(target);
  for (const name of join) {
    await form.locator(`input[name="join"][value="${name}"]`).check();
  }
  await form.locator('summary').click();
  await form.locator('select[name="approve"]').selectOption(approve);
  await form.locator('select[name="planner"]').selectOption(planner);
  await form.getByRole('button', { name: 'Start co-pilot' }).click();
  return panel;
}

/**
 * Approve the panel's first decision card, wait until it has gone, and repeat until the first card
 * is on `gate` (left for the test to answer) or `limit` cards were approved.
 */
export async function approveUntilGate(panel: Locator, gate: string, limit = 5): Promise<void> {
  for (let i = 0; i < limit; i++) {
    const card = panel.locator('.jp-dcpilot-decision').first();
    await expect(card).toBeVisible({ timeout: 120000 });
    if ((await card.getAttribute('data-gate')) === gate) {
      return;
    }
    await approveAndWait(panel, card);
  }
}

/** Approve `card` and wait until the panel no longer shows it. */
export async function approveAndWait(panel: Locator, card: Locator): Promise<void> {
  const id = await card.getAttribute('data-decision');
  await card.locator('.jp-dcpilot-approve').click();
  await expect(panel.locator(`[data-decision="${id}"]`)).toHaveCount(0, { timeout: 60000 });
}

/**
 * Answer the panel's first card with its recommended option when one can be clicked now; a card
 * that goes, or is disabled while a step runs, between the check and the click is left for the
 * caller's next round instead of holding the test until its timeout. A first card holding
 * `keep` (a selector of the option the test answers itself) is never answered here: the locator
 * is resolved again at the click, so a card that arrives between the check and the click is left.
 */
export async function answerRecommended(panel: Locator, keep?: string): Promise<void> {
  let card = panel.locator('.jp-dcpilot-decision').first();
  if (keep) {
    card = card.filter({ hasNot: panel.page().locator(keep) });
  }
  const option = card.locator('.jp-dcpilot-option.jp-mod-recommended:enabled').first();
  if (await option.isVisible()) {
    await option.click({ timeout: 10000 }).catch(() => undefined);
  }
}

/** Python printing every thread's stack in the kernel: where an estimate that never ends is stuck. */
const THREAD_STACKS = [
  'import sys, threading, traceback',
  'names = {t.ident: t.name for t in threading.enumerate()}',
  'for ident, frame in sys._current_frames().items():',
  '    print(f"--- {names.get(ident, ident)}")',
  '    print("".join(traceback.format_stack(frame)[-8:]))'
].join('\n');

/**
 * Wait until the impact chart `chart` is done. The first estimate of a fresh server pays for the
 * kernel's first model imports in a background thread that gives way to every other process: on
 * a loaded CI machine that took minutes. If it is still not done, the kernel's thread stacks are
 * printed in the test's log (a cell run in the open notebook, given 30 s) before the test fails.
 */
export async function waitForImpact(
  page: IJupyterLabPageFixture,
  chart: Locator,
  timeout = 240000
): Promise<void> {
  try {
    await expect(chart).toHaveAttribute('data-status', 'done', { timeout });
  } catch (error) {
    const cell = await page.notebook.getCellCount();
    await page.notebook.addCell('code', THREAD_STACKS);
    const ran = page.notebook.runCell(cell, true).then(() => page.notebook.getCellTextOutput(cell));
    const stuck = new Promise<string[]>(resolve =>
      setTimeout(() => resolve(['the kernel did not answer within 30 s']), 30000)
    );
    console.log(
      `impact chart not done; the kernel's threads:\n${((await Promise.race([ran, stuck])) ?? []).join('\n')}`
    );
    throw error;
  }
}
