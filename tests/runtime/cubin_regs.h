/* The register count ptxas gave a cubin's kernel, read from the cubin itself, so that a
 * test can state what it expects from the registers a compile took (which follow the LLVM
 * version) instead of a count that holds for one LLVM only.
 * A cubin is a little-endian ELF64 file; its .nv.info section is a list of attributes,
 * each a format byte, an attribute byte and then: nothing (format 1), a 16-bit value
 * (2, 3), or a 16-bit size and that many bytes (4).  EIATTR_REGCOUNT (0x2f, format 4) holds
 * the kernel's symbol index and its register count, 32 bits each. */
#ifndef CUBIN_REGS_H
#define CUBIN_REGS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uint64_t cubin_le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The largest register count of the cubin's kernels, or -1 when the file has none. */
static int cubin_regs(const void *data, size_t len) {
    const unsigned char *b = data;
    if (len < 64 || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F' || b[4] != 2)
        return -1;
    uint64_t shoff = cubin_le(b + 0x28, 8), shentsize = cubin_le(b + 0x3a, 2), shnum = cubin_le(b + 0x3c, 2),
             shstrndx = cubin_le(b + 0x3e, 2);
    if (shentsize < 64 || shstrndx >= shnum || shoff > len || shnum * shentsize > len - shoff)
        return -1;
    const unsigned char *strh = b + shoff + shstrndx * shentsize;
    uint64_t stroff = cubin_le(strh + 24, 8), strsize = cubin_le(strh + 32, 8);
    if (stroff > len || strsize > len - stroff)
        return -1;
    int regs = -1;
    for (uint64_t i = 0; i < shnum; i++) {
        const unsigned char *sh = b + shoff + i * shentsize;
        uint64_t name = cubin_le(sh, 4), off = cubin_le(sh + 24, 8), size = cubin_le(sh + 32, 8);
        if (name >= strsize || off > len || size > len - off)
            continue;
        const char *sname = (const char *)b + stroff + name;
        if (strnlen(sname, strsize - name) != 8 || memcmp(sname, ".nv.info", 8))
            continue;
        for (uint64_t p = off; p + 4 <= off + size;) {
            unsigned fmt = b[p], attr = b[p + 1];
            uint64_t vsize = fmt == 4 ? cubin_le(b + p + 2, 2) : 0;
            if (fmt == 4 && attr == 0x2f && vsize >= 8 && p + 4 + vsize <= off + size) {
                int r = (int)cubin_le(b + p + 8, 4);
                regs = r > regs ? r : regs;
            }
            p += fmt == 4 ? 4 + vsize : fmt == 1 ? 2 : 4;
        }
    }
    return regs;
}

#endif
