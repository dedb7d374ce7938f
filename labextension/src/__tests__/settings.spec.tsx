import * as React from 'react';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { Signal } from '@lumino/signaling';

import { IFrameProfile } from '../api';
import { FramesModel } from '../model';
import { FramesView } from '../panel';
import { SessionModel } from '../session';
import { ISession, ISessionSource, IStartOptions } from '../sessionApi';
import { budgetSettings, connectSettings, rememberChoices, rememberedSettings } from '../settings';

const profile: IFrameProfile = {
  rows: 10,
  columns: 2,
  memory_bytes: 100,
  missing_share: 0,
  columns_detail: ['x', 'y'].map(name => ({
    name,
    dtype: 'float64',
    kind: 'number',
    missing_share: 0,
    unique: 10,
    examples: []
  }))
};

/** The plugin's settings as JupyterLab holds them: a composite, set() and a changed signal. */
class FakeSettings {
  constructor(public composite: { [key: string]: unknown }) {}
  readonly sets: [string, unknown][] = [];
  readonly changed = new Signal<this, void>(this);
  async set(key: string, value: unknown): Promise<void> {
    this.sets.push([key, value]);
    this.composite = { ...this.composite, [key]: value };
    this.changed.emit();
  }
  asSettings(): ISettingRegistry.ISettings {
    return this as unknown as ISettingRegistry.ISettings;
  }
}

function session(path: string): ISession {
  return {
    id: 'a'.repeat(32),
    path,
    frame: 'df',
    state: 'blocked',
    plan: [],
    decisions: [],
    checkpoints: [],
    transcript: []
  };
}

function fakeSource(started: IStartOptions[], claude = true): ISessionSource {
  return {
    start: async options => {
      started.push(options);
      return session(options.path);
    },
    get: async () => session('nb.ipynb'),
    decide: async () => session('nb.ipynb'),
    undo: async () => session('nb.ipynb'),
    list: async () => [],
    interrupt: async () => null,
    status: async () => ({
      version: '0',
      planners: claude ? ['rules', 'claude'] : ['rules'],
      llm_configured: claude,
      model: null,
      default_model: 'claude-sonnet-4-5'
    })
  };
}

const noSocket = () => ({ onmessage: null, onclose: null, send: () => undefined, close: () => undefined });

const options: IStartOptions = {
  path: 'nb.ipynb',
  frame: 'df',
  target: 'y',
  task: 'auto',
  approve: 'recommended',
  planner: 'claude',
  model: ' claude-haiku-4-5 ',
  share: 'samples'
};

function value(name: string): string {
  return (document.querySelector(`[name="${name}"]`) as HTMLSelectElement | HTMLInputElement).value;
}

async function panel(copilot: SessionModel): Promise<void> {
  const frames = new FramesModel({ frames: async () => [], profile: async () => profile });
  await frames.setNotebook('nb.ipynb');
  await frames.select('df');
  render(<FramesView model={frames} copilot={copilot} />);
}

describe('rememberedSettings', () => {
  it('reads planner, model and approval; anything the form does not offer falls back', () => {
    expect(
      rememberedSettings({ planner: 'claude', model: ' m1 ', approve: 'none', share: 'samples' })
    ).toEqual({ planner: 'claude', model: 'm1', approve: 'none' });
    expect(rememberedSettings({ planner: 'gpt', model: 5, approve: 'always' })).toEqual({
      planner: 'rules',
      model: '',
      approve: 'ask'
    });
    expect(rememberedSettings({})).toEqual({ planner: 'rules', model: '', approve: 'ask' });
  });
});

describe('budgetSettings', () => {
  it('keeps kinds with a positive number of seconds and drops anything else', () => {
    expect(
      budgetSettings({ budgets: { train_evaluate: 900, impute: 0, '*': 'soon', diagnose: 60 } })
    ).toEqual({ train_evaluate: 900, diagnose: 60 });
    expect(budgetSettings({ budgets: [5] })).toEqual({});
    expect(budgetSettings({})).toEqual({});
  });

  it('sends the budgets of the settings with every start', async () => {
    const started: IStartOptions[] = [];
    const copilot = new SessionModel(fakeSource(started), null, noSocket);
    const settings = new FakeSettings({ planner: 'rules', budgets: { train_evaluate: 900 } });
    connectSettings(copilot, settings.asSettings());
    await copilot.start({ ...options, planner: 'rules' });
    expect(started[0].budget).toEqual({ train_evaluate: 900 });
    settings.composite = { ...settings.composite, budgets: {} };
    settings.changed.emit();
    await copilot.start({ ...options, planner: 'rules' });
    expect(started[1].budget).toBeUndefined(); // the server's defaults
  });
});

describe('rememberChoices', () => {
  it('saves the changed planner, model and approval, never what may be sent to an LLM', async () => {
    const settings = new FakeSettings({ planner: 'rules', model: '', approve: 'ask' });
    await rememberChoices(settings.asSettings(), options);
    expect(settings.sets).toEqual([
      ['planner', 'claude'],
      ['model', 'claude-haiku-4-5'],
      ['approve', 'recommended']
    ]);
    await rememberChoices(settings.asSettings(), { ...options, model: 'claude-haiku-4-5' });
    expect(settings.sets).toHaveLength(3); // nothing changed: nothing written
    await rememberChoices(settings.asSettings(), { ...options, planner: 'rules', model: null });
    expect(settings.sets.slice(3)).toEqual([
      ['planner', 'rules'],
      ['model', '']
    ]);
  });
});

describe('connectSettings', () => {
  it('starts from the saved settings, follows the Settings Editor and saves each start', async () => {
    const started: IStartOptions[] = [];
    const copilot = new SessionModel(fakeSource(started), null, noSocket);
    const settings = new FakeSettings({ planner: 'rules', model: '', approve: 'none' });
    connectSettings(copilot, settings.asSettings());
    expect(copilot.defaults).toEqual({ planner: 'rules', model: '', approve: 'none' });
    settings.composite = { ...settings.composite, model: 'claude-opus-4' };
    settings.changed.emit();
    expect(copilot.defaults.model).toBe('claude-opus-4');
    await copilot.start(options);
    await Promise.resolve();
    expect(settings.sets).toEqual([
      ['planner', 'claude'],
      ['model', 'claude-haiku-4-5'],
      ['approve', 'recommended']
    ]);
    expect(started[0].share).toBe('samples'); // sent as chosen, but not saved
  });
});

describe('the start form of the panel', () => {
  it('begins from the saved settings and shares only the schema until asked again', async () => {
    const started: IStartOptions[] = [];
    const copilot = new SessionModel(fakeSource(started), null, noSocket);
    await copilot.loadStatus();
    const settings = new FakeSettings({ planner: 'claude', model: 'claude-opus-4', approve: 'recommended' });
    connectSettings(copilot, settings.asSettings());
    await panel(copilot);
    expect([value('planner'), value('model'), value('approve'), value('share')]).toEqual([
      'claude',
      'claude-opus-4',
      'recommended',
      'schema'
    ]);
    // edited in the Settings Editor while the form is shown
    await act(async () => {
      await settings.set('approve', 'ask');
    });
    expect(value('approve')).toBe('ask');
    await act(async () => {
      fireEvent.click(screen.getByText('Start co-pilot'));
    });
    expect(started[0]).toMatchObject({
      planner: 'claude',
      model: 'claude-opus-4',
      approve: 'ask',
      share: 'schema'
    });
  });

  it('falls back to the rules when the saved planner is Claude and the server has no API key', async () => {
    const copilot = new SessionModel(fakeSource([], false), null, noSocket);
    await copilot.loadStatus();
    connectSettings(copilot, new FakeSettings({ planner: 'claude', model: '', approve: 'ask' }).asSettings());
    await panel(copilot);
    expect(value('planner')).toBe('rules');
  });
});

describe('a renamed notebook', () => {
  it('keeps its session and socket when the server moved the session with it', async () => {
    const sockets: ReturnType<typeof noSocket>[] = [];
    const listed: string[] = [];
    const source = {
      ...fakeSource([]),
      list: async (path: string) => {
        listed.push(path);
        return [];
      }
    };
    const copilot = new SessionModel(source, null, () => {
      const socket = noSocket();
      sockets.push(socket);
      return socket;
    });
    await copilot.follow('old.ipynb');
    await copilot.start({ ...options, path: 'old.ipynb' });
    expect(copilot.session?.path).toBe('old.ipynb');
    copilot.apply({ type: 'renamed', path: 'dir/new.ipynb', source_path: 'old.ipynb' });
    expect(copilot.session?.path).toBe('dir/new.ipynb');
    await copilot.follow('dir/new.ipynb');
    expect(copilot.session?.id).toBe('a'.repeat(32));
    expect(copilot.path).toBe('dir/new.ipynb');
    expect(sockets).toHaveLength(1); // not reconnected
    expect(listed).toEqual(['old.ipynb']); // nothing to look up: it is the same session
  });
});
