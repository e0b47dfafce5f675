/* The layout algebra (layout.h): linear maps over GF(2), the constructors of the IR's
 * layouts, conversion plans and bank-conflict counts. */
#include "layout.h"

#include <string.h>

static int log2i(int64_t x) {
    int k = 0;
    while (((int64_t)1 << k) < x)
        k++;
    return k;
}
static bool pow2(int64_t x) {
    return x >= 1 && (x & (x - 1)) == 0;
}

/* ---- maps ---------------------------------------------------------------------------- */

void tir_lin_init(TirLinear *l, int nin, const uint8_t *in_kind, int nout, const uint8_t *out_kind,
                  const int32_t *out_extent) {
    memset(l, 0, sizeof *l);
    l->nin = nin;
    l->nout = nout;
    for (int i = 0; i < nin; i++)
        l->in_kind[i] = in_kind[i];
    for (int o = 0; o < nout; o++) {
        l->out_kind[o] = out_kind[o];
        l->outbits[o] = (uint8_t)log2i(out_extent[o]);
    }
}

static int out_pos(const TirLinear *l, int o) {
    int p = 0;
    for (int i = 0; i < o; i++)
        p += l->outbits[i];
    return p;
}

static int in_pos(const TirLinear *l, int i) {
    int p = 0;
    for (int k = 0; k < i; k++)
        p += l->inbits[k];
    return p;
}

int tir_lin_total_outbits(const TirLinear *l) {
    return out_pos(l, l->nout);
}
static int total_inbits(const TirLinear *l) {
    return in_pos(l, l->nin);
}

uint64_t tir_lin_pack(const TirLinear *l, const int32_t *coord) {
    uint64_t v = 0;
    for (int o = 0; o < l->nout; o++)
        v |= ((uint64_t)coord[o] & (((uint64_t)1 << l->outbits[o]) - 1)) << out_pos(l, o);
    return v;
}

void tir_lin_unpack(const TirLinear *l, uint64_t packed, int32_t *coord) {
    for (int o = 0; o < l->nout; o++)
        coord[o] = (int32_t)((packed >> out_pos(l, o)) & (((uint64_t)1 << l->outbits[o]) - 1));
}

uint64_t tir_lin_pack_in(const TirLinear *l, const int32_t *in) {
    uint64_t v = 0;
    for (int i = 0; i < l->nin; i++)
        v |= ((uint64_t)in[i] & (((uint64_t)1 << l->inbits[i]) - 1)) << in_pos(l, i);
    return v;
}

void tir_lin_unpack_in(const TirLinear *l, uint64_t packed, int32_t *in) {
    for (int i = 0; i < l->nin; i++)
        in[i] = (int32_t)((packed >> in_pos(l, i)) & (((uint64_t)1 << l->inbits[i]) - 1));
}

void tir_lin_add_bit(TirLinear *l, int i, const int32_t *coord) {
    if (i < 0 || i >= l->nin || l->inbits[i] >= TIR_LIN_MAXBITS)
        return;
    l->basis[i][l->inbits[i]++] = tir_lin_pack(l, coord);
}

/* one bit with a packed basis (the constructors' form) */
static void add_packed(TirLinear *l, int i, uint64_t b) {
    if (l->inbits[i] < TIR_LIN_MAXBITS)
        l->basis[i][l->inbits[i]++] = b;
}

/* the packed coordinate `v` along output dim o, masked to the extent: coordinates past
 * the tile wrap (the bit leaves the map: replication) */
static uint64_t unit(const TirLinear *l, int o, int64_t v) {
    uint64_t m = ((uint64_t)1 << l->outbits[o]) - 1;
    return ((uint64_t)v & m) << out_pos(l, o);
}

int tir_lin_in_dim(const TirLinear *l, TirLinDim kind) {
    for (int i = 0; i < l->nin; i++)
        if (l->in_kind[i] == kind)
            return i;
    return -1;
}

int32_t tir_lin_in_size(const TirLinear *l, int i) {
    return i < 0 || i >= l->nin ? 1 : (int32_t)1 << l->inbits[i];
}

static uint64_t apply_packed(const TirLinear *l, uint64_t in) {
    uint64_t v = 0;
    int p = 0;
    for (int i = 0; i < l->nin; i++)
        for (int k = 0; k < l->inbits[i]; k++, p++)
            if (in >> p & 1)
                v ^= l->basis[i][k];
    return v;
}

uint64_t tir_lin_apply(const TirLinear *l, const int32_t *in) {
    uint64_t v = 0;
    for (int i = 0; i < l->nin; i++)
        for (int k = 0; k < l->inbits[i]; k++)
            if ((uint32_t)in[i] >> k & 1)
                v ^= l->basis[i][k];
    return v;
}

void tir_lin_apply_coords(const TirLinear *l, const int32_t *in, int32_t *coord) {
    tir_lin_unpack(l, tir_lin_apply(l, in), coord);
}

static bool same_dims(int na, const uint8_t *ka, const uint8_t *ba, int nb, const uint8_t *kb, const uint8_t *bb) {
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++)
        if (ka[i] != kb[i] || ba[i] != bb[i])
            return false;
    return true;
}

bool tir_lin_equal(const TirLinear *a, const TirLinear *b) {
    if (!same_dims(a->nin, a->in_kind, a->inbits, b->nin, b->in_kind, b->inbits) ||
        !same_dims(a->nout, a->out_kind, a->outbits, b->nout, b->out_kind, b->outbits))
        return false;
    for (int i = 0; i < a->nin; i++)
        for (int k = 0; k < a->inbits[i]; k++)
            if (a->basis[i][k] != b->basis[i][k])
                return false;
    return true;
}

/* Gaussian elimination over the input bits in order (register bits first): piv[h] is a
 * reduced vector whose highest bit is h, comb[h] the input bits that XOR to it.  Bits
 * that reduce to zero are free. */
typedef struct {
    uint64_t piv[64], comb[64];
    uint64_t free_in; /* packed input bits that are free */
} Elim;

static uint64_t reduce(const Elim *e, uint64_t v, uint64_t *comb) {
    for (int h = 63; h >= 0 && v; h--)
        if (v >> h & 1 && e->piv[h]) {
            v ^= e->piv[h];
            if (comb)
                *comb ^= e->comb[h];
        }
    return v;
}

static void eliminate(const TirLinear *l, Elim *e) {
    memset(e, 0, sizeof *e);
    int p = 0;
    for (int i = 0; i < l->nin; i++)
        for (int k = 0; k < l->inbits[i]; k++, p++) {
            uint64_t c = (uint64_t)1 << p;
            uint64_t v = reduce(e, l->basis[i][k], &c);
            if (!v) {
                e->free_in |= (uint64_t)1 << p;
                continue;
            }
            int h = 63;
            while (!(v >> h & 1))
                h--;
            e->piv[h] = v;
            e->comb[h] = c;
        }
}

uint32_t tir_lin_free_mask(const TirLinear *l, int i) {
    if (i < 0 || i >= l->nin)
        return 0;
    Elim e;
    eliminate(l, &e);
    return (uint32_t)((e.free_in >> in_pos(l, i)) & (((uint64_t)1 << l->inbits[i]) - 1));
}

bool tir_lin_invert(const TirLinear *l, TirLinear *inv) {
    if (total_inbits(l) > 64)
        return false;
    Elim e;
    eliminate(l, &e);
    memset(inv, 0, sizeof *inv);
    inv->nin = l->nout;
    inv->nout = l->nin;
    for (int o = 0; o < l->nout; o++) {
        inv->in_kind[o] = l->out_kind[o];
        inv->inbits[o] = l->outbits[o];
    }
    for (int i = 0; i < l->nin; i++) {
        inv->out_kind[i] = l->in_kind[i];
        inv->outbits[i] = l->inbits[i];
    }
    int p = 0;
    for (int o = 0; o < l->nout; o++)
        for (int k = 0; k < l->outbits[o]; k++, p++) {
            uint64_t c = 0;
            if (reduce(&e, (uint64_t)1 << p, &c))
                return false; /* coordinate bit not reached */
            inv->basis[o][k] = c;
        }
    return true;
}

bool tir_lin_holder(const TirLinear *l, const int32_t *coord, int32_t *in) {
    Elim e;
    eliminate(l, &e);
    uint64_t c = 0;
    if (reduce(&e, tir_lin_pack(l, coord), &c))
        return false;
    tir_lin_unpack_in(l, c, in);
    return true;
}

bool tir_lin_compose(const TirLinear *outer, const TirLinear *inner, TirLinear *out) {
    if (!same_dims(inner->nout, inner->out_kind, inner->outbits, outer->nin, outer->in_kind, outer->inbits))
        return false;
    TirLinear r;
    memset(&r, 0, sizeof r);
    r.nin = inner->nin;
    r.nout = outer->nout;
    memcpy(r.in_kind, inner->in_kind, sizeof r.in_kind);
    memcpy(r.inbits, inner->inbits, sizeof r.inbits);
    memcpy(r.out_kind, outer->out_kind, sizeof r.out_kind);
    memcpy(r.outbits, outer->outbits, sizeof r.outbits);
    for (int i = 0; i < inner->nin; i++)
        for (int k = 0; k < inner->inbits[i]; k++)
            r.basis[i][k] = apply_packed(outer, inner->basis[i][k]);
    *out = r;
    return true;
}

int tir_lin_runs_first(const TirLinear *l, int i, int dim, TirLinear *out, int32_t *perm) {
    *out = *l;
    int nb = l->inbits[i], order[TIR_LIN_MAXBITS], n = 0;
    bool used[TIR_LIN_MAXBITS] = {0};
    for (int k = 0; dim >= 0 && dim < l->nout && k < l->outbits[dim]; k++) {
        int found = -1;
        for (int b = 0; b < nb && found < 0; b++)
            if (!used[b] && l->basis[i][b] == unit(l, dim, (int64_t)1 << k))
                found = b;
        if (found < 0)
            break;
        used[found] = true;
        order[n++] = found;
    }
    int run = 1 << n;
    for (int b = 0; b < nb; b++)
        if (!used[b])
            order[n++] = b;
    for (int j = 0; j < nb; j++)
        out->basis[i][j] = l->basis[i][order[j]];
    for (int32_t x = 0; x < (1 << nb); x++) {
        int32_t y = 0;
        for (int j = 0; j < nb; j++)
            if (x >> j & 1)
                y |= 1 << order[j];
        perm[x] = y;
    }
    return run;
}

int tir_lin_contig(const TirLinear *l, int in_dim, int dim) {
    if (in_dim < 0 || in_dim >= l->nin || dim < 0 || dim >= l->nout)
        return 1;
    int k = 0;
    while (k < l->inbits[in_dim] && k < l->outbits[dim] && l->basis[in_dim][k] == unit(l, dim, (int64_t)1 << k))
        k++;
    return 1 << k;
}

int tir_lin_run(const TirLinear *l, int i, int k, int dim, int32_t *mult) {
    if (i < 0 || i >= l->nin || dim < 0 || dim >= l->nout || k >= l->inbits[i])
        return 0;
    uint64_t b = l->basis[i][k];
    int pos = out_pos(l, dim);
    if (!b || (b >> pos << pos) != b || (b >> pos >> l->outbits[dim]))
        return 0;
    uint64_t m = b >> pos;
    if (m & (m - 1))
        return 0;
    int n = 0;
    while (k + n < l->inbits[i] && l->basis[i][k + n] == unit(l, dim, (int64_t)m << n) && l->basis[i][k + n])
        n++;
    if (mult)
        *mult = (int32_t)m;
    return n;
}

int tir_lin_print(char *buf, size_t n, const TirLinear *l) {
    static const char *const names[] = {"register", "lane", "warp", "offset"};
    size_t len = 0;
#define PUT(...)                                                                                  \
    do {                                                                                          \
        int k_ = snprintf(buf && len < n ? buf + len : NULL, len < n ? n - len : 0, __VA_ARGS__); \
        if (k_ > 0)                                                                               \
            len += (size_t)k_;                                                                    \
    } while (0)
    if (buf && n)
        buf[0] = 0;
    for (int i = 0; i < l->nin; i++) {
        if (l->in_kind[i] < TIR_LIN_DIM0)
            PUT("%s%s=[", i ? " " : "", names[l->in_kind[i]]);
        else
            PUT("%sdim%d=[", i ? " " : "", l->in_kind[i] - TIR_LIN_DIM0);
        for (int k = 0; k < l->inbits[i]; k++) {
            int32_t c[TIR_LIN_MAXDIMS];
            tir_lin_unpack(l, l->basis[i][k], c);
            PUT("%s(", k ? ", " : "");
            for (int o = 0; o < l->nout; o++)
                PUT("%s%d", o ? ", " : "", c[o]);
            PUT(")");
        }
        PUT("]");
    }
#undef PUT
    return (int)len;
}

/* ---- constructors of maps ---------------------------------------------------------- */

static const uint8_t dist_in[3] = {TIR_LIN_REG, TIR_LIN_LANE, TIR_LIN_WARP};
enum { R = 0, LN = 1, W = 2 };

static void init_tile(TirLinear *l, bool shared, int rank, const int32_t *shape) {
    uint8_t ok[TIR_MAXRANK] = {0};
    for (int d = 0; d < rank; d++)
        ok[d] = (uint8_t)(TIR_LIN_DIM0 + d);
    static const uint8_t off_in[1] = {TIR_LIN_OFFSET};
    tir_lin_init(l, shared ? 1 : 3, shared ? off_in : dist_in, rank, ok, shape);
}

/* Register bits along dim d, stepping by `step`, until `step * 2^k` covers the extent. */
static void reg_repeat(TirLinear *l, int d, int64_t step, int32_t extent) {
    for (int64_t s = step; s < extent; s *= 2)
        add_packed(l, R, unit(l, d, s));
}

/* blocked: exactly TbView's placement (backend/tb_internal.h).  Along dim d a thread
 * owns n_d = min(shape, spt) or spt * (shape / tile) positions j, at
 *   ((warp_d * tpw_d + lane_d) * spt_d mod shape_d) + (j / spt_d) * tile_d + j % spt_d,
 * its elements numbered with order[0] fastest; lane_d and warp_d are the digits of the
 * lane and warp ids in the same order. */
static void lin_blocked(TirLinear *l, const TirLayout *b, int rank, const int32_t *shape) {
    init_tile(l, false, rank, shape);
    for (int i = 0; i < rank; i++) {
        int d = b->order[i];
        int64_t spt = b->size_per_thread[d], tile = spt * b->threads_per_warp[d] * b->warps_per_cta[d];
        for (int64_t s = 1; s < spt && s < shape[d]; s *= 2)
            add_packed(l, R, unit(l, d, s));
        if (shape[d] >= spt)
            reg_repeat(l, d, tile, shape[d]);
    }
    for (int i = 0; i < rank; i++) {
        int d = b->order[i];
        int64_t spt = b->size_per_thread[d];
        for (int64_t s = 1; s < b->threads_per_warp[d]; s *= 2)
            add_packed(l, LN, unit(l, d, spt * s));
    }
    for (int i = 0; i < rank; i++) {
        int d = b->order[i];
        int64_t step = (int64_t)b->size_per_thread[d] * b->threads_per_warp[d];
        for (int64_t s = 1; s < b->warps_per_cta[d]; s *= 2)
            add_packed(l, W, unit(l, d, step * s));
    }
}

/* The warp tile of an mma accumulator is [16, instr_n] (instr_n 8 for mma.sync; N of
 * wgmma m64nN, whose warp group is 4 warps along M).  Per warp, lane l, register r:
 *   row = l/4 + 8 ((r/2) % 2),  col = 2 (l%4) + r%2 + 8 (r/4)  (r/4 < instr_n/8).
 * Warps go along M first (16 rows each), then N (instr_n columns each), then the batch
 * dims; registers then repeat the CTA tile along N, then M, then the batch dims. */
static int mma_n(const TirLayout *p) {
    return p->version == 3 ? p->instr[1] : 8;
}

static void mma_warps(TirLinear *l, const TirLayout *p, int rank, bool m_on, bool n_on, int32_t ngran) {
    int md = rank - 2, nd = rank - 1;
    for (int64_t s = 1; s < p->warps_per_cta[md]; s *= 2)
        add_packed(l, W, m_on ? unit(l, md, 16 * s) : 0);
    for (int64_t s = 1; s < p->warps_per_cta[nd]; s *= 2)
        add_packed(l, W, n_on ? unit(l, nd, ngran * s) : 0);
    for (int d = rank - 3; d >= 0; d--)
        for (int64_t s = 1; s < p->warps_per_cta[d]; s *= 2)
            add_packed(l, W, unit(l, d, s));
}

static void batch_repeat(TirLinear *l, const TirLayout *p, int rank, const int32_t *shape) {
    for (int d = rank - 3; d >= 0; d--)
        reg_repeat(l, d, p->warps_per_cta[d], shape[d]);
}

/* tir_layout_mma_grouped's column move, on the N part of every basis vector. */
static int32_t group_col(int32_t c, int32_t S, int32_t g) {
    int32_t lo = c % S, j = (c / S) % g, hi = c / (S * g);
    return hi * S * g + lo * g + j;
}

static void group_n(TirLinear *l, const TirLayout *p, int rank, const int32_t *shape) {
    int nd = rank - 1;
    int32_t S = 8 * p->warps_per_cta[nd], g = p->ngroup > 1 ? p->ngroup : 1;
    while (g > 1 && shape[nd] < S * g)
        g /= 2;
    if (g <= 1)
        return;
    for (int i = 0; i < l->nin; i++)
        for (int k = 0; k < l->inbits[i]; k++) {
            int32_t c[TIR_LIN_MAXDIMS];
            tir_lin_unpack(l, l->basis[i][k], c);
            c[nd] = group_col(c[nd], S, g);
            l->basis[i][k] = tir_lin_pack(l, c);
        }
}

static void lin_mma(TirLinear *l, const TirLayout *p, int rank, const int32_t *shape) {
    init_tile(l, false, rank, shape);
    int md = rank - 2, nd = rank - 1, in = mma_n(p);
    add_packed(l, R, unit(l, nd, 1));
    add_packed(l, R, unit(l, md, 8));
    for (int64_t s = 8; s < in; s *= 2)
        add_packed(l, R, unit(l, nd, s));
    add_packed(l, LN, unit(l, nd, 2));
    add_packed(l, LN, unit(l, nd, 4));
    for (int s = 1; s < 8; s *= 2)
        add_packed(l, LN, unit(l, md, s));
    mma_warps(l, p, rank, true, true, in);
    reg_repeat(l, nd, (int64_t)in * p->warps_per_cta[nd], shape[nd]);
    reg_repeat(l, md, 16 * (int64_t)p->warps_per_cta[md], shape[md]);
    batch_repeat(l, p, rank, shape);
    group_n(l, p, rank, shape);
}

/* Operands of mma.sync (and register-A wgmma), k_width kw elements of K per 32-bit
 * register, instruction K = 8 kw:
 *   A [M, K]: reg bits k 1..kw/2, m 8, k 4kw;  lanes k kw, k 2kw, m 1, 2, 4
 *   B [K, N]: reg bits k 1..kw/2, k 4kw;       lanes k kw, k 2kw, n 1, 2, 4; reg n 8..instr_n/2
 * Warps as the parent's, replicated over the other operand's dim; registers repeat over
 * K, then M (A) or N (B), then the batch dims. */
static void lin_dot_operand(TirLinear *l, const TirLayout *p, int op, int kw, int rank, const int32_t *shape) {
    init_tile(l, false, rank, shape);
    int od = op == 0 ? rank - 2 : rank - 1; /* M or N */
    int kd = op == 0 ? rank - 1 : rank - 2;
    int in = mma_n(p);
    for (int64_t s = 1; s < kw; s *= 2)
        add_packed(l, R, unit(l, kd, s));
    if (op == 0)
        add_packed(l, R, unit(l, od, 8));
    add_packed(l, R, unit(l, kd, 4 * (int64_t)kw));
    if (op == 1)
        for (int64_t s = 8; s < in; s *= 2)
            add_packed(l, R, unit(l, od, s));
    add_packed(l, LN, unit(l, kd, kw));
    add_packed(l, LN, unit(l, kd, 2 * (int64_t)kw));
    for (int s = 1; s < 8; s *= 2)
        add_packed(l, LN, unit(l, od, s));
    mma_warps(l, p, rank, op == 0, op == 1, in);
    reg_repeat(l, kd, 8 * (int64_t)kw, shape[kd]);
    if (op == 0)
        reg_repeat(l, od, 16 * (int64_t)p->warps_per_cta[rank - 2], shape[od]);
    else
        reg_repeat(l, od, (int64_t)in * p->warps_per_cta[rank - 1], shape[od]);
    batch_repeat(l, p, rank, shape);
    if (op == 1)
        group_n(l, p, rank, shape);
}

/* Shared memory, offset in elements -> coordinates.  Offsets run along order[0] fastest
 * (within column blocks of `atom` elements when atom is set), then order[1] (the rows),
 * then the column blocks, then the other dims.  Element (r, c) of the two fastest dims
 * sits at column ((c / vec) ^ ((r / per_phase) % max_phase)) * vec + c % vec of its row:
 * the row bits of the offset also flip column bits. */
static void lin_shared(TirLinear *l, const int32_t *order, int vec, int pp, int mp, int atom, int rank,
                       const int32_t *shape) {
    init_tile(l, true, rank, shape);
    int c = order[0];
    int64_t cw = atom && atom < shape[c] ? atom : shape[c];
    for (int64_t s = 1; s < cw; s *= 2)
        add_packed(l, 0, unit(l, c, s));
    if (rank >= 2) {
        int r = order[1];
        int lpp = log2i(pp), lmp = log2i(mp);
        for (int j = 0; ((int64_t)1 << j) < shape[r]; j++) {
            uint64_t b = unit(l, r, (int64_t)1 << j);
            if (j >= lpp && j - lpp < lmp) {
                int64_t flip = (int64_t)vec << (j - lpp);
                if (flip < cw)
                    b ^= unit(l, c, flip);
            }
            add_packed(l, 0, b);
        }
    }
    for (int64_t s = cw; s < shape[c]; s *= 2)
        add_packed(l, 0, unit(l, c, s));
    for (int i = 2; i < rank; i++)
        for (int64_t s = 1; s < shape[order[i]]; s *= 2)
            add_packed(l, 0, unit(l, order[i], s));
}

/* ---- layouts of the IR --------------------------------------------------------------- */

static const TirLayout *get(const TirModule *m, int32_t idx) {
    return m && idx > 0 && idx < m->nlayouts ? &m->layouts[idx] : NULL;
}

int32_t tir_layout_blocked(TirModule *m, int rank, const int32_t *spt, const int32_t *tpw, const int32_t *wpc,
                           const int32_t *order) {
    TirLayout l;
    memset(&l, 0, sizeof l);
    l.kind = TIR_LAYOUT_BLOCKED;
    l.rank = (uint8_t)rank;
    for (int d = 0; d < rank; d++) {
        l.size_per_thread[d] = spt[d];
        l.threads_per_warp[d] = tpw[d];
        l.warps_per_cta[d] = wpc[d];
        l.order[d] = order[d];
    }
    return tir_layout_intern(m, &l);
}

int32_t tir_layout_slice(TirModule *m, int32_t parent, int dim) {
    TirLayout l;
    memset(&l, 0, sizeof l);
    l.kind = TIR_LAYOUT_SLICE;
    l.rank = (uint8_t)(tir_layout_rank(m, parent) - 1);
    l.parent = parent;
    l.dim = dim;
    return tir_layout_intern(m, &l);
}

int32_t tir_layout_mma(TirModule *m, int version, int rank, const int32_t *wpc, const int32_t instr[3]) {
    TirLayout l;
    memset(&l, 0, sizeof l);
    l.kind = TIR_LAYOUT_MMA;
    l.rank = (uint8_t)rank;
    l.version = version;
    for (int d = 0; d < rank; d++)
        l.warps_per_cta[d] = wpc[d];
    memcpy(l.instr, instr, sizeof l.instr);
    return tir_layout_intern(m, &l);
}

int32_t tir_layout_mma_grouped(TirModule *m, int32_t mma, int ngroup) {
    if (tir_layout_kind(m, mma) != TIR_LAYOUT_MMA || m->layouts[mma].version != 2)
        return 0;
    TirLayout l = m->layouts[mma];
    l.ngroup = ngroup > 1 ? ngroup : 0;
    return tir_layout_intern(m, &l);
}

int tir_layout_mma_ngroup(const TirModule *m, int32_t layout) {
    return tir_layout_kind(m, layout) == TIR_LAYOUT_MMA && m->layouts[layout].ngroup > 1 ? m->layouts[layout].ngroup
                                                                                         : 1;
}

int32_t tir_layout_dot_operand(TirModule *m, int32_t parent, int op_idx, int k_width) {
    TirLayout l;
    memset(&l, 0, sizeof l);
    l.kind = TIR_LAYOUT_DOT_OPERAND;
    l.rank = (uint8_t)tir_layout_rank(m, parent);
    l.parent = parent;
    l.op_idx = op_idx;
    l.k_width = k_width;
    return tir_layout_intern(m, &l);
}

int32_t tir_layout_shared(TirModule *m, int rank, const int32_t *order, int vec, int per_phase, int max_phase,
                          int atom) {
    TirLayout l;
    memset(&l, 0, sizeof l);
    l.kind = TIR_LAYOUT_SHARED;
    l.rank = (uint8_t)rank;
    for (int d = 0; d < rank; d++)
        l.order[d] = order[d];
    l.vec = vec;
    l.per_phase = per_phase;
    l.max_phase = max_phase;
    l.atom = atom;
    return tir_layout_intern(m, &l);
}

/* The NVIDIA swizzle (docs/layouts.md, #shared): 16-byte vectors; (per_phase, max_phase) =
 * (4, 2), (2, 4), (1, 8) for 32, 64, 128 B; the swizzle width bounds a TMA box's inner extent
 * (the atom). */
int32_t tir_layout_shared_nvmma(TirModule *m, int rank, const int32_t *order, int swizzle_bytes, int elem_bits) {
    int ebytes = elem_bits < 8 ? 1 : elem_bits / 8;
    int vec = 16 / ebytes < 1 ? 1 : 16 / ebytes;
    int pp = 1, mp = 1;
    if (swizzle_bytes == 32)
        pp = 4, mp = 2;
    if (swizzle_bytes == 64)
        pp = 2, mp = 4;
    if (swizzle_bytes == 128)
        pp = 1, mp = 8;
    if (mp == 1)
        vec = 1;
    return tir_layout_shared(m, rank, order, vec, pp, mp, mp == 1 ? 0 : swizzle_bytes / ebytes);
}

TirLayoutKind tir_layout_kind(const TirModule *m, int32_t layout) {
    const TirLayout *l = get(m, layout);
    return l ? (TirLayoutKind)l->kind : TIR_LAYOUT_NONE;
}

int tir_layout_rank(const TirModule *m, int32_t layout) {
    const TirLayout *l = get(m, layout);
    return l ? l->rank : 0;
}

bool tir_layout_is_distributed(const TirModule *m, int32_t layout) {
    TirLayoutKind k = tir_layout_kind(m, layout);
    return k == TIR_LAYOUT_BLOCKED || k == TIR_LAYOUT_SLICE || k == TIR_LAYOUT_MMA || k == TIR_LAYOUT_DOT_OPERAND;
}

int32_t tir_layout_parent(const TirModule *m, int32_t layout) {
    const TirLayout *l = get(m, layout);
    return l && (l->kind == TIR_LAYOUT_SLICE || l->kind == TIR_LAYOUT_DOT_OPERAND) ? l->parent : 0;
}

int tir_layout_slice_dim(const TirModule *m, int32_t layout) {
    const TirLayout *l = get(m, layout);
    return l && l->kind == TIR_LAYOUT_SLICE ? l->dim : -1;
}

int tir_layout_warps(const TirModule *m, int32_t layout) {
    for (int depth = 0; depth < 16; depth++) {
        const TirLayout *l = get(m, layout);
        if (!l)
            return 1;
        if (l->kind == TIR_LAYOUT_SLICE || l->kind == TIR_LAYOUT_DOT_OPERAND) {
            layout = l->parent;
            continue;
        }
        if (l->kind == TIR_LAYOUT_SHARED)
            return 1;
        int w = 1;
        for (int d = 0; d < l->rank; d++)
            w *= l->warps_per_cta[d];
        return w;
    }
    return 1;
}

void tir_layout_order(const TirModule *m, int32_t layout, int32_t *order) {
    const TirLayout *l = get(m, layout);
    int rank = l ? l->rank : 0;
    if (!l)
        return;
    if (l->kind == TIR_LAYOUT_BLOCKED || l->kind == TIR_LAYOUT_SHARED) {
        memcpy(order, l->order, (size_t)rank * sizeof *order);
        return;
    }
    if (l->kind == TIR_LAYOUT_SLICE) {
        int32_t po[TIR_MAXRANK];
        tir_layout_order(m, l->parent, po);
        int k = 0;
        for (int i = 0; i < rank + 1; i++)
            if (po[i] != l->dim)
                order[k++] = po[i] > l->dim ? po[i] - 1 : po[i];
        return;
    }
    for (int i = 0; i < rank; i++)
        order[i] = rank - 1 - i;
}

/* Checks the descriptor's numbers against the shape; NULL when fine. */
static const char *check(const TirModule *m, const TirLayout *l, int rank, const int32_t *shape, int depth) {
    if (depth > 8)
        return "layouts nested too deeply";
    if (rank < 1 || rank > TIR_MAXRANK || l->rank != rank)
        return "the layout's rank is not the tile's";
    for (int d = 0; d < rank; d++)
        if (!pow2(shape[d]))
            return "a tile extent is not a power of two";
    switch ((TirLayoutKind)l->kind) {
    case TIR_LAYOUT_BLOCKED: {
        bool seen[TIR_MAXRANK] = {0};
        for (int d = 0; d < rank; d++) {
            if (!pow2(l->size_per_thread[d]) || !pow2(l->threads_per_warp[d]) || !pow2(l->warps_per_cta[d]))
                return "#blocked spt, tpw and wpc must be powers of two";
            if (l->order[d] < 0 || l->order[d] >= rank || seen[l->order[d]])
                return "#blocked order is not a permutation";
            seen[l->order[d]] = true;
        }
        int64_t t = 1;
        for (int d = 0; d < rank; d++)
            t *= l->threads_per_warp[d];
        if (t != 32)
            return "#blocked tpw must multiply to 32";
        return NULL;
    }
    case TIR_LAYOUT_SLICE: {
        const TirLayout *p = get(m, l->parent);
        if (!p || l->dim < 0 || l->dim > rank)
            return "#slice needs a parent and a dim in range";
        if (p->kind == TIR_LAYOUT_SHARED)
            return "#slice of a #shared layout (slices are of layouts over threads)";
        int32_t ps[TIR_MAXRANK];
        for (int d = 0, k = 0; d <= rank; d++)
            ps[d] = d == l->dim ? 1 : shape[k++];
        return check(m, p, rank + 1, ps, depth + 1);
    }
    case TIR_LAYOUT_MMA:
    case TIR_LAYOUT_DOT_OPERAND: {
        const TirLayout *p = l->kind == TIR_LAYOUT_MMA ? l : get(m, l->parent);
        if (!p || p->kind != TIR_LAYOUT_MMA)
            return "#dot_op needs an #mma parent";
        if (rank < 2 || p->rank != rank)
            return "#mma layouts need rank >= 2 (the last two dims are M and N)";
        for (int d = 0; d < rank; d++)
            if (!pow2(p->warps_per_cta[d]))
                return "#mma wpc must be powers of two";
        if (p->version != 2 && p->version != 3)
            return "#mma version must be 2 (mma.sync) or 3 (wgmma)";
        if (p->version == 3 && (p->warps_per_cta[rank - 2] % 4 || !pow2(p->instr[1]) || p->instr[1] < 8))
            return "#mma v=3 needs wpc along M a multiple of 4 and instr n a power of two >= 8";
        if (p->ngroup && (p->version != 2 || !pow2(p->ngroup) || p->ngroup > 8))
            return "#mma ngroup needs v=2 and 1, 2, 4 or 8";
        if (l->kind == TIR_LAYOUT_DOT_OPERAND &&
            (l->op_idx > 1 || l->op_idx < 0 || !pow2(l->k_width) || l->k_width > 4))
            return "#dot_op needs idx 0 or 1 and k 1, 2 or 4";
        return NULL;
    }
    case TIR_LAYOUT_SHARED: {
        bool seen[TIR_MAXRANK] = {0};
        for (int d = 0; d < rank; d++) {
            if (l->order[d] < 0 || l->order[d] >= rank || seen[l->order[d]])
                return "#shared order is not a permutation";
            seen[l->order[d]] = true;
        }
        if (!pow2(l->vec) || !pow2(l->per_phase) || !pow2(l->max_phase) || (l->atom && !pow2(l->atom)))
            return "#shared vec, phase, max_phase and atom must be powers of two";
        return NULL;
    }
    default: return "no layout";
    }
}

static void build(const TirModule *m, const TirLayout *l, int rank, const int32_t *shape, TirLinear *out) {
    switch ((TirLayoutKind)l->kind) {
    case TIR_LAYOUT_BLOCKED: lin_blocked(out, l, rank, shape); break;
    case TIR_LAYOUT_MMA: lin_mma(out, l, rank, shape); break;
    case TIR_LAYOUT_DOT_OPERAND: lin_dot_operand(out, get(m, l->parent), l->op_idx, l->k_width, rank, shape); break;
    case TIR_LAYOUT_SHARED: lin_shared(out, l->order, l->vec, l->per_phase, l->max_phase, l->atom, rank, shape); break;
    case TIR_LAYOUT_SLICE: {
        /* the parent over the shape with an extent-1 dim at `dim`, that dim dropped (it
         * has no bits), and registers that no longer move the coordinate dropped */
        int32_t ps[TIR_MAXRANK];
        for (int d = 0, k = 0; d <= rank; d++)
            ps[d] = d == l->dim ? 1 : shape[k++];
        TirLinear p;
        build(m, get(m, l->parent), rank + 1, ps, &p);
        init_tile(out, false, rank, shape);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < p.inbits[i]; k++) {
                uint64_t b = p.basis[i][k]; /* dim `dim` has 0 bits: packing is unchanged */
                if (i == R && !b)
                    continue;
                add_packed(out, i, b);
            }
        break;
    }
    default: break;
    }
}

typedef struct TirLinCache {
    int32_t layout, rank, shape[TIR_MAXRANK];
    TirLinear lin;
    struct TirLinCache *next;
} LinCache;

const TirLinear *tir_layout_linear(TirModule *m, int32_t layout, int rank, const int32_t *shape, const char **why) {
    for (LinCache *c = m->lincache; c; c = c->next)
        if (c->layout == layout && c->rank == rank && !memcmp(c->shape, shape, (size_t)rank * sizeof *shape))
            return &c->lin;
    const TirLayout *l = get(m, layout);
    const char *err = l ? check(m, l, rank, shape, 0) : "no layout";
    if (err) {
        if (why)
            *why = err;
        return NULL;
    }
    LinCache *c = tir_alloc(m->arena, sizeof *c);
    c->layout = layout;
    c->rank = rank;
    memcpy(c->shape, shape, (size_t)rank * sizeof *shape);
    build(m, l, rank, shape, &c->lin);
    c->next = m->lincache;
    m->lincache = c;
    return &c->lin;
}

/* ---- the blocked form ------------------------------------------------------------------ */

bool tir_layout_blocked_form(const TirModule *m, int32_t layout, int tile_rank, TirBlockedForm *bf, const char **why) {
    memset(bf, 0, sizeof *bf);
    const char *err = NULL;
    const TirLayout *l = get(m, layout);
    int32_t slices[TIR_MAXRANK];
    int ns = 0;
    while (l && l->kind == TIR_LAYOUT_SLICE && ns < TIR_MAXRANK) {
        slices[ns++] = l->dim;
        layout = l->parent;
        l = get(m, layout);
    }
    if (!l) {
        err = "a tile has no layout: run the 'layout' pass before the backend";
    } else if (l->kind != TIR_LAYOUT_BLOCKED) {
        err = "this layout is not supported by the GPU backend yet";
    } else {
        /* slices name dims of their parent, outermost last: apply from the root up */
        int32_t map[TIR_MAXRANK];
        int cur = l->rank;
        for (int i = 0; i < cur; i++)
            map[i] = i;
        for (int s = ns - 1; s >= 0 && !err; s--) {
            int d = slices[s];
            if (d < 0 || d >= cur) {
                err = "internal: bad slice dimension";
                break;
            }
            for (int i = d; i < cur - 1; i++)
                map[i] = map[i + 1];
            cur--;
        }
        if (!err && cur != tile_rank)
            err = "internal: layout rank does not match the tile's rank";
        if (!err) {
            bf->rank = l->rank;
            bf->root = layout;
            for (int rd = 0; rd < l->rank; rd++) {
                bf->spt[rd] = l->size_per_thread[rd];
                bf->tpw[rd] = l->threads_per_warp[rd];
                bf->wpc[rd] = l->warps_per_cta[rd];
                bf->order[rd] = l->order[rd];
                bf->tile_dim[rd] = -1;
            }
            for (int d = 0; d < cur; d++) {
                bf->root_dim[d] = map[d];
                bf->tile_dim[map[d]] = d;
            }
            bool seen[TIR_MAXRANK] = {0};
            for (int i = 0; i < l->rank; i++) {
                int rd = l->order[i];
                if (rd < 0 || rd >= l->rank || seen[rd]) {
                    err = "internal: layout order is not a permutation";
                    break;
                }
                seen[rd] = true;
            }
            /* lane and warp ids are digits in `order`, fastest first */
            int32_t ls = 1, ws = 1;
            for (int i = 0; i < l->rank && !err; i++) {
                int rd = l->order[i];
                bf->lane_stride[rd] = ls;
                bf->warp_stride[rd] = ws;
                ls *= bf->tpw[rd];
                ws *= bf->wpc[rd];
            }
        }
    }
    if (err) {
        if (why)
            *why = err;
        return false;
    }
    return true;
}

int64_t tir_blocked_span(const TirBlockedForm *bf, int rd) {
    return (int64_t)bf->spt[rd] * bf->tpw[rd] * bf->wpc[rd];
}

void tir_blocked_distinct(const TirBlockedForm *bf, int rd, int64_t extent, int *lanes, int *warps) {
    int64_t spt = bf->spt[rd], tpw = bf->tpw[rd], wpc = bf->wpc[rd];
    int64_t ln = extent / spt < 1 ? 1 : (extent / spt < tpw ? extent / spt : tpw);
    int64_t w = extent / (spt * tpw) < 1 ? 1 : (extent / (spt * tpw) < wpc ? extent / (spt * tpw) : wpc);
    if (lanes)
        *lanes = (int)ln;
    if (warps)
        *warps = (int)w;
}

/* ---- bank conflicts ---------------------------------------------------------------------- */

/* Distinct 4-byte words per bank, the maximum: the wavefronts one phase takes. */
static int64_t phase_wavefronts(const uint64_t *words, int n) {
    int64_t best = 0;
    for (int b = 0; b < 32; b++) {
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            if ((words[i] & 31) != (uint64_t)b)
                continue;
            bool seen = false;
            for (int j = 0; j < i; j++)
                seen |= words[j] == words[i];
            distinct += !seen;
        }
        if (distinct > best)
            best = distinct;
    }
    return best;
}

/* Every access of a layout is its first one XORed with a constant offset (registers,
 * lanes of later phases and warps all add XORs, and the tile -> offset map is linear),
 * and XOR with a constant maps distinct words to distinct words and a bank to one bank:
 * so one phase of the first access gives the count of all of them. */
TirBankCount tir_lin_bank_conflicts(const TirLinear *dist, const TirLinear *smem, int elem_bytes, TirAccessKind kind,
                                    int vec) {
    TirBankCount bc = {0, 0, 0, false};
    TirLinear inv;
    if (!tir_lin_invert(smem, &inv) || inv.nin != dist->nout || elem_bytes < 1 || !pow2(elem_bytes))
        return bc;
    int nregs = tir_lin_in_size(dist, R), nlanes = tir_lin_in_size(dist, LN), nwarps = tir_lin_in_size(dist, W);
    int per_group = kind == TIR_ACCESS_LDMATRIX ? 4 / elem_bytes : vec;
    if (per_group < 1 || !pow2(per_group) || per_group > nregs || elem_bytes * per_group > 16)
        return bc;
    if (kind == TIR_ACCESS_LDMATRIX && elem_bytes != 2)
        return bc;
    int bytes = per_group * elem_bytes;
    int nph = kind == TIR_ACCESS_LDMATRIX || bytes <= 4 ? 1 : bytes / 4;
    int lanes_ph = nlanes / nph < 1 ? 1 : nlanes / nph;
    uint64_t words[32 * 4 * 4];
    int nw = 0;
    for (int ln = 0; ln < lanes_ph; ln++) {
        int64_t first = -1;
        for (int r = 0; r < per_group; r++) {
            int32_t in[3] = {r, ln, 0};
            uint64_t packed = tir_lin_apply(dist, in);
            int32_t off[1];
            tir_lin_unpack(&inv, apply_packed(&inv, packed), off);
            int64_t byte = (int64_t)off[0] * elem_bytes;
            if (r == 0)
                first = byte;
            if (kind == TIR_ACCESS_VECTOR && (byte != first + (int64_t)r * elem_bytes || first % bytes))
                return bc;
            uint64_t w = (uint64_t)byte >> 2;
            bool seen = false;
            for (int j = 0; j < nw; j++)
                seen |= words[j] == w;
            if (!seen)
                words[nw++] = w;
        }
    }
    if (kind == TIR_ACCESS_LDMATRIX) {
        /* the matrix must be 8 rows of 16 aligned bytes: 32 words in 8 aligned runs of 4 */
        if (nw != 32)
            return bc;
        for (int i = 0; i < nw; i++) {
            uint64_t base = words[i] & ~(uint64_t)3;
            for (uint64_t q = 0; q < 4; q++) {
                bool f = false;
                for (int j = 0; j < nw; j++)
                    f |= words[j] == base + q;
                if (!f)
                    return bc;
            }
        }
    }
    int64_t per_phase = phase_wavefronts(words, nw);
    int64_t groups = (int64_t)(nregs / per_group) * nwarps;
    bc.accesses = groups;
    bc.wavefronts = per_phase * nph * groups;
    bc.ideal = (int64_t)nph * groups;
    bc.ok = true;
    return bc;
}

/* ---- conversion plans --------------------------------------------------------------------- */

/* v in the span of input dim `dims` (a bit set of R/LN/W) of l? */
static bool in_span(const TirLinear *l, unsigned dims, uint64_t v) {
    Elim e;
    memset(&e, 0, sizeof e);
    for (int i = 0; i < l->nin; i++) {
        if (!(dims >> i & 1))
            continue;
        for (int k = 0; k < l->inbits[i]; k++) {
            uint64_t x = reduce(&e, l->basis[i][k], NULL);
            if (!x)
                continue;
            int h = 63;
            while (!(x >> h & 1))
                h--;
            e.piv[h] = x;
        }
    }
    return reduce(&e, v, NULL) == 0;
}

static bool same_bases(const TirLinear *a, const TirLinear *b, int i) {
    if (a->inbits[i] != b->inbits[i])
        return false;
    for (int k = 0; k < a->inbits[i]; k++)
        if (a->basis[i][k] != b->basis[i][k])
            return false;
    return true;
}

/* a restricted to the input dims in `dims` (the others get no bits) */
static void restrict_to(const TirLinear *a, unsigned dims, TirLinear *out) {
    *out = *a;
    for (int i = 0; i < a->nin; i++)
        if (!(dims >> i & 1))
            out->inbits[i] = 0;
}

static void pick_smem(const TirLinear *a, const TirLinear *b, int eb, TirConvPlan *p) {
    int rank = a->nout;
    int32_t shape[TIR_MAXRANK];
    for (int d = 0; d < rank; d++)
        shape[d] = (int32_t)1 << a->outbits[d];
    /* the contiguous dims of both sides are the candidates for the fastest dim */
    int cand[2], ncand = 0;
    for (int s = 0; s < 2; s++) {
        const TirLinear *x = s ? b : a;
        int best = rank - 1;
        for (int d = 0; d < rank; d++)
            if (tir_lin_contig(x, R, d) > tir_lin_contig(x, R, best))
                best = d;
        if (!ncand || cand[0] != best)
            cand[ncand++] = best;
    }
    int64_t best_cost = -1, best_acc = 0;
    int maxvec = 16 / eb < 1 ? 1 : 16 / eb;
    for (int ci = 0; ci < ncand; ci++) {
        int32_t order[TIR_MAXRANK];
        order[0] = cand[ci];
        for (int d = rank - 1, k = 1; d >= 0; d--)
            if (d != cand[ci])
                order[k++] = d;
        int c = order[0];
        for (int vec = 1; vec <= maxvec && vec <= shape[c]; vec *= 2)
            for (int pp = 1; pp <= 8; pp *= 2)
                for (int mp = 1; mp <= 32 && vec * mp <= shape[c]; mp *= 2) {
                    if (mp == 1 && pp > 1)
                        continue;
                    TirLinear s;
                    lin_shared(&s, order, vec, pp, mp, 0, rank, shape);
                    int wv = tir_lin_contig(a, R, c), rv = tir_lin_contig(b, R, c);
                    wv = wv < vec ? wv : vec;
                    rv = rv < vec ? rv : vec;
                    TirBankCount w = tir_lin_bank_conflicts(a, &s, eb, TIR_ACCESS_VECTOR, wv);
                    TirBankCount r = tir_lin_bank_conflicts(b, &s, eb, TIR_ACCESS_VECTOR, rv);
                    if (!w.ok || !r.ok)
                        continue;
                    /* the fewest wavefronts; among equals the fewest instructions (wider
                     * vectors move the same bytes in fewer accesses) */
                    int64_t cost = w.wavefronts + r.wavefronts, acc = w.accesses + r.accesses;
                    if (best_cost >= 0 && (cost > best_cost || (cost == best_cost && acc >= best_acc)))
                        continue;
                    best_cost = cost;
                    best_acc = acc;
                    p->smem = s;
                    memcpy(p->smem_order, order, sizeof order);
                    p->smem_vec = vec;
                    p->smem_per_phase = pp;
                    p->smem_max_phase = mp;
                    p->write_vec = wv;
                    p->read_vec = rv;
                    p->write_wavefronts = w.wavefronts;
                    p->read_wavefronts = r.wavefronts;
                }
    }
    p->smem_elems = (int64_t)1 << tir_lin_total_outbits(a);
}

bool tir_conv_plan(TirArena *ar, const TirLinear *a, const TirLinear *b, int elem_bytes, TirConvPlan *p) {
    memset(p, 0, sizeof *p);
    if (a->nin != 3 || b->nin != 3 || !same_dims(a->nout, a->out_kind, a->outbits, b->nout, b->out_kind, b->outbits))
        return false;
    TirLinear ainv;
    if (!tir_lin_invert(a, &ainv) || !tir_lin_compose(&ainv, b, &p->dst_to_src))
        return false;
    p->nregs_dst = tir_lin_in_size(b, R);
    p->nregs_src = tir_lin_in_size(a, R);
    p->lanes = tir_lin_in_size(b, LN);
    if (tir_lin_equal(a, b)) {
        p->kind = TIR_CONV_NONE;
        return true;
    }
    bool lanes_same = same_bases(a, b, LN), warps_same = same_bases(a, b, W);
    /* registers only: lanes and warps map alike and every dst register is a src one */
    if (lanes_same && warps_same) {
        bool ok = true;
        for (int k = 0; k < b->inbits[R]; k++)
            ok &= in_span(a, 1u << R, b->basis[R][k]);
        if (ok) {
            TirLinear areg;
            restrict_to(a, 1u << R, &areg);
            Elim e;
            eliminate(&areg, &e);
            p->kind = TIR_CONV_REGS;
            p->perm = tir_alloc(ar, (size_t)p->nregs_dst * sizeof *p->perm);
            for (int r = 0; r < p->nregs_dst; r++) {
                /* the canonical holder among a's registers */
                int32_t in[3] = {r, 0, 0}, src[3];
                uint64_t c = 0;
                reduce(&e, tir_lin_apply(b, in), &c);
                tir_lin_unpack_in(&areg, c, src);
                p->perm[r] = src[0];
            }
            return true;
        }
    }
    /* warp shuffles: warps map alike, every dst element is in its warp; per dst
     * register each source lane sends one register */
    if (warps_same && tir_lin_in_size(a, LN) == p->lanes) {
        bool ok = true;
        for (int k = 0; k < b->inbits[R] && ok; k++)
            ok &= in_span(a, 1u << R | 1u << LN, b->basis[R][k]);
        for (int k = 0; k < b->inbits[LN] && ok; k++)
            ok &= in_span(a, 1u << R | 1u << LN, b->basis[LN][k]);
        if (ok) {
            TirLinear arl, areg;
            restrict_to(a, 1u << R | 1u << LN, &arl);
            restrict_to(a, 1u << R, &areg);
            Elim e, er;
            eliminate(&arl, &e);
            eliminate(&areg, &er);
            int n = p->nregs_dst * p->lanes;
            p->src_lane = tir_alloc(ar, (size_t)n * sizeof *p->src_lane);
            p->src_reg = tir_alloc(ar, (size_t)n * sizeof *p->src_reg);
            p->send_reg = tir_alloc(ar, (size_t)n * sizeof *p->send_reg);
            for (int i = 0; i < n; i++)
                p->send_reg[i] = -1;
            p->one_round = true;
            for (int r = 0; r < p->nregs_dst; r++) {
                for (int ln = 0; ln < p->lanes; ln++) {
                    int32_t in[3] = {r, ln, 0}, src[3], own[3] = {0, ln, 0};
                    uint64_t c = 0, want = tir_lin_apply(b, in);
                    /* a lane that holds its element itself reads its own register */
                    if (!reduce(&er, want ^ tir_lin_apply(&arl, own), &c)) {
                        tir_lin_unpack_in(&areg, c, src);
                        src[1] = ln;
                    } else {
                        c = 0;
                        reduce(&e, want, &c);
                        tir_lin_unpack_in(&arl, c, src);
                    }
                    p->src_lane[r * p->lanes + ln] = src[1];
                    p->src_reg[r * p->lanes + ln] = src[0];
                    int32_t *sr = &p->send_reg[r * p->lanes + src[1]];
                    if (*sr >= 0 && *sr != src[0])
                        p->one_round = false; /* one lane asked for two registers */
                    *sr = src[0];
                }
                /* receiver-side form: one shuffle per distinct source register */
                for (int ln = 0; ln < p->lanes; ln++) {
                    bool first = true;
                    for (int k = 0; k < ln && first; k++)
                        first = p->src_reg[r * p->lanes + k] != p->src_reg[r * p->lanes + ln];
                    p->shuffles += first;
                }
            }
            if (p->one_round) {
                for (int i = 0; i < n; i++)
                    if (p->send_reg[i] < 0)
                        p->send_reg[i] = 0; /* nobody reads it: any register */
                p->shuffles = p->nregs_dst;
            }
            /* more shuffles than shared memory's stores and loads: not worth it */
            if (p->one_round || p->shuffles <= p->nregs_src + p->nregs_dst) {
                p->kind = TIR_CONV_SHUFFLE;
                return true;
            }
            p->src_lane = p->src_reg = p->send_reg = NULL;
            p->shuffles = 0;
            p->one_round = false;
        }
    }
    p->kind = TIR_CONV_SMEM;
    pick_smem(a, b, elem_bytes, p);
    return p->smem_vec > 0;
}

bool tir_layout_mma_params(const TirModule *m, int32_t layout, int *version, int32_t *wpc, int32_t *instr) {
    if (tir_layout_kind(m, layout) != TIR_LAYOUT_MMA)
        return false;
    const TirLayout *l = &m->layouts[layout];
    if (version)
        *version = l->version;
    if (wpc)
        memcpy(wpc, l->warps_per_cta, sizeof(int32_t) * l->rank);
    if (instr)
        memcpy(instr, l->instr, sizeof l->instr);
    return true;
}

bool tir_layout_dot_params(const TirModule *m, int32_t layout, int *op_idx, int *k_width) {
    if (tir_layout_kind(m, layout) != TIR_LAYOUT_DOT_OPERAND)
        return false;
    const TirLayout *l = &m->layouts[layout];
    if (op_idx)
        *op_idx = l->op_idx;
    if (k_width)
        *k_width = l->k_width;
    return true;
}

bool tir_layout_shared_params(const TirModule *m, int32_t layout, int *vec, int *per_phase, int *max_phase) {
    if (tir_layout_kind(m, layout) != TIR_LAYOUT_SHARED)
        return false;
    const TirLayout *l = &m->layouts[layout];
    if (vec)
        *vec = l->vec;
    if (per_phase)
        *per_phase = l->per_phase;
    if (max_phase)
        *max_phase = l->max_phase;
    return true;
}
