import type { NodeRunData, RunState } from '../engine/index.js';

/** n8n's ITaskData for one node run (what `data.resultData.runData[node][i]` holds). */
function taskData(run: NodeRunData) {
  return {
    startTime: Date.parse(run.startTime),
    executionTime: run.executionTime,
    executionStatus: run.error ? ('error' as const) : ('success' as const),
    data: {
      main: run.output.map((items) =>
        items.map((item) => ({
          json: item.json,
          ...(item.binary ? { binary: item.binary } : {}),
          ...(item.pairedItem ? { pairedItem: item.pairedItem } : {}),
        })),
      ),
    },
    ...(run.source ? { source: run.source } : {}),
    ...(run.error ? { error: run.error } : {}),
    ...(run.logs && run.logs.length > 0 ? { logs: run.logs } : {}),
  };
}

/**
 * An execution's data in n8n's structure (`resultData.runData[node][run].data.main`,
 * `lastNodeExecuted`, `error`), so n8n tooling reads it unchanged. The engine's RunState is the
 * source; a run stopped before it stored any state has only the stored error message.
 */
export function n8nExecutionData(state: RunState | null, errorMessage: string | null) {
  const runData: Record<string, ReturnType<typeof taskData>[]> = {};
  for (const [node, runs] of Object.entries(state?.runData ?? {})) runData[node] = runs.map(taskData);
  return {
    resultData: {
      runData,
      lastNodeExecuted: state?.lastNodeExecuted ?? null,
      error: state?.error ?? (errorMessage ? { message: errorMessage } : null),
    },
  };
}
