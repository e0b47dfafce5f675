/* --emit=header: a C header that embeds a bundle (and the source, for the interpreter
 * device) and declares one typed launch function per kernel.  The layout of the
 * generated file and the rules for its functions are in docs/embedding.md. */
#include "bundle.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Growable text with printf. */
typedef struct Out {
    char *s;
    size_t len, cap;
    bool failed;
} Out;

static void out_add(Out *o, const char *s, size_t n) {
    if (o->failed)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *grown = realloc(o->s, cap);
        if (!grown) {
            o->failed = true;
            return;
        }
        o->s = grown;
        o->cap = cap;
    }
    memcpy(o->s + o->len, s, n);
    o->len += n;
    o->s[o->len] = 0;
}

static void outf(Out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(Out *o, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->failed = true;
        return;
    }
    if ((size_t)n < sizeof buf) {
        out_add(o, buf, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        o->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    out_add(o, big, (size_t)n);
    free(big);
}

static void out_str(Out *o, const char *s) {
    out_add(o, s, strlen(s));
}

/* Bytes as a C initializer, 20 a line. */
static void out_bytes(Out *o, const unsigned char *b, size_t n) {
    static const char hex[] = "0123456789abcdef";
    char line[20 * 5 + 8];
    for (size_t i = 0; i < n; i += 20) {
        size_t k = 0;
        line[k++] = ' ';
        for (size_t j = i; j < n && j < i + 20; j++) {
            line[k++] = '0';
            line[k++] = 'x';
            line[k++] = hex[b[j] >> 4];
            line[k++] = hex[b[j] & 15];
            line[k++] = ',';
        }
        line[k++] = '\n';
        out_add(o, line, k);
    }
}

/* ---- C spellings ------------------------------------------------------------------ */
/* Element types of pointer parameters, and scalar parameter types, by tile_scalar.
 * Narrow floats have no C type: their pointers are the tilec_* storage typedefs and
 * their scalar arguments are passed as float (the runtime rounds). */
static const struct {
    const char *ptr_elem, *scalar;
} c_types[TIR_NSCALARS] = {
    [TIR_I1] = {"bool", "bool"},
    [TIR_I8] = {"int8_t", "int8_t"},
    [TIR_I16] = {"int16_t", "int16_t"},
    [TIR_I32] = {"int32_t", "int32_t"},
    [TIR_I64] = {"int64_t", "int64_t"},
    [TIR_U8] = {"uint8_t", "uint8_t"},
    [TIR_U16] = {"uint16_t", "uint16_t"},
    [TIR_U32] = {"uint32_t", "uint32_t"},
    [TIR_U64] = {"uint64_t", "uint64_t"},
    [TIR_F16] = {"tilec_f16", "float"},
    [TIR_BF16] = {"tilec_bf16", "float"},
    [TIR_F32] = {"float", "float"},
    [TIR_F64] = {"double", "double"},
    [TIR_F8E4M3] = {"tilec_f8e4m3", "float"},
    [TIR_F8E5M2] = {"tilec_f8e5m2", "float"},
};

/* Names a parameter cannot have in C or C++, or that the generated code uses itself;
 * such a parameter gets a trailing underscore. */
static const char *const reserved[] = {
    "auto",     "bool",      "break",   "case",     "char",     "class",     "const",    "continue",
    "default",  "delete",    "do",      "double",   "else",     "enum",      "explicit", "extern",
    "false",    "float",     "for",     "friend",   "goto",     "if",        "inline",   "int",
    "long",     "namespace", "new",     "operator", "private",  "protected", "public",   "register",
    "restrict", "return",    "short",   "signed",   "sizeof",   "static",    "struct",   "switch",
    "template", "this",      "throw",   "true",     "try",      "typedef",   "typename", "union",
    "unsigned", "using",     "virtual", "void",     "volatile", "while",     "stream",   "grid",
};

static void param_name(const char *name, char *buf, size_t n) {
    bool clash = !strncmp(name, "tilec_", 6);
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0] && !clash; i++)
        clash = !strcmp(name, reserved[i]);
    snprintf(buf, n, "%s%s", name, clash ? "_" : "");
}

/* The file's stem as a C identifier ("vector_add" for examples/vector_add.tile). */
static void file_stem(const char *path, char *buf, size_t n) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strcspn(base, ".");
    if (len == 0)
        len = strlen(base);
    size_t k = 0;
    if (len && isdigit((unsigned char)base[0]) && k + 1 < n)
        buf[k++] = '_';
    for (size_t i = 0; i < len && k + 1 < n; i++)
        buf[k++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
    if (k == 0 && n > 7)
        k = (size_t)snprintf(buf, n, "kernels");
    buf[k] = 0;
}

static void upper(const char *s, char *buf, size_t n) {
    size_t k = 0;
    for (; s[k] && k + 1 < n; k++)
        buf[k] = (char)toupper((unsigned char)s[k]);
    buf[k] = 0;
}

/* "float *x, float *y, float *out, int32_t n" (const params included, in order). */
static void out_params(Out *o, const AstKernel *kn) {
    for (int i = 0; i < kn->nparams; i++) {
        const AstParam *ap = &kn->params[i];
        int s = driver_param_scalar(ap);
        char nm[160];
        param_name(ap->name, nm, sizeof nm);
        if (s < 0)
            s = TIR_I32;
        if (ap->is_ptr)
            outf(o, ", %s *%s", c_types[s].ptr_elem, nm);
        else
            outf(o, ", %s %s", c_types[s].scalar, nm);
    }
}

/* ---- the declarations ------------------------------------------------------------- */
static void out_doc(Out *o, const tile_program *p, const char *stem, const char *STEM, int first, int end) {
    const tile_ctx *c = p->ctx;
    outf(o, "/* Generated by tilec %s from %s (--emit=header, --arch=%s).  Do not edit.\n", TILEC_VERSION_STRING,
         p->file->path, c->arch);
    out_str(o, " *\n * Kernels:\n");
    for (int k = first; k < end; k++) {
        const AstKernel *kn = &p->file->kernels[k];
        outf(o, " *   %s(", kn->name);
        for (int i = 0; i < kn->nparams; i++) {
            const AstParam *ap = &kn->params[i];
            outf(o, "%s%s%s: %s%s", i ? ", " : "", ap->is_const ? "const " : "", ap->name, ap->is_ptr ? "*" : "",
                 ap->type_name ? ap->type_name : "?");
        }
        outf(o, ")%s\n", kn->ngrid ? "" : "  (no grid clause: use _launch_grid)");
    }
    for (int i = 0; i < c->ndefines; i++) {
        const DriverDefine *d = &c->defines[i];
        outf(o, "%s%s=", i ? " " : " * Defines at emit time: ", d->name);
        for (int j = 0; j < d->nvals; j++)
            if (d->is_float[j])
                outf(o, "%s%g", j ? "," : "", d->fvals[j]);
            else
                outf(o, "%s%lld", j ? "," : "", (long long)d->ivals[j]);
        if (i + 1 == c->ndefines)
            out_str(o, "\n");
    }
    outf(o,
         " *\n"
         " * Each launch is asynchronous on `stream` (a CUstream; NULL: the default stream) and\n"
         " * returns TILE_RT_OK or the runtime's error; %s_error() then says why.\n"
         " * Pointers are device addresses on the cuda device and host buffers on the interp\n"
         " * device: allocate them with tilec_alloc (tile_rt_alloc that remembers sizes, which\n"
         " * the interpreter needs to check every access).  A `const` parameter is an argument too: the\n"
         " * embedded variants are those of the values given with -D at emit time, and another\n"
         " * value fails with TILE_RT_ERR_NO_VARIANT.  NAME_launch uses the kernel's grid\n"
         " * clause; NAME_launch_grid takes the grid.\n"
         " *\n"
         " * The device opens on the first launch (once, thread-safe): $TILE_DEVICE=cuda (the\n"
         " * default) or interp; or call %s_use_device(rt) first to share a device opened\n"
         " * with tile_rt_open.  The cuda device loads the embedded bundle; the interpreter\n"
         " * runs the embedded source.\n"
         " *\n"
         " * One translation unit defines %s_IMPLEMENTATION before including this header\n"
         " * (tilec_add_kernels does it); the others include it plainly. */\n",
         stem, stem, STEM);
}

static void out_declarations(Out *o, const tile_program *p, const char *stem, int first, int end) {
    outf(o,
         "#include <stdbool.h>\n#include <stdint.h>\n#include <tile/runtime.h>\n\n"
         "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
         "#ifndef TILEC_STORAGE_TYPES\n#define TILEC_STORAGE_TYPES\n"
         "/* Storage of the float formats C lacks (raw bits, as tile_store_elements writes). */\n"
         "typedef uint16_t tilec_f16;\ntypedef uint16_t tilec_bf16;\n"
         "typedef uint8_t tilec_f8e4m3;\ntypedef uint8_t tilec_f8e5m2;\n\n"
         "/* tile_rt_alloc and tile_rt_free that also remember each buffer's size, shared by\n"
         " * every generated header of the program.  The interpreter device checks every\n"
         " * access against its buffer, so the typed launches there take pointer arguments\n"
         " * from these (a pointer into such a buffer is sized to the buffer's end); on a GPU\n"
         " * any device pointer does. */\n"
         "tile_rt_status tilec_alloc(tile_rt *rt, size_t bytes, void **out);\n"
         "tile_rt_status tilec_free(tile_rt *rt, void *p);\n"
         "size_t tilec_buffer_bytes(const void *p); /* 0: not from tilec_alloc */\n#endif\n\n"
         "/* Use an open device for every kernel of this header; before the first launch. */\n"
         "tile_rt_status %s_use_device(tile_rt *rt);\n"
         "/* The device (opening it if no launch has yet), e.g. for tile_rt_alloc. */\n"
         "tile_rt_status %s_device(tile_rt **out);\n"
         "/* Why the last failure of this header's functions on this thread happened. */\n"
         "const char *%s_error(void);\n\n",
         stem, stem, stem);
    for (int k = first; k < end; k++) {
        const AstKernel *kn = &p->file->kernels[k];
        if (kn->ngrid) {
            outf(o, "tile_rt_status %s_launch(void *stream", kn->name);
            out_params(o, kn);
            out_str(o, ");\n");
        }
        outf(o, "tile_rt_status %s_launch_grid(void *stream", kn->name);
        out_params(o, kn);
        out_str(o, ", const int64_t grid[3]);\n");
    }
    out_str(o, "\n#ifdef __cplusplus\n}\n#endif\n");
}

/* ---- the implementation ------------------------------------------------------------ */
#define BUFFERS_IMPL                                                                                     \
    "#ifndef TILEC_BUFFERS_IMPLEMENTED\n"                                                                \
    "#define TILEC_BUFFERS_IMPLEMENTED\n"                                                                \
    "typedef struct tilec_buffer_ { uintptr_t base; size_t bytes; } tilec_buffer_;\n"                    \
    "__attribute__((weak)) pthread_mutex_t tilec_buffers_lock_ = PTHREAD_MUTEX_INITIALIZER;\n"           \
    "__attribute__((weak)) tilec_buffer_ *tilec_buffers_;\n"                                             \
    "__attribute__((weak)) size_t tilec_nbuffers_, tilec_capbuffers_;\n\n"                               \
    "__attribute__((weak)) tile_rt_status tilec_alloc(tile_rt *rt, size_t bytes, void **out)\n{\n"       \
    "    tile_rt_status s = tile_rt_alloc(rt, bytes, out);\n"                                            \
    "    if (s != TILE_RT_OK)\n"                                                                         \
    "        return s;\n"                                                                                \
    "    pthread_mutex_lock(&tilec_buffers_lock_);\n"                                                    \
    "    if (tilec_nbuffers_ == tilec_capbuffers_) {\n"                                                  \
    "        size_t cap = tilec_capbuffers_ ? 2 * tilec_capbuffers_ : 64;\n"                             \
    "        tilec_buffer_ *grown = (tilec_buffer_ *)realloc(tilec_buffers_, cap * sizeof *grown);\n"    \
    "        if (grown) {\n"                                                                             \
    "            tilec_buffers_ = grown;\n"                                                              \
    "            tilec_capbuffers_ = cap;\n"                                                             \
    "        }\n"                                                                                        \
    "    }\n"                                                                                            \
    "    if (tilec_nbuffers_ < tilec_capbuffers_) {\n"                                                   \
    "        tilec_buffers_[tilec_nbuffers_].base = (uintptr_t)*out;\n"                                  \
    "        tilec_buffers_[tilec_nbuffers_++].bytes = bytes;\n"                                         \
    "    }\n"                                                                                            \
    "    pthread_mutex_unlock(&tilec_buffers_lock_);\n"                                                  \
    "    return TILE_RT_OK;\n"                                                                           \
    "}\n\n"                                                                                              \
    "__attribute__((weak)) tile_rt_status tilec_free(tile_rt *rt, void *p)\n{\n"                         \
    "    pthread_mutex_lock(&tilec_buffers_lock_);\n"                                                    \
    "    for (size_t i = 0; i < tilec_nbuffers_; i++)\n"                                                 \
    "        if (tilec_buffers_[i].base == (uintptr_t)p) {\n"                                            \
    "            tilec_buffers_[i] = tilec_buffers_[--tilec_nbuffers_];\n"                               \
    "            break;\n"                                                                               \
    "        }\n"                                                                                        \
    "    pthread_mutex_unlock(&tilec_buffers_lock_);\n"                                                  \
    "    return tile_rt_free(rt, p);\n"                                                                  \
    "}\n\n"                                                                                              \
    "__attribute__((weak)) size_t tilec_buffer_bytes(const void *p)\n{\n"                                \
    "    uintptr_t a = (uintptr_t)p;\n"                                                                  \
    "    size_t n = 0;\n"                                                                                \
    "    pthread_mutex_lock(&tilec_buffers_lock_);\n"                                                    \
    "    for (size_t i = 0; i < tilec_nbuffers_; i++)\n"                                                 \
    "        if (a >= tilec_buffers_[i].base && a - tilec_buffers_[i].base < tilec_buffers_[i].bytes)\n" \
    "            n = tilec_buffers_[i].bytes - (a - tilec_buffers_[i].base);\n"                          \
    "    pthread_mutex_unlock(&tilec_buffers_lock_);\n"                                                  \
    "    return n;\n"                                                                                    \
    "}\n"                                                                                                \
    "#endif\n\n"

static void out_implementation(Out *o, const tile_program *p, const char *stem, int first, int end,
                               const unsigned char *bundle, size_t bundle_len) {
    const AstFile *f = p->file;
    const char *base = strrchr(f->path, '/');
    base = base ? base + 1 : f->path;
    int nk = end - first;
    outf(o, "#include <pthread.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
    /* The buffer registry: weak, so that every header's copy resolves to one. */
    out_add(o, BUFFERS_IMPL, strlen(BUFFERS_IMPL));
    outf(o, "static const unsigned char %s_bundle_[%zu] = {\n", stem, bundle_len);
    out_bytes(o, bundle, bundle_len);
    out_str(o, "};\n");
    outf(o, "static const unsigned char %s_source_[%zu] = {\n", stem, f->len ? f->len : 1);
    out_bytes(o, (const unsigned char *)f->src, f->len ? f->len : 1);
    out_str(o, "};\n");
    outf(o, "static const char *const %s_names_[%d] = {", stem, nk);
    for (int k = first; k < end; k++)
        outf(o, "%s\"%s\"", k > first ? ", " : "", f->kernels[k].name);
    out_str(o, "};\n\n");
    outf(o,
         "static pthread_once_t %1$s_once_ = PTHREAD_ONCE_INIT;\n"
         "static pthread_mutex_t %1$s_lock_ = PTHREAD_MUTEX_INITIALIZER;\n"
         "static tile_rt *%1$s_given_, *%1$s_rt_;\n"
         "static tile_rt_module *%1$s_module_;\n"
         "static tile_rt_kernel *%1$s_kernels_[%2$d];\n"
         "static tile_rt_status %1$s_status_ = TILE_RT_ERR_INVALID;\n"
         "static char %1$s_init_error_[1024];\n"
         "static __thread const char *%1$s_thread_error_;\n\n",
         stem, nk);
    /* The once routine: open (or adopt) the device, load the module, find every kernel. */
    outf(o,
         "static void %1$s_init_(void)\n{\n"
         "    tile_rt *rt = %1$s_given_;\n"
         "    tile_rt_status s;\n"
         "    if (!rt) {\n"
         "        const char *dev = getenv(\"TILE_DEVICE\");\n"
         "        tile_rt_device_kind kind = TILE_RT_CUDA;\n"
         "        if (dev && !strcmp(dev, \"interp\")) {\n"
         "            kind = TILE_RT_INTERP;\n"
         "        } else if (dev && *dev && strcmp(dev, \"cuda\")) {\n"
         "            snprintf(%1$s_init_error_, sizeof %1$s_init_error_,\n"
         "                     \"TILE_DEVICE=%%s: expected cuda or interp\", dev);\n"
         "            %1$s_status_ = TILE_RT_ERR_INVALID;\n"
         "            return;\n"
         "        }\n"
         "        if ((s = tile_rt_open(kind, NULL, &rt)) != TILE_RT_OK) {\n"
         "            /* no GPU and nothing chosen: say how to run on the CPU instead */\n"
         "            snprintf(%1$s_init_error_, sizeof %1$s_init_error_, \"%2$s: opening the %%s \"\n"
         "                     \"device: %%s%%s\", kind == TILE_RT_CUDA ? \"cuda\" : \"interp\",\n"
         "                     tile_rt_open_error(), (!dev || !*dev) && s == TILE_RT_ERR_NO_DRIVER\n"
         "                     ? \" (set TILE_DEVICE=interp to run on the CPU interpreter, or TILE_INTERP_FALLBACK=1 "
         "to run there when no GPU opens)\" : \"\");\n"
         "            %1$s_status_ = s;\n"
         "            return;\n"
         "        }\n"
         "    }\n"
         "    /* The interpreter runs tile IR, which only the source gives; a GPU runs the\n"
         "     * bundle's code. */\n"
         "    if (!strcmp(tile_rt_device_name(rt), \"interpreter\"))\n"
         "        s = tile_rt_load_source(rt, \"%2$s\", (const char *)%1$s_source_,\n"
         "                                sizeof %1$s_source_, &%1$s_module_);\n"
         "    else\n"
         "        s = tile_rt_load_bundle(rt, %1$s_bundle_, sizeof %1$s_bundle_, &%1$s_module_);\n"
         "    for (int i = 0; s == TILE_RT_OK && i < %3$d; i++)\n"
         "        s = tile_rt_get_kernel(%1$s_module_, %1$s_names_[i], &%1$s_kernels_[i]);\n"
         "    if (s != TILE_RT_OK) {\n"
         "        snprintf(%1$s_init_error_, sizeof %1$s_init_error_, \"%2$s: %%s\",\n"
         "                 tile_rt_last_error(rt));\n"
         "        if (!%1$s_given_)\n"
         "            tile_rt_close(rt);\n"
         "        %1$s_status_ = s;\n"
         "        return;\n"
         "    }\n"
         "    %1$s_rt_ = rt;\n"
         "    %1$s_status_ = TILE_RT_OK;\n"
         "}\n\n",
         stem, base, nk);
    outf(o,
         "static tile_rt_status %1$s_ready_(void)\n{\n"
         "    pthread_once(&%1$s_once_, %1$s_init_);\n"
         "    if (%1$s_status_ != TILE_RT_OK)\n"
         "        %1$s_thread_error_ = %1$s_init_error_;\n"
         "    return %1$s_status_;\n"
         "}\n\n"
         "tile_rt_status %1$s_use_device(tile_rt *rt)\n{\n"
         "    if (!rt)\n"
         "        return TILE_RT_ERR_INVALID;\n"
         "    pthread_mutex_lock(&%1$s_lock_);\n"
         "    if (!%1$s_given_)\n"
         "        %1$s_given_ = rt;\n"
         "    pthread_mutex_unlock(&%1$s_lock_);\n"
         "    tile_rt_status s = %1$s_ready_();\n"
         "    if (s == TILE_RT_OK && %1$s_rt_ != rt) {\n"
         "        %1$s_thread_error_ = \"%1$s_use_device: the kernels already run on another device\";\n"
         "        return TILE_RT_ERR_INVALID;\n"
         "    }\n"
         "    return s;\n"
         "}\n\n"
         "tile_rt_status %1$s_device(tile_rt **out)\n{\n"
         "    tile_rt_status s = %1$s_ready_();\n"
         "    if (out)\n"
         "        *out = s == TILE_RT_OK ? %1$s_rt_ : NULL;\n"
         "    return s;\n"
         "}\n\n"
         "const char *%1$s_error(void)\n{\n"
         "    return %1$s_thread_error_ ? %1$s_thread_error_ : \"\";\n"
         "}\n\n",
         stem);
    for (int k = first; k < end; k++) {
        const AstKernel *kn = &f->kernels[k];
        int nrt = 0, nconst = 0;
        for (int i = 0; i < kn->nparams; i++)
            *(kn->params[i].is_const ? &nconst : &nrt) += 1;
        /* The grid version does the work; the clause version passes NULL. */
        outf(o, "tile_rt_status %s_launch_grid(void *stream", kn->name);
        out_params(o, kn);
        outf(o,
             ", const int64_t grid[3])\n{\n"
             "    tile_rt_status s = %1$s_ready_();\n"
             "    if (s != TILE_RT_OK)\n"
             "        return s;\n"
             "    tile_rt_kernel *k = %1$s_kernels_[%2$d];\n"
             "    tile_rt_arg a[%3$d];\n"
             "    memset(a, 0, sizeof a);\n",
             stem, k - first, nrt ? nrt : 1);
        int j = 0;
        for (int i = 0; i < kn->nparams; i++) {
            const AstParam *ap = &kn->params[i];
            if (ap->is_const)
                continue;
            int sc = driver_param_scalar(ap);
            char nm[160];
            param_name(ap->name, nm, sizeof nm);
            if (ap->is_ptr)
                outf(o,
                     "    a[%d].kind = TILE_RT_ARG_PTR;\n    a[%d].buf.ptr = (void *)%s;\n"
                     "    a[%d].buf.bytes = tilec_buffer_bytes(%s);\n",
                     j, j, nm, j, nm);
            else if (sc >= 0 && tir_scalar_is_float((TirScalar)sc))
                outf(o, "    a[%d].kind = TILE_RT_ARG_F64;\n    a[%d].f64 = (double)%s;\n", j, j, nm);
            else
                outf(o, "    a[%d].kind = TILE_RT_ARG_I64;\n    a[%d].i64 = (int64_t)%s;\n", j, j, nm);
            j++;
        }
        if (nconst) {
            /* set_const then launch must not interleave with another thread's pair. */
            outf(o, "    pthread_mutex_lock(&%s_lock_);\n", stem);
            for (int i = 0; i < kn->nparams; i++) {
                const AstParam *ap = &kn->params[i];
                if (!ap->is_const)
                    continue;
                char nm[160];
                param_name(ap->name, nm, sizeof nm);
                outf(o,
                     "    if (s == TILE_RT_OK)\n"
                     "        s = tile_rt_set_const(k, \"%s\", (int64_t)%s, (double)%s);\n",
                     ap->name, nm, nm);
            }
            outf(o,
                 "    if (s == TILE_RT_OK)\n"
                 "        s = tile_rt_launch(k, a, %d, stream, grid);\n"
                 "    pthread_mutex_unlock(&%s_lock_);\n",
                 nrt, stem);
        } else {
            outf(o, "    s = tile_rt_launch(k, a, %d, stream, grid);\n", nrt);
        }
        outf(o,
             "    if (s != TILE_RT_OK)\n"
             "        %s_thread_error_ = tile_rt_last_error(%s_rt_);\n"
             "    return s;\n}\n\n",
             stem, stem);
        if (kn->ngrid) {
            outf(o, "tile_rt_status %s_launch(void *stream", kn->name);
            out_params(o, kn);
            outf(o, ")\n{\n    return %s_launch_grid(stream", kn->name);
            for (int i = 0; i < kn->nparams; i++) {
                char nm[160];
                param_name(kn->params[i].name, nm, sizeof nm);
                outf(o, ", %s", nm);
            }
            out_str(o, ", NULL);\n}\n\n");
        }
    }
}

tile_status driver_emit_header(tile_program *p, int k, bool all, char **out, size_t *len) {
    *out = NULL;
    *len = 0;
    char *bundle;
    size_t bundle_len;
    tile_status s = driver_emit_bundle(p, k, all, true, &bundle, &bundle_len);
    if (s != TILE_OK)
        return s;
    char stem[128], STEM[128];
    file_stem(p->file->path, stem, sizeof stem);
    upper(stem, STEM, sizeof STEM);
    int first = k < 0 ? 0 : k, end = k < 0 ? p->file->nkernels : k + 1;

    Out o = {0};
    out_doc(&o, p, stem, STEM, first, end);
    outf(&o, "#ifndef TILEC_%s_H\n#define TILEC_%s_H\n\n", STEM, STEM);
    out_declarations(&o, p, stem, first, end);
    outf(&o, "#endif /* TILEC_%s_H */\n\n", STEM);
    outf(&o,
         "#if defined(%s_IMPLEMENTATION) && !defined(TILEC_%s_IMPLEMENTED)\n"
         "#define TILEC_%s_IMPLEMENTED\n",
         STEM, STEM, STEM);
    out_implementation(&o, p, stem, first, end, (const unsigned char *)bundle, bundle_len);
    outf(&o, "#endif /* %s_IMPLEMENTATION */\n", STEM);
    free(bundle);
    if (o.failed) {
        free(o.s);
        driver_error(p->ctx, "out of memory writing the header");
        return TILE_ERR_INVALID;
    }
    *out = o.s;
    *len = o.len;
    return TILE_OK;
}
