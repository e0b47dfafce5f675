/* The f32 math builtins as the GPU computes them (ir/fmath.c; backend/lower_math.c emits
 * the same steps).  The interpreter calls these; tests/math measures them against libm. */
#ifndef TIR_TMATH_H
#define TIR_TMATH_H

#include "ir.h"

/* accurate (the default) */
float tir_m_exp(float x);
float tir_m_exp2(float x);
float tir_m_log(float x);
float tir_m_log2(float x);
float tir_m_tanh(float x);
float tir_m_sigmoid(float x);
float tir_m_erf(float x);
float tir_m_rsqrt(float x);
float tir_m_sin(float x);
float tir_m_cos(float x);
/* fast mode (fast=true): exp, exp2, tanh, sigmoid, erf */
float tir_m_fexp(float x);
float tir_m_fexp2(float x);
float tir_m_ftanh(float x);
float tir_m_fsigmoid(float x);
float tir_m_ferf(float x);

/* The f32 function of a math opcode in the given mode, or NULL where libm's correctly
 * rounded one is what the GPU runs too (sqrt, floor, ceil, abs) or the op is not math. */
float (*tir_m_f32(int code, bool fast))(float);

/* f64, as the GPU computes them */
double tir_m_exp64(double x);
double tir_m_exp2_64(double x);
double tir_m_log64(double x);
double tir_m_log2_64(double x);
double tir_m_tanh64(double x);
double tir_m_sigmoid64(double x);
double tir_m_erf64(double x);
double tir_m_rsqrt64(double x);
double tir_m_sin64(double x);
double tir_m_cos64(double x);
double (*tir_m_f64(int code))(double);

#endif
