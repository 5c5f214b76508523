import { useState } from 'preact/hooks';

/** Copies a value to the clipboard and says so (aria-live), or says how to copy it by hand. */
export function CopyButton({
  value,
  label = 'Copy',
  name,
}: {
  value: string;
  label?: string;
  name?: string;
}) {
  const [status, setStatus] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setStatus('Copied to the clipboard.');
    } catch {
      setStatus('The browser refused the clipboard: select the value and copy it by hand.');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy} aria-label={name}>
        {label}
      </button>
      <span class="status" aria-live="polite">
        {status}
      </span>
    </span>
  );
}
