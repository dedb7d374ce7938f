import * as React from 'react';
import { act, render, screen } from '@testing-library/react';

import { IFrameInfo, IFrameProfile } from '../api';
import { formatBytes, formatShare } from '../format';
import { FramesModel, IFramesSource } from '../model';
import { FramesView } from '../panel';

const frames: IFrameInfo[] = [
  { name: 'patients', rows: 1200, columns: 14, memory_bytes: 134400, dtypes: { number: 10, text: 4 } },
  { name: 'visits', rows: 5301, columns: 6, memory_bytes: 254448, dtypes: { datetime: 1, number: 5 } },
  { name: 'cohort', library: 'polars', rows: 80, columns: 3, memory_bytes: null, dtypes: { number: 3 } }
];

const profile: IFrameProfile = {
  rows: 1200,
  columns: 2,
  memory_bytes: 20000,
  missing_share: 0.05,
  columns_detail: [
    { name: 'age', dtype: 'float64', kind: 'number', missing_share: 0.1, unique: 60, examples: [40, 51] },
    { name: 'sex', dtype: 'object', kind: 'text', missing_share: 0, unique: 2, examples: ['f', 'm'] }
  ]
};

/** A source answering from memory, recording what was asked. */
function fakeSource(list: IFrameInfo[] | Error): IFramesSource & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    frames: async (path: string) => {
      calls.push(`frames:${path}`);
      if (list instanceof Error) {
        throw list;
      }
      return list;
    },
    profile: async (path: string, name: string) => {
      calls.push(`profile:${path}:${name}`);
      return profile;
    }
  };
}

describe('FramesModel warm-up', () => {
  it('asks the kernel of each notebook it follows to warm up, once, before listing its frames', async () => {
    const source = fakeSource(frames);
    const warmed: string[] = [];
    source.warmUp = async (path: string) => {
      warmed.push(path);
      source.calls.push(`warmUp:${path}`);
      return { running: true, warmed: [], pending: [] };
    };
    const model = new FramesModel(source);
    await model.setNotebook('work/analysis.ipynb');
    await model.setNotebook('work/analysis.ipynb'); // the same notebook: nothing new to warm
    await model.setNotebook('work/other.ipynb');
    expect(warmed).toEqual(['work/analysis.ipynb', 'work/other.ipynb']);
    expect(source.calls.slice(0, 2)).toEqual(['warmUp:work/analysis.ipynb', 'frames:work/analysis.ipynb']);
  });

  it('lists the frames when the warm-up fails (no kernel yet, an older server)', async () => {
    const source = fakeSource(frames);
    source.warmUp = async () => {
      throw new Error('no running kernel for notebook');
    };
    const model = new FramesModel(source);
    await model.setNotebook('work/analysis.ipynb');
    model.warmUp(); // the kernel changed: tried again, its failure still unseen
    await Promise.resolve();
    expect(model.error).toBeNull();
    expect(model.frames).toHaveLength(3);
  });
});

describe('FramesView', () => {
  it('lists a lazy (Dask) frame by its partitions, its rows not counted', async () => {
    const lazy: IFrameInfo = {
      name: 'events',
      rows: null,
      columns: 46,
      memory_bytes: null,
      dtypes: { number: 43, text: 3 },
      partitions: 160
    };
    const model = new FramesModel(fakeSource([lazy]));
    await model.setNotebook('work/big.ipynb');
    render(<FramesView model={model} />);
    expect(screen.getByText('? × 46')).toBeTruthy();
    expect(screen.getByText('lazy, 160 partitions')).toBeTruthy();
  });

  it('lists the frames of the notebook with their shape', async () => {
    const source = fakeSource(frames);
    const model = new FramesModel(source);
    await model.setNotebook('work/analysis.ipynb');
    render(<FramesView model={model} />);

    expect(source.calls).toEqual(['frames:work/analysis.ipynb']);
    expect(screen.getByText('DataFrames in analysis.ipynb')).toBeTruthy();
    const items = document.querySelectorAll('.jp-dcpilot-frame');
    expect(items).toHaveLength(3);
    expect(items[0].getAttribute('data-frame')).toBe('patients');
    expect(screen.getByText('1,200 × 14')).toBeTruthy();
    expect(screen.getByText('5,301 × 6')).toBeTruthy();
    expect(screen.getByText('4 text')).toBeTruthy();
    // a polars frame says where it comes from; pandas frames need no label
    const cohort = document.querySelector('.jp-dcpilot-frame[data-frame="cohort"]');
    expect(cohort?.querySelector('.jp-dcpilot-library')?.textContent).toBe('polars');
    expect(document.querySelectorAll('.jp-dcpilot-library')).toHaveLength(1);
  });

  it('shows the profile of the selected frame', async () => {
    const source = fakeSource(frames);
    const model = new FramesModel(source);
    await model.setNotebook('analysis.ipynb');
    await act(async () => {
      await model.select('patients');
    });
    render(<FramesView model={model} />);
    expect(source.calls).toContain('profile:analysis.ipynb:patients');
    expect(document.querySelector('[data-profile="patients"]')).toBeTruthy();
    expect(screen.getByText('age')).toBeTruthy();
    expect(screen.getByText('10.0%')).toBeTruthy();
    expect(document.querySelector('.jp-dcpilot-frame.jp-mod-selected')?.getAttribute('data-frame')).toBe(
      'patients'
    );
  });

  it('keeps the selected frame when the notebook is renamed, and asks under the new name', async () => {
    const source = fakeSource(frames);
    const model = new FramesModel(source);
    await model.setNotebook('analysis.ipynb');
    await model.select('patients');
    await model.rename('work/final.ipynb');
    expect([model.path, model.label, model.selected]).toEqual([
      'work/final.ipynb',
      'final.ipynb',
      'patients'
    ]);
    expect(source.calls.slice(-2)).toEqual(['frames:work/final.ipynb', 'profile:work/final.ipynb:patients']);
    await model.setNotebook('other.ipynb'); // another notebook: nothing selected there
    expect(model.selected).toBeNull();
  });

  it('says so when there is no notebook, no frame or an error', async () => {
    const empty = new FramesModel(fakeSource([]));
    const { unmount } = render(<FramesView model={empty} />);
    expect(screen.getByText('Open a notebook to see its DataFrames.')).toBeTruthy();
    unmount();

    await empty.setNotebook('a.ipynb');
    const second = render(<FramesView model={empty} />);
    expect(screen.getByText(/No DataFrames in this notebook/)).toBeTruthy();
    second.unmount();

    const failing = new FramesModel(fakeSource(new Error('no running kernel for notebook')));
    await failing.setNotebook('b.ipynb');
    render(<FramesView model={failing} />);
    expect(screen.getByText('no running kernel for notebook')).toBeTruthy();
  });
});

describe('format', () => {
  it('formats bytes and shares for people', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(254448)).toBe('248 KB');
    expect(formatShare(0)).toBe('0%');
    expect(formatShare(0.0001)).toBe('<0.1%');
    expect(formatShare(0.1234)).toBe('12.3%');
  });
});
