import iconv from 'iconv-lite';

/**
 * Which encoding a sample that is not UTF-8 is in. The provider's sample body asks for UTF-8; the other encoding
 * these gateways' reports come in is windows-1251 (Russian-language Windows), so that is the only guess worth
 * making, and only when the bytes read as Cyrillic text there. A general detector (chardet was measured) needs more text than a header and a
 * few rows: on `"Сумма";"Дата"` its best guess is ISO-8859-8, and windows-1251 is not among its candidates.
 */

/** Cyrillic letters, Ё and ё included (U+0400 to U+045F). */
const CYRILLIC = /[\u0400-\u045f]/u;
/** What windows-1251 maps its other bytes from 0x80 up to, and a report may well hold: №, «», dashes, NBSP. */
const CYRILLIC_TEXT_PUNCTUATION = new Set(['№', '«', '»', '–', '—', '\u00a0', '…', '‘', '’', '“', '”', '°']);

/**
 * True when the bytes read as Cyrillic text in windows-1251: every byte from 0x80 up decodes to a Cyrillic letter
 * or the punctuation such text holds, at least one is a letter, and no word mixes Latin and Cyrillic letters. A
 * Latin-1 or windows-1252 file fails the last test: its "Société" reads as "Sociйtй".
 */
export function readsAsWindows1251(bytes: Uint8Array): boolean {
  const text = iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 'windows-1251');
  let sawLetter = false;
  for (const c of text) {
    // Stryker disable next-line EqualityOperator: no byte decodes to U+0080 in windows-1251 (0x80 is Ђ), so <= reads alike
    if (c.charCodeAt(0) < 0x80) continue;
    if (CYRILLIC.test(c)) sawLetter = true;
    else if (!CYRILLIC_TEXT_PUNCTUATION.has(c)) return false;
  }
  if (!sawLetter) return false;
  return !/[A-Za-z][\u0400-\u045f]|[\u0400-\u045f][A-Za-z]/u.test(text);
}
