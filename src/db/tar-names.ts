/**
 * PGlite's dump names every entry from the data directory's root with a leading slash (`/PG_VERSION`, `/base/1/112`):
 * a tar that extracts names as written (`tar -P`, some old or other tars) would write them from the file system's
 * root. These rewrite the names relative (`PG_VERSION`), which PGlite's loader reads the same (it joins each name to
 * its data directory), in the ustar headers of an uncompressed archive.
 */
const BLOCK = 512;
const NAME = { offset: 0, length: 100 };
const SIZE = { offset: 124, length: 12 };
const CHECKSUM = { offset: 148, length: 8 };
const SLASH = 0x2f;
const SPACE = 0x20;

/** The archive with every entry's name relative; the entries' data and order as they were. */
export function withRelativeNames(archive: Uint8Array): Uint8Array {
  const out = Uint8Array.from(archive);
  for (
    let header = 0;
    header + BLOCK <= out.length && out[header] !== 0;
    header += BLOCK * (1 + Math.ceil(entrySize(out, header) / BLOCK))
  ) {
    if (out[header] !== SLASH) continue;
    const name = out.subarray(header + NAME.offset, header + NAME.offset + NAME.length);
    name.copyWithin(0, 1);
    name[NAME.length - 1] = 0;
    writeChecksum(out, header);
  }
  return out;
}

const field = (archive: Uint8Array, header: number, { offset, length }: { offset: number; length: number }) =>
  archive.subarray(header + offset, header + offset + length);

function entrySize(archive: Uint8Array, header: number): number {
  return Number.parseInt(
    Buffer.from(field(archive, header, SIZE))
      .toString('latin1')
      .replace(/\0.*$/, '')
      .trim() || '0',
    8,
  );
}

/** The sum of the header's bytes with its checksum field counted as spaces: six octal digits, NUL, space. */
function writeChecksum(archive: Uint8Array, header: number): void {
  const checksum = field(archive, header, CHECKSUM);
  checksum.fill(SPACE);
  const sum = archive.subarray(header, header + BLOCK).reduce((total, byte) => total + byte, 0);
  checksum.set(Buffer.from(`${sum.toString(8).padStart(6, '0')}\0 `, 'latin1'));
}
