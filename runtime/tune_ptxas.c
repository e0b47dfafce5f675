/* The joint search over ptxas controls: $TILE_TUNE_PTXAS lists option sets separated by
 * '|' ("-O1|--def-load-cache=cg|--register-usage-level=10"); after the tuner has chosen a
 * variant among the kernel's constants (and its register-capped and uncapped cubins), that
 * variant's cubin is compiled again with each set and timed against itself, and the
 * fastest is kept, in memory and in the tuning cache ("VARIANT; ptxas OPTS").
 *
 * Pruned to the chosen variant so that cold tuning costs one more compile per option set,
 * not one per variant and set: ptxas' controls change how a variant's code is scheduled
 * and cached, which matters once the configuration is right.  Source modules only (a
 * bundle's cubins are built ahead of time); an option set ptxas refuses is skipped with a
 * log line.  Each joint round is a record of the tuning log, its candidates' options
 * written out. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SETS = 8, SET_LEN = 64, ALT_PTXAS = 16 };

/* The option sets of $TILE_TUNE_PTXAS, trimmed; empty ones and ones too long dropped. */
static int option_sets(char sets[MAX_SETS][SET_LEN]) {
    const char *e = getenv("TILE_TUNE_PTXAS");
    int n = 0;
    for (const char *p = e; p && *p && n < MAX_SETS;) {
        size_t len = strcspn(p, "|");
        const char *s = p;
        size_t l = len;
        while (l && *s == ' ')
            s++, l--;
        while (l && s[l - 1] == ' ')
            l--;
        if (l && l < SET_LEN) {
            memcpy(sets[n], s, l);
            sets[n++][l] = 0;
        }
        p += len + (p[len] == '|');
    }
    return n;
}

#ifdef TILE_RT_HAVE_CUDA
/* The instance of base's variant compiled with `opts`: found among k's instances, or
 * compiled and loaded (its cubin of base's kind: capped or uncapped).  Caller holds k->lock. */
static tile_rt_status ptxas_instance(tile_rt_kernel *k, const RtInstance *base, const char *opts, int idx,
                                     RtInstance **out) {
    char text[sizeof base->text + SET_LEN + 16];
    snprintf(text, sizeof text, "%s; ptxas %s", base->text, opts);
    if (strlen(text) >= sizeof base->text)
        return rt_fail(k->m->rt, TILE_RT_ERR_INVALID, "kernel '%s': variant text too long for ptxas %s", k->name, opts);
    for (RtInstance *i = k->instances; i; i = i->next)
        if (i->alt >= ALT_PTXAS && i->variant == base->variant && i->epoch == base->epoch && !strcmp(i->text, text)) {
            *out = i;
            return i->failed ? TILE_RT_ERR_COMPILE : TILE_RT_OK;
        }
    if (!k->m->prog)
        return TILE_RT_ERR_UNSUPPORTED;
    RtInstance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return rt_fail(k->m->rt, TILE_RT_ERR_INVALID, "out of memory");
    *inst = (RtInstance){
        .variant = base->variant, .f = base->f, .alt = ALT_PTXAS + idx, .epoch = base->epoch, .v = base->v};
    memcpy(inst->text, text, strlen(text) + 1);
    snprintf(inst->ptxas, sizeof inst->ptxas, "%s", opts);
    double t0 = rt_now();
    char *cubin[RT_MAX_CUBINS];
    size_t len[RT_MAX_CUBINS];
    int n = 0;
    tile_rt_status s = rt_jit_compile_opts(k->m, k->index, base->variant, base->f, opts, cubin, len, &n);
    int which = base->alt < n ? base->alt : 0;
    if (s == TILE_RT_OK && n > 0)
        s = rt_load_image(k, inst, cubin[which], len[which], false, k->name);
    else if (s == TILE_RT_OK)
        s = rt_fail(k->m->rt, TILE_RT_ERR_COMPILE, "kernel '%s': no cubin for ptxas %s", k->name, opts);
    for (int i = 0; i < n; i++)
        free(cubin[i]);
    inst->compile_s = rt_now() - t0;
    inst->failed = s != TILE_RT_OK;
    inst->next = k->instances;
    k->instances = inst;
    *out = inst;
    return s;
}

tile_rt_status rt_tune_ptxas(tile_rt_kernel *k, RtInstance *chosen, const tile_rt_arg *args, int nargs, void *stream,
                             const int64_t *grid_given, RtInstance **best) {
    char sets[MAX_SETS][SET_LEN];
    int nsets = option_sets(sets);
    *best = chosen;
    if (!nsets || !k->m->prog || chosen->alt >= ALT_PTXAS)
        return TILE_RT_OK;
    RtInstance *cands[1 + MAX_SETS];
    int n = 0;
    cands[n++] = chosen;
    for (int i = 0; i < nsets; i++) {
        RtInstance *inst = NULL;
        if (ptxas_instance(k, chosen, sets[i], i, &inst) == TILE_RT_OK)
            cands[n++] = inst;
        else
            rt_log(k->m->rt, "tilert: tuning %s: ptxas %s skipped: %s", k->name, sets[i], tile_rt_last_error(k->m->rt));
    }
    if (n == 1)
        return TILE_RT_OK;
    return rt_tune(k, cands, n, args, nargs, stream, grid_given, best);
}

bool rt_tune_ptxas_restore(tile_rt_kernel *k, RtInstance **cands, int ncands, const char *text, RtInstance **best) {
    const char *mark = strstr(text, "; ptxas ");
    if (!mark || !k->m->prog)
        return false;
    size_t base_len = (size_t)(mark - text);
    const char *opts = mark + 8;
    char sets[MAX_SETS][SET_LEN];
    int nsets = option_sets(sets), idx = 0;
    while (idx < nsets && strcmp(sets[idx], opts))
        idx++;
    if (strlen(opts) >= SET_LEN)
        return false;
    for (int c = 0; c < ncands; c++)
        if (strlen(cands[c]->text) == base_len && !strncmp(cands[c]->text, text, base_len)) {
            RtInstance *inst = NULL;
            if (ptxas_instance(k, cands[c], opts, idx, &inst) != TILE_RT_OK)
                return false;
            *best = inst;
            return true;
        }
    return false;
}
#else
tile_rt_status rt_tune_ptxas(tile_rt_kernel *k, RtInstance *chosen, const tile_rt_arg *args, int nargs, void *stream,
                             const int64_t *grid_given, RtInstance **best) {
    (void)k, (void)args, (void)nargs, (void)stream, (void)grid_given;
    *best = chosen;
    return TILE_RT_OK;
}

bool rt_tune_ptxas_restore(tile_rt_kernel *k, RtInstance **cands, int ncands, const char *text, RtInstance **best) {
    (void)k, (void)cands, (void)ncands, (void)text, (void)best;
    (void)option_sets;
    return false;
}
#endif
