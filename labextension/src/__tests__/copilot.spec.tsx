import * as React from 'react';
import { act, fireEvent, render, screen } from '@testing-library/react';

import { cellOutcome } from '../outcome';
import { IEventSocket, IHostHandler, SessionModel } from '../session';
import { IDecision, ISession, ISessionSource } from '../sessionApi';
import { DecisionCard } from '../decisionCard';
import { SessionView } from '../sessionView';

const leakage: IDecision = {
  id: 'd2',
  step_id: 's2',
  gate: 'leakage',
  question: 'leak predicts y almost perfectly. Is it known before the outcome?',
  evidence: { auc: 0.987, column: 'leak' },
  evidence_lines: ['AUC: 0.987', 'Column: leak'],
  options: [
    { id: 'drop', label: 'Drop leak', description: '', risk: '', recommended: true, action: null },
    { id: 'keep', label: 'Keep it', description: '', risk: '', recommended: false, action: null }
  ],
  recommended: 'drop',
  columns: ['leak'],
  choice: null,
  by: null,
  at: null,
  rationale: '',
  chart: null,
  history: [],
  impact: null,
  proposal: null
};

function session(overrides: Partial<ISession> = {}): ISession {
  return {
    id: 'a'.repeat(32),
    path: 'nb.ipynb',
    frame: 'df',
    state: 'blocked',
    plan: [
      {
        id: 's2',
        episode: 'leakage',
        title: 'Drop the target proxy leak',
        status: 'awaiting_decision',
        gate: 'leakage',
        columns: ['leak'],
        reason: '',
        decision_id: 'd2',
        checkpoint_id: null,
        cell_ids: [],
        error: null,
        note: ''
      }
    ],
    decisions: [leakage],
    checkpoints: [],
    transcript: [{ at: 't', kind: 'observe', text: 'diagnosed df (200, 4)' }],
    ...overrides
  };
}

/** A socket that records what the model sends. */
function fakeSocket(): IEventSocket & { sent: unknown[] } {
  const sent: unknown[] = [];
  return {
    sent,
    onmessage: null,
    onclose: null,
    send: (d: string) => sent.push(JSON.parse(d)),
    close: () => undefined
  };
}

function fakeSource(calls: string[]): ISessionSource {
  return {
    start: async options => {
      calls.push(`start:${options.frame}:${options.target}:${options.approve}`);
      return session();
    },
    get: async () => session(),
    decide: async (_id, decisionId, choice) => {
      calls.push(`decide:${decisionId}:${choice}`);
      return session({ state: 'running', decisions: [{ ...leakage, choice }] });
    },
    undo: async (_id, checkpoint) => {
      calls.push(`undo:${checkpoint}`);
      return session();
    },
    list: async path => {
      calls.push(`list:${path}`);
      return [];
    },
    interrupt: async id => {
      calls.push(`interrupt:${id}`);
      return null;
    },
    status: async () => ({ version: '0', planners: ['rules'], llm_configured: false, model: null })
  };
}

describe('DecisionCard', () => {
  it('marks the recommended option and calls back with the choice', () => {
    const chosen: string[][] = [];
    render(<DecisionCard decision={leakage} onDecide={(c, r) => chosen.push([c, r])} />);
    const drop = document.querySelector('[data-option="drop"]')!;
    const keep = document.querySelector('[data-option="keep"]')!;
    expect(drop.classList.contains('jp-mod-recommended')).toBe(true);
    expect(keep.classList.contains('jp-mod-recommended')).toBe(false);
    expect(drop.textContent).toBe('Drop leak (recommended)');
    expect(screen.getByText('AUC: 0.987')).toBeTruthy();

    fireEvent.change(document.querySelector('.jp-dcpilot-rationale')!, { target: { value: 'known later' } });
    fireEvent.click(keep);
    fireEvent.click(screen.getByText('Approve recommended'));
    expect(chosen).toEqual([
      ['keep', 'known later'],
      ['drop', 'known later']
    ]);
  });

  it("shows the evidence in the server's words, a line each, never the machine's keys", () => {
    const coding = ['The rows coded 2 were followed longest (median 2,997 against 739)', 'Asked'];
    render(
      <DecisionCard
        decision={{ ...leakage, evidence: { status_coding: coding }, evidence_lines: coding }}
        onDecide={() => {}}
      />
    );
    const lines = Array.from(document.querySelectorAll('.jp-dcpilot-evidence li')).map(li => li.textContent);
    expect(lines).toEqual(coding);
    expect(document.querySelector('.jp-dcpilot-evidence-box summary')!.textContent).toBe('Evidence (2)');
    expect(document.querySelector('.jp-dcpilot-evidence')!.textContent).not.toContain('status_coding');
  });
});

describe("DecisionCard with an agent's proposal", () => {
  const proposed: IDecision = {
    ...leakage,
    proposal: {
      agent: 'claude-code',
      choice: 'keep',
      rationale: 'measured at enrolment',
      at: '2026-01-01T00:00:00+00:00'
    }
  };

  it("shows the proposal and accepts it as the person's answer, with the agent named in the log", () => {
    const chosen: string[][] = [];
    render(<DecisionCard decision={proposed} onDecide={(c, r) => chosen.push([c, r])} />);
    const box = document.querySelector('.jp-dcpilot-proposal')!;
    expect(box.getAttribute('data-agent')).toBe('claude-code');
    expect(box.textContent).toContain('Agent claude-code proposes: Keep it — measured at enrolment');
    expect(document.querySelector('[data-option="keep"]')!.classList.contains('jp-mod-proposed')).toBe(true);
    expect(document.querySelector('[data-option="drop"]')!.classList.contains('jp-mod-proposed')).toBe(false);
    fireEvent.click(screen.getByText("Accept agent's proposal"));
    fireEvent.change(document.querySelector('.jp-dcpilot-rationale')!, { target: { value: 'agreed' } });
    fireEvent.click(screen.getByText("Accept agent's proposal"));
    expect(chosen).toEqual([
      ['keep', 'accepted the proposal of agent claude-code: measured at enrolment'],
      ['keep', 'agreed']
    ]);
  });

  it('shows no proposal box without one', () => {
    render(<DecisionCard decision={leakage} onDecide={() => undefined} />);
    expect(document.querySelector('.jp-dcpilot-proposal')).toBeNull();
    expect(screen.queryByText("Accept agent's proposal")).toBeNull();
  });
});

describe('SessionModel', () => {
  it('applies session messages and answers notebook requests over its socket', async () => {
    const calls: string[] = [];
    const socket = fakeSocket();
    const host: IHostHandler = {
      handle: async (request, path) => ({
        type: 'cell_result',
        cell_id: `c-${path}`,
        outputs: [],
        error: null,
        echo: request.type
      })
    };
    const model = new SessionModel(fakeSource(calls), host, () => socket);
    await model.start({ path: 'nb.ipynb', frame: 'df', target: 'y', task: 'auto', approve: 'ask' });
    expect(calls).toEqual(['start:df:y:ask']);

    act(() => {
      socket.onmessage!({
        data: JSON.stringify({ type: 'session', session: session({ state: 'running' }) })
      });
    });
    expect(model.session?.state).toBe('running');
    expect(model.running).toBe(true);

    expect(model.openDecisions.map(d => d.id)).toEqual(['d2']);
    model.apply({ type: 'step', step: 's2', status: 'undone' });
    expect(model.openDecisions).toEqual([]); // its step was undone: nothing left to ask
    model.apply({ type: 'step', step: 's2', status: 'done' });
    model.apply({ type: 'state', state: 'finished' });
    model.apply({ type: 'transcript', entry: { at: 't2', kind: 'act', text: 'dropped leak' } });
    expect(model.session?.plan[0].status).toBe('done');
    expect(model.session?.state).toBe('finished');
    expect(model.running).toBe(false);
    expect(model.session?.transcript.map(e => e.text)).toEqual(['diagnosed df (200, 4)', 'dropped leak']);

    socket.onmessage!({
      data: JSON.stringify({ type: 'run_cell', request_id: 'r1', source: 'x', metadata: {} })
    });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(socket.sent).toEqual([
      {
        type: 'cell_result',
        cell_id: 'c-nb.ipynb',
        outputs: [],
        error: null,
        echo: 'run_cell',
        request_id: 'r1'
      }
    ]);

    act(() => socket.onclose!({}));
    expect(model.connected).toBe(false);
    expect(model.error).toBe('The connection to the co-pilot closed.');
    model.reconnect();
    expect(model.connected).toBe(true);
    expect(model.error).toBeNull();
    model.dispose();
  });

  it("shows the open decision and posts the expert's choice", async () => {
    const calls: string[] = [];
    const model = new SessionModel(fakeSource(calls), null, () => fakeSocket());
    await model.start({ path: 'nb.ipynb', frame: 'df', target: 'y', task: 'auto', approve: 'ask' });
    const view = render(<SessionView model={model} />);
    expect(document.querySelectorAll('.jp-dcpilot-decision')).toHaveLength(1);
    expect(document.querySelector('.jp-dcpilot-step[data-step="s2"]')?.getAttribute('data-status')).toBe(
      'awaiting_decision'
    );
    await act(async () => {
      fireEvent.click(screen.getByText('Approve recommended'));
    });
    expect(calls).toContain('decide:d2:drop');
    view.rerender(<SessionView model={model} />);
    expect(document.querySelectorAll('.jp-dcpilot-decision')).toHaveLength(0);
    model.dispose();
  });

  it('asks one question at a time, in plan order, and not before the steps it depends on', async () => {
    // issue 29: two cards open at once, out of plan order; after an undo, a card reopened
    // before the split ran
    const step = (id: string, episode: string, status: string, decision: string | null) => ({
      ...session().plan[0],
      id,
      episode,
      title: `Step ${id} (${episode})`,
      status,
      gate: decision ? episode : null,
      decision_id: decision
    });
    const ask = (id: string, stepId: string, gate: IDecision['gate']): IDecision => ({
      ...leakage,
      id,
      step_id: stepId,
      gate
    });
    // undone to before the split: the outlier question (reopened) and an added step's wait
    const undone = session({
      state: 'running',
      plan: [
        step('s1', 'task', 'done', null),
        step('s2', 'split', 'proposed', null),
        step('s3', 'outliers', 'proposed', 'd3'),
        step('s4', 'deduplicate', 'proposed', 'd4')
      ],
      decisions: [ask('d4', 's4', 'row_removal'), ask('d3', 's3', 'outliers')]
    });
    const socket = fakeSocket();
    const model = new SessionModel(fakeSource([]), null, () => socket);
    await model.start({ path: 'nb.ipynb', frame: 'df', target: 'y', task: 'auto', approve: 'ask' });
    const view = render(<SessionView model={model} />);
    const cards = () => Array.from(document.querySelectorAll('.jp-dcpilot-decision'));
    act(() => model.apply({ type: 'session', session: undone }));
    view.rerender(<SessionView model={model} />);
    expect(model.openDecisions.map(d => d.id)).toEqual(['d3', 'd4']); // plan order
    expect(model.nextDecision).toBeNull(); // the split runs first
    expect(cards()).toHaveLength(0);
    expect(document.querySelector('.jp-dcpilot-later')?.textContent).toBe(
      '2 more questions later in the plan: Step s3 (outliers); Step s4 (deduplicate)'
    );

    // the split ran; the co-pilot waits at the outlier step: its card only
    act(() => {
      model.apply({ type: 'step', step: 's2', status: 'done' });
      model.apply({ type: 'step', step: 's3', status: 'awaiting_decision' });
      model.apply({ type: 'state', state: 'blocked' });
    });
    view.rerender(<SessionView model={model} />);
    expect(cards().map(c => c.getAttribute('data-decision'))).toEqual(['d3']);
    expect(document.querySelector('.jp-dcpilot-later')?.textContent).toBe(
      '1 more question later in the plan: Step s4 (deduplicate)'
    );

    // nothing runs and nothing waits: the next step's question, never a later one's
    act(() => {
      model.apply({ type: 'step', step: 's3', status: 'proposed' });
      model.apply({ type: 'state', state: 'idle' });
    });
    expect(model.nextDecision?.id).toBe('d3');
    view.unmount();
    model.dispose();
  });

  it('says when the session came from a file it does not trust', async () => {
    const note = "The co-pilot file .nb.ipynb.dcpilot.json was not written by this user's co-pilot.";
    const source = { ...fakeSource([]), start: async () => session({ trusted: false, trust_note: note }) };
    const model = new SessionModel(source, null, () => fakeSocket());
    await model.start({ path: 'nb.ipynb', frame: 'df', target: 'y', task: 'auto', approve: 'ask' });
    const view = render(<SessionView model={model} />);
    expect(document.querySelector('.jp-dcpilot-untrusted')?.textContent).toContain(note);
    view.unmount();
    model.dispose();
    const trusted = new SessionModel(fakeSource([]), null, () => fakeSocket());
    await trusted.start({ path: 'nb.ipynb', frame: 'df', target: 'y', task: 'auto', approve: 'ask' });
    render(<SessionView model={trusted} />);
    expect(document.querySelector('.jp-dcpilot-untrusted')).toBeNull();
    trusted.dispose();
  });
});

describe('cellOutcome', () => {
  it('reports the error output of a failed cell', () => {
    const outputs = [
      { output_type: 'stream', name: 'stdout', text: 'hi' },
      { output_type: 'error', ename: 'KeyError', evalue: "'leak'", traceback: ['tb'] }
    ];
    expect(cellOutcome(outputs).error).toEqual({ ename: 'KeyError', evalue: "'leak'", traceback: ['tb'] });
    expect(cellOutcome(outputs.slice(0, 1)).error).toBeNull();
  });
});
