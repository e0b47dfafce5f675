/* The arguments of one kernel launch as `tilec run` takes them (name=VALUE, name=@PATH,
 * name=zeros:N, ...), for the subcommands that run a kernel several times (tilec check)
 * or count one launch (tilec report): host buffers kept pristine, fresh copies per run. */
#ifndef TILEC_RUN_INPUTS_H
#define TILEC_RUN_INPUTS_H

#include "cli_args.h"
#include "tile/tile.h"

typedef struct Inputs {
    int np;
    tile_param_info *pis;
    tile_arg *args; /* the host inputs, never run on */
    bool *given;
    CliShape *shapes;
} Inputs;

/* Matches every ARG of o to a parameter of kernel k; const parameters given as NAME=V
 * also become defines of ctx (so the variant list is the one for that value).  Reports
 * every problem (cli_error); false after any. */
bool make_inputs(tile_ctx *ctx, tile_program *p, int k, const CliRun *o, Inputs *in);
void inputs_free(Inputs *in);
/* Fresh copies of the input buffers for one run (NULL entries for scalars); NULL when out
 * of memory. */
void **copy_buffers(const Inputs *in);
void free_buffers(const Inputs *in, void **b);

#endif
