import * as React from 'react';

import { ReactWidget, UseSignal, refreshIcon, ToolbarButtonComponent } from '@jupyterlab/ui-components';

import { IFrameInfo, IFrameProfile } from './api';
import { codebookFiles, ListFolder } from './codebooks';
import { formatBytes, formatCount, formatShare } from './format';
import { dcpilotIcon } from './icon';
import { FramesModel } from './model';
import { SessionModel } from './session';
import { SessionView } from './sessionView';
import { StartForm } from './startForm';

/** One DataFrame in the list: name, shape, memory and its column kinds. */
function FrameItem(props: {
  frame: IFrameInfo;
  selected: boolean;
  onSelect: (name: string) => void;
}): JSX.Element {
  const { frame, selected, onSelect } = props;
  return (
    <li
      className={`jp-dcpilot-frame${selected ? ' jp-mod-selected' : ''}`}
      data-frame={frame.name}
      onClick={() => onSelect(frame.name)}
      title={`Show the profile of ${frame.name}`}
    >
      <div className="jp-dcpilot-frame-head">
        <span className="jp-dcpilot-frame-name">{frame.name}</span>
        <span className="jp-dcpilot-frame-shape">
          {formatCount(frame.rows)} × {formatCount(frame.columns)}
        </span>
      </div>
      <div className="jp-dcpilot-frame-meta">
        {frame.library && frame.library !== 'pandas' && (
          <span className="jp-dcpilot-chip jp-dcpilot-library">{frame.library}</span>
        )}
        {frame.partitions !== undefined ? (
          <span>lazy, {formatCount(frame.partitions)} partitions</span>
        ) : (
          frame.memory_bytes !== null && <span>{formatBytes(frame.memory_bytes)}</span>
        )}
        {Object.entries(frame.dtypes).map(([kind, count]) => (
          <span key={kind} className={`jp-dcpilot-chip jp-dcpilot-kind-${kind}`}>
            {count} {kind}
          </span>
        ))}
      </div>
    </li>
  );
}

/** The compact profile of the selected frame: one row per column. */
function ProfileView(props: { name: string; profile: IFrameProfile }): JSX.Element {
  const { name, profile } = props;
  return (
    <div className="jp-dcpilot-profile" data-profile={name}>
      <div className="jp-dcpilot-section-title">
        {profile.rows === null
          ? `${name}: lazy, profiled on its first ${formatCount(profile.profiled_rows ?? 0)} rows, `
          : `${name}: ${formatCount(profile.rows)} rows, ${formatBytes(profile.memory_bytes)}, `}
        {formatShare(profile.missing_share)} missing
      </div>
      <table className="jp-dcpilot-table">
        <thead>
          <tr>
            <th>column</th>
            <th>dtype</th>
            <th>missing</th>
            <th>unique</th>
          </tr>
        </thead>
        <tbody>
          {profile.columns_detail.map(column => (
            <tr key={column.name} title={`e.g. ${column.examples.map(String).join(', ')}`}>
              <td className="jp-dcpilot-colname">{column.name}</td>
              <td>
                <span className={`jp-dcpilot-chip jp-dcpilot-kind-${column.kind}`}>{column.dtype}</span>
              </td>
              <td>
                <div className="jp-dcpilot-missing">
                  <div
                    className="jp-dcpilot-missing-bar"
                    style={{ width: `${Math.round(column.missing_share * 100)}%` }}
                  />
                  <span>{formatShare(column.missing_share)}</span>
                </div>
              </td>
              <td>{column.unique === null ? '–' : formatCount(column.unique)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Everything the panel shows for the current notebook. */
export function FramesView(props: {
  model: FramesModel;
  copilot?: SessionModel;
  listFolder?: ListFolder;
}): JSX.Element {
  const { model, copilot, listFolder } = props;
  if (!model.path) {
    return <div className="jp-dcpilot-empty">Open a notebook to see its DataFrames.</div>;
  }
  return (
    <div className="jp-dcpilot-frames">
      <div className="jp-dcpilot-toolbar">
        <span className="jp-dcpilot-section-title">DataFrames in {model.label}</span>
        <ToolbarButtonComponent
          icon={refreshIcon}
          onClick={() => void model.refresh()}
          tooltip="Refresh the list of DataFrames"
          enabled={!model.loading}
        />
      </div>
      {model.error && <div className="jp-dcpilot-error">{model.error}</div>}
      {!model.error && model.frames.length === 0 && !model.loading && (
        <div className="jp-dcpilot-empty">
          No DataFrames in this notebook's kernel yet. Run a cell that creates one.
        </div>
      )}
      <ul className="jp-dcpilot-frame-list">
        {model.frames.map(frame => (
          <FrameItem
            key={frame.name}
            frame={frame}
            selected={frame.name === model.selected}
            onSelect={name => void model.select(name)}
          />
        ))}
      </ul>
      {model.selected && model.profile && <ProfileView name={model.selected} profile={model.profile} />}
      {copilot && (
        <UseSignal signal={copilot.changed}>
          {() => <CopilotView copilot={copilot} frames={model} listFolder={listFolder} />}
        </UseSignal>
      )}
    </div>
  );
}

/**
 * The co-pilot of the notebook: its live session if it has one (reconnected after a reload
 * or a notebook switch), else the start form for the selected frame. One session per notebook:
 * starting again asks to replace the live one.
 */
function CopilotView(props: {
  copilot: SessionModel;
  frames: FramesModel;
  listFolder?: ListFolder;
}): JSX.Element {
  const { copilot, frames, listFolder } = props;
  const session = copilot.session;
  const path = (frames.path ?? '').replace(/^\//, '');
  const codebooks = useCodebooks(listFolder, path, frames.frames);
  const mine = !!session && session.path.replace(/^\//, '') === path;
  const frame = frames.selected;
  const profile = frames.profile;
  const conflict = copilot.conflict;
  const showForm = !mine || copilot.restarting;
  // the saved settings, then the last start's; a saved Claude planner the server cannot offer
  // (no API key) falls back to the rules
  const claudeReady = !copilot.status || copilot.status.planners.includes('claude');
  const defaults =
    claudeReady || copilot.defaults.planner !== 'claude'
      ? copilot.defaults
      : { ...copilot.defaults, planner: 'rules' as const };
  return (
    <div className="jp-dcpilot-copilot">
      {showForm && frame && profile && (
        <StartForm
          key={`${path}:${frame}:${JSON.stringify(defaults)}`}
          frame={frame}
          path={frames.path ?? path}
          profile={profile}
          disabled={copilot.running && !mine}
          status={copilot.status}
          initial={{ ...defaults, ...copilot.lastOptions }}
          replacing={mine}
          codebooks={codebooks}
          others={frames.frames.map(f => f.name)}
          onStart={options => void copilot.start(options)}
          onCancel={mine ? () => copilot.setRestarting(false) : undefined}
        />
      )}
      {showForm && !(frame && profile) && frames.frames.length > 0 && (
        <div className="jp-dcpilot-empty">Select a DataFrame to start the co-pilot on it.</div>
      )}
      {conflict && (
        <div className="jp-dcpilot-warning jp-dcpilot-conflict">
          This notebook already has a live co-pilot session.
          <div className="jp-dcpilot-actions">
            <button type="button" className="jp-dcpilot-button" onClick={() => void copilot.rejoin()}>
              Open it
            </button>
            <button
              type="button"
              className="jp-mod-styled jp-mod-warn"
              onClick={() => void copilot.start({ ...conflict, replace: true })}
            >
              Replace it
            </button>
          </div>
        </div>
      )}
      {!mine && copilot.error && <div className="jp-dcpilot-error">{copilot.error}</div>}
      {mine && <SessionView model={copilot} onKernelChanged={() => void frames.refresh()} />}
    </div>
  );
}

/**
 * The files next to the notebook that may be its codebook ([] while loading, without a lister,
 * or when the folder cannot be read), listed again when the notebook changes and whenever
 * `again` does (the kernel's frames were read again: a cell ran, and may have written one).
 */
function useCodebooks(listFolder: ListFolder | undefined, path: string, again: unknown): string[] {
  const [found, setFound] = React.useState<{ path: string; names: string[] }>({ path: '', names: [] });
  React.useEffect(() => {
    if (!listFolder || !path) {
      return;
    }
    let current = true;
    codebookFiles(listFolder, path)
      .then(names => current && setFound({ path, names }))
      .catch(() => current && setFound({ path, names: [] }));
    return () => {
      current = false;
    };
  }, [listFolder, path, again]);
  return found.path === path ? found.names : [];
}

/** The right-sidebar panel "Data co-pilot". */
export class DataPilotPanel extends ReactWidget {
  constructor(
    readonly model: FramesModel,
    readonly copilot?: SessionModel,
    readonly listFolder?: ListFolder
  ) {
    super();
    this.id = 'jp-dcpilot-panel';
    this.title.icon = dcpilotIcon;
    this.title.caption = 'Data co-pilot';
    this.addClass('jp-dcpilot-panel');
  }

  protected render(): JSX.Element {
    return (
      <div className="jp-dcpilot-body">
        <header className="jp-dcpilot-header">Data co-pilot</header>
        <UseSignal signal={this.model.changed}>
          {() => <FramesView model={this.model} copilot={this.copilot} listFolder={this.listFolder} />}
        </UseSignal>
      </div>
    );
  }
}
