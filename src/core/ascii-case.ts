/**
 * ASCII letters folded to lower case and nothing else changed: the case rule of what is made of ASCII (usernames,
 * Peppol identifiers). `toLowerCase()` folds more: the Kelvin sign (U+212A) becomes `k`, so a value no client may send
 * would name an identifier of ASCII letters.
 */
export function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}
