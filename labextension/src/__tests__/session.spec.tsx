import * as React from 'react';
import { act, fireEvent, render, screen } from '@testing-library/react';

import { UseSignal } from '@jupyterlab/ui-components';

import { APIError } from '../api';
import { DecisionCard, rejectOption } from '../decisionCard';
import { FramesModel } from '../model';
import { FramesView } from '../panel';
import { IEventSocket, IHostHandler, LOOK_MS, SessionModel } from '../session';
import { IDecision, ISession, ISessionSource, IStep, usageTotal } from '../sessionApi';
import { formatSeconds, SessionView, TranscriptSection, ValidityCard } from '../sessionView';

const ID = 'b'.repeat(32);

function step(id: string, status: string, extra: Partial<IStep> = {}): IStep {
  return {
    id,
    episode: 'e',
    title: `Step ${id}`,
    status,
    gate: null,
    columns: [],
    reason: '',
    decision_id: null,
    checkpoint_id: null,
    cell_ids: [],
    error: null,
    note: '',
    ...extra
  };
}

const leakage: IDecision = {
  id: 'd1',
  step_id: 's1',
  gate: 'leakage',
  question: 'leak predicts y almost perfectly. Is it known before the outcome?',
  evidence: { auc: 0.99 },
  evidence_lines: ['AUC: 0.99'],
  options: [
    {
      id: 'drop',
      label: 'Drop leak',
      recommended: true,
      action: { function: 'drop_columns' },
      description: 'Remove the column before modelling.',
      risk: 'loses a real predictor if it is not leakage'
    },
    { id: 'keep', label: 'Keep it', description: '', risk: '', recommended: false, action: null }
  ],
  recommended: 'drop',
  columns: ['leak'],
  choice: null,
  by: null,
  at: null,
  rationale: '',
  history: [],
  impact: null,
  proposal: null,
  chart: {
    title: 'AUROC of each column alone',
    unit: '',
    bars: [
      { label: 'leak', value: 0.99 },
      { label: 'a', value: 0.5 }
    ],
    threshold: 0.9
  }
};

function session(overrides: Partial<ISession> = {}): ISession {
  return {
    id: ID,
    path: 'work/nb.ipynb',
    frame: 'df',
    state: 'blocked',
    plan: [step('s1', 'awaiting_decision', { decision_id: 'd1', gate: 'leakage' }), step('s2', 'done')],
    decisions: [leakage],
    checkpoints: [],
    transcript: [{ at: '2026-01-01T10:00:05+00:00', kind: 'observe', text: 'diagnosed df' }],
    ...overrides
  };
}

function fakeSocket(): IEventSocket {
  return { onmessage: null, onclose: null, send: () => undefined, close: () => undefined };
}

/** A source answering from memory; `fail` makes one call throw. */
function fakeSource(calls: string[], fail: { [call: string]: Error } = {}): ISessionSource {
  const maybe = (name: string) => {
    if (fail[name]) {
      throw fail[name];
    }
  };
  return {
    start: async options => {
      calls.push(`start:${options.frame}:${options.replace ? 'replace' : 'new'}`);
      maybe(options.replace ? 'replace' : 'start');
      return session();
    },
    get: async id => {
      calls.push(`get:${id}`);
      return session();
    },
    decide: async (_id, decisionId, choice, rationale) => {
      calls.push(`decide:${decisionId}:${choice}:${rationale}`);
      return session({ state: 'running', decisions: [{ ...leakage, choice }] });
    },
    undo: async () => session(),
    list: async path => {
      calls.push(`list:${path}`);
      maybe('list');
      return path === 'work/nb.ipynb'
        ? [
            {
              id: 'c'.repeat(32),
              path,
              frame: 'old',
              target: 'y',
              state: 'finished',
              created: '2026-01-01T09:00:00+00:00'
            },
            { id: ID, path, frame: 'df', target: 'y', state: 'blocked', created: '2026-01-01T10:00:00+00:00' }
          ]
        : [];
    },
    interrupt: async id => {
      calls.push(`interrupt:${id}`);
      maybe('interrupt');
      return session({ state: 'blocked', plan: [step('s1', 'failed', { note: 'interrupted by the user' })] });
    },
    status: async () => ({ version: '0', planners: ['rules'], llm_configured: false, model: null })
  };
}

describe('SessionModel: one session per notebook', () => {
  it('reconnects to the live session of the notebook it follows, and leaves it on a switch', async () => {
    const calls: string[] = [];
    const sockets: string[] = [];
    const model = new SessionModel(fakeSource(calls), null, id => {
      sockets.push(id);
      return fakeSocket();
    });
    await model.follow('/work/nb.ipynb');
    expect(calls).toEqual(['list:work/nb.ipynb', `get:${ID}`]); // the newest of the listed sessions
    expect(model.session?.id).toBe(ID);
    expect(sockets).toEqual([ID]);
    expect(model.connected).toBe(true);

    await model.follow('other.ipynb');
    expect(model.session).toBeNull();
    expect(model.connected).toBe(false);
    await model.follow('work/nb.ipynb');
    expect(model.session?.id).toBe(ID);
    model.dispose();
  });

  it('treats a server without the listing (404) as no session, without an error', async () => {
    const model = new SessionModel(fakeSource([], { list: new APIError('Not Found', 404) }), null, () =>
      fakeSocket()
    );
    await model.follow('work/nb.ipynb');
    expect(model.session).toBeNull();
    expect(model.error).toBeNull();
    const failing = new SessionModel(
      fakeSource([], { list: new APIError('no running kernel', 500) }),
      null,
      () => fakeSocket()
    );
    await failing.follow('work/nb.ipynb');
    expect(failing.error).toBe('no running kernel');
  });

  it('asks before replacing a live session (409), then replaces it', async () => {
    const calls: string[] = [];
    const model = new SessionModel(
      fakeSource(calls, { start: new APIError('a session is live', 409) }),
      null,
      () => fakeSocket()
    );
    await model.follow('new.ipynb');
    const options = { path: 'work/nb.ipynb', frame: 'df', target: 'y', task: 'auto', approve: 'ask' };
    await model.start(options);
    expect(model.session).toBeNull();
    expect(model.error).toBeNull();
    expect(model.conflict).toEqual(options);

    const frames = new FramesModel({
      frames: async () => [],
      profile: async () => {
        throw new Error('none');
      }
    });
    await frames.setNotebook('work/nb.ipynb');
    render(<FramesView model={frames} copilot={model} />);
    expect(screen.getByText('This notebook already has a live co-pilot session.')).toBeTruthy();
    await act(async () => {
      fireEvent.click(screen.getByText('Replace it'));
    });
    expect(calls.slice(-1)).toEqual(['start:df:replace']);
    expect(model.conflict).toBeNull();
    expect(model.session?.id).toBe(ID);
    expect(document.querySelector('.jp-dcpilot-session')).toBeTruthy();
    model.dispose();
  });

  it('shows the reconnected session without a selected frame, and a form to replace it', async () => {
    const model = new SessionModel(fakeSource([]), null, () => fakeSocket());
    const frames = new FramesModel({
      frames: async () => [{ name: 'df', rows: 3, columns: 1, memory_bytes: 8, dtypes: { number: 1 } }],
      profile: async () => ({
        rows: 3,
        columns: 1,
        memory_bytes: 8,
        missing_share: 0,
        columns_detail: [
          { name: 'y', dtype: 'int64', kind: 'number', missing_share: 0, unique: 2, examples: [] }
        ]
      })
    });
    await frames.setNotebook('work/nb.ipynb');
    await model.follow('work/nb.ipynb');
    // as the panel does: the view follows the frames model
    render(
      <UseSignal signal={frames.changed}>{() => <FramesView model={frames} copilot={model} />}</UseSignal>
    );
    expect(document.querySelector('.jp-dcpilot-session')?.getAttribute('data-state')).toBe('blocked');
    expect(document.querySelector('.jp-dcpilot-start')).toBeNull();

    await act(async () => {
      fireEvent.click(screen.getByText('New session…'));
    });
    expect(screen.getByText('Select a DataFrame to start the co-pilot on it.')).toBeTruthy();
    await act(async () => {
      await frames.select('df');
    });
    expect(screen.getByText('Replace session')).toBeTruthy();
    await act(async () => {
      fireEvent.click(screen.getByText('Cancel'));
    });
    expect(document.querySelector('.jp-dcpilot-start')).toBeNull();
    model.dispose();
  });
});

describe('SessionModel: a session started elsewhere', () => {
  it('finds a session the chat started while it shows none, then stops looking', async () => {
    jest.useFakeTimers();
    try {
      const calls: string[] = [];
      let started = false;
      const source: ISessionSource = {
        ...fakeSource(calls),
        list: async path => {
          calls.push(`list:${path}`);
          return started
            ? [
                {
                  id: ID,
                  path,
                  frame: 'visits',
                  target: 'death',
                  state: 'running',
                  created: '2026-01-01T10:00:00+00:00'
                }
              ]
            : [];
        }
      };
      const sockets: string[] = [];
      const model = new SessionModel(source, null, id => {
        sockets.push(id);
        return fakeSocket();
      });
      const looks = () => calls.filter(c => c.startsWith('list:')).length;
      await model.follow('work/nb.ipynb');
      expect(model.session).toBeNull();
      await jest.advanceTimersByTimeAsync(LOOK_MS);
      expect(looks()).toBe(2);
      started = true; // "@DCPilot check `visits` for `death`" in the chat
      await jest.advanceTimersByTimeAsync(LOOK_MS);
      expect(model.session?.id).toBe(ID);
      expect(sockets).toEqual([ID]); // connected: its cells run through this panel
      await jest.advanceTimersByTimeAsync(LOOK_MS * 3);
      expect(looks()).toBe(3);
      model.dispose();
    } finally {
      jest.useRealTimers();
    }
  });

  it('stops looking when it follows no notebook', async () => {
    jest.useFakeTimers();
    try {
      const calls: string[] = [];
      const model = new SessionModel(fakeSource(calls), null, () => fakeSocket());
      await model.follow('other.ipynb');
      await model.follow(null);
      await jest.advanceTimersByTimeAsync(LOOK_MS * 3);
      expect(calls).toEqual(['list:other.ipynb']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('says so when the server closes the session, and takes the one that replaced it', async () => {
    jest.useFakeTimers();
    try {
      const calls: string[] = [];
      let live = [
        {
          id: ID,
          path: 'work/nb.ipynb',
          frame: 'df',
          target: 'y',
          state: 'blocked',
          created: '2026-01-01T10:00:00+00:00'
        }
      ];
      const source: ISessionSource = {
        ...fakeSource(calls),
        list: async () => live,
        get: async id => session({ id })
      };
      const sockets: string[] = [];
      const model = new SessionModel(source, null, id => {
        sockets.push(id);
        return fakeSocket();
      });
      await model.follow('work/nb.ipynb');
      expect(model.connected).toBe(true);
      live = []; // "start over" from the chat: the old one closes before the new one is listed
      model.apply({ type: 'closed', reason: 'replaced by a new session' });
      expect(model.session).toBeNull();
      expect(model.connected).toBe(false);
      expect(model.error).toBe('The co-pilot session closed: replaced by a new session.');
      const other = 'e'.repeat(32);
      live = [
        {
          id: other,
          path: 'work/nb.ipynb',
          frame: 'df',
          target: 'y',
          state: 'running',
          created: '2026-01-01T11:00:00+00:00'
        }
      ];
      await jest.advanceTimersByTimeAsync(LOOK_MS);
      expect(model.session?.id).toBe(other);
      expect(sockets).toEqual([ID, other]);
      expect(model.error).toBeNull();
      model.dispose();
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('SessionModel: progress and interrupt', () => {
  it('counts a running step from its start time and interrupts it', async () => {
    const calls: string[] = [];
    const model = new SessionModel(fakeSource(calls), null, () => fakeSocket());
    await model.follow('work/nb.ipynb');
    const started = '2026-01-01T10:00:00+00:00';
    model.apply({
      type: 'session',
      session: session({
        state: 'running',
        plan: [step('s1', 'running', { title: 'Impute missing values', started })]
      })
    });
    expect(model.runningStep?.id).toBe('s1');
    expect(model.elapsed(model.runningStep!, Date.parse(started) + 12400)).toBe(12);

    const view = render(<SessionView model={model} />);
    const progress = document.querySelector('.jp-dcpilot-progress')!;
    expect(progress.getAttribute('data-step')).toBe('s1');
    expect(progress.textContent).toMatch(/Running Impute missing values · \d+ (s|min)/);
    await act(async () => {
      fireEvent.click(screen.getByText('Interrupt'));
    });
    expect(calls).toContain(`interrupt:${ID}`);
    expect(model.session?.plan[0].status).toBe('failed');
    view.rerender(<SessionView model={model} />);
    expect(document.querySelector('.jp-dcpilot-progress')).toBeNull();
    expect(screen.getByText('interrupted by the user')).toBeTruthy();
    model.dispose();
  });

  it('counts from when the step was first seen running when the server gives no start time', async () => {
    const model = new SessionModel(fakeSource([]), null, () => fakeSocket());
    const before = Date.now();
    model.apply({ type: 'session', session: session({ state: 'running', plan: [step('s1', 'proposed')] }) });
    expect(model.runningStep).toBeNull();
    const view = render(<SessionView model={model} />);
    expect(document.querySelector('.jp-dcpilot-progress')?.textContent).toBe('Diagnosing and planning · 0 s');
    expect(document.querySelector('.jp-dcpilot-interrupt')).toBeNull(); // only a step can be interrupted
    view.unmount();
    model.apply({ type: 'step', step: 's1', status: 'running' });
    expect(model.elapsed(model.runningStep!, before + 65000)).toBeGreaterThanOrEqual(64);
    expect(model.elapsedRunning(Date.now() + 3000)).toBe(3);
    model.dispose();
  });

  it('shows the time against the budget of the step, or of the diagnosis', async () => {
    const model = new SessionModel(fakeSource([]), null, () => fakeSocket());
    const started = new Date(Date.now() - 400 * 1000).toISOString();
    model.apply({
      type: 'session',
      session: session({
        state: 'running',
        plan: [step('s1', 'running', { title: 'Train and evaluate', started, budget_s: 300 })]
      })
    });
    const view = render(<SessionView model={model} />);
    const budget = document.querySelector('.jp-dcpilot-budget')!;
    expect(budget.textContent).toBe(' of a 5 min 0 s budget: over budget');
    expect(budget.getAttribute('data-over')).toBe('true');
    view.unmount();
    model.apply({ type: 'session', session: session({ state: 'running', plan: [step('s1', 'proposed')] }) });
    model.apply({ type: 'progress', step: null, title: 'diagnosing df', elapsed_s: 0, budget_s: 120 });
    render(<SessionView model={model} />);
    expect(document.querySelector('.jp-dcpilot-progress')?.textContent).toBe(
      'Diagnosing and planning · 0 s of its 2 min 0 s budget'
    );
    model.dispose();
  });

  it('says so when the server cannot interrupt', async () => {
    const model = new SessionModel(fakeSource([], { interrupt: new APIError('Not Found', 404) }), null, () =>
      fakeSocket()
    );
    await model.follow('work/nb.ipynb');
    await model.interrupt();
    expect(model.error).toMatch(/cannot interrupt a step/);
    expect(model.interrupting).toBe(false);
    model.dispose();
  });

  it('formats elapsed seconds', () => {
    expect(formatSeconds(7)).toBe('7 s');
    expect(formatSeconds(75)).toBe('1 min 15 s');
  });
});

describe('plan steps linked to their cells', () => {
  it('links only steps with a cell, and selects it on click', async () => {
    const selected: string[] = [];
    const host: IHostHandler = {
      handle: async () => ({}),
      hasStep: (path, id) => path === 'work/nb.ipynb' && id === 's2',
      selectStep: async (path, id) => {
        selected.push(`${path}#${id}`);
        return true;
      }
    };
    const model = new SessionModel(fakeSource([]), host, () => fakeSocket());
    await model.follow('work/nb.ipynb');
    render(<SessionView model={model} />);
    expect(document.querySelector('[data-step="s1"] .jp-dcpilot-link')).toBeNull();
    const link = document.querySelector('[data-step="s2"] .jp-dcpilot-link') as HTMLButtonElement;
    expect(link.textContent).toBe('Step s2');
    await act(async () => {
      fireEvent.click(link);
    });
    expect(selected).toEqual(['work/nb.ipynb#s2']);
    model.dispose();
  });
});

describe('DecisionCard with chart and reject', () => {
  it('draws the chart, explains the recommendation and rejects with the no-change option', () => {
    const chosen: string[] = [];
    render(
      <DecisionCard
        decision={leakage}
        title="Drop the target proxy leak"
        onDecide={(c, r) => chosen.push(`${c}:${r}`)}
      />
    );
    expect(document.querySelectorAll('.jp-dcpilot-decision svg .jp-dcpilot-chart-bar')).toHaveLength(2);
    // the numbers behind the chart are folded away
    expect((document.querySelector('.jp-dcpilot-evidence-box') as HTMLDetailsElement).open).toBe(false);
    expect(document.querySelector('.jp-dcpilot-gate')?.textContent).toBe('leakage');
    expect(screen.getByText('Drop the target proxy leak')).toBeTruthy();
    expect(document.querySelector('.jp-dcpilot-advice')?.textContent).toBe(
      'Recommended: Remove the column before modelling. Risk: loses a real predictor if it is not leakage'
    );
    fireEvent.change(document.querySelector('.jp-dcpilot-rationale')!, {
      target: { value: 'recorded at admission' }
    });
    fireEvent.click(screen.getByText('Reject (Keep it)'));
    expect(chosen).toEqual(['keep:recorded at admission']);
  });

  it('says what an alternative does when it is pointed at or focused, not in a tooltip only', () => {
    const described = {
      ...leakage,
      options: [
        leakage.options[0],
        {
          ...leakage.options[1],
          description: 'Keep it: known at admission.',
          risk: 'a leak inflates every score'
        },
        { id: 'later', label: 'Decide later', description: '', risk: '', recommended: false, action: null }
      ]
    };
    render(<DecisionCard decision={described} onDecide={() => undefined} />);
    const advice = () => document.querySelector('.jp-dcpilot-advice');
    const option = (id: string) => document.querySelector(`.jp-dcpilot-option[data-option="${id}"]`)!;
    fireEvent.mouseEnter(option('keep'));
    expect(advice()?.textContent).toBe(
      'Keep it: Keep it: known at admission. Risk: a leak inflates every score'
    );
    fireEvent.mouseLeave(option('keep'));
    expect(advice()?.textContent).toMatch(/^Recommended: Remove the column before modelling/);
    fireEvent.focus(option('keep'));
    expect(advice()?.getAttribute('data-option')).toBe('keep');
    fireEvent.blur(option('keep'));
    // an option that says nothing more leaves the recommended one's words
    fireEvent.mouseEnter(option('later'));
    expect(advice()?.getAttribute('data-option')).toBe('drop');
  });

  it('rejects with the option the decision names, and never rejects the task card', () => {
    const task = {
      ...leakage,
      gate: 'task' as const,
      rejects: null,
      options: [
        { id: 'confirm', label: 'Confirm', description: '', risk: '', recommended: true, action: null },
        {
          id: 'classification',
          label: 'It is classification',
          description: '',
          risk: '',
          recommended: false,
          action: null
        }
      ]
    };
    expect(rejectOption(task)).toBeNull(); // not "Reject (It is classification)"
    const older: IDecision = { ...task };
    delete older.rejects; // an older server names no rejecting option
    expect(rejectOption(older)).toBeNull();
    expect(rejectOption({ ...leakage, rejects: 'keep' })?.id).toBe('keep');
    const chosen: string[] = [];
    let restarts = 0;
    render(
      <DecisionCard
        decision={{ ...task, chart: null }}
        onDecide={choice => chosen.push(choice)}
        onRestart={() => (restarts += 1)}
      />
    );
    expect(document.querySelector('.jp-dcpilot-reject')).toBeNull();
    // "not this": the card says how to say what it is, and picks nothing by itself
    fireEvent.click(screen.getByText('Not this task…'));
    expect(document.querySelector('.jp-dcpilot-not-this-help')?.textContent).toContain(
      'another task kind or moment of prediction is one of the options above'
    );
    fireEvent.click(screen.getByText('Set up again…'));
    expect(restarts).toBe(1);
    expect(chosen).toEqual([]);
  });

  it('prefers an explicit skip option, and offers no reject when nothing declines', () => {
    const skip = { id: 'skip', label: 'Skip', description: '', risk: '', recommended: false, action: null };
    expect(rejectOption({ ...leakage, options: [...leakage.options, skip] })?.id).toBe('skip');
    expect(
      rejectOption({
        ...leakage,
        options: [leakage.options[0], { ...skip, id: 'clip', label: 'Clip', action: {} }]
      })
    ).toBeNull();
    render(
      <DecisionCard
        decision={{ ...leakage, chart: null, options: [leakage.options[0]] }}
        onDecide={() => undefined}
      />
    );
    expect(document.querySelector('.jp-dcpilot-reject')).toBeNull();
    expect(document.querySelector('.jp-dcpilot-chart')).toBeNull();
    expect((document.querySelector('.jp-dcpilot-evidence-box') as HTMLDetailsElement).open).toBe(true);
  });
});

describe('transcript and LLM usage', () => {
  it('sums the calls, tokens and cost, and folds the transcript away', () => {
    const s = session({
      llm_usage: [
        { purpose: 'plan', input_tokens: 1200, output_tokens: 300, cost_usd: 0.0081 },
        { purpose: 'repair', input_tokens: 800, output_tokens: 100, cost_usd: 0.0039 }
      ]
    });
    expect(usageTotal(s)).toEqual({ calls: 2, input_tokens: 2000, output_tokens: 400, cost_usd: 0.012 });
    expect(usageTotal({ ...s, usage: { calls: 5 } }).calls).toBe(5);
    render(<TranscriptSection session={s} />);
    const details = document.querySelector('details.jp-dcpilot-log') as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.querySelector('summary')?.textContent).toBe('Transcript (1) · LLM: 2 calls, 2,400 tokens');
    expect(screen.getByText('$0.0120')).toBeTruthy();
    expect(details.querySelector('.jp-dcpilot-log-time')?.textContent).toBe('10:00:05');
  });

  it('says when no LLM was used', () => {
    render(<TranscriptSection session={session()} />);
    expect(document.querySelector('.jp-dcpilot-usage-summary')?.textContent).toBe('no LLM calls');
    expect(document.querySelector('.jp-dcpilot-usage')).toBeNull();
  });
});

describe('the verdict as its checks', () => {
  const checks = [
    { check: 'model_trained', passed: true, detail: 'CoxPH on 17 features' },
    { check: 'known_at_index', passed: false, detail: "the features take the 'last' of all records" },
    { check: 'holdout_confirms_cv', passed: true, detail: 'c_index holdout 0.755, cross-validated 0.811' }
  ];

  it('lists failed checks first with what they found, and never says valid when one failed', () => {
    render(<ValidityCard checks={checks} />);
    const card = document.querySelector('.jp-dcpilot-validity') as HTMLElement;
    expect(card.classList.contains('jp-mod-invalid')).toBe(true);
    expect(card.querySelector('.jp-dcpilot-validity-verdict')?.textContent).toBe(
      'Not a valid model: 1 of 3 checks failed'
    );
    const items = Array.from(card.querySelectorAll('li'));
    expect(items.map(li => li.dataset.check)).toEqual([
      'known_at_index',
      'model_trained',
      'holdout_confirms_cv'
    ]);
    expect(items[0].dataset.passed).toBe('no');
    expect(items[0].textContent).toContain('Rows known at the prediction time');
    expect(screen.getByText('c_index holdout 0.755, cross-validated 0.811')).toBeTruthy();
  });

  it('appears in the session once a validity event arrives', () => {
    const model = new SessionModel(fakeSource([]), null, () => fakeSocket());
    model.apply({ type: 'session', session: session({ state: 'running' }) });
    render(<UseSignal signal={model.changed}>{() => <SessionView model={model} />}</UseSignal>);
    expect(document.querySelector('.jp-dcpilot-validity')).toBeNull();
    act(() => model.apply({ type: 'validity', checks: checks.map(c => ({ ...c, passed: true })) }));
    expect(document.querySelector('.jp-dcpilot-validity-verdict')?.textContent).toBe(
      'Valid model: all 3 checks passed'
    );
  });
});
