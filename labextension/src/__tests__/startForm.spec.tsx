import * as React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';

import { IFrameProfile, IStatus } from '../api';
import { IStartOptions } from '../sessionApi';
import { StartForm } from '../startForm';

const profile: IFrameProfile = {
  rows: 10,
  columns: 3,
  memory_bytes: 100,
  missing_share: 0,
  columns_detail: ['a', 'leak', 'y'].map(name => ({
    name,
    dtype: 'float64',
    kind: 'number',
    missing_share: 0,
    unique: 10,
    examples: []
  }))
};

const withClaude: IStatus = {
  version: '0',
  planners: ['rules', 'claude'],
  llm_configured: true,
  model: 'claude-sonnet-4-5',
  default_model: 'claude-sonnet-4-5'
};

function select(name: string): HTMLSelectElement {
  return document.querySelector(`[name="${name}"]`) as HTMLSelectElement;
}

describe('StartForm settings', () => {
  it('starts with the safe defaults: rules, ask, schema only, model from the server', () => {
    const started: IStartOptions[] = [];
    render(
      <StartForm
        frame="df"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        status={withClaude}
        onStart={o => started.push(o)}
      />
    );
    const details = document.querySelector('details.jp-dcpilot-settings') as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.querySelector('summary')?.textContent).toBe(
      'Settingsrule planner · ask me at every gate · no rows sent'
    );
    expect((document.querySelector('[name="model"]') as HTMLInputElement).placeholder).toBe(
      'default: claude-sonnet-4-5'
    );
    expect(screen.getByText(/The rule planner sends nothing/)).toBeTruthy();
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started).toEqual([
      {
        path: 'nb.ipynb',
        frame: 'df',
        target: 'y',
        task: 'auto',
        approve: 'ask',
        planner: 'rules',
        model: null,
        share: 'schema'
      }
    ]);
  });

  it('sends the chosen planner, model and sharing, and warns before rows may leave', () => {
    const started: IStartOptions[] = [];
    render(
      <StartForm
        frame="df"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        status={withClaude}
        onStart={o => started.push(o)}
      />
    );
    expect(document.querySelector('.jp-dcpilot-warning')).toBeNull();
    fireEvent.change(select('planner'), { target: { value: 'claude' } });
    fireEvent.change(document.querySelector('[name="model"]')!, { target: { value: ' claude-haiku-4-5 ' } });
    fireEvent.change(select('approve'), { target: { value: 'recommended' } });
    fireEvent.change(select('share'), { target: { value: 'samples' } });
    fireEvent.change(select('target'), { target: { value: 'leak' } });
    const warning = document.querySelector('.jp-dcpilot-warning');
    expect(warning?.textContent).toMatch(/Sample rows .* will be sent to Anthropic's API/);
    expect(warning?.getAttribute('role')).toBe('alert');
    expect(document.querySelector('.jp-dcpilot-settings-summary')?.textContent).toBe(
      'Claude claude-haiku-4-5 · take the recommended option · sample rows may be sent'
    );
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started[0]).toEqual({
      path: 'nb.ipynb',
      frame: 'df',
      target: 'leak',
      task: 'auto',
      approve: 'recommended',
      planner: 'claude',
      model: 'claude-haiku-4-5',
      share: 'samples'
    });
  });

  it('offers Claude only when the server has an API key, and says how to add one', () => {
    render(
      <StartForm
        frame="df"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        status={{ version: '0', planners: ['rules'], llm_configured: false, model: null }}
        onStart={() => undefined}
      />
    );
    const claude = select('planner').querySelector('option[value="claude"]') as HTMLOptionElement;
    expect(claude.disabled).toBe(true);
    expect(claude.textContent).toBe('Claude (no API key)');
    expect(screen.getByText(/To plan with Claude, set/)).toBeTruthy();
    expect((document.querySelector('[name="model"]') as HTMLInputElement).disabled).toBe(true);
  });

  it('replaces a live session only when asked to, and starts from the last settings', () => {
    const started: IStartOptions[] = [];
    let cancelled = 0;
    render(
      <StartForm
        frame="df"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        status={withClaude}
        replacing
        initial={{ target: 'a', approve: 'none', share: 'samples', planner: 'claude', model: 'm1' }}
        onStart={o => started.push(o)}
        onCancel={() => cancelled++}
      />
    );
    expect(screen.getByText(/This notebook has a live co-pilot session/)).toBeTruthy();
    fireEvent.click(screen.getByText('Cancel'));
    expect(cancelled).toBe(1);
    fireEvent.click(screen.getByText('Replace session'));
    expect(started[0]).toMatchObject({
      target: 'a',
      approve: 'none',
      share: 'samples',
      planner: 'claude',
      model: 'm1',
      replace: true
    });
  });
});

describe('StartForm codebook', () => {
  it('hides the picker when no codebook lies next to the notebook', () => {
    render(
      <StartForm
        frame="df"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        codebooks={[]}
        onStart={() => undefined}
      />
    );
    expect(document.querySelector('[name="dictionary"]')).toBeNull();
  });

  it('sends the picked codebook and, for a REDCap dictionary, its event mapping', () => {
    const started: IStartOptions[] = [];
    render(
      <StartForm
        frame="df"
        path="study/nb.ipynb"
        profile={profile}
        disabled={false}
        codebooks={['dictionary.csv', 'mapping.csv', 'schema.json']}
        onStart={o => started.push(o)}
      />
    );
    expect(select('dictionary').value).toBe('');
    expect(document.querySelector('[name="events"]')).toBeNull();
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started[0].dictionary).toBeUndefined();
    fireEvent.change(select('dictionary'), { target: { value: 'dictionary.csv' } });
    // the events offered are the other CSV files, not the dictionary itself
    const offered = Array.from(select('events').options).map(o => o.value);
    expect(offered).toEqual(['', 'mapping.csv']);
    fireEvent.change(select('events'), { target: { value: 'mapping.csv' } });
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started[1]).toMatchObject({ dictionary: 'dictionary.csv', events: 'mapping.csv' });
    // a Table Schema has no events: picking it clears them
    fireEvent.change(select('dictionary'), { target: { value: 'schema.json' } });
    expect(document.querySelector('[name="events"]')).toBeNull();
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started[2].dictionary).toBe('schema.json');
    expect(started[2].events).toBeUndefined();
  });

  it('starts from the last codebook when it is still there', () => {
    const started: IStartOptions[] = [];
    render(
      <StartForm
        frame="df"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        codebooks={['codebook.md']}
        initial={{ dictionary: 'codebook.md' }}
        onStart={o => started.push(o)}
      />
    );
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started[0].dictionary).toBe('codebook.md');
  });
});

describe('StartForm join', () => {
  it('offers no join when the notebook holds no other DataFrame', () => {
    const started: IStartOptions[] = [];
    render(
      <StartForm
        frame="df"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        others={['df']}
        onStart={o => started.push(o)}
      />
    );
    expect(document.querySelector('.jp-dcpilot-join')).toBeNull();
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started[0].join).toBeUndefined();
  });

  it("sends the other frames ticked, in the notebook's order, the frame itself never among them", () => {
    const started: IStartOptions[] = [];
    render(
      <StartForm
        frame="stays"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        others={['vitals', 'stays', 'labs', 'notes']}
        onStart={o => started.push(o)}
      />
    );
    const boxes = Array.from(document.querySelectorAll('input[name="join"]')) as HTMLInputElement[];
    expect(boxes.map(b => b.value)).toEqual(['vitals', 'labs', 'notes']);
    expect(boxes.every(b => !b.checked)).toBe(true); // nothing joined unless asked
    fireEvent.click(boxes[1]);
    fireEvent.click(boxes[0]);
    fireEvent.click(boxes[2]);
    fireEvent.click(boxes[2]); // and untick
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started[0].join).toEqual(['vitals', 'labs']);
  });

  it('starts from the last join when those frames are still there', () => {
    const started: IStartOptions[] = [];
    render(
      <StartForm
        frame="stays"
        path="nb.ipynb"
        profile={profile}
        disabled={false}
        others={['stays', 'vitals']}
        initial={{ join: ['vitals', 'gone'] }}
        onStart={o => started.push(o)}
      />
    );
    fireEvent.click(screen.getByText('Start co-pilot'));
    expect(started[0].join).toEqual(['vitals']);
  });
});
