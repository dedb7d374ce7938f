import * as React from 'react';
import { act, fireEvent, render } from '@testing-library/react';

import { UseSignal } from '@jupyterlab/ui-components';

import { bestOption, ImpactChart, metricWords, rankedOptions } from '../impactChart';
import { currentParam, parseParam, plannedParams } from '../planEditor';
import { IEventSocket, SessionModel } from '../session';
import {
  IDecision,
  IDecisionOption,
  IEpisode,
  IImpact,
  IPlanEdit,
  ISession,
  ISessionSource,
  IStep
} from '../sessionApi';
import { SessionView } from '../sessionView';

const ID = 'a'.repeat(32);

function step(id: string, episode: string, status: string, extra: Partial<IStep> = {}): IStep {
  return {
    id,
    episode,
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

function impact(mean: number, sd: number, extra: Partial<IImpact> = {}): IImpact {
  return { metric: 'roc_auc', mean, sd, rows: 400, columns: 5, top_features: ['age'], flags: [], ...extra };
}

function option(id: string, label: string, action: IDecisionOption['action']): IDecisionOption {
  return { id, label, description: '', risk: '', recommended: id === 'clip', action };
}

function outliers(extra: Partial<IDecision> = {}): IDecision {
  return {
    id: 'd1',
    step_id: 's3',
    gate: 'outliers',
    question: 'bp has 8 extreme values. Errors or real?',
    evidence: {},
    evidence_lines: [],
    options: [
      option('clip', 'Clip them', {
        function: 'handle_outliers',
        params: { columns: ['bp'], action: 'clip' }
      }),
      option('remove', 'Remove the rows', { function: 'handle_outliers' }),
      option('keep', 'Keep them', null),
      option('skip', 'Skip', null)
    ],
    recommended: 'clip',
    columns: ['bp'],
    choice: null,
    by: null,
    at: null,
    rationale: '',
    chart: null,
    history: [],
    impact: null,
    proposal: null,
    ...extra
  };
}

const library: IEpisode[] = [
  {
    id: 'outliers',
    name: 'Handle outliers',
    stage: 'post_split',
    gate: 'outliers',
    line: 'Clip or remove extreme values.',
    addable: true,
    why_not: null,
    required: false,
    params: {
      columns: { kind: 'columns' },
      method: { kind: 'choice', choices: ['iqr', 'mad'] },
      threshold: { kind: 'number', min: 0 }
    }
  },
  {
    id: 'deduplicate',
    name: 'Deduplicate',
    stage: 'pre_split',
    gate: 'row_removal',
    line: 'Remove exact duplicate rows.',
    addable: true,
    why_not: null,
    required: false,
    params: { columns: { kind: 'columns' } }
  },
  {
    id: 'report',
    name: 'Report',
    stage: 'final',
    gate: null,
    line: 'Write the report.',
    addable: false,
    why_not: 'the report is always the last step',
    required: true,
    params: {}
  }
];

function session(): ISession {
  return {
    id: ID,
    path: 'nb.ipynb',
    frame: 'df',
    state: 'blocked',
    plan: [
      step('s1', 'impute', 'proposed'),
      step('s2', 'label_issues', 'proposed'),
      step('s3', 'outliers', 'awaiting_decision', {
        decision_id: 'd1',
        gate: 'outliers',
        function: 'handle_outliers'
      }),
      step('s4', 'report', 'proposed')
    ],
    decisions: [outliers({ impact: { status: 'running' } })],
    checkpoints: [],
    transcript: [],
    library: [
      ...library,
      { ...library[1], id: 'impute', name: 'Impute', stage: 'post_split' },
      { ...library[1], id: 'label_issues', name: 'Label issues', stage: 'post_split' }
    ]
  };
}

function source(edits: IPlanEdit[], estimates: string[]): ISessionSource {
  return {
    start: async () => session(),
    get: async () => session(),
    decide: async () => session(),
    undo: async () => session(),
    list: async path => [{ id: ID, path, frame: 'df', target: 'y', state: 'blocked', created: '' }],
    interrupt: async () => session(),
    status: async () => ({ version: '0', planners: ['rules'], llm_configured: false, model: null }),
    edit: async (_id, edit) => {
      edits.push(edit);
      return session();
    },
    impact: async (_id, decisionId, action) => {
      estimates.push(`${decisionId}:${action}`);
      return session();
    }
  };
}

describe('ImpactChart', () => {
  it('compares the options by score and spread, marks the best, and merges "skip" into "keep"', () => {
    const decision = outliers({
      impact: {
        status: 'done',
        best: 'keep',
        spread: 0.04,
        note: 'the choice changes the roc_auc by up to 0.040'
      }
    });
    decision.options[0].impact = impact(0.71, 0.01);
    decision.options[1].impact = impact(0.68, 0.02, { rows: 392, flags: ['drops 2% of the rows'] });
    decision.options[2].impact = impact(0.72, 0.015);
    decision.options[3].impact = impact(0.72, 0.015);
    render(<ImpactChart decision={decision} />);
    const rows = Array.from(document.querySelectorAll('.jp-dcpilot-impact-row'));
    expect(rows.map(r => r.getAttribute('data-option'))).toEqual(['clip', 'remove', 'keep']);
    const bar = (r: Element) => r.querySelector('.jp-dcpilot-impact-bar') as HTMLElement;
    const width = (r: Element) => Number(bar(r).style.width.replace('%', ''));
    // bars grow with the score on a shared axis
    expect(width(rows[2])).toBeGreaterThan(width(rows[0]));
    expect(width(rows[0])).toBeGreaterThan(width(rows[1]));
    expect(bar(rows[2]).classList.contains('jp-mod-best')).toBe(true);
    expect(bar(rows[1]).classList.contains('jp-mod-flagged')).toBe(true);
    expect(rows[0].querySelector('.jp-dcpilot-impact-value')?.textContent).toBe('0.710 ± 0.010');
    // an older server's note names the metric by its id: said in words
    expect(document.querySelector('.jp-dcpilot-impact-note')?.textContent).toBe(
      'the choice changes the AUROC by up to 0.040'
    );
    expect(document.querySelector('.jp-dcpilot-impact-details')?.textContent).toContain(
      '392 rows × 5 columns'
    );
    expect(document.querySelector('.jp-dcpilot-impact-flag')?.textContent).toContain('drops 2% of the rows');
    expect(rankedOptions(decision).map(o => o.id)).toEqual(['keep', 'skip', 'clip', 'remove']);
  });

  it('says when the options barely differ, and shows the estimate filling in with a stop button', () => {
    const barely = outliers({
      impact: {
        status: 'done',
        best: 'clip',
        spread: 0.001,
        barely_differ: true,
        note: 'the choice changes the score by < 0.005'
      }
    });
    barely.options.forEach((o, i) => (o.impact = impact(0.7 + i * 0.0003, 0.01)));
    const { unmount } = render(<ImpactChart decision={barely} />);
    const note = document.querySelector('.jp-dcpilot-impact-note')!;
    expect(note.classList.contains('jp-mod-barely')).toBe(true);
    expect(note.textContent).toBe('These options barely differ: the choice changes the score by < 0.005');
    unmount();

    const running = outliers({ impact: { status: 'running' } });
    running.options[0].impact = impact(0.7, 0.01);
    const calls: string[] = [];
    render(<ImpactChart decision={running} onEstimate={action => calls.push(action)} />);
    expect(document.querySelector('.jp-dcpilot-impact-status')?.textContent).toContain('estimating 1/3');
    const waiting = document.querySelector('.jp-dcpilot-impact-row[data-option="remove"]')!;
    expect(waiting.querySelector('.jp-dcpilot-impact-bar')).toBeNull();
    expect(waiting.textContent).toContain('…');
    fireEvent.click(document.querySelector('.jp-dcpilot-impact-cancel')!);
    expect(calls).toEqual(['cancel']);
  });

  it('marks the recommended option, and "best" only among the options that leave a valid model', () => {
    // issue 29: an invalid "mean over records" 0.911 was highlighted against the recommended 0.829
    const entity = outliers({
      gate: 'aggregation',
      recommended: 'first',
      impact: { status: 'done', best: 'mean', note: 'the choice changes the c_index by up to 0.082' },
      options: [
        option('first', 'Keep one row per entity (first record)', { function: 'aggregate_per_entity' }),
        option('mean', 'Mean over records', { function: 'aggregate_per_entity' }),
        option('keep', 'Keep every record as a training row', null)
      ]
    });
    const survival = (mean: number, flags: string[] = []) => impact(mean, 0.02, { metric: 'c_index', flags });
    entity.options[0].impact = survival(0.829);
    entity.options[1].impact = survival(0.911, ["features take the 'mean' of every record"]);
    entity.options[2].impact = survival(0.84, ['every record is a training row']);
    expect(bestOption(entity)).toBe('first');
    render(<ImpactChart decision={entity} />);
    const row = (id: string) => document.querySelector(`.jp-dcpilot-impact-row[data-option="${id}"]`)!;
    expect(row('first').getAttribute('data-best')).toBe('yes');
    expect(row('first').querySelector('.jp-dcpilot-impact-bar')!.classList.contains('jp-mod-best')).toBe(
      true
    );
    expect(row('mean').getAttribute('data-best')).toBe('no');
    expect(row('mean').querySelector('.jp-mod-best')).toBeNull();
    expect(row('mean').querySelector('.jp-dcpilot-impact-invalid')?.textContent).toBe('⚠ not valid');
    expect(row('first').querySelector('.jp-dcpilot-impact-recommended')?.textContent).toBe('recommended');
    expect(row('mean').querySelector('.jp-dcpilot-impact-recommended')).toBeNull();
    // the whole label, as text that wraps (never an SVG label cut at the chart's edge)
    expect(row('first').querySelector('.jp-dcpilot-impact-name')?.textContent).toBe(
      'Keep one row per entity (first record)'
    );
    expect(row('first').getAttribute('title')).toContain(
      'Keep one row per entity (first record): C-index 0.829'
    );
    // metric names in words, never "c_index"
    const figure = document.querySelector('.jp-dcpilot-impact')!;
    expect(figure.textContent).toContain('(C-index, 5 perturbations)');
    expect(figure.textContent).toContain('the choice changes the C-index by up to 0.082');
    expect(figure.textContent).not.toContain('c_index');
    expect([metricWords('roc_auc'), metricWords('r2'), metricWords('brier_score')]).toEqual([
      'AUROC',
      'R²',
      'brier score'
    ]);
  });

  it('has no best while every scored option is flagged', () => {
    const decision = outliers({ impact: { status: 'done' } });
    decision.options[0].impact = impact(0.7, 0.01, { flags: ['uses an identifier'] });
    expect(bestOption(decision)).toBeNull();
  });

  it('shows nothing before an estimate was asked for', () => {
    const { container } = render(<ImpactChart decision={outliers()} />);
    expect(container.innerHTML).toBe('');
  });
});

describe('parseParam', () => {
  it('reads numbers, lists of names and words; empty clears', () => {
    expect(parseParam({ kind: 'number' }, ' 3 ')).toBe(3);
    expect(parseParam({ kind: 'number' }, 'three')).toBe('three'); // the server says what is wrong
    expect(parseParam({ kind: 'columns' }, 'age, bp ,')).toEqual(['age', 'bp']);
    expect(parseParam({ kind: 'choice' }, 'mad')).toBe('mad');
    expect(parseParam({ kind: 'number' }, '')).toBeNull();
  });
});

describe('the values the parameters form shows', () => {
  it("shows each parameter's value now: the expert's, else the planned call's, never '(as proposed)'", () => {
    const specs = library[0].params;
    const s = session();
    const decision = s.decisions[0];
    decision.options[0].action = { function: 'handle_outliers', params: { columns: ['bp'], method: 'iqr' } };
    const edited = { ...s.plan[2], function: 'handle_outliers', user_params: { threshold: 4 } };
    const planned = plannedParams(s, edited);
    expect(currentParam(edited, 'threshold', specs.threshold, planned)).toBe(4);
    expect(currentParam(edited, 'method', specs.method, planned)).toBe('iqr');
    expect(currentParam(edited, 'columns', specs.columns, planned)).toEqual(['bp']);
    // answered: the chosen option's call
    decision.choice = 'remove';
    decision.options[1].action = { function: 'handle_outliers', params: { columns: ['bp'], method: 'mad' } };
    expect(currentParam(edited, 'method', specs.method, plannedParams(s, edited))).toBe('mad');
    // no decision yet: its finding's recommended option
    const fresh = { ...edited, decision_id: null, user_params: {}, finding_ids: ['f1'] };
    const withFinding = {
      ...s,
      findings: [
        {
          id: 'f1',
          kind: 'outliers' as const,
          columns: ['bp'],
          severity: 'warning' as const,
          summary: '',
          evidence: {},
          gate: 'outliers' as const,
          options: [
            {
              ...decision.options[0],
              recommended: true,
              action: { function: 'handle_outliers', params: { method: 'isolation_forest' } }
            }
          ]
        }
      ]
    };
    expect(currentParam(fresh, 'method', specs.method, plannedParams(withFinding, fresh))).toBe(
      'isolation_forest'
    );
    // left to the function's default: unknown here, and said so
    expect(
      currentParam(fresh, 'threshold', specs.threshold, plannedParams(withFinding, fresh))
    ).toBeUndefined();
  });
});

describe('Plan editor in the session view', () => {
  async function mounted(): Promise<{
    model: SessionModel;
    edits: IPlanEdit[];
    estimates: string[];
    socket: IEventSocket;
  }> {
    const edits: IPlanEdit[] = [];
    const estimates: string[] = [];
    const socket: IEventSocket = {
      onmessage: null,
      onclose: null,
      send: () => undefined,
      close: () => undefined
    };
    const model = new SessionModel(source(edits, estimates), null, () => socket);
    await model.follow('nb.ipynb');
    render(<UseSignal signal={model.changed}>{() => <SessionView model={model} />}</UseSignal>);
    return { model, edits, estimates, socket };
  }

  it('skips, moves, edits parameters and adds from the library through the plan API', async () => {
    const { model, edits } = await mounted();
    const actions = (id: string) => document.querySelector(`.jp-dcpilot-step-actions[data-step="${id}"]`)!;
    // the report is required: no skip; the first step of its stage cannot move up
    expect(actions('s4').querySelector('.jp-dcpilot-skip')).toBeNull();
    expect(actions('s1').querySelector('[aria-label^="Move before"]')).toBeNull();
    await act(async () => {
      fireEvent.click(actions('s1').querySelector('.jp-dcpilot-skip')!);
    });
    await act(async () => {
      fireEvent.click(actions('s2').querySelector('[aria-label^="Move before"]')!);
    });
    await act(async () => {
      fireEvent.click(actions('s3').querySelector('.jp-dcpilot-edit')!);
    });
    const form = document.querySelector('.jp-dcpilot-params[data-step="s3"]')!;
    // the value now, not "(as proposed)": the recommended option's columns; the rest at their default
    expect((form.querySelector('input[name="columns"]') as HTMLInputElement).value).toBe('bp');
    expect(form.textContent).not.toContain('as proposed');
    fireEvent.change(form.querySelector('input[name="threshold"]')!, { target: { value: '3' } });
    fireEvent.change(form.querySelector('select[name="method"]')!, { target: { value: 'mad' } });
    await act(async () => {
      fireEvent.submit(form);
    });
    expect(document.querySelector('.jp-dcpilot-params')).toBeNull();

    const library = document.querySelector('.jp-dcpilot-library')!;
    expect(library.querySelector('summary')?.textContent).toBe('Add a step (4 episodes can be added now)');
    const report = library.querySelector('[data-episode="report"]')!;
    expect(report.querySelector('button')!.hasAttribute('disabled')).toBe(true);
    expect(report.textContent).toContain('the report is always the last step');
    await act(async () => {
      fireEvent.click(library.querySelector('[data-episode="deduplicate"] .jp-dcpilot-add')!);
    });
    const add = library.querySelector('.jp-dcpilot-add-form')!;
    fireEvent.change(add.querySelector('input[name="columns"]')!, { target: { value: 'id, visit' } });
    await act(async () => {
      fireEvent.submit(add);
    });
    expect(edits).toEqual([
      { op: 'skip', step: 's1' },
      { op: 'move', step: 's2', before: 's1' },
      { op: 'params', step: 's3', params: { method: 'mad', threshold: 3 } },
      { op: 'add', episode: 'deduplicate', columns: ['id', 'visit'] }
    ]);
    model.dispose();
  });

  it('fills the card in from the socket as each option is estimated, and can stop it', async () => {
    const { model, estimates, socket } = await mounted();
    const send = (message: object) =>
      act(() => {
        socket.onmessage!({ data: JSON.stringify(message) } as MessageEvent);
      });
    const card = () => document.querySelector('.jp-dcpilot-decision[data-decision="d1"]')!;
    expect(card().querySelectorAll('.jp-dcpilot-impact-bar')).toHaveLength(0);
    send({
      type: 'impact',
      decision_id: 'd1',
      impact: { status: 'running' },
      options: [{ id: 'clip', impact: impact(0.7, 0.01) }]
    });
    expect(card().querySelectorAll('.jp-dcpilot-impact-bar')).toHaveLength(1);
    await act(async () => {
      fireEvent.click(card().querySelector('.jp-dcpilot-impact-cancel')!);
    });
    expect(estimates).toEqual(['d1:cancel']);
    send({
      type: 'impact',
      decision_id: 'd1',
      impact: { status: 'done', best: 'keep', note: 'the choice changes the roc_auc by up to 0.020' },
      // every event carries all the options (the server's answer to "stop" may predate some)
      options: [
        { id: 'clip', impact: impact(0.7, 0.01) },
        { id: 'remove', impact: impact(0.69, 0.01) },
        { id: 'keep', impact: impact(0.72, 0.01) }
      ]
    });
    expect(card().querySelectorAll('.jp-dcpilot-impact-bar')).toHaveLength(3);
    expect(card().querySelector('.jp-dcpilot-impact')?.getAttribute('data-status')).toBe('done');
    model.dispose();
  });
});
