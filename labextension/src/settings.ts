import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { SessionModel } from './session';
import { IBudgets, IStartOptions } from './sessionApi';
import { APPROVALS, DEFAULT_SETTINGS, ISettings } from './startForm';

/**
 * The start-form settings JupyterLab keeps across reloads (the plugin's schema holds their
 * defaults; the Settings Editor edits them too).
 *
 * What may be sent to an LLM ("share") is deliberately not one of them. Sample rows are real,
 * possibly personal values; whether they may leave the machine is a decision about one dataset.
 * A saved "samples" would silently apply to the next notebook, opened days later on other
 * data, so every page starts again from "schema" and sending rows needs the explicit choice.
 */
export type Remembered = Pick<ISettings, 'planner' | 'model' | 'approve'>;

const KEYS: (keyof Remembered)[] = ['planner', 'model', 'approve'];

/** The remembered settings in a plugin's composite settings; the safe default for a value
 * that is missing or not one the form offers (a hand-edited settings file). */
export function rememberedSettings(composite: { readonly [key: string]: unknown }): Remembered {
  const { planner, model, approve } = composite;
  return {
    planner: planner === 'rules' || planner === 'claude' ? planner : DEFAULT_SETTINGS.planner,
    model: typeof model === 'string' ? model.trim() : DEFAULT_SETTINGS.model,
    approve: typeof approve === 'string' && approve in APPROVALS ? approve : DEFAULT_SETTINGS.approve
  };
}

/** The time budgets in a plugin's composite settings: kinds with a positive number of seconds
 * (anything else in a hand-edited file is left out; the server's defaults apply there). */
export function budgetSettings(composite: { readonly [key: string]: unknown }): IBudgets {
  const budgets: IBudgets = {};
  const given = composite.budgets;
  if (given && typeof given === 'object' && !Array.isArray(given)) {
    for (const [kind, seconds] of Object.entries(given as { [key: string]: unknown })) {
      if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0) {
        budgets[kind] = seconds;
      }
    }
  }
  return budgets;
}

/** Save the planner, model and approval policy of a start the expert asked for (only the
 * values that changed, so an untouched setting keeps following the schema's default). */
export async function rememberChoices(
  settings: ISettingRegistry.ISettings,
  options: IStartOptions
): Promise<void> {
  const chosen = rememberedSettings({ ...options, model: options.model ?? '' });
  const current = rememberedSettings(settings.composite);
  for (const key of KEYS) {
    if (chosen[key] !== current[key]) {
      await settings.set(key, chosen[key]);
    }
  }
}

/** Start new sessions from the user's settings, follow edits made in the Settings Editor, and
 * save the choices of every start. */
export function connectSettings(copilot: SessionModel, settings: ISettingRegistry.ISettings): void {
  const load = () => {
    copilot.setBudgets(budgetSettings(settings.composite));
    copilot.setDefaults(rememberedSettings(settings.composite));
  };
  load();
  settings.changed.connect(load);
  copilot.started.connect((_, options) => {
    rememberChoices(settings, options).catch(reason =>
      console.warn('jupyter-dcpilot: the co-pilot settings could not be saved', reason)
    );
  });
}
