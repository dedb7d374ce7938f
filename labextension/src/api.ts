import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** A DataFrame in a notebook's kernel, as the server lists it. */
export interface IFrameInfo {
  name: string;
  /** the library the frame comes from: "pandas", "polars", "pyarrow", "dask", ... */
  library?: string;
  /** null for a lazy (Dask) frame: its rows are not counted just to list it */
  rows: number | null;
  columns: number;
  /** null when the library does not say (an Arrow table from another library, a lazy frame) */
  memory_bytes: number | null;
  dtypes: { [kind: string]: number };
  /** A lazy (Dask) frame's partitions. */
  partitions?: number;
}

/** One column of a frame's compact profile. */
export interface IColumnProfile {
  name: string;
  dtype: string;
  kind: string;
  missing_share: number;
  unique: number | null;
  examples: unknown[];
}

/** The compact profile of one DataFrame. */
export interface IFrameProfile {
  /** null for a lazy frame (profiled on its first partition: profiled_rows). */
  rows: number | null;
  profiled_rows?: number;
  columns: number;
  memory_bytes: number;
  missing_share: number;
  columns_detail: IColumnProfile[];
}

/** What the server says about itself. */
export interface IStatus {
  version: string;
  planners: string[];
  llm_configured: boolean;
  model: string | null;
  /** The model used when none is chosen (newer servers send it even without an API key). */
  default_model?: string | null;
}

/** An error the server answered with, carrying its message for the user. */
export class APIError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** False when no co-pilot handler answered: the server's own "404 Not Found" page for an
     * endpoint it does not have (an older server), not a handler's JSON error. */
    readonly routed = true
  ) {
    super(message);
  }
}

/**
 * Call the co-pilot's REST API (authenticated and XSRF-protected by ServerConnection).
 */
export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, 'dcpilot', 'api', endPoint);
  const response = await ServerConnection.makeRequest(url, init, settings);
  const text = await response.text();
  let data: unknown = text;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      // not JSON: keep the raw text as the message
    }
  }
  if (!response.ok) {
    const body = data && typeof data === 'object' ? (data as { message?: unknown; reason?: unknown }) : {};
    const message = body.message || body.reason || response.statusText;
    const routed = response.status !== 404 || (data !== null && typeof data === 'object');
    throw new APIError(String(message), response.status, routed);
  }
  return data as T;
}

/** The DataFrames in the kernel of the notebook at `path`. */
export function fetchFrames(path: string): Promise<IFrameInfo[]> {
  return requestAPI<IFrameInfo[]>(`frames?path=${encodeURIComponent(path)}`);
}

/** What the kernel of the notebook at `path` has warmed (imports made ahead of the first step). */
export interface IWarmUp {
  running: boolean;
  warmed: string[];
  pending: string[];
}

/** Ask the notebook's kernel to import what the co-pilot's first steps need, in the background. */
export function warmUp(path: string): Promise<IWarmUp> {
  return requestAPI<IWarmUp>(`warmup?path=${encodeURIComponent(path)}`, { method: 'POST' });
}

/** The compact profile of the DataFrame `name` in the notebook at `path`. */
export function fetchProfile(path: string, name: string): Promise<IFrameProfile> {
  return requestAPI<IFrameProfile>(
    `profile?path=${encodeURIComponent(path)}&name=${encodeURIComponent(name)}`
  );
}
