import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

const TABBABLE = 'a[href], button, input, select, textarea, summary, [tabindex]';

/** Inputs Tab walks through part by part. */
const MULTIPART = new Set(['date', 'time', 'datetime-local', 'month', 'week']);

/** The controls Tab stops at in `root`, in order. */
function tabbables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(TABBABLE)].filter(
    (el) =>
      el.tabIndex >= 0 &&
      !el.matches(':disabled') &&
      (el as HTMLInputElement).type !== 'hidden' &&
      el.getClientRects().length > 0,
  );
}

/**
 * A modal on the native <dialog>: focus moves in and is kept there (Tab past the last control comes
 * back to the first, Shift+Tab before the first goes to the last), Escape closes it, and focus returns
 * to what opened it.
 */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** A dialog that must be dismissed on purpose (a secret shown once): Escape does not close it. */
  sticky?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const tabbing = useRef<'forward' | 'back' | null>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement as HTMLElement | null;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      // Closed before focusing: while a modal is open the rest of the page is inert.
      if (dialog?.open) dialog.close();
      opener?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!props.sticky) props.onClose();
      }}
      // A modal dialog lets Tab leave for the browser's own controls; the focus is kept in instead.
      // At a control with parts (a date), Tab moves between its parts: the focus is brought back after.
      onKeyDown={(event) => {
        const dialog = ref.current;
        if (event.key !== 'Tab' || !dialog) return;
        tabbing.current = event.shiftKey ? 'back' : 'forward';
        const stops = tabbables(dialog);
        const edge = event.shiftKey ? stops[0] : stops.at(-1);
        if (!edge || event.target !== edge || MULTIPART.has((edge as HTMLInputElement).type)) return;
        event.preventDefault();
        tabbing.current = null;
        (event.shiftKey ? stops.at(-1) : stops[0])?.focus();
      }}
      onFocusOut={(event) => {
        const dialog = ref.current;
        const direction = tabbing.current;
        tabbing.current = null;
        const to = event.relatedTarget as Node | null;
        if (!dialog || !direction || (to && dialog.contains(to))) return;
        const stops = tabbables(dialog);
        (direction === 'forward' ? stops[0] : stops.at(-1))?.focus();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}
