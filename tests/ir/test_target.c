/* Unit tests of the target table (ir/target.def, ir/target.h): lookups, the documented
 * per-arch facts that code relies on, and the device -> arch rule the runtime uses. */
#include "target.h"

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static const char *for_device(int major, int minor) {
    const TirTarget *t = tir_target_for_device(major, minor);
    return t ? t->name : "";
}

static void test_lookup(void) {
    CHECK(tir_target_find(NULL) == NULL);
    CHECK(tir_target_find("sm_75") == NULL);
    CHECK(tir_target_find("sm_90a ") == NULL);
    CHECK(tir_target_default() && !strcmp(tir_target_default()->name, TIR_TARGET_DEFAULT));
    CHECK(!strcmp(tir_target_names(), "sm_80 sm_86 sm_89 sm_90 sm_90a"));
    int n = 0;
    const TirTarget *all = tir_targets(&n);
    CHECK(n == 5);
    for (int i = 0; i < n; i++) {
        CHECK(tir_target_find(all[i].name) == &all[i]);
        CHECK(all[i].cc >= 80 && all[i].ptx >= 70);
        /* every arch has what the backend emits everywhere */
        CHECK(tir_target_has(&all[i], TIR_TARGET_CP_ASYNC | TIR_TARGET_LDMATRIX));
        /* the table is in capability order (tir_target_names, the tests' arch list) */
        CHECK(i == 0 || all[i - 1].cc <= all[i].cc);
    }
}

static void test_facts(void) {
    const TirTarget *a80 = tir_target_find("sm_80"), *a89 = tir_target_find("sm_89"), *a90 = tir_target_find("sm_90"),
                    *a90a = tir_target_find("sm_90a");
    CHECK(a80 && a80->cc == 80 && a80->ptx == 70);
    CHECK(tir_target_find("sm_86")->ptx == 71);
    CHECK(a89->ptx == 84 && a90a->ptx == 84);
    CHECK(!tir_target_has(a80, TIR_TARGET_F8_MMA) && tir_target_has(a89, TIR_TARGET_F8_MMA));
    CHECK(tir_target_has(a90, TIR_TARGET_TMA) && !tir_target_has(a89, TIR_TARGET_TMA));
    CHECK(tir_target_has(a90a, TIR_TARGET_WGMMA) && !tir_target_has(a90, TIR_TARGET_WGMMA));
    CHECK(a90a->arch_specific && !a90->arch_specific);
    CHECK(!tir_target_has(NULL, TIR_TARGET_CP_ASYNC));
    /* sharedMemPerBlockOptin */
    CHECK(tir_target_smem_optin("sm_80") == 163 * 1024);
    CHECK(tir_target_smem_optin("sm_86") == 99 * 1024 && tir_target_smem_optin("sm_89") == 99 * 1024);
    CHECK(tir_target_smem_optin("sm_90") == 232448 && tir_target_smem_optin("sm_90a") == 232448);
    CHECK(tir_target_smem_optin(NULL) == 163 * 1024 && tir_target_smem_optin("sm_75") == 163 * 1024);
}

static void test_for_device(void) {
    CHECK(!strcmp(for_device(9, 0), "sm_90a")); /* the 'a' arch on its own capability */
    CHECK(!strcmp(for_device(8, 0), "sm_80"));
    CHECK(!strcmp(for_device(8, 6), "sm_86"));
    CHECK(!strcmp(for_device(8, 9), "sm_89"));
    CHECK(!strcmp(for_device(8, 7), "sm_80"));  /* no entry of its own: its major's lowest */
    CHECK(!strcmp(for_device(9, 1), "sm_90"));  /* never the 'a' arch of another capability */
    CHECK(!strcmp(for_device(10, 0), "sm_90")); /* newer: the newest plain arch, as PTX */
    CHECK(!strcmp(for_device(12, 0), "sm_90"));
    CHECK(!strcmp(for_device(7, 5), ""));
    CHECK(!strcmp(for_device(7, 9), ""));
}

int main(void) {
    test_lookup();
    test_facts();
    test_for_device();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
