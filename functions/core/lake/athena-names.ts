import { PARTITION_KEYS } from '../definitions/table-schema.js';

/**
 * Athena column names from CSV headers: lower snake_case ASCII, unique, never a partition column's ("dt").
 * Athena and Glue fold names to lower case and choke on anything else without quoting, and the parse
 * step writes Parquet columns under these names, so they must be stable for a given header row.
 */

/** Russian and Ukrainian letters, transliterated the way bank statements and passports do (close to ICAO). */
const CYRILLIC: Record<string, string> = {
  а: 'a', б: 'b', в: 'v', г: 'g', д: 'd', е: 'e', ё: 'e', ж: 'zh', з: 'z', и: 'i', й: 'y', к: 'k', л: 'l',
  м: 'm', н: 'n', о: 'o', п: 'p', р: 'r', с: 's', т: 't', у: 'u', ф: 'f', х: 'kh', ц: 'ts', ч: 'ch',
  ш: 'sh', щ: 'shch', ъ: '', ы: 'y', ь: '', э: 'e', ю: 'yu', я: 'ya', і: 'i', ї: 'yi', є: 'ye', ґ: 'g',
};

/** The partition columns of every table (table-schema.ts PARTITION_KEYS): a data column may not take their names. */
const RESERVED: ReadonlySet<string> = new Set(PARTITION_KEYS.map((k) => k.name));

/**
 * One header as lower snake_case, before de-duplication; '' when nothing usable is left.
 * camelCase is split ("MerchantOID" -> "merchant_oid") so names read like the snake_case ones beside them.
 */
export function snakeCase(header: string): string {
  // Transliterate on composed text: NFKD would split "й" into "и" + breve and lose the "y".
  const ascii = [...header.normalize('NFC')]
    .map((ch) => CYRILLIC[ch.toLowerCase()] ?? ch)
    .join('')
    .normalize('NFKD')
    .replace(/\p{M}/gu, ''); // accents left by NFKD: "é" -> "e"
  return ascii
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_') // anything else, other scripts included, separates words
    .replace(/^_+|_+$/g, '');
}

export interface NamedColumn {
  name: string;
  /** Why the name is not simply the header in snake_case, when it is not. */
  note?: string;
}

/** Names for a header row, in order: unique, valid Athena identifiers, "c_" before a leading digit. */
export function athenaColumnNames(headers: readonly string[]): NamedColumn[] {
  const taken = new Set<string>();
  return headers.map((header, i) => {
    let name = snakeCase(header);
    let note: string | undefined;
    if (name === '') {
      name = `column_${i + 1}`;
      note = `no letters or digits in the header: named "${name}" after its position`;
    } else if (/^\d/.test(name)) {
      name = `c_${name}`;
      note = `the header starts with a digit, which Athena names may not: named "${name}"`;
    } else if (RESERVED.has(name)) {
      note = `"${name}" is a partition column: named "c_${name}"`;
      name = `c_${name}`;
    }
    if (taken.has(name)) {
      let n = 2;
      while (taken.has(`${name}_${n}`)) n++;
      note = `"${name}" is already taken by an earlier column: named "${name}_${n}"`;
      name = `${name}_${n}`;
    }
    taken.add(name);
    return note ? { name, note } : { name };
  });
}
