/**
 * How many Local File Triggers watch at once: per account (activation refuses the one past it; this
 * holds the bound in each process too, whatever raced past activation) and per process (each trigger
 * costs scans through libuv's four threads and up to MAX_FOLDER_WATCHES inotify watches).
 */

export const MAX_TRIGGERS_PER_ACCOUNT = 5;
export const MAX_TRIGGERS_PER_PROCESS = 50;

const byAccount = new Map<string, number>();
let inProcess = 0;

/** A release function for the slot taken, or why none is free. */
export function takeTriggerSlot(accountId: string): (() => void) | string {
  const mine = byAccount.get(accountId) ?? 0;
  if (mine >= MAX_TRIGGERS_PER_ACCOUNT)
    return `this account already has ${MAX_TRIGGERS_PER_ACCOUNT} Local File Triggers watching (the most)`;
  if (inProcess >= MAX_TRIGGERS_PER_PROCESS)
    return `this server already runs ${MAX_TRIGGERS_PER_PROCESS} Local File Triggers (the most)`;
  byAccount.set(accountId, mine + 1);
  inProcess++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    inProcess--;
    const left = (byAccount.get(accountId) ?? 1) - 1;
    if (left > 0) byAccount.set(accountId, left);
    else byAccount.delete(accountId);
  };
}
