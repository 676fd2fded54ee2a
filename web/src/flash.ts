/** A confirmation that outlives the page that made it (a saved participant, told on the list it returns to). */
let pending = '';

export function flash(text: string): void {
  pending = text;
}

/** The confirmation waiting to be shown, once. */
export function takeFlash(): string {
  const text = pending;
  pending = '';
  return text;
}
