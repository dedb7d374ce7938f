import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

/**
 * Open the co-pilot's panel, pick the DataFrame `df` of the open notebook, and start a session
 * predicting `target` under the `approve` policy, planned by `planner` (Claude: the fake API the
 * test server configures, ui-tests/fake_claude.py); the panel's locator is returned.
 */
export async function startCopilot(
  page: IJupyterLabPageFixture,
  target: string,
  approve: 'ask' | 'recommended',
  planner: 'rules' | 'claude' = 'rules'
): Promise<Locator> {
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('dcpilot:open');
  });
  const panel = page.locator('#jp-dcpilot-panel');
  await panel.locator('.jp-dcpilot-frame[data-frame="df"]').click({ timeout: 30000 });
  const form = panel.locator('.jp-dcpilot-start');
  await expect(form).toBeVisible({ timeout: 30000 });
  await form.locator('select[name="target"]').selectOption(target);
  await form.locator('summary').click();
  await form.locator('select[name="approve"]').selectOption(approve);
  await form.locator('select[name="planner"]').selectOption(planner);
  await form.getByRole('button', { name: 'Start co-pilot' }).click();
  return panel;
}
