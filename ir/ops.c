/* The ops table, generated from ops.def, and which attributes each op's text carries. */
#include "tir_internal.h"

#include <string.h>

const TirOpInfo tir_op_info[TIR_NOPS] = {
#define OP(id, text, nopnd, nres, traits) [TIR_OP_##id] = {text, nopnd, nres, traits},
#include "ops.def"
#undef OP
};

int tir_opcode_from_name(const char *s, size_t n) {
    for (int i = 0; i < TIR_NOPS; i++) {
        const char *name = tir_op_info[i].name;
        if (strlen(name) == n && memcmp(name, s, n) == 0)
            return i;
    }
    return -1;
}

const char *const tir_cmp_names[6] = {"eq", "ne", "lt", "le", "gt", "ge"};
const char *const tir_sem_names[TIR_NSEMS] = {"acq_rel", "relaxed", "acquire", "release"};
const char *const tir_scope_names[TIR_NSCOPES] = {"gpu", "cta", "sys"};

/* The attribute form of each op (ops.def's comment, as data for the printer and parser). */
TirAttrKind tir_attr_kind(TirOpcode code) {
    static const struct {
        TirOpcode code;
        TirAttrKind kind;
    } table[] = {
        {TIR_OP_CONSTANT, TIR_A_VALUE},     {TIR_OP_ARANGE, TIR_A_RANGE},
        {TIR_OP_PROGRAM_ID, TIR_A_AXIS},    {TIR_OP_NUM_PROGRAMS, TIR_A_AXIS},
        {TIR_OP_CMP, TIR_A_PRED},           {TIR_OP_REDUCE_SUM, TIR_A_AXIS},
        {TIR_OP_REDUCE_MAX, TIR_A_AXIS},    {TIR_OP_REDUCE_MIN, TIR_A_AXIS},
        {TIR_OP_ARGMAX, TIR_A_AXIS},        {TIR_OP_ARGMIN, TIR_A_AXIS},
        {TIR_OP_CUMSUM, TIR_A_AXIS},        {TIR_OP_EXPAND_DIMS, TIR_A_AXIS},
        {TIR_OP_HINT_MULTIPLE_OF, TIR_A_N}, {TIR_OP_HINT_MAX_CONTIGUOUS, TIR_A_N},
        {TIR_OP_LOAD, TIR_A_CACHE},         {TIR_OP_DOT, TIR_A_TF32},
        {TIR_OP_TRANS, TIR_A_PERM},         {TIR_OP_PRINT, TIR_A_LABEL},
        {TIR_OP_ASSERT, TIR_A_MSG},         {TIR_OP_CALL, TIR_A_CALLEE},
        {TIR_OP_ASYNC_WAIT, TIR_A_N},       {TIR_OP_EXP, TIR_A_FAST},
        {TIR_OP_EXP2, TIR_A_FAST},          {TIR_OP_TANH, TIR_A_FAST},
        {TIR_OP_SIGMOID, TIR_A_FAST},       {TIR_OP_ERF, TIR_A_FAST},
        {TIR_OP_ATOMIC_ADD, TIR_A_ORDER},   {TIR_OP_ATOMIC_MAX, TIR_A_ORDER},
        {TIR_OP_ATOMIC_MIN, TIR_A_ORDER},   {TIR_OP_ATOMIC_XCHG, TIR_A_ORDER},
        {TIR_OP_ATOMIC_CAS, TIR_A_ORDER},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].code == code)
            return table[i].kind;
    return TIR_A_NONE;
}
