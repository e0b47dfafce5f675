/* ptx_barriers: finds CTA barriers that only some threads of a CTA may reach.
 *   ptx_barriers FILE.ptx...
 * bar.sync is .aligned: every thread of a warp must execute the same barrier instruction,
 * and every thread of the CTA must arrive, or the CTA hangs.  An inline-asm barrier once let
 * LLVM copy a bar.sync into both sides of a `tid == 0` branch (issue 10 item 11), so this
 * tool checks the PTX itself, whatever the backend did to get there.
 * Per function: basic blocks (labels, bra, @p bra, ret, exit), a taint analysis of the
 * registers (a tainted register may differ between the threads of one CTA), the branches on
 * tainted predicates ("thread-dependent") and their immediate post-dominators (where the
 * threads meet again).  Reported: a barrier, or a call of a function with one, in a block
 * such a branch reaches before its post-dominator, and one predicated on a tainted predicate.
 * Prints "FILE:LINE: error: ..." per finding, then a summary line per file; exits 1 on a
 * finding, 2 on input it does not understand (never a silent pass). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Insn {
    int line, guard;          /* guard: the predicate register of @p / @!p, or -1 */
    char op[48], target[128]; /* target: bra's label, call's callee */
    int dst, ndst, src, nsrc; /* slices of regs[] */
    bool thread;              /* the result differs per thread whatever the operands */
    bool branch, ret, barrier, call;
} Insn;

typedef struct Fn {
    char name[128], (*callees)[128];
    int module, ncallees, cap_callees;
    bool has_barrier;
} Fn;

typedef struct Site { /* a call that only some threads make: is there a barrier in the callee? */
    int line, module;
    char callee[128], why[512];
} Site;

static void *grow(void *p, int n, int *cap, size_t size) {
    if (n < *cap)
        return p;
    *cap = *cap ? 2 * *cap : 64;
    if (!(p = realloc(p, (size_t)*cap * size)))
        fprintf(stderr, "ptx_barriers: out of memory\n"), exit(2);
    return p;
}
#define PUSH(arr, n, cap) (*((arr) = grow((arr), (n), &(cap), sizeof *(arr)), &(arr)[(n)++]))

static const char *path;
static Insn *insns; /* the current function's instructions, labels and registers */
static int *regs, ninsns, cap_insns, nregs, cap_regs, nlabels, cap_labels, rcap, rcount;
static struct {
    char name[128];
    int at;
} *labels;                 /* at: the index of the next instruction */
static char (*rnames)[48]; /* a hash table: a register's index is its slot */
static Fn *fns;            /* the file's functions and calls */
static Site *sites;
static int nfns, cap_fns, nsites, cap_sites, findings, nbarriers, ndivergent;

static _Noreturn void fatal(int line, const char *what, const char *s) {
    fprintf(stderr, "%s:%d: error: %s%s\n", path, line, what, s);
    exit(2);
}

static bool starts(const char *s, const char *p) {
    return strncmp(s, p, strlen(p)) == 0;
}

static int count(const char *s, const char *sub) {
    int n = 0;
    while ((s = strstr(s, sub)))
        s++, n++;
    return n;
}

/* The register's slot, or -1; `add` declares it. */
static int reg_find(const char *name, bool add) {
    if (add && 2 * (rcount + 1) > rcap) {
        int ocap = rcap;
        char (*old)[48] = rnames;
        rcap = rcap ? 2 * rcap : 1024;
        if (!(rnames = calloc((size_t)rcap, sizeof *rnames)))
            fatal(0, "out of memory", "");
        rcount = 0;
        for (int i = 0; i < ocap; i++)
            if (old[i][0])
                reg_find(old[i], true);
        free(old);
    }
    unsigned h = 2166136261u, mask = (unsigned)rcap - 1;
    for (const char *s = name; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    for (unsigned i = h & mask; rcap; i = (i + 1) & mask) {
        if (strcmp(rnames[i], name) == 0)
            return (int)i;
        if (rnames[i][0])
            continue;
        if (!add)
            return -1;
        snprintf(rnames[i], sizeof rnames[i], "%s", name);
        rcount++;
        return (int)i;
    }
    return -1;
}

/* Special registers: per-thread ones taint, the others are the same for the whole CTA.  An
 * unknown one is an error, as guessing "uniform" could hide a hang. */
static const struct {
    const char *prefix;
    bool thread;
} specials[] = {
    {"tid", 1},
    {"laneid", 1},
    {"warpid", 1},
    {"lanemask_", 1},
    {"clock", 1},
    {"globaltimer", 1},
    {"pm", 1},
    {"ntid", 0},
    {"ctaid", 0},
    {"nctaid", 0},
    {"nwarpid", 0},
    {"smid", 0},
    {"nsmid", 0},
    {"gridid", 0},
    {"envreg", 0},
    {"cluster", 0},
    {"nclusterid", 0},
    {"is_explicit_cluster", 0},
    {"dynamic_smem_size", 0},
    {"total_smem_size", 0},
    {"aggr_smem_size", 0},
    {"reserved_smem_offset", 0},
};

/* Ops whose result is per-thread whatever their operands (the opcode's first part). */
static const char *const thread_ops[] = {"atom", "shfl", "vote", "match", "redux", "activemask", "ldmatrix"};

static bool thread_op(const char *op, const char *operands, bool entry) {
    for (size_t i = 0; i < sizeof thread_ops / sizeof *thread_ops; i++)
        if (starts(op, thread_ops[i]) && (op[strlen(thread_ops[i])] == '.' || !op[strlen(thread_ops[i])]))
            return true;
    /* a load is per-thread unless it reads global or const memory (through a uniform
     * address: the operands say) or a kernel's own parameters; shared and local memory hold
     * per-thread data, a generic load may read either, a call's retval0 and a .func's
     * parameters are per-thread */
    if (!starts(op, "ld.") && !starts(op, "ldu."))
        return false;
    if (strstr(op, ".param"))
        return !entry || strstr(operands, "retval");
    return !strstr(op, ".global") && !strstr(op, ".const");
}

static bool ident_char(char c) {
    return c && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_$%", c));
}

/* Appends the registers named in [s, end) to regs[]; a per-thread special sets *thread. */
static int operand_regs(const char *s, const char *end, int line, bool *thread) {
    int n = 0;
    while (s < end) {
        if (!ident_char(*s)) {
            s++;
            continue;
        }
        const char *b = s;
        while (s < end && ident_char(*s))
            s++;
        char tok[128];
        snprintf(tok, sizeof tok, "%.*s", (int)(s - b), b);
        if (*b >= '0' && *b <= '9')
            continue;                                    /* a number: 12, 0f3F800000 */
        while (s < end && *s == '.' && ident_char(s[1])) /* %tid.x: a component */
            for (s++; s < end && ident_char(*s);)
                s++;
        int r = reg_find(tok, false);
        if (r >= 0) {
            PUSH(regs, nregs, cap_regs) = r;
            n++;
        } else if (tok[0] == '%') {
            size_t i = 0, ns = sizeof specials / sizeof *specials;
            while (i < ns && !starts(tok + 1, specials[i].prefix))
                i++;
            if (i == ns)
                fatal(line, "unknown register or special register ", tok);
            *thread |= specials[i].thread;
        } /* else a label, variable or function name: the same for every thread */
    }
    return n;
}

/* .reg .b32 %r<8>;  .reg .pred %p, %q;  inline asm's .reg .b16 th<4>; (no %) */
static void declare(char *s, int line) {
    for (char *t = strtok(s, " \t,"); t; t = strtok(NULL, " \t,")) {
        char *lt = strchr(t, '<'), name[64];
        if (t[0] == '.')
            continue;
        if (lt && atoi(lt + 1) > 1 << 20)
            fatal(line, "too many registers: ", t);
        for (int i = 0, n = lt ? atoi(lt + 1) : 0; i < n; i++)
            snprintf(name, sizeof name, "%.*s%d", (int)(lt - t), t, i), reg_find(name, true);
        if (!lt)
            reg_find(t, true);
    }
}

/* [@[!]%p] opcode operand, operand, ...: the first operand is written unless it is memory
 * or the op writes nothing; every other register is read. */
static void instruction(char *s, int line, bool entry) {
    Insn *I = &PUSH(insns, ninsns, cap_insns);
    memset(I, 0, sizeof *I);
    I->line = line;
    I->guard = -1;
    if (*s == '@') {
        char g[64];
        s += 1 + (s[1] == '!');
        snprintf(g, sizeof g, "%.*s", (int)strcspn(s, " "), s);
        if ((I->guard = reg_find(g, false)) < 0)
            fatal(line, "guard is not a predicate register: ", g);
        s += strcspn(s, " ");
        while (*s == ' ')
            s++;
    }
    size_t k = strcspn(s, " ");
    memcpy(I->op, s, k < sizeof I->op ? k : sizeof I->op - 1);
    s += k;
    const char *op = I->op;
    I->branch = starts(op, "bra");
    I->ret = !strcmp(op, "ret") || starts(op, "ret.") || !strcmp(op, "exit") || !strcmp(op, "trap");
    I->call = starts(op, "call");
    /* bar.sync, bar.arrive, bar.red, barrier.*: the whole CTA takes part (not bar.warp.sync) */
    I->barrier = (starts(op, "bar.") || starts(op, "barrier.")) && !starts(op, "bar.warp.");
    if (starts(op, "brx"))
        fatal(line, "indirect branch not supported: ", op);
    I->thread = thread_op(op, s, entry);
    bool writes = !I->branch && !I->ret && !I->call && (!I->barrier || strstr(op, ".red"));
    I->dst = I->src = nregs;
    for (int nth = 0, depth = 0; *s; nth++) {
        while (*s == ' ')
            s++;
        char *b = s;
        for (; *s && (depth || *s != ','); s++)
            depth += !!strchr("[{(", *s) - !!strchr("]})", *s);
        if ((I->branch || I->call) && !I->target[0] && *b != '(')
            snprintf(I->target, sizeof I->target, "%.*s", (int)strcspn(b, " ,"), b);
        if (nth == 0 && writes && *b != '[')
            I->ndst = operand_regs(b, s, line, &I->thread), I->src = nregs;
        else
            I->nsrc += operand_regs(b, s, line, &I->thread);
        if (*s == ',')
            s++;
    }
    if (I->branch && !I->target[0])
        fatal(line, "branch without a target: ", op);
}

/* Marks the blocks that a branch ending block b reaches before `join` (its immediate
 * post-dominator; -1: none): where only the threads that went that way run. */
static void region(int b, int join, int (*succ)[2], int nb, bool *mark) {
    int *stack = malloc(sizeof *stack * (size_t)(2 * nb + 2)), n = 0; /* each block pushes 2 once */
    memset(mark, 0, (size_t)nb + 1);
    for (int k = 0; k < 2; k++)
        if (succ[b][k] >= 0)
            stack[n++] = succ[b][k];
    while (n) {
        int x = stack[--n];
        if (x == join || x == nb || mark[x])
            continue;
        mark[x] = true;
        for (int k = 0; k < 2; k++)
            if (succ[x][k] >= 0)
                stack[n++] = succ[x][k];
    }
    free(stack);
}

static bool taint_dsts(const Insn *I, bool *t) {
    bool changed = false;
    for (int k = 0; k < I->ndst; k++)
        changed |= !t[regs[I->dst + k]], t[regs[I->dst + k]] = true;
    return changed;
}

/* A barrier that only some threads reach is reported now; a call there waits until the
 * callee is known (it may be defined further on). */
static void finding(const Fn *F, bool entry, const Insn *I, const char *why) {
    char what[512];
    snprintf(what, sizeof what, "%s in %s '%s' (module %d) %s", I->op, entry ? "kernel" : "function", F->name,
             F->module, why);
    if (!I->call) {
        printf("%s:%d: error: %s\n", path, I->line, what);
        findings++;
        return;
    }
    Site *S = &PUSH(sites, nsites, cap_sites);
    *S = (Site){.line = I->line, .module = F->module};
    snprintf(S->callee, sizeof S->callee, "%s", I->target);
    snprintf(S->why, sizeof S->why, "%s", what);
}

/* The function's basic blocks; node nb is the exit (ret, exit, or falling off the end). */
typedef struct Cfg {
    int nb, *start, *block_of, (*succ)[2], *ipdom; /* succ[b][1]: -1 but for a guarded bra/ret */
} Cfg;

static Cfg blocks(void) {
    int n = ninsns;
    Cfg g = {.start = calloc((size_t)n + 2, sizeof(int)), .block_of = calloc((size_t)n + 1, sizeof(int))};
    bool *leader = calloc((size_t)n + 1, 1);
    leader[0] = true;
    for (int i = 0; i < nlabels; i++)
        leader[labels[i].at] = true;
    for (int i = 0; i < n; i++)
        leader[i + 1] |= insns[i].branch || insns[i].ret;
    for (int i = 0; i < n; i++) {
        if (leader[i])
            g.start[g.nb++] = i;
        g.block_of[i] = g.nb - 1;
    }
    g.start[g.nb] = n;
    g.succ = calloc((size_t)g.nb + 1, sizeof *g.succ);
    for (int b = 0; b < g.nb; b++) {
        const Insn *L = &insns[g.start[b + 1] - 1];
        g.succ[b][0] = L->ret ? g.nb : b + 1;
        for (int i = 0; L->branch && i <= nlabels; i++) {
            if (i == nlabels)
                fatal(L->line, "branch to an undefined label ", L->target);
            if (!strcmp(labels[i].name, L->target)) {
                g.succ[b][0] = labels[i].at < n ? g.block_of[labels[i].at] : g.nb;
                break;
            }
        }
        g.succ[b][1] = (L->branch || L->ret) && L->guard >= 0 ? b + 1 : -1;
    }
    free(leader);
    return g;
}

/* Post-dominator sets as bitsets, pd(b) = {b} + the intersection over b's successors; the
 * immediate one is the strict post-dominator with the most post-dominators.  A block that
 * never reaches the exit (an endless loop) has none: -1. */
static void post_dominators(Cfg *g) {
    int nb = g->nb, W = (nb + 64) / 64, (*succ)[2] = g->succ;
    unsigned long long *pd = malloc(sizeof *pd * (size_t)W * ((size_t)nb + 1));
    bool *exits = calloc((size_t)nb + 1, 1);
    for (int b = 0; b <= nb; b++)
        for (int w = 0; w < W; w++)
            pd[b * W + w] = b == nb ? 0 : ~0ull;
    pd[nb * W + nb / 64] |= 1ull << (nb % 64);
    exits[nb] = true;
    for (bool changed = true; changed;) {
        changed = false;
        for (int b = nb - 1; b >= 0; b--) {
            bool ex = exits[succ[b][0]] || (succ[b][1] >= 0 && exits[succ[b][1]]);
            changed |= ex != exits[b];
            exits[b] = ex;
            for (int w = 0; w < W; w++) {
                unsigned long long v = pd[succ[b][0] * W + w] & (succ[b][1] >= 0 ? pd[succ[b][1] * W + w] : ~0ull);
                if (w == b / 64)
                    v |= 1ull << (b % 64);
                changed |= v != pd[b * W + w];
                pd[b * W + w] = v;
            }
        }
    }
    g->ipdom = malloc(sizeof *g->ipdom * ((size_t)nb + 1));
    for (int b = 0; b < nb; b++) {
        int most = -1;
        g->ipdom[b] = -1;
        for (int d = 0; exits[b] && d <= nb; d++) {
            if (d == b || !(pd[b * W + d / 64] >> (d % 64) & 1))
                continue;
            int c = 0;
            for (int w = 0; w < W; w++)
                c += __builtin_popcountll(pd[d * W + w]);
            if (c > most)
                g->ipdom[b] = d, most = c;
        }
    }
    free(pd), free(exits);
}

/* Taint to a fixpoint: a result is per-thread when its op makes it so or an operand or the
 * guard is per-thread; and whatever is written between a thread-dependent branch and its
 * join is per-thread after the join (the threads came by different paths).  Marks div[b]
 * where block b ends in a thread-dependent branch. */
static void taint(const Cfg *g, bool *t, bool *div, bool *mark) {
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < ninsns; i++) {
            const Insn *I = &insns[i];
            bool in = I->thread || (I->guard >= 0 && t[I->guard]);
            for (int k = 0; k < I->nsrc && !in; k++)
                in = t[regs[I->src + k]];
            if (in)
                changed |= taint_dsts(I, t);
        }
        for (int b = 0; b < g->nb; b++) {
            if (div[b] || g->succ[b][1] < 0 || !t[insns[g->start[b + 1] - 1].guard])
                continue;
            div[b] = changed = true;
            ndivergent++;
            region(b, g->ipdom[b], g->succ, g->nb, mark);
            for (int i = 0; i < ninsns; i++)
                if (mark[g->block_of[i]])
                    taint_dsts(&insns[i], t);
        }
    }
}

static void analyze(Fn *F, bool entry) {
    Cfg g = blocks();
    post_dominators(&g);
    bool *t = calloc((size_t)rcap + 1, 1), *div = calloc((size_t)g.nb + 1, 1), *mark = calloc((size_t)g.nb + 1, 1);
    bool *done = calloc((size_t)ninsns + 1, 1);
    taint(&g, t, div, mark);
    char why[256];
    for (int i = 0; i < ninsns; i++) {
        const Insn *I = &insns[i];
        nbarriers += I->barrier;
        F->has_barrier |= I->barrier;
        if (I->call)
            snprintf(PUSH(F->callees, F->ncallees, F->cap_callees), sizeof *F->callees, "%s", I->target);
        if (I->guard < 0 || !t[I->guard] || !(I->barrier || I->call))
            continue;
        snprintf(why, sizeof why, "is predicated on %s, which depends on the thread", rnames[I->guard]);
        done[i] = true;
        finding(F, entry, I, why);
    }
    for (int b = 0; b < g.nb; b++) {
        if (!div[b])
            continue;
        const Insn *L = &insns[g.start[b + 1] - 1];
        char join[64] = "never";
        if (g.ipdom[b] == g.nb)
            snprintf(join, sizeof join, "only at the exit");
        else if (g.ipdom[b] >= 0)
            snprintf(join, sizeof join, "at line %d", insns[g.start[g.ipdom[b]]].line);
        snprintf(why, sizeof why,
                 "is under the thread-dependent branch at line %d (%s on %s); the threads meet again %s", L->line,
                 L->op, rnames[L->guard], join);
        region(b, g.ipdom[b], g.succ, g.nb, mark);
        for (int i = 0; i < ninsns; i++)
            if (mark[g.block_of[i]] && !done[i] && (insns[i].barrier || insns[i].call))
                done[i] = true, finding(F, entry, &insns[i], why);
    }
    free(g.start), free(g.block_of), free(g.succ), free(g.ipdom), free(t), free(div), free(mark), free(done);
}

static bool calls_barrier(const Fn *f, int depth) {
    if (f->has_barrier)
        return true;
    for (int c = 0; c < f->ncallees && depth < 64; c++)
        for (int g = 0; g < nfns; g++)
            if (fns[g].module == f->module && !strcmp(fns[g].name, f->callees[c]) && calls_barrier(&fns[g], depth + 1))
                return true;
    return false;
}

/* A statement inside a function body: a directive, a declaration or an instruction. */
static void statement(char *s, int line, bool entry) {
    for (size_t l = strlen(s); l && s[l - 1] == ' ';)
        s[--l] = 0;
    if (starts(s, ".reg "))
        declare(s + 4, line);
    else if (*s && *s != '.')
        instruction(s, line, entry);
}

/* Splits the text into statements (';'), labels ("name:") and braces: at depth 0 a '{'
 * after ".entry NAME(...)" or ".func (...) NAME(...)" opens a body (other braces there are
 * initializers); inside, braces are scopes (inline asm, call sequences). */
static void check_file(void) {
    FILE *f = fopen(path, "rb");
    if (!f)
        fatal(0, "cannot read the file", "");
    char *text = NULL;
    int len = 0, cap = 0;
    for (int c; (c = fgetc(f)) != EOF;)
        if ((PUSH(text, len, cap) = (char)c) == 0 || len > 1 << 28)
            fatal(1, "a NUL byte, or over 256 MiB: not PTX", "");
    fclose(f);
    PUSH(text, len, cap) = 0;
    char *buf = calloc((size_t)len + 1, 1);
    if (!buf)
        fatal(0, "out of memory", "");
    int line = 1, bline = 1, depth = 0, module = 0, blen = 0;
    bool entry = false;
    for (char *c = text; *c; c++) {
        if (c[0] == '/' && c[1] == '/')
            c += strcspn(c, "\n") - 1;
        else if (c[0] == '/' && c[1] == '*') {
            char *e = strstr(c + 2, "*/");
            if (!e)
                fatal(line, "unterminated comment", "");
            line += count(c, "\n") - count(e, "\n");
            c = e + 1;
        } else if (*c == ';' || ((*c == '{' || *c == '}') && depth) || (*c == '\n' && depth && starts(buf, ".loc"))) {
            if (depth)
                statement(buf, bline, entry); /* .loc has no ';' */
            else
                module += count(buf, ".version");
            buf[blen = 0] = 0;
            line += *c == '\n';
            depth += (*c == '{') - (*c == '}');
            if (*c == '}' && !depth) {
                analyze(&fns[nfns - 1], entry);
                ninsns = nlabels = nregs = rcount = 0;
                memset(rnames, 0, sizeof *rnames * (size_t)rcap);
            }
        } else if (*c == '{' && (strstr(buf, ".entry") || strstr(buf, ".func"))) {
            module += count(buf, ".version");
            entry = strstr(buf, ".entry");
            char *p = entry ? strstr(buf, ".entry") + 6 : strstr(buf, ".func") + 5;
            p += strspn(p, " ");
            if (*p == '(' && strchr(p, ')'))
                p = strchr(p, ')') + 1; /* .func's return value */
            p += strspn(p, " ");
            Fn *F = &PUSH(fns, nfns, cap_fns);
            *F = (Fn){.module = module};
            snprintf(F->name, sizeof F->name, "%.*s", (int)strcspn(p, " ("), p);
            buf[blen = 0] = 0;
            depth = 1;
        } else if (*c == ':' && depth && blen &&
                   strspn(buf, "$_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == (size_t)blen) {
            snprintf(PUSH(labels, nlabels, cap_labels).name, sizeof labels->name, "%s", buf);
            labels[nlabels - 1].at = ninsns;
            buf[blen = 0] = 0;
        } else {
            bool space = strchr(" \t\r\n", *c);
            line += *c == '\n';
            if (space && (!blen || buf[blen - 1] == ' '))
                continue;
            if (!blen)
                bline = line;
            buf[blen++] = space ? ' ' : *c;
            buf[blen] = 0;
        }
    }
    if (depth)
        fatal(line, "unterminated function body", "");
    if (!nfns)
        fatal(line, "no function in the file (is it PTX?)", "");
    for (int s = 0; s < nsites; s++)
        for (int g = 0; g < nfns; g++)
            if (fns[g].module == sites[s].module && !strcmp(fns[g].name, sites[s].callee) &&
                calls_barrier(&fns[g], 0)) {
                printf("%s:%d: error: %s: '%s' has a barrier\n", path, sites[s].line, sites[s].why, sites[s].callee);
                findings++;
                break;
            }
    free(text), free(buf);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: ptx_barriers FILE.ptx...\n");
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        int before = findings;
        path = argv[a];
        check_file();
        printf("%s: %d functions, %d barriers, %d thread-dependent branches: %d findings\n", path, nfns, nbarriers,
               ndivergent, findings - before);
        for (int f = 0; f < nfns; f++)
            free(fns[f].callees);
        nfns = nsites = nbarriers = ndivergent = 0;
    }
    free(insns), free(regs), free(rnames), free(labels), free(fns), free(sites);
    return findings ? 1 : 0;
}
