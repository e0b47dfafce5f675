/* Without libFuzzer: runs a fuzz target's LLVMFuzzerTestOneInput once on every file
 * named, or in the folders named (the seed corpus and the regression inputs), so that
 * a plain build's CTest replays them (fuzz.*.corpus).  Exit 0 when every input ran;
 * a bug crashes, as under the fuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap)
            buf = realloc(buf, cap *= 2);
    fclose(f);
    /* a copy of exactly n bytes, so that ASan sees a read past the input */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    int bad = 0, runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(argv[i]);
            runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        char **names = NULL;
        size_t nn = 0;
        while (d && (e = readdir(d)))
            if (e->d_name[0] != '.') {
                names = realloc(names, (nn + 1) * sizeof *names);
                names[nn++] = strdup(e->d_name);
            }
        if (d)
            closedir(d);
        qsort(names, nn, sizeof *names, by_name);
        for (size_t j = 0; j < nn; j++) {
            size_t len = strlen(argv[i]) + strlen(names[j]) + 2;
            char *path = malloc(len);
            snprintf(path, len, "%s/%s", argv[i], names[j]);
            bad |= run_file(path);
            runs++;
            free(path);
            free(names[j]);
        }
        free(names);
    }
    printf("replay: %d inputs\n", runs);
    return bad || runs == 0;
}
