import * as React from 'react';

import { SessionModel } from './session';
import { IEpisode, IParamSpec, ISession, IStep } from './sessionApi';
import { isPending } from './vocabulary';

/** The stage of each step, from the episode library the server sends. */
function stageOf(session: ISession): (step: IStep) => string {
  const stages = new Map((session.library ?? []).map(e => [e.id, e.stage]));
  return step => stages.get(step.episode) ?? '';
}

/** A value as the form shows it: lists comma-separated. */
function shown(value: unknown): string {
  if (value === undefined || value === null) {
    return '';
  }
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** A form's text as the value a parameter takes (numbers, lists of names, words); null clears. */
export function parseParam(spec: IParamSpec, text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') {
    return null;
  }
  if (spec.kind === 'number') {
    const value = Number(trimmed);
    return Number.isFinite(value) ? value : trimmed; // the server says what is wrong with it
  }
  if (spec.kind === 'columns' || spec.kind === 'names') {
    return trimmed
      .split(',')
      .map(name => name.trim())
      .filter(Boolean);
  }
  return trimmed;
}

/** A kernel_tools call as options carry it. */
interface ICall {
  function?: string;
  params?: { [key: string]: unknown };
}

/**
 * The parameters the step's call takes as planned, before the expert's own: those of its
 * decision's answer (else its recommended option), else of its finding's recommended option,
 * else the step's — each only when it calls the step's own function.
 */
export function plannedParams(session: ISession, step: IStep): { [key: string]: unknown } {
  const decision = session.decisions.find(d => d.id === step.decision_id);
  const finding = (session.findings ?? []).find(f => (step.finding_ids ?? []).includes(f.id));
  const calls = [
    decision?.options.find(o => o.id === (decision.choice ?? decision.recommended))?.action,
    finding?.options.find(o => o.recommended)?.action
  ] as (ICall | null | undefined)[];
  const own = calls.find(call => call?.function && call.function === step.function);
  return { ...(step.params ?? {}), ...(own?.params ?? {}) };
}

/** A parameter's value now: the expert's, else the planned call's; undefined: the function's default. */
export function currentParam(
  step: IStep,
  key: string,
  spec: IParamSpec,
  planned: { [key: string]: unknown }
): unknown {
  if (step.user_params && key in step.user_params) {
    return step.user_params[key];
  }
  const value = planned[spec.param ?? key];
  if (value === undefined && key === 'columns' && step.columns.length > 0) {
    return step.columns;
  }
  return value;
}

/** The parameters of one step, edited before it runs: each shows its value now. */
function ParamsForm(props: {
  step: IStep;
  specs: { [key: string]: IParamSpec };
  planned: { [key: string]: unknown };
  disabled: boolean;
  onSave: (params: { [key: string]: unknown }) => void;
  onClose: () => void;
}): JSX.Element {
  const { step, specs, planned, disabled, onSave, onClose } = props;
  const now = (key: string) => shown(currentParam(step, key, specs[key], planned));
  const [values, setValues] = React.useState<{ [key: string]: string }>(() =>
    Object.fromEntries(Object.keys(specs).map(key => [key, now(key)]))
  );
  const changed = () => {
    const params: { [key: string]: unknown } = {};
    for (const [key, spec] of Object.entries(specs)) {
      if (values[key] !== now(key)) {
        params[key] = parseParam(spec, values[key]);
      }
    }
    return params;
  };
  return (
    <form
      className="jp-dcpilot-params"
      data-step={step.id}
      onSubmit={event => {
        event.preventDefault();
        const params = changed();
        if (Object.keys(params).length > 0) {
          onSave(params);
        }
        onClose();
      }}
    >
      {Object.entries(specs).map(([key, spec]) => (
        <label key={key} className="jp-dcpilot-param" title={spec.doc}>
          <span>{key}</span>
          {spec.kind === 'choice' ? (
            <select
              name={key}
              value={values[key]}
              onChange={e => setValues({ ...values, [key]: e.target.value })}
            >
              {now(key) === '' && <option value="">(its default)</option>}
              {(spec.choices ?? []).map(choice => (
                <option key={choice} value={choice}>
                  {choice}
                </option>
              ))}
            </select>
          ) : (
            <input
              name={key}
              type={spec.kind === 'number' ? 'number' : 'text'}
              step="any"
              min={spec.min}
              max={spec.max}
              placeholder={spec.kind === 'number' ? '(its default)' : 'names, comma-separated'}
              value={values[key]}
              onChange={e => setValues({ ...values, [key]: e.target.value })}
            />
          )}
          {spec.doc && now(key) === '' && <span className="jp-dcpilot-param-doc">{spec.doc}</span>}
        </label>
      ))}
      <div className="jp-dcpilot-params-actions">
        <button type="submit" className="jp-mod-styled jp-mod-accept" disabled={disabled}>
          Set
        </button>
        <button type="button" className="jp-mod-styled" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The expert's controls on one plan step: move up or down, skip, edit parameters, reopen. */
export function StepActions(props: { model: SessionModel; step: IStep }): JSX.Element | null {
  const { model, step } = props;
  const [editing, setEditing] = React.useState(false);
  const session = model.session;
  if (!session || !model.source.edit) {
    return null;
  }
  const busy = model.running && session.state !== 'blocked';
  const stage = stageOf(session);
  // the report stays last: it neither moves nor is moved past
  const movable = (s: IStep) => isPending(s.status) && s.episode !== 'report' && stage(s) === stage(step);
  const peers = movable(step) ? session.plan.filter(movable) : [];
  const at = peers.findIndex(s => s.id === step.id);
  const episode = session.library?.find(e => e.id === step.episode);
  const specs = episode?.params ?? {};
  const pending = isPending(step.status);
  const reopenable = (step.status === 'done' && !!step.checkpoint_id) || step.status === 'skipped';
  const button = (label: string, title: string, onClick: () => void, className = '') => (
    <button
      type="button"
      className={`jp-dcpilot-step-action ${className}`}
      title={title}
      aria-label={title}
      disabled={busy}
      onClick={onClick}
    >
      {label}
    </button>
  );
  return (
    <>
      <span className="jp-dcpilot-step-actions" data-step={step.id}>
        {pending &&
          at > 0 &&
          button(
            '↑',
            `Move before ${peers[at - 1].title}`,
            () => void model.edit({ op: 'move', step: step.id, before: peers[at - 1].id })
          )}
        {pending &&
          at >= 0 &&
          at < peers.length - 1 &&
          button(
            '↓',
            `Move after ${peers[at + 1].title}`,
            () => void model.edit({ op: 'move', step: step.id, after: peers[at + 1].id })
          )}
        {pending &&
          Object.keys(specs).length > 0 &&
          button('edit', 'Edit its parameters before it runs', () => setEditing(!editing), 'jp-dcpilot-edit')}
        {pending &&
          !episode?.required && // a valid model needs it: never skipped (the server refuses too)
          button(
            'skip',
            'Skip this step (it will not run)',
            () => void model.edit({ op: 'skip', step: step.id }),
            'jp-dcpilot-skip'
          )}
        {reopenable &&
          button(
            'reopen',
            step.status === 'skipped'
              ? 'Propose this step again'
              : 'Undo to before this step, then plan again (its question is asked again)',
            () => void model.edit({ op: 'reopen', step: step.id }),
            'jp-dcpilot-reopen'
          )}
      </span>
      {editing && (
        <ParamsForm
          step={step}
          specs={specs}
          planned={plannedParams(session, step)}
          disabled={busy}
          onSave={params => void model.edit({ op: 'params', step: step.id, params })}
          onClose={() => setEditing(false)}
        />
      )}
    </>
  );
}

/** One episode of the library: what it does in a line, and a way to add it (with columns). */
function EpisodeItem(props: { model: SessionModel; episode: IEpisode; disabled: boolean }): JSX.Element {
  const { model, episode, disabled } = props;
  const [open, setOpen] = React.useState(false);
  const [columns, setColumns] = React.useState('');
  const takesColumns = 'columns' in episode.params;
  return (
    <li
      className="jp-dcpilot-episode"
      data-episode={episode.id}
      data-addable={episode.addable ? 'yes' : 'no'}
    >
      <div className="jp-dcpilot-episode-head">
        <span className="jp-dcpilot-episode-name">{episode.name}</span>
        {episode.gate && <span className="jp-dcpilot-chip">{episode.gate}</span>}
        <button
          type="button"
          className="jp-dcpilot-step-action jp-dcpilot-add"
          disabled={disabled || !episode.addable}
          title={episode.addable ? `Add a ${episode.name.toLowerCase()} step` : (episode.why_not ?? '')}
          onClick={() =>
            takesColumns ? setOpen(!open) : void model.edit({ op: 'add', episode: episode.id })
          }
        >
          add
        </button>
      </div>
      <div className="jp-dcpilot-episode-line">
        {episode.addable ? episode.line : `${episode.line} (${episode.why_not})`}
      </div>
      {open && (
        <form
          className="jp-dcpilot-add-form"
          onSubmit={event => {
            event.preventDefault();
            const names = columns
              .split(',')
              .map(c => c.trim())
              .filter(Boolean);
            void model.edit({ op: 'add', episode: episode.id, ...(names.length ? { columns: names } : {}) });
            setOpen(false);
          }}
        >
          <input
            name="columns"
            placeholder="columns, comma-separated (empty: all that apply)"
            value={columns}
            onChange={e => setColumns(e.target.value)}
          />
          <button type="submit" className="jp-mod-styled jp-mod-accept" disabled={disabled}>
            Add
          </button>
        </form>
      )}
    </li>
  );
}

/** The episode library, one line each, to add a step to the plan. */
export function EpisodeLibrary(props: { model: SessionModel }): JSX.Element | null {
  const { model } = props;
  const session = model.session;
  if (!session?.library || !model.source.edit) {
    return null;
  }
  const busy = model.running && session.state !== 'blocked';
  return (
    <details className="jp-dcpilot-library">
      <summary>
        Add a step ({session.library.filter(e => e.addable).length} episodes can be added now)
      </summary>
      <ul className="jp-dcpilot-episodes">
        {session.library.map(episode => (
          <EpisodeItem key={episode.id} model={model} episode={episode} disabled={busy} />
        ))}
      </ul>
    </details>
  );
}
