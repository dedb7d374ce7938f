import { ISignal, Signal } from '@lumino/signaling';

import { APIError, fetchFrames, fetchProfile, IFrameInfo, IFrameProfile, warmUp } from './api';

/** Where the model gets its data from (the server, or a fake in tests). */
export interface IFramesSource {
  frames(path: string): Promise<IFrameInfo[]>;
  profile(path: string, name: string): Promise<IFrameProfile>;
  /** Start the kernel's imports ahead of the first step (optional: a source may not warm). */
  warmUp?(path: string): Promise<unknown>;
}

/** The real source: the co-pilot's REST API. */
export const serverSource: IFramesSource = {
  frames: fetchFrames,
  profile: fetchProfile,
  warmUp
};

/**
 * The state of the frames view for one notebook: its DataFrames, the one selected and
 * its profile. Emits `changed` whenever anything the view shows changes.
 */
export class FramesModel {
  constructor(source: IFramesSource = serverSource) {
    this._source = source;
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }
  get path(): string | null {
    return this._path;
  }
  /** The notebook's name as the user sees it (its kernel session may still use an older path). */
  get label(): string {
    return this._label;
  }
  get frames(): IFrameInfo[] {
    return this._frames;
  }
  get selected(): string | null {
    return this._selected;
  }
  get profile(): IFrameProfile | null {
    return this._profile;
  }
  get loading(): boolean {
    return this._loading;
  }
  get error(): string | null {
    return this._error;
  }

  /** Follow another notebook (or none); `label` is the name to show for it. */
  async setNotebook(path: string | null, label?: string): Promise<void> {
    const nextLabel = label ?? (path ? (path.split('/').pop() ?? path) : '');
    if (path === this._path) {
      if (nextLabel !== this._label) {
        this._label = nextLabel;
        this._changed.emit();
      }
      return;
    }
    this._path = path;
    this._label = nextLabel;
    this._frames = [];
    this._selected = null;
    this._profile = null;
    this._error = null;
    this._changed.emit();
    this.warmUp();
    await this.refresh();
  }

  /**
   * Have the notebook's kernel import what the co-pilot's first diagnosis and model step need,
   * in a background thread, while the user reads the panel. Only a head start: a kernel not
   * started yet (or without the co-pilot) is warmed when its kernel changes, or never.
   */
  warmUp(): void {
    const path = this._path;
    if (path && this._source.warmUp) {
      this._source.warmUp(path).catch(() => undefined);
    }
  }

  /** The same notebook under a new name (renamed or moved): keep its frames and selection. */
  async rename(path: string, label?: string): Promise<void> {
    this._path = path;
    this._label = label ?? path.split('/').pop() ?? path;
    this._changed.emit();
    await this.refresh();
  }

  /** Ask the kernel again which frames exist; keep the selection if it still does. */
  async refresh(): Promise<void> {
    const path = this._path;
    if (!path) {
      return;
    }
    const ticket = ++this._ticket;
    this._loading = true;
    this._changed.emit();
    try {
      const frames = await this._source.frames(path);
      if (ticket !== this._ticket) {
        return; // a newer refresh (or another notebook) superseded this one
      }
      this._frames = frames;
      this._error = null;
      if (this._selected && !frames.some(f => f.name === this._selected)) {
        this._selected = null;
        this._profile = null;
      }
      if (this._selected) {
        this._profile = await this._source.profile(path, this._selected);
      }
    } catch (reason) {
      if (ticket === this._ticket) {
        this._frames = [];
        this._error = describe(reason);
      }
    } finally {
      if (ticket === this._ticket) {
        this._loading = false;
        this._changed.emit();
      }
    }
  }

  /** Select a frame and load its profile. */
  async select(name: string): Promise<void> {
    const path = this._path;
    if (!path) {
      return;
    }
    this._selected = name;
    this._profile = null;
    this._changed.emit();
    try {
      const profile = await this._source.profile(path, name);
      if (this._selected === name && this._path === path) {
        this._profile = profile;
        this._error = null;
      }
    } catch (reason) {
      this._error = describe(reason);
    }
    this._changed.emit();
  }

  private _source: IFramesSource;
  private _path: string | null = null;
  private _label = '';
  private _frames: IFrameInfo[] = [];
  private _selected: string | null = null;
  private _profile: IFrameProfile | null = null;
  private _loading = false;
  private _error: string | null = null;
  private _ticket = 0;
  private _changed = new Signal<this, void>(this);
}

function describe(reason: unknown): string {
  if (reason instanceof APIError) {
    return reason.message;
  }
  return reason instanceof Error ? reason.message : String(reason);
}
