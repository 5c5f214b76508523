import type { ComponentChildren } from 'preact';
import { CopyButton } from './copy-button.js';
import { Dialog } from './dialog.js';

/** A value the server shows once (a key, an invite link): copy it now, it is gone on close. */
export function SecretDialog(props: {
  title: string;
  label: string;
  value: string;
  warning: ComponentChildren;
  onClose: () => void;
}) {
  return (
    <Dialog title={props.title} onClose={props.onClose} sticky>
      <p class="warning" role="note">
        {props.warning}
      </p>
      <label>
        {props.label}
        <input
          class="secret"
          type="text"
          readOnly
          value={props.value}
          onFocus={(e) => e.currentTarget.select()}
        />
      </label>
      <div class="actions">
        <CopyButton value={props.value} />
        <button type="button" class="primary" onClick={props.onClose}>
          I have copied it — close
        </button>
      </div>
    </Dialog>
  );
}
