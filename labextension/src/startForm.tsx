import * as React from 'react';

import { IFrameProfile, IStatus } from './api';
import { IStartOptions, Planner, Share } from './sessionApi';
import { TASK_KINDS } from './vocabulary';

const TASKS = ['auto', ...TASK_KINDS];

/** The approval policies, as the expert reads them. */
export const APPROVALS: { [policy: string]: string } = {
  ask: 'ask me at every gate',
  recommended: 'take the recommended option',
  none: 'skip steps that need a decision'
};

/** What may leave the machine, as the expert reads it. */
export const SHARES: { [share in Share]: string } = {
  schema: 'schema and statistics only',
  samples: 'also sample rows'
};

/** Settings a new session starts with (the last ones used, else the safe defaults). */
export interface ISettings {
  planner: Planner;
  model: string;
  approve: string;
  share: Share;
}

export const DEFAULT_SETTINGS: ISettings = {
  planner: 'rules',
  model: '',
  approve: 'ask',
  share: 'schema'
};

/** The model used when the field is left empty, as the server reports it. */
function defaultModel(status: IStatus | null): string | null {
  return status?.default_model ?? status?.model ?? null;
}

/**
 * The co-pilot's settings: planner, Claude model, approval policy, and what may be sent to an
 * LLM. Collapsed by default, with a one-line summary, because the defaults are the safe ones.
 */
export function SettingsSection(props: {
  settings: ISettings;
  status: IStatus | null;
  onChange: (settings: ISettings) => void;
}): JSX.Element {
  const { settings, status, onChange } = props;
  const set = (patch: Partial<ISettings>) => onChange({ ...settings, ...patch });
  const claudeReady = status === null || status.planners.includes('claude');
  const fallback = defaultModel(status);
  const summary = [
    settings.planner === 'claude'
      ? `Claude ${settings.model.trim() || fallback || ''}`.trim()
      : 'rule planner',
    APPROVALS[settings.approve] ?? settings.approve,
    settings.share === 'samples' ? 'sample rows may be sent' : 'no rows sent'
  ].join(' · ');
  return (
    <details className="jp-dcpilot-settings">
      <summary>
        <span className="jp-dcpilot-settings-name">Settings</span>
        <span className="jp-dcpilot-settings-summary">{summary}</span>
      </summary>
      <label>
        planner
        <select
          name="planner"
          value={settings.planner}
          onChange={e => set({ planner: e.target.value as Planner })}
        >
          <option value="rules">rules (no network)</option>
          <option value="claude" disabled={!claudeReady}>
            {claudeReady ? 'Claude' : 'Claude (no API key)'}
          </option>
        </select>
      </label>
      {!claudeReady && (
        <div className="jp-dcpilot-hint">
          To plan with Claude, set <code>ANTHROPIC_API_KEY</code> for the server (or store the key in the
          system keyring: <code>keyring set jupyter-dcpilot anthropic</code>).
        </div>
      )}
      <label>
        model
        <input
          name="model"
          type="text"
          value={settings.model}
          placeholder={fallback ? `default: ${fallback}` : 'server default'}
          disabled={settings.planner !== 'claude'}
          title="The Claude model id; empty means the configured default"
          onChange={e => set({ model: e.target.value })}
        />
      </label>
      <label>
        approve
        <select name="approve" value={settings.approve} onChange={e => set({ approve: e.target.value })}>
          {Object.entries(APPROVALS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <label title="What the Claude planner may see of the data">
        to LLM
        <select name="share" value={settings.share} onChange={e => set({ share: e.target.value as Share })}>
          {Object.entries(SHARES).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {settings.share === 'samples' ? (
        <div className="jp-dcpilot-warning" role="alert">
          Sample rows — real values, possibly personal data — will be sent to Anthropic's API with every
          planning request. Choose this only if this data may leave your machine.
        </div>
      ) : (
        <div className="jp-dcpilot-hint">
          {settings.planner === 'claude'
            ? 'Only column names, types and aggregate statistics are sent, never rows.'
            : 'The rule planner sends nothing: everything stays on this machine.'}
        </div>
      )}
    </details>
  );
}

/**
 * The study's codebook, picked among the files next to the notebook (`codebooks`), and for a
 * REDCap data dictionary (a CSV) its instrument–event mapping. Hidden when there is none.
 */
export function CodebookPicker(props: {
  codebooks: string[];
  dictionary: string;
  events: string;
  onChange: (dictionary: string, events: string) => void;
}): JSX.Element | null {
  const { codebooks, dictionary, events, onChange } = props;
  if (codebooks.length === 0) {
    return null;
  }
  const others = codebooks.filter(name => name !== dictionary && name.toLowerCase().endsWith('.csv'));
  return (
    <>
      <label title="The study's codebook: what it says of each column (its timing, whether it identifies a person, its valid values) is weighed with the data">
        codebook
        <select name="dictionary" value={dictionary} onChange={e => onChange(e.target.value, '')}>
          <option value="">none</option>
          {codebooks.map(name => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      {dictionary.toLowerCase().endsWith('.csv') && others.length > 0 && (
        <label title="For a REDCap data dictionary: the instrument-event mapping (the events in order, the forms each holds)">
          events
          <select name="events" value={events} onChange={e => onChange(dictionary, e.target.value)}>
            <option value="">none</option>
            {others.map(name => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      )}
    </>
  );
}

/** Target, task, codebook and settings for a new co-pilot session on one frame. */
export function StartForm(props: {
  frame: string;
  path: string;
  profile: IFrameProfile;
  disabled: boolean;
  status?: IStatus | null;
  initial?: Partial<IStartOptions> | null;
  /** The notebook has a live session this one replaces (the button says so). */
  replacing?: boolean;
  /** Files next to the notebook that may be its data's codebook (names relative to its folder). */
  codebooks?: string[];
  /** The notebook's other DataFrames, which may be joined with this one (files of one study). */
  others?: string[];
  onStart: (options: IStartOptions) => void;
  onCancel?: () => void;
}): JSX.Element {
  const { frame, path, profile, disabled, status, initial, replacing, codebooks, others, onStart, onCancel } =
    props;
  const joinable = (others ?? []).filter(name => name !== frame);
  const [join, setJoin] = React.useState<string[]>(
    (initial?.join ?? []).filter(name => joinable.includes(name))
  );
  const listed = codebooks ?? [];
  const columns = profile.columns_detail.map(c => c.name);
  const firstTarget =
    initial?.target && columns.includes(initial.target)
      ? initial.target
      : (columns[columns.length - 1] ?? '');
  const [target, setTarget] = React.useState(firstTarget);
  const [task, setTask] = React.useState(initial?.task ?? 'auto');
  const [dictionary, setDictionary] = React.useState(
    initial?.dictionary && listed.includes(initial.dictionary) ? initial.dictionary : ''
  );
  const [events, setEvents] = React.useState(
    initial?.events && listed.includes(initial.events) ? initial.events : ''
  );
  const [settings, setSettings] = React.useState<ISettings>({
    planner: initial?.planner ?? DEFAULT_SETTINGS.planner,
    model: initial?.model ?? DEFAULT_SETTINGS.model,
    approve: initial?.approve ?? DEFAULT_SETTINGS.approve,
    share: initial?.share ?? DEFAULT_SETTINGS.share
  });
  return (
    <form
      className="jp-dcpilot-start"
      onSubmit={event => {
        event.preventDefault();
        onStart({
          path,
          frame,
          target,
          task,
          approve: settings.approve,
          planner: settings.planner,
          model: settings.model.trim() || null,
          share: settings.share,
          ...(dictionary && listed.includes(dictionary) ? { dictionary, ...(events ? { events } : {}) } : {}),
          ...(replacing ? { replace: true } : {}),
          ...(join.length > 0 ? { join: joinable.filter(name => join.includes(name)) } : {})
        });
      }}
    >
      <div className="jp-dcpilot-section-title">Co-pilot for {frame}</div>
      <label>
        target
        <select name="target" value={target} onChange={e => setTarget(e.target.value)}>
          {columns.map(c => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <label>
        task
        <select name="task" value={task} onChange={e => setTask(e.target.value)}>
          {TASKS.map(t => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      {joinable.length > 0 && (
        <fieldset
          className="jp-dcpilot-join"
          title="Other files of the same study: the co-pilot finds their keys, summarises records over time per entity and joins them with this frame"
        >
          <legend>join with</legend>
          {joinable.map(name => (
            <label key={name} className="jp-dcpilot-join-frame">
              <input
                type="checkbox"
                name="join"
                value={name}
                checked={join.includes(name)}
                onChange={e =>
                  setJoin(e.target.checked ? [...join, name] : join.filter(other => other !== name))
                }
              />
              {name}
            </label>
          ))}
        </fieldset>
      )}
      <CodebookPicker
        codebooks={listed}
        dictionary={dictionary}
        events={events}
        onChange={(picked, mapping) => {
          setDictionary(picked);
          setEvents(mapping);
        }}
      />
      <SettingsSection settings={settings} status={status ?? null} onChange={setSettings} />
      {replacing && (
        <div className="jp-dcpilot-warning">
          This notebook has a live co-pilot session. Starting replaces it: its open decisions close; the cells
          it wrote and the kernel's variables stay.
        </div>
      )}
      <div className="jp-dcpilot-actions">
        {onCancel && (
          <button type="button" className="jp-mod-styled jp-mod-reject" onClick={onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" className="jp-mod-styled jp-mod-accept" disabled={disabled || !target}>
          {replacing ? 'Replace session' : 'Start co-pilot'}
        </button>
      </div>
    </form>
  );
}
