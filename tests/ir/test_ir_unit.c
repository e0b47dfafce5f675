/* Unit tests of the IR library: scalar and type helpers, narrow float conversions
 * (known bit patterns and exhaustive round trips), layouts, the builder and its
 * editing (clone, replace, erase, renumber), verifier dominance, and, given the
 * round-trip .tir files as arguments, op coverage and a no-crash sweep of the parser
 * over truncated and mutated inputs.  Truncated inputs end where an inaccessible page
 * begins, so a parser read past the length it is given faults. */
#include "ir.h"
#include "../common/read_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#define CHECK_EQ_HEX(got, want)                                                                     \
    do {                                                                                            \
        unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want);         \
        if (g_ != w_) {                                                                             \
            fprintf(stderr, "%s:%d: %s = 0x%llx, want 0x%llx\n", __FILE__, __LINE__, #got, g_, w_); \
            failures++;                                                                             \
        }                                                                                           \
    } while (0)

static float f32_of_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static void test_scalars(void) {
    CHECK(tir_scalar_from_name("bool", 4) == TIR_I1);
    CHECK(tir_scalar_from_name("f8e4m3", 6) == TIR_F8E4M3);
    CHECK(tir_scalar_from_name("f8", 2) == -1);
    CHECK(tir_scalar_from_name("i32x", 3) == TIR_I32); /* length-bounded */
    CHECK(tir_scalar_bytes(TIR_I1) == 1 && tir_scalar_bytes(TIR_BF16) == 2 && tir_scalar_bytes(TIR_U64) == 8);
    CHECK(tir_scalar_is_float(TIR_BF16) && !tir_scalar_is_float(TIR_U8));
    CHECK(tir_scalar_is_int(TIR_I1) && !tir_scalar_is_int(TIR_F16));
    CHECK(tir_scalar_is_signed(TIR_I8) && !tir_scalar_is_signed(TIR_U32) && tir_scalar_is_signed(TIR_F32));
    CHECK(strcmp(tir_scalar_name(TIR_F8E5M2), "f8e5m2") == 0);
    CHECK(tir_opcode_from_name("reduce_sum", 10) == TIR_OP_REDUCE_SUM);
    CHECK(tir_opcode_from_name("multiple_of", 11) == TIR_OP_HINT_MULTIPLE_OF);
    CHECK(tir_opcode_from_name("nope", 4) == -1);
    CHECK(strcmp(tir_op_info[TIR_OP_DOT].name, "dot") == 0 && tir_op_info[TIR_OP_DOT].nopnd == 3);
    CHECK(tir_op_info[TIR_OP_YIELD].traits & TIR_T_TERMINATOR);
    CHECK(strcmp(tir_cmp_names[TIR_CMP_GE], "ge") == 0);
}

static void test_types(void) {
    char buf[256];
    int32_t s2[2] = {128, 64}, s1[1] = {64};
    TirType t = tir_tile_type(tir_scalar_type(TIR_F16), 2, s2);
    tir_type_print(buf, sizeof buf, NULL, t);
    CHECK(strcmp(buf, "tile<128x64xf16>") == 0);
    TirType pt = tir_tile_type(tir_ptr_type(TIR_F16), 1, s1);
    tir_type_print(buf, sizeof buf, NULL, pt);
    CHECK(strcmp(buf, "tile<64xptr<f16>>") == 0);
    CHECK(tir_type_eq(tir_elem_type(pt), tir_ptr_type(TIR_F16)));
    CHECK(tir_type_numel(t) == 128 * 64 && tir_type_numel(tir_scalar_type(TIR_I32)) == 1);
    CHECK(tir_type_is_tile(t) && !tir_type_is_tile(tir_ptr_type(TIR_F32)));
    TirType d = t;
    d.kind = TIR_K_DESC;
    tir_type_print(buf, sizeof buf, NULL, d);
    CHECK(strcmp(buf, "desc<128x64xf16>") == 0);
    /* snprintf contract: the full length even when truncated */
    char small[6];
    int n = tir_type_print(small, sizeof small, NULL, t);
    CHECK(n == (int)strlen("tile<128x64xf16>") && strcmp(small, "tile<") == 0);

    TirArena *a = tir_arena_new();
    TirModule *m = tir_module_new(a);
    TirLayout bl = {0};
    bl.kind = TIR_LAYOUT_BLOCKED;
    bl.rank = 2;
    bl.size_per_thread[0] = 1, bl.size_per_thread[1] = 8;
    bl.threads_per_warp[0] = 4, bl.threads_per_warp[1] = 8;
    bl.warps_per_cta[0] = 4, bl.warps_per_cta[1] = 1;
    bl.order[0] = 1, bl.order[1] = 0;
    bl.version = 99; /* not a blocked field: must not make it a different layout */
    int32_t l1 = tir_layout_intern(m, &bl);
    bl.version = 0;
    int32_t l2 = tir_layout_intern(m, &bl);
    CHECK(l1 > 0 && l1 == l2);
    TirLayout sl = {0};
    sl.kind = TIR_LAYOUT_SLICE;
    sl.rank = 1;
    sl.dim = 1;
    sl.parent = l1;
    int32_t l3 = tir_layout_intern(m, &sl);
    CHECK(l3 != l1);
    tir_layout_print(buf, sizeof buf, m, l3);
    CHECK(strcmp(buf, "#slice<dim=1, parent=#blocked<spt=[1, 8], tpw=[4, 8], wpc=[4, 1], order=[1, 0]>>") == 0);
    t.layout = l1;
    tir_type_print(buf, sizeof buf, m, t);
    CHECK(strcmp(buf, "tile<128x64xf16, #blocked<spt=[1, 8], tpw=[4, 8], wpc=[4, 1], order=[1, 0]>>") == 0);
    TirType t0 = t;
    t0.layout = 0;
    CHECK(!tir_type_eq(t, t0) && tir_type_eq_nolayout(t, t0));
    /* many layouts: the table grows */
    for (int i = 0; i < 100; i++) {
        TirLayout sh = {0};
        sh.kind = TIR_LAYOUT_SHARED;
        sh.rank = 2;
        sh.order[0] = 1;
        sh.vec = i + 1;
        CHECK(tir_layout_intern(m, &sh) == l3 + 1 + i);
    }
    CHECK(tir_layout_intern(m, &sl) == l3);
    tir_arena_free(a);
}

static void test_fp(void) {
    /* f16 */
    CHECK_EQ_HEX(tir_f32_to_f16(1.0f), 0x3c00);
    CHECK_EQ_HEX(tir_f32_to_f16(-2.0f), 0xc000);
    CHECK_EQ_HEX(tir_f32_to_f16(65504.0f), 0x7bff);
    CHECK_EQ_HEX(tir_f32_to_f16(65519.0f), 0x7bff); /* below the halfway point to 65536 */
    CHECK_EQ_HEX(tir_f32_to_f16(65520.0f), 0x7c00); /* the tie rounds to even: inf */
    CHECK_EQ_HEX(tir_f32_to_f16(-1e10f), 0xfc00);
    CHECK_EQ_HEX(tir_f32_to_f16(1.0f / 3.0f), 0x3555);
    CHECK_EQ_HEX(tir_f32_to_f16(ldexpf(1, -24)), 0x0001);                     /* smallest subnormal */
    CHECK_EQ_HEX(tir_f32_to_f16(ldexpf(1, -25)), 0x0000);                     /* tie to even: zero */
    CHECK_EQ_HEX(tir_f32_to_f16(ldexpf(3, -26)), 0x0001);                     /* above the tie */
    CHECK_EQ_HEX(tir_f32_to_f16(ldexpf(3, -25)), 0x0002);                     /* 1.5 ulp: tie to even 2 */
    CHECK_EQ_HEX(tir_f32_to_f16(ldexpf(1023, -24) + ldexpf(1, -25)), 0x0400); /* subnormal rounds up to normal */
    CHECK_EQ_HEX(tir_f32_to_f16(-0.0f), 0x8000);
    CHECK_EQ_HEX(tir_f32_to_f16(INFINITY), 0x7c00);
    uint16_t hn = tir_f32_to_f16(NAN);
    CHECK((hn & 0x7c00) == 0x7c00 && (hn & 0x3ff) != 0);
    CHECK(tir_f16_to_f32(0x7bff) == 65504.0f);
    CHECK(tir_f16_to_f32(0x0001) == ldexpf(1, -24));
    CHECK(isinf(tir_f16_to_f32(0xfc00)) && tir_f16_to_f32(0xfc00) < 0);
    CHECK(isnan(tir_f16_to_f32(0x7e00)));
    /* bf16: ties to even */
    CHECK_EQ_HEX(tir_f32_to_bf16(f32_of_bits(0x3f808000)), 0x3f80); /* 1 + 2^-8: tie, keep even */
    CHECK_EQ_HEX(tir_f32_to_bf16(f32_of_bits(0x3f818000)), 0x3f82); /* odd: round up */
    CHECK_EQ_HEX(tir_f32_to_bf16(f32_of_bits(0x3f808001)), 0x3f81); /* above the tie */
    CHECK_EQ_HEX(tir_f32_to_bf16(f32_of_bits(0x7f7fffff)), 0x7f80); /* FLT_MAX rounds to inf */
    CHECK_EQ_HEX(tir_f32_to_bf16(f32_of_bits(0x00000001)), 0x0000); /* tiny subnormal: zero */
    CHECK_EQ_HEX(tir_f32_to_bf16(f32_of_bits(0x00018000)), 0x0002); /* subnormal tie, odd: up */
    CHECK(isnan(tir_bf16_to_f32(tir_f32_to_bf16(NAN))));
    CHECK(tir_bf16_to_f32(0x3f80) == 1.0f);
    /* f8e4m3: satfinite, no inf */
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(1.0f), 0x38);
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(448.0f), 0x7e);
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(464.0f), 0x7e); /* would round to 480, the NaN pattern */
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(1e9f), 0x7e);
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(INFINITY), 0x7e);
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(-INFINITY), 0xfe);
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(-500.0f), 0xfe);
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(ldexpf(1, -9)), 0x01);  /* smallest subnormal */
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(ldexpf(1, -10)), 0x00); /* tie to even */
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(1.0625f), 0x38);        /* tie between 1 and 1.125: even */
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(1.1875f), 0x3a);        /* tie between 1.125 and 1.25: even */
    CHECK_EQ_HEX(tir_f32_to_f8e4m3(NAN) & 0x7f, 0x7f);
    CHECK(tir_f8e4m3_to_f32(0x7e) == 448.0f && isnan(tir_f8e4m3_to_f32(0x7f)) && isnan(tir_f8e4m3_to_f32(0xff)));
    CHECK(tir_f8e4m3_to_f32(0x01) == ldexpf(1, -9));
    /* f8e5m2 */
    CHECK_EQ_HEX(tir_f32_to_f8e5m2(1.0f), 0x3c);
    CHECK_EQ_HEX(tir_f32_to_f8e5m2(57344.0f), 0x7b);
    CHECK_EQ_HEX(tir_f32_to_f8e5m2(1e6f), 0x7b);
    CHECK_EQ_HEX(tir_f32_to_f8e5m2(INFINITY), 0x7b);
    CHECK_EQ_HEX(tir_f32_to_f8e5m2(-INFINITY), 0xfb);
    CHECK_EQ_HEX(tir_f32_to_f8e5m2(ldexpf(1, -16)), 0x01);
    uint8_t en = tir_f32_to_f8e5m2(NAN);
    CHECK((en & 0x7c) == 0x7c && (en & 3) != 0);
    CHECK(tir_f8e5m2_to_f32(0x7b) == 57344.0f && isinf(tir_f8e5m2_to_f32(0x7c)));
    /* every non-NaN pattern survives decode then encode */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = tir_f16_to_f32((uint16_t)h);
        if (!isnan(f) && tir_f32_to_f16(f) != h)
            bad++;
        float g = tir_bf16_to_f32((uint16_t)h);
        if (!isnan(g) && tir_f32_to_bf16(g) != h)
            bad++;
        /* and rounding is monotonic between neighbours (positive finite f16) */
        if (h < 0x7bff && !(tir_f16_to_f32((uint16_t)(h + 1)) > f))
            bad++;
    }
    for (uint32_t v = 0; v < 0x100; v++) {
        float f = tir_f8e4m3_to_f32((uint8_t)v);
        if (!isnan(f) && tir_f32_to_f8e4m3(f) != v)
            bad++;
        float g = tir_f8e5m2_to_f32((uint8_t)v);
        if (!isnan(g) && !isinf(g) && tir_f32_to_f8e5m2(g) != v)
            bad++;
    }
    CHECK(bad == 0);
    /* the midpoint between consecutive f16 values rounds to the even one */
    for (uint32_t h = 0x3c00; h < 0x3c40; h++) {
        double mid = ((double)tir_f16_to_f32((uint16_t)h) + tir_f16_to_f32((uint16_t)(h + 1))) / 2;
        uint16_t want = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        CHECK_EQ_HEX(tir_f32_to_f16((float)mid), want);
    }
    /* tir_round_to */
    CHECK(tir_round_to(TIR_I8, 200) == -56);
    CHECK(tir_round_to(TIR_U8, -1) == 255);
    CHECK(tir_round_to(TIR_I1, 3) == 1);
    CHECK(tir_round_to(TIR_I32, 4294967297.0) == 1);
    CHECK(tir_round_to(TIR_I32, -7.9) == -7);
    CHECK(isinf(tir_round_to(TIR_F16, 65520)));
    CHECK(tir_round_to(TIR_F32, 0.1) == (double)0.1f);
    CHECK(tir_round_to(TIR_F64, 0.1) == 0.1);
    CHECK(tir_round_to(TIR_F8E4M3, 1000) == 448);
    /* one rounding, not two: via f32 this would land on a tie and round down to 1.0 */
    CHECK(tir_round_to(TIR_F16, 1.0 + ldexp(1, -11) + ldexp(1, -40)) == 1.0 + ldexp(1, -10));
}

static void collect(void *ud, const char *msg) {
    char *buf = ud;
    size_t n = strlen(buf);
    snprintf(buf + n, 4096 - n, "%s\n", msg);
}

static void test_builder(void) {
    TirArena *a = tir_arena_new();
    TirModule *m = tir_module_new(a);
    int32_t s64[1] = {64};
    TirType i32 = tir_scalar_type(TIR_I32);
    TirType tf = tir_tile_type(tir_scalar_type(TIR_F32), 1, s64);
    TirType pts[2] = {tir_ptr_type(TIR_F32), i32};
    const char *names[2] = {"x", "n"};
    TirFunc *f = tir_func_new(m, TIR_FUNC_KERNEL, "k", 2, pts, names);
    CHECK(tir_module_find(m, "k") == f && f->body->nargs == 2 && strcmp(f->params[1].name, "n") == 0);
    TirValue *x = f->body->args[0], *n = f->body->args[1];
    TirBuilder b = {0};
    tir_builder_at_end(&b, f->body);
    TirValue *zero = tir_const_int(&b, i32, 0);
    TirValue *one = tir_const_int(&b, i32, 1);
    TirValue *acc0 = tir_const_float(&b, tf, 0.0);
    TirValue *fo[4] = {zero, n, one, acc0};
    TirOp *loop = tir_op_new(&b, TIR_OP_FOR, 4, fo, 1, &tf, 1);
    TirValue *iv = tir_block_add_arg(loop->region[0], i32);
    TirValue *acc = tir_block_add_arg(loop->region[0], tf);
    TirBuilder in = {0};
    tir_builder_at_end(&in, loop->region[0]);
    TirValue *sum = tir_binary(&in, TIR_OP_ADD, acc, acc);
    TirValue *c = tir_cmp(&in, TIR_CMP_LT, iv, n);
    CHECK(c->ty.elem == TIR_I1 && c->ty.rank == 0);
    tir_op_new(&in, TIR_OP_YIELD, 1, &sum, 0, NULL, 0);
    TirValue *res = loop->res[0];
    TirValue *s = tir_unary(&b, TIR_OP_NEG, res);
    TirValue *red = tir_op1(&b, TIR_OP_REDUCE_SUM, tir_scalar_type(TIR_F32), 1, &s);
    red->def->attr.i[0] = 0;
    TirValue *sp = tir_op1(&b, TIR_OP_SPLAT, tir_tile_type(x->ty, 1, s64), 1, &x);
    TirValue *st[2] = {sp, s};
    tir_op_new(&b, TIR_OP_STORE, 2, st, 0, NULL, 0);
    char diags[4096] = "";
    CHECK(tir_verify_module(m, collect, diags) == 0);
    if (diags[0])
        fprintf(stderr, "%s", diags);

    CHECK(tir_count_uses(f, acc) == 2);
    CHECK(tir_count_uses(f, s) == 2);
    CHECK(tir_count_uses(f, n) == 2); /* loop bound and the cmp inside the region */

    /* insert before: a cast built ahead of the neg */
    tir_builder_before(&b, s->def);
    TirValue *neg2 = tir_unary(&b, TIR_OP_NEG, res);
    CHECK(neg2->def->next == s->def && s->def->prev == neg2->def);
    tir_replace_all_uses(f, s, neg2);
    CHECK(tir_count_uses(f, s) == 0 && tir_count_uses(f, neg2) == 2);
    tir_op_erase(s->def);
    CHECK(neg2->def->next == red->def);
    memset(diags, 0, sizeof diags);
    CHECK(tir_verify_module(m, collect, diags) == 0);

    /* deep clone of the loop with `n` mapped to another value */
    tir_builder_at_end(&b, f->body);
    TirValue *n2 = tir_const_int(&b, i32, 7);
    TirValue *from[1] = {n}, *to[1] = {n2};
    TirOp *cl = tir_op_clone(&b, loop, from, to, 1);
    CHECK(cl != loop && cl->code == TIR_OP_FOR && cl->nregion == 1 && cl->opnd[1] == n2);
    CHECK(cl->region[0] != loop->region[0] && cl->region[0]->nargs == 2);
    CHECK(cl->region[0]->parent == cl);
    TirOp *cadd = cl->region[0]->first;
    CHECK(cadd->code == TIR_OP_ADD && cadd->opnd[0] == cl->region[0]->args[1] && cadd != sum->def);
    TirOp *ccmp = cadd->next;
    CHECK(ccmp->code == TIR_OP_CMP && ccmp->opnd[0] == cl->region[0]->args[0] && ccmp->opnd[1] == n2);
    CHECK(ccmp->attr.i[0] == TIR_CMP_LT);
    CHECK(cl->region[0]->last->code == TIR_OP_YIELD && cl->region[0]->last->opnd[0] == cadd->res[0]);
    CHECK(tir_count_uses(f, n) == 2); /* the original is untouched */
    CHECK(loop->region[0]->first == sum->def);
    memset(diags, 0, sizeof diags);
    CHECK(tir_verify_module(m, collect, diags) == 0);
    if (diags[0])
        fprintf(stderr, "%s", diags);

    /* renumber: ids follow print order */
    tir_func_renumber(f);
    CHECK(x->id == 0 && n->id == 1 && zero->id == 2 && res->id == 5 && iv->id == 6 && acc->id == 7);
    CHECK(f->next_id > cl->res[0]->id);
    char *text = tir_print_module_to_string(m);
    CHECK(strstr(text, "%5 = for %2, %n, %3, %4 : tile<64xf32> {\n  ^(%6: i32, %7: tile<64xf32>):\n    %8 = add %7, %7 "
                       ": tile<64xf32>\n") != NULL);
    /* printed text parses back and prints the same */
    TirModule *m2 = tir_parse_module(a, "t", text, strlen(text), NULL, NULL);
    CHECK(m2 != NULL);
    if (m2) {
        char *text2 = tir_print_module_to_string(m2);
        CHECK(strcmp(text, text2) == 0);
        free(text2);
    }
    free(text);

    /* dominance: move the neg in front of the loop that defines its operand */
    tir_op_detach(neg2->def);
    tir_op_insert_before(loop, neg2->def);
    memset(diags, 0, sizeof diags);
    CHECK(tir_verify_module(m, collect, diags) > 0);
    CHECK(strstr(diags, "@k: error: op 'neg' (value %") && strstr(diags, "is used before its definition"));
    tir_op_detach(neg2->def);
    tir_op_insert_before(red->def, neg2->def);
    /* a value of a region used after it */
    tir_builder_before(&b, red->def);
    TirValue *bad = tir_unary(&b, TIR_OP_NEG, sum);
    memset(diags, 0, sizeof diags);
    CHECK(tir_verify_module(m, collect, diags) == 1);
    CHECK(strstr(diags, "is used outside the region that defines it") != NULL);
    tir_op_erase(bad->def);
    memset(diags, 0, sizeof diags);
    CHECK(tir_verify_module(m, collect, diags) == 0);
    if (diags[0])
        fprintf(stderr, "%s", diags);

    tir_module_remove(m, f);
    CHECK(m->first == NULL && tir_module_find(m, "k") == NULL);
    tir_arena_free(a);
}

typedef struct {
    int total;
    int stop_after;
} WalkCtx;

static bool count_ops(TirOp *op, void *ud) {
    WalkCtx *c = ud;
    c->total++;
    return c->stop_after < 0 || c->total < c->stop_after;
}

static bool mark_op(TirOp *op, void *ud) {
    ((bool *)ud)[op->code] = true;
    return true;
}

/* Text placed so that its last byte is the last one before a PROT_NONE page. */
typedef struct {
    char *base;
    size_t data, page;
} Guarded;

static Guarded guarded_new(size_t max) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (max / page + 1) * page;
    char *b = mmap(NULL, data + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED || mprotect(b + data, page, PROT_NONE) != 0) {
        fprintf(stderr, "cannot map a guarded buffer\n");
        exit(1);
    }
    return (Guarded){b, data, page};
}
static const char *guarded_put(Guarded g, const char *text, size_t n) {
    char *d = g.base + g.data - n;
    memcpy(d, text, n);
    return d;
}
static void guarded_free(Guarded g) {
    munmap(g.base, g.data + g.page);
}

static void count_diag(void *ud, const char *msg) {
    (*(int *)ud)++;
    /* every parser message has the LINE:COL: error: form */
    int line, col;
    char rest[8];
    if (sscanf(msg, "%d:%d: erro%1[r]", &line, &col, rest) != 3) {
        fprintf(stderr, "badly formed message: %s\n", msg);
        failures++;
    }
}

/* Coverage of ops.def by the round-trip files, walker checks, and a parser sweep. */
static void test_files(int nfiles, char **files) {
    bool seen[TIR_NOPS] = {false};
    for (int i = 0; i < nfiles; i++) {
        size_t len;
        char *text = read_file(files[i], &len);
        CHECK(text != NULL);
        if (!text)
            continue;
        TirArena *a = tir_arena_new();
        TirModule *m = tir_parse_module(a, files[i], text, len, NULL, NULL);
        CHECK(m != NULL);
        for (TirFunc *f = m ? m->first : NULL; f; f = f->next) {
            tir_walk_func(f, mark_op, seen);
            WalkCtx all = {0, -1}, some = {0, 3};
            tir_walk_func(f, count_ops, &all);
            bool finished = tir_walk_func(f, count_ops, &some);
            CHECK(all.total < 3 || (!finished && some.total == 3));
        }
        /* never crash or read past the end: every prefix, and single-byte mutations */
        Guarded g = guarded_new(len);
        for (size_t cut = 0; cut <= len; cut += 1 + len / 400) {
            TirArena *b = tir_arena_new();
            int nd = 0;
            TirModule *pm = tir_parse_module(b, "cut", guarded_put(g, text, cut), cut, count_diag, &nd);
            CHECK(pm != NULL || nd > 0);
            tir_arena_free(b);
        }
        guarded_free(g);
        static const char subst[] = {'%', '{', '}', '<', '>', '"', '\0', 'x', ',', '\n', '9', '#', '^', '@'};
        char *mut = malloc(len + 1);
        for (size_t pos = 0; pos < len; pos += 1 + len / 300) {
            for (size_t k = 0; k < sizeof subst; k++) {
                memcpy(mut, text, len + 1);
                mut[pos] = subst[k];
                TirArena *b = tir_arena_new();
                int nd = 0;
                TirModule *pm = tir_parse_module(b, "mut", mut, len, count_diag, &nd);
                CHECK(pm != NULL || nd > 0);
                if (pm) {
                    /* whatever parses must verify or report, and print without crashing */
                    tir_verify_module(pm, NULL, NULL);
                    free(tir_print_module_to_string(pm));
                }
                tir_arena_free(b);
            }
        }
        free(mut);
        tir_arena_free(a);
        free(text);
    }
    if (nfiles) {
        for (int op = 0; op < TIR_NOPS; op++)
            if (!seen[op]) {
                fprintf(stderr, "op '%s' is not covered by the round-trip files\n", tir_op_info[op].name);
                failures++;
            }
    }
    /* deep nesting is an error, not a stack overflow */
    size_t depth = 100000;
    char *deep = malloc(depth * 40 + 200);
    size_t n = (size_t)sprintf(deep, "kernel @k (%%c: i1) {\n");
    for (size_t i = 0; i < depth; i++)
        n += (size_t)sprintf(deep + n, "if %%c {\n");
    TirArena *a = tir_arena_new();
    int nd = 0;
    CHECK(tir_parse_module(a, "deep", deep, n, count_diag, &nd) == NULL && nd > 0);
    tir_arena_free(a);
    n = (size_t)sprintf(deep, "kernel @k () {\n %%0 = constant {value=0} : tile<4xi32, ");
    for (size_t i = 0; i < depth; i++)
        n += (size_t)sprintf(deep + n, "#slice<dim=0, parent=");
    a = tir_arena_new();
    nd = 0;
    CHECK(tir_parse_module(a, "deep", deep, n, count_diag, &nd) == NULL && nd > 0);
    tir_arena_free(a);
    free(deep);
}

/* A type's text has no length limit: one longer than the printer's 512-byte buffer (built
 * through the API: eight nested slices of a rank-5 blocked layout with 10-digit fields)
 * prints whole, its last '>' included. */
static void test_print_long_type(void) {
    TirArena *a = tir_arena_new();
    TirModule *m = tir_module_new(a);
    TirLayout l;
    memset(&l, 0, sizeof l);
    l.kind = TIR_LAYOUT_BLOCKED;
    l.rank = TIR_MAXRANK;
    for (int i = 0; i < TIR_MAXRANK; i++)
        l.size_per_thread[i] = l.threads_per_warp[i] = l.warps_per_cta[i] = l.order[i] = 1000000000 + i;
    int32_t lay = tir_layout_intern(m, &l);
    for (int k = 0; k < 8; k++) {
        memset(&l, 0, sizeof l);
        l.kind = TIR_LAYOUT_SLICE;
        l.rank = TIR_MAXRANK;
        l.parent = lay;
        l.dim = 1000000000 + k;
        lay = tir_layout_intern(m, &l);
    }
    int32_t shape[1] = {64};
    TirType t = tir_tile_type(tir_scalar_type(TIR_I32), 1, shape);
    t.layout = lay;
    char want[2048];
    int n = tir_type_print(want, sizeof want, m, t);
    CHECK(n >= 512 && n < (int)sizeof want);
    TirFunc *f = tir_func_new(m, TIR_FUNC_KERNEL, "k", 0, NULL, NULL);
    TirBuilder b = {0};
    tir_builder_at_end(&b, f->body);
    tir_const_int(&b, t, 0);
    char *text = tir_print_module_to_string(m);
    CHECK(text && strstr(text, want) != NULL);
    free(text);
    tir_arena_free(a);
}

/* A result that names another op as its definition (IR edited by hand) is reported. */
static void test_verify_result_link(void) {
    TirArena *a = tir_arena_new();
    TirModule *m = tir_module_new(a);
    TirType i32 = tir_scalar_type(TIR_I32);
    const char *names[1] = {"n"};
    TirFunc *f = tir_func_new(m, TIR_FUNC_KERNEL, "k", 1, &i32, names);
    TirBuilder b = {0};
    tir_builder_at_end(&b, f->body);
    TirValue *one = tir_const_int(&b, i32, 1);
    TirValue *sum = tir_binary(&b, TIR_OP_ADD, f->body->args[0], one);
    char diags[4096] = "";
    CHECK(tir_verify_module(m, collect, diags) == 0);
    sum->def = one->def;
    diags[0] = 0;
    CHECK(tir_verify_module(m, collect, diags) != 0);
    CHECK(strstr(diags, "result 0 is missing or not linked to its op") != NULL);
    tir_arena_free(a);
}

/* A failed op is skipped to the end of its line, or of the region its line opens; every
 * prefix of such text, each ending against the guard page (a comment's first '/' the
 * last byte among them), parses or reports, and reads nothing past its length. */
static void test_parse_bounds(void) {
    static const char text[] = "kernel @k (%x: i32) {\n"
                               "  %a = no_such_op %x : i32 {\n"
                               "    // a comment in the skipped region\n"
                               "    %s = \"a string with } and //\"\n"
                               "  }\n"
                               "  %b = add %x, %x : i32 // trailing\n"
                               "}\n";
    size_t len = sizeof text - 1;
    Guarded g = guarded_new(len);
    for (size_t cut = 0; cut <= len; cut++) {
        TirArena *b = tir_arena_new();
        int nd = 0;
        TirModule *pm = tir_parse_module(b, "bounds", guarded_put(g, text, cut), cut, count_diag, &nd);
        CHECK(pm != NULL || nd > 0);
        tir_arena_free(b);
    }
    guarded_free(g);
}

int main(int argc, char **argv) {
    test_scalars();
    test_parse_bounds();
    test_verify_result_link();
    test_print_long_type();
    test_types();
    test_fp();
    test_builder();
    test_files(argc - 1, argv + 1);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
