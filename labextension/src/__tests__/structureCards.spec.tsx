import * as React from 'react';
import { act, fireEvent, render } from '@testing-library/react';

import { IEventSocket, SessionModel } from '../session';
import { IColumnTimeline, IInference, ISession, ISessionSource } from '../sessionApi';
import { SessionView } from '../sessionView';
import { inferenceValue, StructureQuestion, TimelineCard } from '../structureCards';
import { TimelineGroup } from '../vocabulary';

// the shapes of kernel_tools' ColumnTimeline.to_dict() and Inference.to_dict(), as a diagnosis of
// a survival cohort seen at four visits returns them (a copy of the follow-up time, a day of
// surgery that rises with it, a length of stay named in days)
const timeline: IColumnTimeline = {
  index: "each entity's first record (by 'days')",
  groups: {
    baseline: ['age', 'marker'],
    during_follow_up: ['surgery_day', 'los_days'],
    at_or_after_outcome: ['futime2'],
    unknown: []
  },
  columns: {
    age: {
      column: 'age',
      group: 'baseline',
      confidence: 'high',
      evidence: [
        {
          group: 'baseline',
          source: 'values',
          test: 'constant_within_entity',
          reason: "the same on every record of a 'id'",
          strong: true,
          numbers: {}
        }
      ]
    },
    marker: { column: 'marker', group: 'baseline', confidence: 'high', evidence: [] },
    futime2: {
      column: 'futime2',
      group: 'at_or_after_outcome',
      confidence: 'high',
      evidence: [
        {
          group: 'at_or_after_outcome',
          source: 'values',
          test: 'equals_duration',
          reason: "equal to the duration 'futime' on 100% of rows",
          strong: true,
          numbers: { share_equal: 1 }
        },
        {
          group: 'baseline',
          source: 'values',
          test: 'constant_within_entity',
          reason: "the same on every record of a 'id'",
          strong: true,
          numbers: {}
        }
      ]
    },
    surgery_day: {
      column: 'surgery_day',
      group: 'during_follow_up',
      confidence: 'high',
      evidence: [
        {
          group: 'during_follow_up',
          source: 'values',
          test: 'tracks_follow_up',
          reason: "rises with the follow-up column 'futime2' (Spearman 1.00)",
          strong: true,
          numbers: { follows: 'futime2', spearman: 1 }
        }
      ]
    },
    los_days: {
      column: 'los_days',
      group: 'during_follow_up',
      confidence: 'low',
      evidence: [
        {
          group: 'during_follow_up',
          source: 'names',
          test: 'named_time',
          reason: "its name carries a time ('days') later than the target's own",
          strong: false,
          numbers: {}
        }
      ]
    }
  }
};

const duration: IInference = {
  id: 'duration',
  what: 'duration',
  subject: null,
  value: 'futime',
  confidence: 'low',
  evidence: ["'futime' is one of 3 columns named and behaving as a follow-up time"],
  alternatives: [
    {
      value: 'los_days',
      evidence: ["'los_days' is also named and behaves as a time to an event"],
      score: 0.4
    },
    { value: 'futime2', evidence: ["'futime2' is also named and behaves as a time to an event"], score: 0.5 }
  ],
  details: {}
};

describe('TimelineCard', () => {
  it('groups the columns in time order, each with its evidence, the ones to confirm marked', () => {
    render(<TimelineCard timeline={timeline} />);
    const groups = Array.from(document.querySelectorAll('.jp-dcpilot-timeline-group'));
    expect(groups.map(g => g.getAttribute('data-group'))).toEqual([
      'baseline',
      'during_follow_up',
      'at_or_after_outcome',
      'unknown'
    ]);
    expect(groups.map(g => g.querySelector('.jp-dcpilot-timeline-group-title')?.textContent)).toEqual([
      'Baseline (2) known when a prediction is made',
      'During follow-up (2) recorded after the prediction time',
      'At or after the outcome (1) recorded with or because of it',
      'Unknown (0) the evidence disagrees or is too weak to place it'
    ]);
    const card = document.querySelector('.jp-dcpilot-timeline')!;
    expect(card.hasAttribute('open')).toBe(true); // a column to confirm: open
    expect(card.querySelector('summary')?.textContent).toBe('When each column is known (5) · 1 to confirm');
    expect(card.querySelector('.jp-dcpilot-timeline-index')?.textContent).toBe(
      "Predictions are made at each entity's first record (by 'days')."
    );
    const column = (name: string) =>
      card.querySelector(`.jp-dcpilot-timeline-column[data-column="${name}"]`)!;
    expect(column('los_days').querySelector('.jp-dcpilot-timeline-unsure')?.textContent).toBe('⚠ to confirm');
    expect(column('surgery_day').querySelector('.jp-dcpilot-timeline-unsure')).toBeNull();
    expect(column('los_days').textContent).toContain(
      "its name carries a time ('days') later than the target's own (its name)"
    );
    // what agrees first; what speaks against it after, said so
    const lines = Array.from(column('futime2').querySelectorAll('.jp-dcpilot-timeline-evidence li')).map(
      li => li.textContent
    );
    expect(lines).toEqual([
      "equal to the duration 'futime' on 100% of rows (the data)",
      "but baseline: the same on every record of a 'id' (the data)"
    ]);
    // a baseline column nothing speaks about: folded into one line
    expect(card.querySelector('.jp-dcpilot-timeline-quiet summary')?.textContent).toBe(
      'marker: nothing places it after the prediction time'
    );
    // read only without a way to move them
    expect(card.querySelector('select, button')).toBeNull();
  });

  it('moves a column to another group, and confirms one where it is', () => {
    const moves: [string, TimelineGroup][] = [];
    render(<TimelineCard timeline={timeline} onMove={(c, g) => moves.push([c, g])} />);
    const column = (name: string) =>
      document.querySelector(`.jp-dcpilot-timeline-column[data-column="${name}"]`)!;
    const select = column('surgery_day').querySelector('select')!;
    expect(Array.from(select.querySelectorAll('option')).map(o => o.textContent)).toEqual([
      'move to…',
      'Baseline',
      'At or after the outcome',
      'Unknown'
    ]);
    fireEvent.change(select, { target: { value: 'baseline' } });
    fireEvent.click(column('los_days').querySelector('.jp-dcpilot-timeline-confirm')!);
    expect(column('age').querySelector('.jp-dcpilot-timeline-confirm')).toBeNull(); // sure already
    expect(moves).toEqual([
      ['surgery_day', 'baseline'],
      ['los_days', 'during_follow_up']
    ]);
  });
});

describe('StructureQuestion', () => {
  it('asks a low-confidence choice with its alternatives ranked, one button each', () => {
    const answers: unknown[] = [];
    render(<StructureQuestion inference={duration} onAnswer={value => answers.push(value)} />);
    const card = document.querySelector('.jp-dcpilot-structure')!;
    expect(card.querySelector('.jp-dcpilot-question')?.textContent).toBe(
      'Which column is the follow-up time?'
    );
    const choices = Array.from(card.querySelectorAll('.jp-dcpilot-structure-choice'));
    expect(choices.map(c => c.querySelector('b')?.textContent)).toEqual(['futime', 'futime2', 'los_days']);
    expect(choices[0].textContent).toContain("the co-pilot's guess");
    expect(choices[1].textContent).toContain("'futime2' is also named and behaves as a time to an event");
    fireEvent.click(choices[1].querySelector('button')!);
    fireEvent.click(choices[0].querySelector('button')!);
    expect(answers).toEqual(['futime2', 'futime']);
  });

  it('says values in words', () => {
    expect(inferenceValue('entity', null)).toBe('none: each row is its own subject');
    expect(inferenceValue('timing', 'during_follow_up')).toBe('During follow-up');
    expect(inferenceValue('task', 'survival')).toBe('survival');
  });
});

describe('the structure in the session view', () => {
  function session(state: string): ISession {
    return {
      id: 'a'.repeat(32),
      path: 'nb.ipynb',
      frame: 'df',
      state,
      plan: [],
      decisions: [],
      checkpoints: [],
      transcript: [],
      timeline,
      inferences: [{ ...duration, confidence: 'high', id: 'task', what: 'task', value: 'survival' }, duration]
    };
  }

  it('moves columns and answers the structural question through the server', async () => {
    const calls: string[] = [];
    const source: ISessionSource = {
      start: async () => session('blocked'),
      get: async () => session('blocked'),
      decide: async () => session('blocked'),
      undo: async () => session('blocked'),
      list: async path => [
        { id: 'a'.repeat(32), path, frame: 'df', target: 'death', state: 'blocked', created: '' }
      ],
      interrupt: async () => null,
      status: async () => ({ version: '0', planners: ['rules'], llm_configured: false, model: null }),
      moveColumn: async (_id, column, group) => {
        calls.push(`move:${column}:${group}`);
        return session('blocked');
      },
      answerInference: async (_id, inference, value) => {
        calls.push(`answer:${inference}:${String(value)}`);
        return session('blocked');
      }
    };
    const socket: IEventSocket = {
      onmessage: null,
      onclose: null,
      send: () => undefined,
      close: () => undefined
    };
    const model = new SessionModel(source, null, () => socket);
    await model.follow('nb.ipynb');
    const view = render(<SessionView model={model} />);
    // the one low-confidence choice that is not a timing is asked; the timings are on the card
    expect(
      Array.from(document.querySelectorAll('.jp-dcpilot-structure')).map(c =>
        c.getAttribute('data-inference')
      )
    ).toEqual(['duration']);
    await act(async () => {
      fireEvent.change(document.querySelector('.jp-dcpilot-timeline-column[data-column="futime2"] select')!, {
        target: { value: 'unknown' }
      });
    });
    await act(async () => {
      fireEvent.click(document.querySelectorAll('.jp-dcpilot-structure-choice button')[1]);
    });
    expect(calls).toEqual(['move:futime2:unknown', 'answer:duration:futime2']);
    view.unmount();
    model.dispose();
  });
});
