/**
 * What text the registry accepts where it will be written into XML (the SMP answers, the business card, the SML's SOAP
 * requests), and how it is written there. XML 1.0 cannot carry the C0 control characters but tab, line feed and
 * carriage return, U+FFFE, U+FFFF or a surrogate without its pair, not even as a character reference.
 */

const NOT_XML_CHARACTER =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NOT_XML_CHARACTERS = new RegExp(NOT_XML_CHARACTER.source, 'g');
/** Printable US-ASCII without the blank: what Peppol identifiers are made of (see docs/design/http.md). */
const NOT_PRINTABLE_ASCII = /[^\u0021-\u007E]/;

/** `U+0001`: how a message names a character. */
const codePointOf = (character: string) =>
  `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** The first character of `text` that XML 1.0 cannot carry, named `U+XXXX`; undefined when there is none. */
export function characterXmlCannotCarry(text: string): string | undefined {
  const found = NOT_XML_CHARACTER.exec(text);
  return found ? codePointOf(found[0]) : undefined;
}

/** The first character of `text` outside printable US-ASCII (a blank, a control character, any other), named `U+XXXX`. */
export function characterOutsidePrintableAscii(text: string): string | undefined {
  const found = NOT_PRINTABLE_ASCII.exec(text);
  return found ? codePointOf(found[0]) : undefined;
}

export const isXmlText = (text: string) => characterXmlCannotCarry(text) === undefined;
export const isPrintableAscii = (text: string) => characterOutsidePrintableAscii(text) === undefined;

/** `text` with each character XML 1.0 cannot carry, which only a value stored before the registry refused them can hold, as U+FFFD. */
export const xmlCarriable = (text: string) => text.replace(NOT_XML_CHARACTERS, '\uFFFD');

const REFERENCES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

/**
 * `text` for XML element content or an attribute value alike: markup characters as entities, tab, line feed and
 * carriage return as character references (a raw carriage return would be read back as a line feed, and a signature
 * over it would no longer verify; in an attribute all three would be read as blanks), and each character XML 1.0
 * cannot carry, which only a value stored before the registry refused them can hold, as U+FFFD.
 */
export function xmlEscaped(text: string): string {
  return xmlCarriable(text).replace(
    /[&<>"'\t\n\r]/g,
    (character) => REFERENCES[character] ?? `&#${character.charCodeAt(0)};`,
  );
}
