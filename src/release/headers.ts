/**
 * What an executable's first bytes say it is: its format, its CPU and, for
 * a dynamically linked ELF file, its program interpreter (which names the C
 * library: /lib/ld-linux-aarch64.so.1 is glibc's, /lib/ld-musl-*.so.1 musl's).
 * Enough to tell that a cross-built file is for the platform it is named
 * after when it cannot be run here. Layouts: the System V ABI (ELF),
 * <mach-o/loader.h> (Mach-O), the Microsoft PE/COFF specification (PE).
 */

export interface ExecutableKind {
  format: "elf" | "macho" | "pe";
  arch: "x64" | "arm64" | "other";
  /** ELF only: the PT_INTERP path, or null for a static file. */
  interpreter?: string | null;
}

const PT_INTERP = 3;

/** The kind of a 64-bit little-endian executable from its bytes (the first 64 KiB suffice), or null. */
export function executableKind(b: Uint8Array): ExecutableKind | null {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const has = (end: number) => end <= b.length;
  if (has(20) && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) {
    if (b[4] !== 2 || b[5] !== 1 || !has(64)) return null; // ELFCLASS64, ELFDATA2LSB
    const machine = v.getUint16(0x12, true);
    const arch = machine === 0x3e ? "x64" : machine === 0xb7 ? "arm64" : "other";
    const phoff = Number(v.getBigUint64(0x20, true));
    const phentsize = v.getUint16(0x36, true);
    const phnum = v.getUint16(0x38, true);
    let interpreter: string | null = null;
    for (let i = 0; i < phnum; i++) {
      const at = phoff + i * phentsize;
      if (!has(at + 56)) return null;
      if (v.getUint32(at, true) !== PT_INTERP) continue;
      const off = Number(v.getBigUint64(at + 8, true));
      const size = Number(v.getBigUint64(at + 32, true));
      if (size === 0 || size > 4096 || !has(off + size)) return null;
      interpreter = new TextDecoder().decode(b.subarray(off, off + size)).replace(/\0+$/, "");
    }
    return { format: "elf", arch, interpreter };
  }
  if (has(8) && v.getUint32(0, true) === 0xfeedfacf) {
    const cpu = v.getUint32(4, true);
    return { format: "macho", arch: cpu === 0x01000007 ? "x64" : cpu === 0x0100000c ? "arm64" : "other" };
  }
  if (has(0x40) && b[0] === 0x4d && b[1] === 0x5a) {
    const pe = v.getUint32(0x3c, true);
    if (!has(pe + 6) || v.getUint32(pe, true) !== 0x00004550) return null; // "PE\0\0"
    const machine = v.getUint16(pe + 4, true);
    return { format: "pe", arch: machine === 0x8664 ? "x64" : machine === 0xaa64 ? "arm64" : "other" };
  }
  return null;
}
