/* Host data: element conversions and the deterministic fills behind `tilec run`'s
 * rand:/randn: arguments. */
#include "driver.h"

#include <math.h>
#include <string.h>

void tile_store_elements(tile_scalar t, void *dst, const double *src, size_t n) {
    TirScalar s = (TirScalar)t;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++) {
        double x = tir_round_to(s, src[i]);
        switch (s) {
        case TIR_I1: d[i] = x != 0; break;
        case TIR_I8:
        case TIR_U8: d[i] = (uint8_t)(int64_t)x; break;
        case TIR_I16:
        case TIR_U16: {
            uint16_t v = (uint16_t)(int64_t)x;
            memcpy(d + 2 * i, &v, 2);
            break;
        }
        case TIR_I32:
        case TIR_U32: {
            uint32_t v = (uint32_t)(int64_t)x;
            memcpy(d + 4 * i, &v, 4);
            break;
        }
        case TIR_I64: {
            int64_t v = (int64_t)x;
            memcpy(d + 8 * i, &v, 8);
            break;
        }
        case TIR_U64: {
            uint64_t v = x >= 0x1p63 ? (uint64_t)(x - 0x1p63) + (UINT64_C(1) << 63) : (uint64_t)(int64_t)x;
            memcpy(d + 8 * i, &v, 8);
            break;
        }
        /* x already holds a value of the narrow format, so these conversions are exact */
        case TIR_F16: {
            uint16_t v = tir_f32_to_f16((float)x);
            memcpy(d + 2 * i, &v, 2);
            break;
        }
        case TIR_BF16: {
            uint16_t v = tir_f32_to_bf16((float)x);
            memcpy(d + 2 * i, &v, 2);
            break;
        }
        case TIR_F32: {
            float v = (float)x;
            memcpy(d + 4 * i, &v, 4);
            break;
        }
        case TIR_F64: memcpy(d + 8 * i, &x, 8); break;
        case TIR_F8E4M3: d[i] = tir_f32_to_f8e4m3((float)x); break;
        case TIR_F8E5M2: d[i] = tir_f32_to_f8e5m2((float)x); break;
        default: break;
        }
    }
}

void tile_load_elements(tile_scalar t, double *dst, const void *src, size_t n) {
    const unsigned char *p = src;
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        uint32_t w;
        uint64_t q;
        float f;
        switch ((TirScalar)t) {
        case TIR_I1: dst[i] = p[i] != 0; break;
        case TIR_I8: dst[i] = (int8_t)p[i]; break;
        case TIR_U8: dst[i] = p[i]; break;
        case TIR_I16:
            memcpy(&h, p + 2 * i, 2);
            dst[i] = (int16_t)h;
            break;
        case TIR_U16:
            memcpy(&h, p + 2 * i, 2);
            dst[i] = h;
            break;
        case TIR_I32:
            memcpy(&w, p + 4 * i, 4);
            dst[i] = (int32_t)w;
            break;
        case TIR_U32:
            memcpy(&w, p + 4 * i, 4);
            dst[i] = w;
            break;
        case TIR_I64:
            memcpy(&q, p + 8 * i, 8);
            dst[i] = (double)(int64_t)q;
            break;
        case TIR_U64:
            memcpy(&q, p + 8 * i, 8);
            dst[i] = (double)q;
            break;
        case TIR_F16:
            memcpy(&h, p + 2 * i, 2);
            dst[i] = tir_f16_to_f32(h);
            break;
        case TIR_BF16:
            memcpy(&h, p + 2 * i, 2);
            dst[i] = tir_bf16_to_f32(h);
            break;
        case TIR_F32:
            memcpy(&f, p + 4 * i, 4);
            dst[i] = f;
            break;
        case TIR_F64: memcpy(&dst[i], p + 8 * i, 8); break;
        case TIR_F8E4M3: dst[i] = tir_f8e4m3_to_f32(p[i]); break;
        case TIR_F8E5M2: dst[i] = tir_f8e5m2_to_f32(p[i]); break;
        default: dst[i] = 0; break;
        }
    }
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *state) {
    return (double)(splitmix64(state) >> 11) * 0x1p-53;
}

tile_status tile_fill(tile_scalar t, void *dst, size_t n, tile_fill_kind kind, uint64_t seed) {
    if ((unsigned)t >= TILE_NSCALARS || (n && !dst))
        return TILE_ERR_INVALID;
    size_t esize = tile_scalar_size(t);
    if (kind == TILE_FILL_ZEROS) {
        memset(dst, 0, n * esize);
        return TILE_OK;
    }
    bool is_float = tile_scalar_is_float(t);
    if (kind == TILE_FILL_RANDN && !is_float)
        return TILE_ERR_INVALID;
    uint64_t state = seed;
    double chunk[256];
    for (size_t done = 0; done < n;) {
        size_t m = n - done < 256 ? n - done : 256;
        for (size_t i = 0; i < m; i++) {
            if (kind == TILE_FILL_RANDN) {
                double u1 = 1.0 - uniform01(&state), u2 = uniform01(&state);
                double r = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
                chunk[i] = r * cos(th);
                if (i + 1 < m)
                    chunk[++i] = r * sin(th);
            } else if (is_float) {
                chunk[i] = uniform01(&state);
            } else if (t == TILE_BOOL) {
                chunk[i] = (double)(splitmix64(&state) >> 63);
            } else {
                uint64_t w = splitmix64(&state) >> 60;
                chunk[i] = tile_scalar_is_signed(t) ? (double)w - 8.0 : (double)w;
            }
        }
        tile_store_elements(t, (char *)dst + done * esize, chunk, m);
        done += m;
    }
    return TILE_OK;
}
