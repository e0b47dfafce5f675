/* Scalars, types, layouts: their tables, helpers and text. */
#include "tir_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int bits;
    char cls;
} scalar_table[TIR_NSCALARS] = {
#define X(id, text, bits, cls) [TIR_##id] = {text, bits, cls},
    TIR_SCALARS(X)
#undef X
};

static bool scalar_ok(TirScalar s) {
    return (unsigned)s < TIR_NSCALARS;
}

const char *tir_scalar_name(TirScalar s) {
    return scalar_ok(s) ? scalar_table[s].name : "?";
}
int tir_scalar_bits(TirScalar s) {
    return scalar_ok(s) ? scalar_table[s].bits : 0;
}
int tir_scalar_bytes(TirScalar s) {
    int b = tir_scalar_bits(s);
    return b < 8 ? 1 : b / 8;
}
bool tir_scalar_is_float(TirScalar s) {
    return scalar_ok(s) && scalar_table[s].cls == 'f';
}
bool tir_scalar_is_int(TirScalar s) {
    return scalar_ok(s) && (scalar_table[s].cls == 'b' || scalar_table[s].cls == 's' || scalar_table[s].cls == 'u');
}
bool tir_scalar_is_signed(TirScalar s) {
    return scalar_ok(s) && (scalar_table[s].cls == 's' || scalar_table[s].cls == 'f');
}

int tir_scalar_from_name(const char *s, size_t n) {
    if (n == 4 && memcmp(s, "bool", 4) == 0)
        return TIR_I1;
    for (int i = 0; i < TIR_NSCALARS; i++)
        if (strlen(scalar_table[i].name) == n && memcmp(scalar_table[i].name, s, n) == 0)
            return i;
    return -1;
}

/* ---- types ---- */

TirType tir_scalar_type(TirScalar s) {
    TirType t = {0};
    t.kind = TIR_K_VALUE;
    t.elem = (uint8_t)s;
    return t;
}

TirType tir_ptr_type(TirScalar pointee) {
    TirType t = tir_scalar_type(pointee);
    t.ptr = 1;
    return t;
}

TirType tir_tile_type(TirType elem, int rank, const int32_t *shape) {
    TirType t = {0};
    t.kind = TIR_K_VALUE;
    t.elem = elem.elem;
    t.ptr = elem.ptr;
    if (rank > TIR_MAXRANK)
        rank = TIR_MAXRANK;
    t.rank = (uint8_t)(rank < 0 ? 0 : rank);
    for (int i = 0; i < t.rank; i++)
        t.shape[i] = shape[i];
    return t;
}

TirType tir_elem_type(TirType t) {
    TirType e = {0};
    e.kind = TIR_K_VALUE;
    e.elem = t.elem;
    e.ptr = t.ptr;
    return e;
}

TirType tir_with_shape(TirType t, int rank, const int32_t *shape) {
    TirType r = tir_tile_type(tir_elem_type(t), rank, shape);
    r.kind = t.kind;
    return r;
}

bool tir_type_eq_nolayout(TirType a, TirType b) {
    if (a.kind != b.kind || a.elem != b.elem || a.ptr != b.ptr || a.rank != b.rank)
        return false;
    for (int i = 0; i < a.rank; i++)
        if (a.shape[i] != b.shape[i])
            return false;
    return true;
}

bool tir_type_eq(TirType a, TirType b) {
    return tir_type_eq_nolayout(a, b) && a.layout == b.layout;
}

bool tir_type_is_tile(TirType t) {
    return t.kind == TIR_K_VALUE && t.rank > 0;
}
bool tir_type_is_smem(TirType t) {
    return t.kind == TIR_K_SMEM;
}

TirType tir_smem_type(TirScalar e, int stages, int rank, const int32_t *shape) {
    int32_t full[TIR_MAXRANK];
    if (rank > TIR_MAXRANK - 1)
        rank = TIR_MAXRANK - 1;
    full[0] = stages;
    for (int i = 0; i < rank; i++)
        full[1 + i] = shape[i];
    TirType t = tir_tile_type(tir_scalar_type(e), rank + 1, full);
    t.kind = TIR_K_SMEM;
    return t;
}

TirType tir_smem_stage_type(TirType buf) {
    return tir_tile_type(tir_scalar_type((TirScalar)buf.elem), buf.rank - 1, buf.shape + 1);
}

int64_t tir_type_numel(TirType t) {
    int64_t n = 1;
    for (int i = 0; i < t.rank; i++)
        n *= t.shape[i];
    return n;
}

/* ---- text ---- */

void tir_sb_printf(TirSb *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *dst = sb->len < sb->cap ? sb->buf + sb->len : NULL;
    size_t room = sb->len < sb->cap ? sb->cap - sb->len : 0;
    int k = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (k > 0)
        sb->len += (size_t)k;
}

void tir_sb_double(TirSb *sb, double v) {
    if (isnan(v)) {
        tir_sb_printf(sb, "nan");
        return;
    }
    if (isinf(v)) {
        tir_sb_printf(sb, v < 0 ? "-inf" : "inf");
        return;
    }
    /* Shortest %g form that reads back to the same double. */
    char tmp[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    /* Whole numbers read better without an exponent: 1000.0, not 1e+03. */
    if (strpbrk(tmp, "eE") && v == floor(v) && fabs(v) < 1e16)
        snprintf(tmp, sizeof tmp, "%.1f", v);
    /* Keep a float constant visibly a float ("1.0", not "1") so it never reads as an int. */
    if (!strpbrk(tmp, ".eEn"))
        strcat(tmp, ".0");
    tir_sb_printf(sb, "%s", tmp);
}

static void sb_list(TirSb *sb, const char *key, const int32_t *v, int n) {
    tir_sb_printf(sb, "%s=[", key);
    for (int i = 0; i < n; i++)
        tir_sb_printf(sb, i ? ", %d" : "%d", v[i]);
    tir_sb_printf(sb, "]");
}

/* depth guards against a corrupt table whose parent links form a cycle */
static void sb_layout_rec(TirSb *sb, const TirModule *m, int32_t idx, int depth) {
    if (!m || idx <= 0 || idx >= m->nlayouts || depth > 8) {
        tir_sb_printf(sb, "#invalid");
        return;
    }
    const TirLayout *l = &m->layouts[idx];
    switch ((TirLayoutKind)l->kind) {
    case TIR_LAYOUT_BLOCKED:
        tir_sb_printf(sb, "#blocked<");
        sb_list(sb, "spt", l->size_per_thread, l->rank);
        tir_sb_printf(sb, ", ");
        sb_list(sb, "tpw", l->threads_per_warp, l->rank);
        tir_sb_printf(sb, ", ");
        sb_list(sb, "wpc", l->warps_per_cta, l->rank);
        tir_sb_printf(sb, ", ");
        sb_list(sb, "order", l->order, l->rank);
        tir_sb_printf(sb, ">");
        break;
    case TIR_LAYOUT_SLICE:
        tir_sb_printf(sb, "#slice<dim=%d, parent=", l->dim);
        sb_layout_rec(sb, m, l->parent, depth + 1);
        tir_sb_printf(sb, ">");
        break;
    case TIR_LAYOUT_MMA:
        tir_sb_printf(sb, "#mma<v=%d, ", l->version);
        sb_list(sb, "wpc", l->warps_per_cta, l->rank);
        tir_sb_printf(sb, ", ");
        sb_list(sb, "instr", l->instr, 3);
        if (l->ngroup > 1)
            tir_sb_printf(sb, ", ngroup=%d", l->ngroup);
        tir_sb_printf(sb, ">");
        break;
    case TIR_LAYOUT_DOT_OPERAND:
        tir_sb_printf(sb, "#dot_op<idx=%d, k=%d, parent=", l->op_idx, l->k_width);
        sb_layout_rec(sb, m, l->parent, depth + 1);
        tir_sb_printf(sb, ">");
        break;
    case TIR_LAYOUT_SHARED:
        tir_sb_printf(sb, "#shared<vec=%d, phase=%d, max_phase=%d, ", l->vec, l->per_phase, l->max_phase);
        sb_list(sb, "order", l->order, l->rank);
        if (l->atom)
            tir_sb_printf(sb, ", atom=%d", l->atom);
        tir_sb_printf(sb, ">");
        break;
    default: tir_sb_printf(sb, "#invalid"); break;
    }
}

void tir_sb_layout(TirSb *sb, const TirModule *m, int32_t layout) {
    sb_layout_rec(sb, m, layout, 0);
}

void tir_sb_type(TirSb *sb, const TirModule *m, TirType t) {
    const char *en = tir_scalar_name((TirScalar)t.elem);
    if (t.kind == TIR_K_VALUE && t.rank == 0) {
        if (t.ptr)
            tir_sb_printf(sb, "ptr<%s>", en);
        else
            tir_sb_printf(sb, "%s", en);
        return;
    }
    tir_sb_printf(sb, "%s<", t.kind == TIR_K_DESC ? "desc" : t.kind == TIR_K_SMEM ? "smem" : "tile");
    for (int i = 0; i < t.rank; i++)
        tir_sb_printf(sb, "%dx", t.shape[i]);
    if (t.ptr)
        tir_sb_printf(sb, "ptr<%s>", en);
    else
        tir_sb_printf(sb, "%s", en);
    if (m && t.layout > 0) {
        tir_sb_printf(sb, ", ");
        tir_sb_layout(sb, m, t.layout);
    }
    tir_sb_printf(sb, ">");
}

int tir_type_print(char *buf, size_t n, const TirModule *m, TirType t) {
    TirSb sb = {buf, n, 0};
    if (buf && n)
        buf[0] = 0;
    tir_sb_type(&sb, m, t);
    return (int)sb.len;
}

int tir_layout_print(char *buf, size_t n, const TirModule *m, int32_t layout) {
    TirSb sb = {buf, n, 0};
    if (buf && n)
        buf[0] = 0;
    tir_sb_layout(&sb, m, layout);
    return (int)sb.len;
}

/* ---- layouts ---- */

/* Only the fields a kind uses take part in equality; the rest are cleared. */
static TirLayout layout_normalize(const TirLayout *l) {
    TirLayout n;
    memset(&n, 0, sizeof n);
    n.kind = l->kind;
    int rank = l->rank > TIR_MAXRANK ? TIR_MAXRANK : l->rank;
    switch ((TirLayoutKind)l->kind) {
    case TIR_LAYOUT_BLOCKED:
        n.rank = (uint8_t)rank;
        for (int i = 0; i < rank; i++) {
            n.size_per_thread[i] = l->size_per_thread[i];
            n.threads_per_warp[i] = l->threads_per_warp[i];
            n.warps_per_cta[i] = l->warps_per_cta[i];
            n.order[i] = l->order[i];
        }
        break;
    case TIR_LAYOUT_SLICE:
        n.rank = (uint8_t)rank;
        n.parent = l->parent;
        n.dim = l->dim;
        break;
    case TIR_LAYOUT_MMA:
        n.rank = (uint8_t)rank;
        n.version = l->version;
        for (int i = 0; i < rank; i++)
            n.warps_per_cta[i] = l->warps_per_cta[i];
        memcpy(n.instr, l->instr, sizeof n.instr);
        n.ngroup = l->ngroup > 1 ? l->ngroup : 0;
        break;
    case TIR_LAYOUT_DOT_OPERAND:
        n.rank = (uint8_t)rank;
        n.parent = l->parent;
        n.op_idx = l->op_idx;
        n.k_width = l->k_width;
        break;
    case TIR_LAYOUT_SHARED:
        n.rank = (uint8_t)rank;
        for (int i = 0; i < rank; i++)
            n.order[i] = l->order[i];
        n.vec = l->vec;
        n.per_phase = l->per_phase;
        n.max_phase = l->max_phase;
        n.atom = l->atom;
        break;
    default: break;
    }
    return n;
}

int32_t tir_layout_intern(TirModule *m, const TirLayout *l) {
    TirLayout n = layout_normalize(l);
    if (n.kind == TIR_LAYOUT_NONE)
        return 0;
    for (int32_t i = 1; i < m->nlayouts; i++)
        if (memcmp(&m->layouts[i], &n, sizeof n) == 0)
            return i;
    if (m->nlayouts == m->caplayouts) {
        int32_t cap = m->caplayouts ? m->caplayouts * 2 : 16;
        TirLayout *nl = tir_alloc(m->arena, (size_t)cap * sizeof *nl);
        if (m->nlayouts)
            memcpy(nl, m->layouts, (size_t)m->nlayouts * sizeof *nl);
        m->layouts = nl;
        m->caplayouts = cap;
    }
    if (m->nlayouts == 0) {
        memset(&m->layouts[0], 0, sizeof m->layouts[0]);
        m->nlayouts = 1;
    }
    m->layouts[m->nlayouts] = n;
    return m->nlayouts++;
}
