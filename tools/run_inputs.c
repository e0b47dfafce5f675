/* The arguments of one kernel launch as `tilec run` takes them (run_inputs.h). */
#include "run_inputs.h"

#include <stdlib.h>
#include <string.h>

void inputs_free(Inputs *in) {
    for (int j = 0; j < in->np; j++)
        if (in->args && in->args[j].kind == TILE_ARG_BUFFER)
            free(in->args[j].buf.ptr);
    free(in->pis);
    free(in->args);
    free(in->given);
    free(in->shapes);
}

/* Matches every ARG to a parameter; const parameters given as NAME=V become defines of
 * ctx (so the variant list is the one for that value).  Reports every problem. */
bool make_inputs(tile_ctx *ctx, tile_program *p, int k, const CliRun *o, Inputs *in) {
    int np = tile_kernel_param_count(p, k);
    *in = (Inputs){.np = np};
    in->pis = calloc((size_t)np + 1, sizeof *in->pis);
    in->args = calloc((size_t)np + 1, sizeof *in->args);
    in->given = calloc((size_t)np + 1, sizeof *in->given);
    in->shapes = calloc((size_t)np + 1, sizeof *in->shapes);
    if (!in->pis || !in->args || !in->given || !in->shapes)
        return false;
    for (int j = 0; j < np; j++)
        tile_kernel_param(p, k, j, &in->pis[j]);
    int bad = 0;
    for (int i = 0; i < o->nargs; i++) {
        const char *a = o->args[i], *eq = strchr(a, '=');
        size_t nlen = (size_t)(eq - a);
        int j = 0;
        while (j < np && (strlen(in->pis[j].name) != nlen || strncmp(in->pis[j].name, a, nlen)))
            j++;
        if (j == np) {
            cli_error("kernel '%s' has no parameter '%.*s'", o->c.kernel, (int)nlen, a);
            bad++;
            continue;
        }
        const tile_param_info *pi = &in->pis[j];
        if (in->given[j]) {
            cli_error("argument '%s' given twice", pi->name);
            bad++;
            continue;
        }
        in->given[j] = true;
        if (pi->is_pointer != cli_is_buffer_spec(eq + 1)) {
            cli_error("argument '%s' is %s", pi->name,
                      pi->is_pointer ? "a pointer: give @PATH, zeros:, rand: or randn:" : "a scalar, not a buffer");
            bad++;
        } else if (!(pi->is_pointer ? cli_make_buffer(pi, eq + 1, &in->args[j], &in->shapes[j])
                                    : cli_make_scalar(pi, eq + 1, &in->args[j]))) {
            bad++;
        } else if (pi->is_const && tile_ctx_define(ctx, a) != TILE_OK) {
            bad++;
        }
    }
    for (int j = 0; j < np; j++)
        if (!in->given[j] && !in->pis[j].is_const) {
            cli_error("missing argument '%s' (%s%s) of kernel '%s'", in->pis[j].name, in->pis[j].is_pointer ? "*" : "",
                      tile_scalar_name(in->pis[j].type), o->c.kernel);
            bad++;
        }
    return bad == 0;
}

/* Fresh copies of the input buffers for one run (NULL entries for scalars). */
void **copy_buffers(const Inputs *in) {
    void **b = calloc((size_t)in->np + 1, sizeof *b);
    for (int j = 0; b && j < in->np; j++)
        if (in->pis[j].is_pointer) {
            size_t n = in->args[j].buf.bytes;
            if (!(b[j] = malloc(n ? n : 1))) {
                for (int q = 0; q < j; q++)
                    free(b[q]);
                free(b);
                return NULL;
            }
            memcpy(b[j], in->args[j].buf.ptr, n);
        }
    return b;
}

void free_buffers(const Inputs *in, void **b) {
    for (int j = 0; b && j < in->np; j++)
        free(b[j]);
    free(b);
}
