import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Dialog } from './dialog.js';
import { ErrorNote } from './error-note.js';

/** Asks before a destructive action; shows the API's error if it fails. */
export function ConfirmDialog(props: {
  title: string;
  confirmLabel: string;
  children: ComponentChildren;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
      props.onClose();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      {props.children}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
        <button type="button" class="danger" disabled={busy} onClick={confirm}>
          {props.confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
