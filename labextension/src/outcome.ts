/** The cell's outputs and, if one of them is an error, that error. */
export function cellOutcome(outputs: { [key: string]: unknown }[]): {
  outputs: { [key: string]: unknown }[];
  error: { ename: string; evalue: string; traceback: string[] } | null;
} {
  const failed = outputs.find(o => o && o.output_type === 'error');
  return {
    outputs,
    error: failed
      ? {
          ename: String(failed.ename),
          evalue: String(failed.evalue),
          traceback: (failed.traceback as string[] | undefined) ?? []
        }
      : null
  };
}
