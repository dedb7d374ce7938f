import * as React from 'react';
import { ServerConnection } from '@jupyterlab/services';
import { act, fireEvent, render } from '@testing-library/react';

import { APIError, requestAPI } from '../api';
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

describe("a planner's proposal on the timeline card", () => {
  // Claude's proposal for los_days, as Structure.card() adds it: shown apart, as Claude's
  const proposed: IColumnTimeline = {
    ...timeline,
    columns: {
      ...timeline.columns,
      los_days: {
        ...timeline.columns.los_days,
        evidence: [
          ...timeline.columns.los_days.evidence,
          {
            group: 'at_or_after_outcome',
            source: 'proposal',
            test: 'proposed',
            reason: "proposed by Claude from the column's name and schema: the stay ends at discharge",
            strong: false,
            numbers: { by: 'Claude' }
          }
        ]
      }
    }
  };

  it('is marked as Claude’s, moves nothing, and the expert takes it with one click', () => {
    const moves: [string, TimelineGroup][] = [];
    render(<TimelineCard timeline={proposed} onMove={(c, g) => moves.push([c, g])} />);
    const column = document.querySelector('.jp-dcpilot-timeline-column[data-column="los_days"]')!;
    // still where the rules put it, still to confirm
    expect(column.closest('.jp-dcpilot-timeline-group')?.getAttribute('data-group')).toBe('during_follow_up');
    expect(column.querySelector('.jp-dcpilot-timeline-unsure')?.textContent).toBe('⚠ to confirm');
    const line = column.querySelector('.jp-dcpilot-timeline-proposal')!;
    expect(line.textContent).toBe(
      'proposed by Claude At or after the outcome: the stay ends at discharge take it'
    );
    // apart from the rules' evidence
    expect(
      Array.from(column.querySelectorAll('.jp-dcpilot-timeline-evidence li')).map(li => li.textContent)
    ).toEqual(["its name carries a time ('days') later than the target's own (its name)"]);
    fireEvent.click(line.querySelector('.jp-dcpilot-timeline-take')!);
    expect(moves).toEqual([['los_days', 'at_or_after_outcome']]);
  });

  it('is read only without a way to move, and gone once a person placed the column', () => {
    render(<TimelineCard timeline={proposed} />);
    expect(document.querySelector('.jp-dcpilot-timeline-take')).toBeNull();
    expect(document.querySelector('.jp-dcpilot-timeline-proposal')?.textContent).toContain(
      'proposed by Claude'
    );
    document.body.innerHTML = '';
    const placed = {
      ...proposed,
      columns: {
        ...proposed.columns,
        los_days: { ...proposed.columns.los_days, confidence: 'given' as const }
      }
    };
    render(<TimelineCard timeline={placed} />);
    expect(document.querySelector('.jp-dcpilot-timeline-proposal')).toBeNull();
  });
});

describe('TimelineCard after a person moved columns', () => {
  it('shows each moved column in its new group, moved or confirmed by you, from where, how and why', () => {
    const given = (column: string, group: TimelineGroup) => ({
      ...timeline.columns[column],
      group,
      confidence: 'given' as const
    });
    const moved: IColumnTimeline = {
      ...timeline,
      columns: {
        ...timeline.columns,
        surgery_day: given('surgery_day', 'baseline'),
        marker: given('marker', 'baseline'),
        los_days: given('los_days', 'at_or_after_outcome')
      },
      moves: [
        {
          column: 'surgery_day',
          group: 'at_or_after_outcome',
          via: 'chat',
          at: '',
          rationale: '',
          before: 'during_follow_up'
        },
        {
          column: 'surgery_day',
          group: 'baseline',
          via: 'panel',
          at: '',
          rationale: 'planned at admission',
          before: 'at_or_after_outcome'
        },
        { column: 'marker', group: 'baseline', via: 'magic', at: '', rationale: '', before: 'baseline' },
        {
          column: 'los_days',
          group: 'at_or_after_outcome',
          via: 'agent Reviewer',
          at: '',
          rationale: '',
          before: 'during_follow_up'
        }
      ]
    };
    render(<TimelineCard timeline={moved} />);
    const column = (name: string) =>
      document.querySelector(`.jp-dcpilot-timeline-column[data-column="${name}"]`)!;
    const said = (name: string) => [
      column(name).closest('.jp-dcpilot-timeline-group')?.getAttribute('data-group'),
      column(name).querySelector('.jp-dcpilot-timeline-given')?.textContent,
      column(name).querySelector('.jp-dcpilot-timeline-moved')?.textContent
    ];
    // the last move counts
    expect(said('surgery_day')).toEqual([
      'baseline',
      'moved by you',
      'moved here from at or after the outcome by you in the panel: planned at admission'
    ]);
    // a column confirmed where it was is shown with the person's word, not folded away
    expect(said('marker')).toEqual(['baseline', 'confirmed by you', 'confirmed here by you with a magic']);
    expect(said('los_days')).toEqual([
      'at_or_after_outcome',
      'moved by agent Reviewer',
      'moved here from during follow-up by agent Reviewer'
    ]);
  });
});

describe('StructureQuestion', () => {
  it("asks a hidden panel's entity with the task card's own options, one button each", () => {
    const option = (id: string, label: string, value: unknown, recommended: boolean) => ({
      id,
      label,
      description: `${label}: what it does`,
      risk: `${label}: what it risks`,
      recommended,
      action: null,
      value
    });
    const blocks: IInference = {
      id: 'entity',
      what: 'entity',
      subject: null,
      value: null,
      confidence: 'low',
      evidence: ['rows may be blocks of 6 records of one entity'],
      alternatives: [{ value: 'head_age', evidence: ['not an entity: named as an age'], score: 0 }],
      details: {},
      options: [
        option(
          'blocks',
          'Group the rows in blocks of 6 consecutive records (one entity each)',
          'blocks',
          true
        ),
        option('entity:none', 'The rows are independent: each row is its own subject', null, false)
      ]
    };
    const answers: unknown[] = [];
    render(<StructureQuestion inference={blocks} onAnswer={value => answers.push(value)} />);
    const card = document.querySelector('.jp-dcpilot-structure')!;
    expect(card.textContent).toContain('rows may be blocks of 6 records of one entity');
    const choices = Array.from(card.querySelectorAll('.jp-dcpilot-structure-choice'));
    // the card's options, not the columns rejected as the entity's id
    expect(choices.map(c => c.querySelector('b')?.textContent)).toEqual([
      'Group the rows in blocks of 6 consecutive records (one entity each)',
      'The rows are independent: each row is its own subject'
    ]);
    expect(choices.map(c => c.querySelector('button')?.textContent)).toEqual(['Use this', 'Keep it']);
    expect(choices[0].textContent).toContain('recommended');
    expect(choices[0].textContent).toContain('risk: Group the rows');
    fireEvent.click(choices[0].querySelector('button')!);
    fireEvent.click(choices[1].querySelector('button')!);
    expect(answers).toEqual(['blocks', null]);
  });

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

  it('keeps two evidence lines that read the same, without a duplicate-key warning', () => {
    const warnings = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const line = "'futime' rises with the row's date";
    const twice: IInference = { ...duration, evidence: [line, line] };
    const { rerender } = render(<StructureQuestion inference={twice} />);
    rerender(<StructureQuestion inference={{ ...twice, evidence: [line, line, 'a third line'] }} />);
    const items = Array.from(
      document.querySelectorAll('.jp-mod-chosen .jp-dcpilot-structure-evidence li')
    ).map(li => li.textContent);
    expect(items).toEqual([line, line, 'a third line']);
    expect(warnings.mock.calls.filter(call => String(call[0]).includes('same key'))).toEqual([]);
    warnings.mockRestore();
  });

  it('asks what becomes of a column that groups rows, naming it', () => {
    const grouping: IInference = {
      ...duration,
      id: 'grouping:case.id',
      what: 'grouping',
      subject: 'case.id',
      value: 'drop',
      evidence: ["'case.id' is named as an identifier; 3 rows each on average: it groups rows"],
      alternatives: [
        { value: 'group', evidence: ['keep it to group the split'], score: 0.6 },
        { value: 'keep', evidence: ['a feature'], score: 0.2 }
      ]
    };
    render(<StructureQuestion inference={grouping} />);
    const card = document.querySelector('.jp-dcpilot-structure')!;
    expect(card.querySelector('.jp-dcpilot-question')?.textContent).toBe(
      "What should be done with 'case.id', which groups rows?"
    );
    const choices = Array.from(card.querySelectorAll('.jp-dcpilot-structure-choice b'));
    expect(choices.map(c => c.textContent)).toEqual(['drop', 'group', 'keep']);
  });

  it('asks which code of a status means censored, the guess and each alternative a reading to take', () => {
    const answers: unknown[] = [];
    const status: IInference = {
      ...duration,
      id: 'task',
      what: 'task',
      subject: null,
      value: 'survival',
      evidence: [
        "'status' is a status of 3 codes next to the follow-up time 'time': 2 censored, codes 1, 3 merged as 'any event'"
      ],
      alternatives: [
        { value: 'survival with 3 censored', evidence: ['its rows were followed 1.42 (median)'], score: 0.2 },
        { value: 'survival with 1 censored', evidence: ['its rows were followed 1.71 (median)'], score: 0.4 },
        { value: 'classification', evidence: ['the 3 codes as classes'], score: 0.1 }
      ],
      details: { censored: '2', events: ['1', '3'] }
    };
    render(<StructureQuestion inference={status} onAnswer={value => answers.push(value)} />);
    const card = document.querySelector('.jp-dcpilot-structure')!;
    expect(card.querySelector('.jp-dcpilot-question')?.textContent).toBe(
      'Which code means censored, or is it another task?'
    );
    const choices = Array.from(card.querySelectorAll('.jp-dcpilot-structure-choice'));
    expect(choices.map(c => c.querySelector('b')?.textContent)).toEqual([
      'survival with 2 censored',
      'survival with 1 censored',
      'survival with 3 censored',
      'classification'
    ]);
    fireEvent.click(choices[2].querySelector('button')!);
    fireEvent.click(choices[0].querySelector('button')!);
    expect(answers).toEqual(['survival with 3 censored', 'survival']); // the server's values
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

describe('a server without the structure endpoints', () => {
  const bare = (): ISession => ({
    id: 'b'.repeat(32),
    path: 'nb.ipynb',
    frame: 'df',
    state: 'blocked',
    plan: [],
    decisions: [],
    checkpoints: [],
    transcript: []
  });
  const withStructure = (): ISession => ({ ...bare(), timeline, inferences: [duration] });
  const socket: IEventSocket = {
    onmessage: null,
    onclose: null,
    send: () => undefined,
    close: () => undefined
  };

  async function view(
    get: () => ISession,
    failure: APIError
  ): Promise<{ model: SessionModel; unmount: () => void; redraw: () => void }> {
    const source: ISessionSource = {
      start: async () => get(),
      get: async () => get(),
      decide: async () => get(),
      undo: async () => get(),
      list: async path => [
        { id: get().id, path, frame: 'df', target: 'death', state: 'blocked', created: '' }
      ],
      interrupt: async () => null,
      status: async () => ({ version: '0', planners: ['rules'], llm_configured: false, model: null }),
      moveColumn: async () => {
        throw failure;
      },
      answerInference: async () => {
        throw failure;
      }
    };
    const model = new SessionModel(source, null, () => socket);
    await model.follow('nb.ipynb');
    const { unmount, rerender } = render(<SessionView model={model} />);
    // the panel redraws the view on the model's changed signal
    return { model, unmount, redraw: () => rerender(<SessionView model={model} />) };
  }

  it('shows no timeline card and no structural question when the session carries neither key', async () => {
    const { model, unmount } = await view(bare, new APIError('Not Found', 404, false));
    expect(document.querySelector('.jp-dcpilot-session')).not.toBeNull();
    expect(document.querySelector('.jp-dcpilot-timeline')).toBeNull();
    expect(document.querySelector('.jp-dcpilot-structure')).toBeNull();
    unmount();
    model.dispose();
  });

  it('says in words that the server lacks the endpoint (its 404 page), and keeps the cards as they were', async () => {
    const { model, unmount, redraw } = await view(withStructure, new APIError('Not Found', 404, false));
    await act(async () => {
      fireEvent.change(document.querySelector('.jp-dcpilot-timeline-column[data-column="futime2"] select')!, {
        target: { value: 'unknown' }
      });
    });
    const error = () => {
      redraw();
      return document.querySelector('.jp-dcpilot-error')?.textContent ?? '';
    };
    expect(error()).toBe(
      "This server's co-pilot cannot move 'futime2' on the timeline yet (it has no such endpoint: " +
        '404 Not Found). Nothing was changed; update jupyter-dcpilot on the server to answer it here.'
    );
    expect(model.session?.timeline?.columns.futime2.group).toBe('at_or_after_outcome');
    await act(async () => {
      fireEvent.click(document.querySelectorAll('.jp-dcpilot-structure-choice button')[1]);
    });
    expect(error()).toContain('cannot record answers to structural questions yet');
    expect(document.querySelector('.jp-dcpilot-timeline')).not.toBeNull();
    unmount();
    model.dispose();
  });

  it("shows a handler's own 404 (an unknown column) as the server says it", async () => {
    const { model, unmount, redraw } = await view(
      withStructure,
      new APIError("no column 'futime2' on the timeline", 404)
    );
    await act(async () => {
      fireEvent.change(document.querySelector('.jp-dcpilot-timeline-column[data-column="futime2"] select')!, {
        target: { value: 'baseline' }
      });
    });
    redraw();
    expect(document.querySelector('.jp-dcpilot-error')?.textContent).toBe(
      "no column 'futime2' on the timeline"
    );
    unmount();
    model.dispose();
  });

  it("tells the server's 404 page from a handler's JSON 404", async () => {
    class FakeRequest {
      headers = new Headers();
      constructor(
        readonly url: string,
        readonly init: RequestInit
      ) {}
    }
    const answer = (body: string) =>
      ({ ok: false, status: 404, statusText: 'Not Found', text: async () => body }) as unknown as Response;
    const settings = (body: string) =>
      ServerConnection.makeSettings({
        baseUrl: 'http://localhost:8888/',
        Request: FakeRequest as unknown as typeof Request,
        fetch: async () => answer(body)
      });
    const failure = async (body: string) =>
      requestAPI(`sessions/${'b'.repeat(32)}/timeline`, { method: 'POST' }, settings(body)).catch(
        (e: APIError) => e
      ) as Promise<APIError>;
    const page = await failure('<!DOCTYPE HTML><html><title>Jupyter Server</title></html>');
    expect([page instanceof APIError, (page as APIError).status, page.routed, page.message]).toEqual([
      true,
      404,
      false,
      'Not Found'
    ]);
    const handler = await failure(JSON.stringify({ message: "no co-pilot session 'bbb'", reason: null }));
    expect([handler.status, handler.routed, handler.message]).toEqual([
      404,
      true,
      "no co-pilot session 'bbb'"
    ]);
  });
});
