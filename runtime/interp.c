/* The interpreter device: a launch runs the kernel's IR on host buffers through tile.h's
 * tile_run, which checks the arguments, picks the first variant whose where clauses hold
 * and checks every memory access against the buffers' sizes. */
#include "rt_internal.h"

#include <stdio.h>
#include <string.h>

static const struct {
    tile_status from;
    tile_rt_status to;
} status_map[] = {
    {TILE_OK, TILE_RT_OK},
    {TILE_ERR_INVALID, TILE_RT_ERR_INVALID},
    {TILE_ERR_IO, TILE_RT_ERR_IO},
    {TILE_ERR_COMPILE, TILE_RT_ERR_COMPILE},
    {TILE_ERR_NOT_FOUND, TILE_RT_ERR_NOT_FOUND},
    {TILE_ERR_ARGS, TILE_RT_ERR_ARGS},
    {TILE_ERR_NO_VARIANT, TILE_RT_ERR_NO_VARIANT},
    {TILE_ERR_GRID, TILE_RT_ERR_ARGS},
    {TILE_ERR_RUN, TILE_RT_ERR_RUN},
    {TILE_ERR_UNSUPPORTED, TILE_RT_ERR_UNSUPPORTED},
};

static tile_rt_status map_status(tile_status s) {
    for (size_t i = 0; i < sizeof status_map / sizeof *status_map; i++)
        if (status_map[i].from == s)
            return status_map[i].to;
    return TILE_RT_ERR_INVALID;
}

tile_rt_status rt_interp_launch(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, const int64_t *grid) {
    tile_rt_module *m = k->m;
    tile_rt *rt = m->rt;
    if (nargs != k->nrt || (!args && nargs))
        return rt_fail(rt, TILE_RT_ERR_ARGS, "kernel '%s' takes %d argument%s, got %d", k->name, k->nrt,
                       k->nrt == 1 ? "" : "s", nargs);
    tile_arg targs[RT_MAX_PARAMS];
    for (uint32_t i = 0; i < k->nparams; i++) {
        const RtParam *p = &k->params[i];
        if (!p->is_const)
            continue;
        if (!k->const_set[i])
            targs[i] = (tile_arg){.kind = TILE_ARG_NONE};
        else if (tile_scalar_is_float(p->scalar))
            targs[i] = tile_arg_float(k->const_f[i]);
        else
            targs[i] = tile_arg_int(k->const_i[i]);
    }
    for (int i = 0; i < nargs; i++) {
        int pi = k->rt_param[i];
        const RtParam *p = &k->params[pi];
        const tile_rt_arg *a = &args[i];
        switch (a->kind) {
        case TILE_RT_ARG_I64: targs[pi] = tile_arg_int(a->i64); break;
        case TILE_RT_ARG_F64: targs[pi] = tile_arg_float(a->f64); break;
        case TILE_RT_ARG_PTR:
            if (p->is_pointer && a->buf.ptr && !a->buf.bytes)
                return rt_fail(rt, TILE_RT_ERR_ARGS,
                               "kernel '%s': pointer '%s' needs its size "
                               "(tile_rt_arg.buf.bytes) on the interpreter device, which checks "
                               "every access",
                               k->name, p->name);
            targs[pi] = tile_arg_buffer(a->buf.ptr, a->buf.bytes);
            break;
        default:
            return rt_fail(rt, TILE_RT_ERR_ARGS,
                           "kernel '%s': argument %d '%s' has an unknown "
                           "kind %d",
                           k->name, i + 1, p->name, (int)a->kind);
        }
        /* A float parameter given an integer is converted, as on the cuda device. */
        if (!p->is_pointer && tile_scalar_is_float(p->scalar) && a->kind == TILE_RT_ARG_I64)
            targs[pi] = tile_arg_float((double)a->i64);
    }
    /* print() goes to stdout as a GPU's printf does; the grid function (if any) sees the
     * constants of the variant that runs */
    tile_run_options o = {.device = TILE_DEVICE_INTERP,
                          .print_out = stdout,
                          .grid_fn = grid ? NULL : rt_grid_fn.fn,
                          .grid_ud = rt_grid_fn.ud};
    if (grid)
        for (int i = 0; i < 3; i++)
            o.grid[i] = grid[i] > 0 ? grid[i] : 1;
    pthread_mutex_lock(&m->jit_lock);
    /* const parameters travel as arguments; pinned tuned constants as defines */
    tile_rt_status s = rt_kernel_defines(k, m->tctx, true);
    tile_status ts = s == TILE_RT_OK ? tile_run(m->prog, k->index, targs, (int)k->nparams, &o) : TILE_OK;
    fflush(stdout);
    if (s == TILE_RT_OK)
        s = map_status(ts);
    if (s != TILE_RT_OK) {
        rt_fail(rt, s, "%s", tile_ctx_last_error(m->tctx));
    } else {
        snprintf(k->interp_chosen, sizeof k->interp_chosen, "%s", o.chosen);
        atomic_store(&k->last_variant, k->interp_chosen);
        k->last_info = (tile_rt_launch_info){.grid = {o.grid_used[0], o.grid_used[1], o.grid_used[2]}};
    }
    pthread_mutex_unlock(&m->jit_lock);
    return s;
}
