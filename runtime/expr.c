/* Clause expressions of bundles: the postfix bytecode of docs/bundle.md, checked once at
 * load (opcodes, operand bytes, indices, stack depth) and evaluated per launch without
 * allocating. */
#include "rt_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The opcodes are format/bundle_format.h's BUNDLE_OPS, shared with the writer. */

enum {
#define X(code, name, nb, pops, pushes) OP_##name = code,
    BUNDLE_OPS(X)
#undef X
};

typedef struct OpInfo {
    const char *name;
    uint8_t operand_bytes, pops, pushes;
    bool known;
} OpInfo;

static const OpInfo op_info[256] = {
#define X(code, nm, nb, po, pu) [code] = {.name = #nm, .operand_bytes = nb, .pops = po, .pushes = pu, .known = true},
    BUNDLE_OPS(X)
#undef X
};

static uint64_t rd(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

bool rt_expr_check(const RtExpr *e, const RtKernelMeta *k, char *err, size_t n) {
    int depth = 0;
    for (uint32_t pc = 0; pc < e->len;) {
        uint8_t op = e->code[pc];
        const OpInfo *oi = &op_info[op];
        if (!oi->known) {
            snprintf(err, n, "unknown opcode 0x%02x at offset %u", op, pc);
            return false;
        }
        if (oi->operand_bytes > e->len - pc - 1) {
            snprintf(err, n, "%s at offset %u: operand past the end", oi->name, pc);
            return false;
        }
        const uint8_t *arg = e->code + pc + 1;
        if (op == OP_ARG) {
            uint16_t i = (uint16_t)rd(arg, 2);
            if (i >= k->nparams || k->params[i].is_pointer || k->params[i].is_const) {
                snprintf(err, n, "ARG %u is not a runtime scalar parameter", i);
                return false;
            }
        } else if (op == OP_CONST) {
            uint16_t i = (uint16_t)rd(arg, 2);
            if (i >= k->ncnames) {
                snprintf(err, n, "CONST %u past the %u constant names", i, k->ncnames);
                return false;
            }
        } else if (op == OP_CAST && arg[0] >= TILE_NSCALARS) {
            snprintf(err, n, "CAST to unknown scalar %u", arg[0]);
            return false;
        }
        if (depth < oi->pops) {
            snprintf(err, n, "%s at offset %u: stack underflow", oi->name, pc);
            return false;
        }
        depth += oi->pushes - oi->pops;
        if (depth > RT_EXPR_STACK) {
            snprintf(err, n, "stack deeper than %d", RT_EXPR_STACK);
            return false;
        }
        pc += 1u + oi->operand_bytes;
    }
    if (depth != 1) {
        snprintf(err, n, "leaves %d values on the stack, not 1", depth);
        return false;
    }
    return true;
}

static double as_f(RtValue v) {
    return v.is_float ? v.f : (double)v.i;
}
static RtValue vi(int64_t i) {
    return (RtValue){.i = i};
}
static RtValue vf(double f) {
    return (RtValue){.is_float = true, .f = f};
}

/* Converts like the language's `as`. */
static RtValue cast(RtValue v, tile_scalar t) {
    if (tile_scalar_is_float(t)) {
        double d = as_f(v);
        if (t == TILE_F32)
            d = (float)d;
        else if (t != TILE_F64) {
            /* narrow floats: round through the library's exact conversion */
            uint8_t buf[8];
            tile_store_elements(t, buf, &d, 1);
            tile_load_elements(t, &d, buf, 1);
        }
        return vf(d);
    }
    int64_t i;
    if (v.is_float) {
        double d = v.f;
        i = isnan(d) ? 0 : d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
    } else {
        i = v.i;
    }
    switch (tile_scalar_size(t)) {
    case 1:
        if (t == TILE_BOOL)
            return vi(i != 0);
        return vi(tile_scalar_is_signed(t) ? (int8_t)i : (uint8_t)i);
    case 2: return vi(tile_scalar_is_signed(t) ? (int16_t)i : (uint16_t)i);
    case 4: return vi(tile_scalar_is_signed(t) ? (int32_t)i : (uint32_t)i);
    default: return vi(i);
    }
}

static bool truth(RtValue v) {
    return v.is_float ? v.f != 0 : v.i != 0;
}

bool rt_expr_eval(const RtExpr *e, const RtKernelMeta *k, const RtVariant *v, const RtValue *args, RtValue *out,
                  char *err, size_t n) {
    RtValue st[RT_EXPR_STACK + 1];
    int sp = 0;
    for (uint32_t pc = 0; pc < e->len;) {
        uint8_t op = e->code[pc];
        const uint8_t *arg = e->code + pc + 1;
        pc += 1u + op_info[op].operand_bytes;
        if (op == OP_PUSH_I) {
            st[sp++] = vi((int64_t)rd(arg, 8));
            continue;
        }
        if (op == OP_PUSH_F) {
            uint64_t u = rd(arg, 8);
            double d;
            memcpy(&d, &u, sizeof d);
            st[sp++] = vf(d);
            continue;
        }
        if (op == OP_ARG) {
            st[sp++] = args[rd(arg, 2)];
            continue;
        }
        if (op == OP_CONST) {
            uint16_t j = (uint16_t)rd(arg, 2);
            st[sp++] = v->cfloat[j] ? vf(v->cvals[j]) : vi((int64_t)v->cvals[j]);
            continue;
        }
        if (op_info[op].pops == 1) {
            RtValue a = st[sp - 1], r;
            switch (op) {
            case OP_NEG: r = a.is_float ? vf(-a.f) : vi((int64_t)(0 - (uint64_t)a.i)); break;
            case OP_LNOT: r = vi(!truth(a)); break;
            case OP_BNOT: r = vi(~a.i); break;
            case OP_CAST: r = cast(a, (tile_scalar)arg[0]); break;
            case OP_NEXT_POW2: {
                int64_t x = a.is_float ? (int64_t)a.f : a.i, p = 1;
                while (p < x && p < ((int64_t)1 << 62))
                    p <<= 1;
                r = vi(p);
                break;
            }
            default: r = a; break;
            }
            st[sp - 1] = r;
            continue;
        }
        RtValue a = st[sp - 2], b = st[sp - 1], r;
        sp--;
        bool fl = a.is_float || b.is_float;
        double x = as_f(a), y = as_f(b);
        uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
        if (!fl && (op == OP_DIV || op == OP_MOD || op == OP_CDIV) && b.i == 0) {
            snprintf(err, n, "division by zero");
            return false;
        }
        if ((op >= OP_BAND && op <= OP_SHR) && fl) {
            snprintf(err, n, "bit operation on a float");
            return false;
        }
        if ((op == OP_SHL || op == OP_SHR) && (b.i < 0 || b.i >= 64)) {
            snprintf(err, n, "shift by %lld", (long long)b.i);
            return false;
        }
        switch (op) {
        case OP_ADD: r = fl ? vf(x + y) : vi((int64_t)(ua + ub)); break;
        case OP_SUB: r = fl ? vf(x - y) : vi((int64_t)(ua - ub)); break;
        case OP_MUL: r = fl ? vf(x * y) : vi((int64_t)(ua * ub)); break;
        case OP_DIV: r = fl ? vf(x / y) : (a.i == INT64_MIN && b.i == -1) ? vi(a.i) : vi(a.i / b.i); break;
        case OP_MOD: r = fl ? vf(fmod(x, y)) : (b.i == -1) ? vi(0) : vi(a.i % b.i); break;
        case OP_CDIV:
            if (fl) {
                r = vf(ceil(x / y));
            } else {
                /* cdiv(a, b) = floor((a + b - 1) / b) for positive b, without overflow */
                int64_t q = a.i / b.i;
                if ((a.i % b.i != 0) && ((a.i < 0) == (b.i < 0)))
                    q++;
                r = vi(q);
            }
            break;
        case OP_MIN: r = fl ? vf(fmin(x, y)) : vi(a.i < b.i ? a.i : b.i); break;
        case OP_MAX: r = fl ? vf(fmax(x, y)) : vi(a.i > b.i ? a.i : b.i); break;
        case OP_EQ: r = vi(fl ? x == y : a.i == b.i); break;
        case OP_NE: r = vi(fl ? x != y : a.i != b.i); break;
        case OP_LT: r = vi(fl ? x < y : a.i < b.i); break;
        case OP_LE: r = vi(fl ? x <= y : a.i <= b.i); break;
        case OP_GT: r = vi(fl ? x > y : a.i > b.i); break;
        case OP_GE: r = vi(fl ? x >= y : a.i >= b.i); break;
        case OP_LAND: r = vi(truth(a) && truth(b)); break;
        case OP_LOR: r = vi(truth(a) || truth(b)); break;
        case OP_BAND: r = vi(a.i & b.i); break;
        case OP_BOR: r = vi(a.i | b.i); break;
        case OP_BXOR: r = vi(a.i ^ b.i); break;
        case OP_SHL: r = vi((int64_t)(ua << b.i)); break;
        case OP_SHR: r = vi(a.i >> b.i); break;
        default: r = a; break;
        }
        st[sp - 1] = r;
    }
    *out = st[0];
    return true;
}
