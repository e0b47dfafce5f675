/* The target table's queries (target.def holds the table). */
#include "target.h"

#include <stddef.h>
#include <string.h>

static const TirTarget targets[] = {
#define TARGET(name, cc, ptx, smem, specific, features) {name, cc, ptx, smem, specific, features},
#include "target.def"
#undef TARGET
};
enum { NTARGETS = sizeof targets / sizeof targets[0] };

static const char target_names[] =
#define TARGET(name, cc, ptx, smem, specific, features) " " name
#include "target.def"
#undef TARGET
    ;

const TirTarget *tir_target_find(const char *name) {
    for (int i = 0; name && i < NTARGETS; i++)
        if (!strcmp(targets[i].name, name))
            return &targets[i];
    return NULL;
}

const TirTarget *tir_target_default(void) {
    return tir_target_find(TIR_TARGET_DEFAULT);
}

const TirTarget *tir_targets(int *n) {
    *n = NTARGETS;
    return targets;
}

const char *tir_target_names(void) {
    return target_names + 1; /* past the first separator */
}

bool tir_target_has(const TirTarget *t, TirTargetFeature f) {
    return t && (t->features & (unsigned)f) == (unsigned)f;
}

int tir_target_smem_optin(const char *arch) {
    const TirTarget *t = tir_target_find(arch);
    return (t ? t : tir_target_find("sm_80"))->smem_optin;
}

const TirTarget *tir_target_for_device(int major, int minor) {
    int cc = major * 10 + minor;
    const TirTarget *exact = NULL, *major_lowest = NULL, *newest_plain = NULL;
    for (int i = 0; i < NTARGETS; i++) {
        const TirTarget *t = &targets[i];
        if (t->cc == cc && (!exact || t->arch_specific))
            exact = t;
        if (!t->arch_specific && t->cc / 10 == major && t->cc <= cc && (!major_lowest || t->cc < major_lowest->cc))
            major_lowest = t;
        if (!t->arch_specific && (!newest_plain || t->cc > newest_plain->cc))
            newest_plain = t;
    }
    if (exact)
        return exact;
    if (major_lowest)
        return major_lowest;
    if (newest_plain && cc > newest_plain->cc)
        return newest_plain;
    return NULL;
}
