import { execFileSync } from 'child_process';
import * as path from 'path';

import { expect, test } from '@jupyterlab/galata';
import { startCopilot, approveUntilGate, waitForImpact } from './start';

// galata's mock of /api/sessions also matches /dcpilot/api/sessions: do not mock sessions
test.use({ autoGoto: true, sessions: null, viewport: { width: 1400, height: 1600 } });

/** An agent (an MCP client named `agent`) proposes an answer to the decision the notebook waits for. */
function propose(notebook: string, agent: string, rationale: string): { outcome: string } {
  const script = path.join(__dirname, '..', 'agents', 'propose.py');
  return JSON.parse(execFileSync('python', [script, notebook, agent, '', rationale], { encoding: 'utf-8' }));
}

test.describe("Data co-pilot: an agent's proposal", () => {
  test('shows "Agent X proposes …" on the card; the person accepts it with one click', async ({ page }) => {
    test.setTimeout(480000);
    await page.notebook.createNew('agent.ipynb');
    await page.notebook.setCell(
      0,
      'code',
      [
        'import numpy as np, pandas as pd',
        'rng = np.random.default_rng(0)',
        'y = rng.integers(0, 2, 300)',
        'df = pd.DataFrame({"age": rng.normal(60, 10, 300), "bp": rng.normal(130, 15, 300),',
        '                   "leak": y + rng.normal(scale=0.05, size=300), "y": y})'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);
    const notebook = await page.evaluate(() => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as { context: { path: string } };
      return widget.context.path;
    });
    const panel = await startCopilot(page, 'y', 'ask');

    const card = panel.locator('.jp-dcpilot-decision[data-gate="leakage"]');
    await approveUntilGate(panel, 'leakage');
    await waitForImpact(page, card.locator('.jp-dcpilot-impact'));

    // the agent answers through the MCP tools: a proposal, not a decision (the gate is the person's)
    const why = 'the lab measures it at admission';
    expect(propose(notebook, 'reviewer', why).outcome).toBe('proposed');
    const proposal = card.locator('.jp-dcpilot-proposal');
    await expect(proposal).toBeVisible({ timeout: 30000 });
    await expect(proposal).toHaveAttribute('data-agent', 'reviewer');
    await expect(proposal).toContainText('Agent reviewer proposes:');
    await expect(proposal).toContainText(why);
    const choice = (await proposal.getAttribute('data-choice')) as string;
    await expect(card.locator(`.jp-dcpilot-option[data-option="${choice}"]`)).toHaveClass(/jp-mod-proposed/);
    await expect(card.locator(`.jp-dcpilot-impact-row[data-option="${choice}"]`)).toContainText(
      "agent's proposal"
    );
    // no button's text is cut at the panel's default width
    const cut = await card
      .locator('button')
      .evaluateAll(els => els.filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.textContent));
    expect(cut).toEqual([]);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/agent-proposal.png' });
    await page.theme.setDarkTheme();
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: '../docs/images/agent-proposal-dark.png' });
    await page.theme.setLightTheme();

    // one click: the person's answer, with the agent named in the log
    await proposal.getByRole('button', { name: "Accept agent's proposal" }).click();
    await expect(card).toHaveCount(0, { timeout: 60000 });
    await panel.locator('.jp-dcpilot-log summary').click();
    await expect(panel.locator('.jp-dcpilot-transcript')).toContainText('agent reviewer proposed', {
      timeout: 30000
    });
    await expect(
      page.locator('.jp-Notebook .jp-MarkdownCell', { hasText: 'accepted the proposal of agent reviewer' })
    ).toHaveCount(1, {
      timeout: 60000
    });
  });
});
