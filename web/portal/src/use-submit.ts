import { useState } from 'preact/hooks';

/** A form's submit: one at a time, the API's error kept to show in words. */
export function useSubmit(run: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return { busy, error, onSubmit };
}
