import type { ValidationProblem, WorkflowDefinition } from '../engine/index.js';

/**
 * n8n's workflow settings on which executions are kept: `saveDataSuccessExecution` and
 * `saveDataErrorExecution` (`all` | `none`; `DEFAULT`: all), `saveManualExecutions` (a boolean;
 * `DEFAULT`: true). A run that is not kept is deleted once it has answered; a waiting one always stays.
 */
const SAVE_VALUES = ['all', 'none', 'DEFAULT'];

export function keepsExecution(def: WorkflowDefinition | null, mode: string, status: string): boolean {
  const settings = def?.settings ?? {};
  if (status === 'waiting' || status === 'new' || status === 'running') return true;
  if (mode === 'manual' && settings.saveManualExecutions === false) return false;
  if (status === 'success') return settings.saveDataSuccessExecution !== 'none';
  return settings.saveDataErrorExecution !== 'none';
}

/** Save-time checks of the three settings (a typo would otherwise keep or drop runs silently). */
export function saveSettingProblems(settings: Record<string, unknown> | undefined): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const name of ['saveDataSuccessExecution', 'saveDataErrorExecution']) {
    const value = settings?.[name];
    if (value !== undefined && !SAVE_VALUES.includes(value as string))
      problems.push({ path: `settings.${name}`, message: `must be one of ${SAVE_VALUES.join(', ')}` });
  }
  const manual = settings?.saveManualExecutions;
  if (manual !== undefined && typeof manual !== 'boolean' && manual !== 'DEFAULT')
    problems.push({ path: 'settings.saveManualExecutions', message: 'must be true, false or DEFAULT' });
  return problems;
}
