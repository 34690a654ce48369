// The dispatch: constraint kind -> propagator, for both execution models.

// ---- dispatch
// One PROPAGATOR(kind, call) line per constraint kind. The generated header defines
// USE_<kind>(code) as `code` for the kinds the kernel is built for and as nothing for the
// others, so a kernel specialised to a model holds only the propagators it runs (NVIDIA's
// compiler inlines everything: the full switch takes over a minute to build there).
#define PROPAGATOR(KEY, CALL) USE_##KEY(case KIND_##KEY: return CALL;)
#define REL3(NAME, REL) \
    PROPAGATOR(NAME, post_rel(x, REL, row[0], row[1])) \
    PROPAGATOR(NAME##_reif, reif_rel(x, REL, row[0], row[1], row[2], 0)) \
    PROPAGATOR(NAME##_imp, reif_rel(x, REL, row[0], row[1], row[2], 1))
#define SETREL(NAME, REL) \
    PROPAGATOR(NAME, prop_set_rel(x, row, REL, -1, 0)) \
    PROPAGATOR(NAME##_reif, prop_set_rel(x, row, REL, row[6], 0)) \
    PROPAGATOR(NAME##_imp, prop_set_rel(x, row, REL, row[6], 1))
#define LIN3(NAME, REL) \
    PROPAGATOR(NAME, post_lin(x, REL, row[0], row + 1, row + 2 + row[0], -1, 0, row[2 + 2 * row[0]])) \
    PROPAGATOR(NAME##_reif, reif_lin(x, REL, row, 0)) \
    PROPAGATOR(NAME##_imp, reif_lin(x, REL, row, 1))

#define FREL3(NAME, REL) \
    PROPAGATOR(NAME, post_frel(x, REL, row[0], row[1])) \
    PROPAGATOR(NAME##_reif, reif_frel(x, REL, row[0], row[1], row[2], 0)) \
    PROPAGATOR(NAME##_imp, reif_frel(x, REL, row[0], row[1], row[2], 1))
#define FLIN3(NAME, REL) \
    PROPAGATOR(NAME, prop_flin(x, row, REL, 0, 0)) \
    PROPAGATOR(NAME##_reif, prop_flin(x, row, REL, 1, 0)) \
    PROPAGATOR(NAME##_imp, prop_flin(x, row, REL, 1, 1))

bool propagate_one(Ctx *x, int c) {
    __global const int *row = &M_CD(x, M_COFF(x, c));
    switch (M_CKIND(x, c)) {
    REL3(int_eq, R_EQ)
    REL3(int_ne, R_NE)
    REL3(int_le, R_LE)
    REL3(int_lt, R_LT)
    REL3(bool_eq, R_EQ)
    REL3(bool_le, R_LE)
    REL3(bool_lt, R_LT)
    LIN3(int_lin_eq, L_EQ)
    LIN3(int_lin_ne, L_NE)
    LIN3(int_lin_le, L_LE)
    PROPAGATOR(int_plus, prop_int_plus(x, row[0], row[1], row[2]))
    PROPAGATOR(int_times, prop_times(x, row[0], row[1], row[2]))
    PROPAGATOR(int_div, prop_div(x, row[0], row[1], row[2]))
    PROPAGATOR(int_mod, prop_mod(x, row[0], row[1], row[2]))
    PROPAGATOR(int_min, prop_minmax(x, row[0], row[1], row[2], 0))
    PROPAGATOR(int_max, prop_minmax(x, row[0], row[1], row[2], 1))
    PROPAGATOR(int_pow, prop_pow(x, row[0], row[1], row[2]))
    PROPAGATOR(int_abs, prop_abs(x, row[0], row[1]))
    PROPAGATOR(array_int_element, prop_element_const(x, row))
    PROPAGATOR(array_bool_element, prop_element_const(x, row))
    PROPAGATOR(array_var_int_element, prop_element_var(x, row))
    PROPAGATOR(array_var_bool_element, prop_element_var(x, row))
    PROPAGATOR(array_int_maximum, prop_array_extremum(x, row, 1))
    PROPAGATOR(array_int_minimum, prop_array_extremum(x, row, 0))
    PROPAGATOR(set_in, post_in_set(x, row[0], row + 1))
    PROPAGATOR(set_in_reif, reif_in_set(x, row, 0))
    PROPAGATOR(set_in_imp, reif_in_set(x, row, 1))
    PROPAGATOR(fzn_all_different_int, prop_alldiff(x, row, 0, 1))
    PROPAGATOR(fzn_table_int, prop_table(x, row))
    PROPAGATOR(fzn_table_bool, prop_table(x, row))
    PROPAGATOR(fzn_gpu_circuit, prop_circuit(x, row))
    PROPAGATOR(fzn_gpu_subcircuit, prop_subcircuit(x, row))
    PROPAGATOR(fzn_diffn, prop_diffn(x, row))
    PROPAGATOR(fzn_gpu_inverse, prop_inverse(x, row))
    PROPAGATOR(fzn_gpu_regular, prop_regular(x, row))
    PROPAGATOR(fzn_global_cardinality, prop_gcc(x, row, true, false))
    PROPAGATOR(fzn_global_cardinality_closed, prop_gcc(x, row, true, true))
    PROPAGATOR(fzn_global_cardinality_low_up, prop_gcc(x, row, false, false))
    PROPAGATOR(fzn_global_cardinality_low_up_closed, prop_gcc(x, row, false, true))
    PROPAGATOR(fzn_alldifferent_except, prop_alldiff_except(x, row))
    PROPAGATOR(fzn_cumulative, prop_cumulative(x, row))
    PROPAGATOR(fzn_count_eq, prop_count_eq(x, row))
    PROPAGATOR(fzn_among, prop_among(x, row))
    PROPAGATOR(fzn_lex_lesseq_int, prop_lex(x, row, false))
    PROPAGATOR(fzn_lex_lesseq_bool, prop_lex(x, row, false))
    PROPAGATOR(fzn_lex_less_int, prop_lex(x, row, true))
    PROPAGATOR(fzn_lex_less_bool, prop_lex(x, row, true))
    PROPAGATOR(fzn_nvalue, prop_nvalue(x, row))
    PROPAGATOR(fzn_increasing_int, prop_monotone(x, row, false))
    PROPAGATOR(fzn_increasing_bool, prop_monotone(x, row, false))
    PROPAGATOR(fzn_decreasing_int, prop_monotone(x, row, true))
    PROPAGATOR(fzn_decreasing_bool, prop_monotone(x, row, true))
    PROPAGATOR(fzn_gpu_bin_packing_load, prop_bin_packing_load(x, row))
    PROPAGATOR(bool2int, post_eq(x, row[0], row[1]))
    PROPAGATOR(bool_not, post_rel(x, R_NE, row[0], row[1]))
    PROPAGATOR(bool_ne, post_rel(x, R_NE, row[0], row[1]))
    PROPAGATOR(bool_xor_2, post_rel(x, R_NE, row[0], row[1]))
    PROPAGATOR(bool_ne_reif, reif_rel(x, R_NE, row[0], row[1], row[2], 0))
    PROPAGATOR(bool_and, prop_bool_and(x, row[0], row[1], row[2], 0))
    PROPAGATOR(bool_and_imp, prop_bool_and(x, row[0], row[1], row[2], 1))
    PROPAGATOR(bool_or, prop_bool_or(x, row[0], row[1], row[2], 0))
    PROPAGATOR(bool_or_imp, prop_bool_or(x, row[0], row[1], row[2], 1))
    PROPAGATOR(bool_xor, prop_bool_xor(x, row[0], row[1], row[2], 0))
    PROPAGATOR(bool_xor_imp, prop_bool_xor(x, row[0], row[1], row[2], 1))
    PROPAGATOR(array_bool_and, prop_array_bool(x, row, 1, 0))
    PROPAGATOR(array_bool_and_imp, prop_array_bool(x, row, 1, 1))
    PROPAGATOR(array_bool_or, prop_array_bool(x, row, 0, 0))
    PROPAGATOR(array_bool_or_imp, prop_array_bool(x, row, 0, 1))
    PROPAGATOR(array_bool_xor, prop_array_bool_xor(x, row))
    PROPAGATOR(bool_clause, prop_clause(x, row, 0))
    PROPAGATOR(bool_clause_reif, prop_clause(x, row, 1))
    PROPAGATOR(bool_clause_imp, prop_clause(x, row, 2))
    PROPAGATOR(bool_lin_eq, post_lin(x, L_EQ, row[0], row + 1, row + 2 + row[0], row[2 + 2 * row[0]], -1, 0))
    PROPAGATOR(bool_lin_le, post_lin(x, L_LE, row[0], row + 1, row + 2 + row[0], -1, 0, row[2 + 2 * row[0]]))
    PROPAGATOR(set_card, prop_set_card(x, row))
    PROPAGATOR(set_in_var, prop_set_in(x, row, row + 1, -1, 0))
    PROPAGATOR(set_in_reif_var, prop_set_in(x, row, row + 1, row[4], 0))
    PROPAGATOR(set_in_imp_var, prop_set_in(x, row, row + 1, row[4], 1))
    SETREL(set_eq, SR_EQ)
    SETREL(set_ne, SR_NE)
    SETREL(set_subset, SR_SUBSET)
    SETREL(set_superset, SR_SUPERSET)
    SETREL(set_le, SR_LE)
    SETREL(set_lt, SR_LT)
    PROPAGATOR(set_union, prop_set_op(x, row, SO_UNION))
    PROPAGATOR(set_intersect, prop_set_op(x, row, SO_INTERSECT))
    PROPAGATOR(set_diff, prop_set_op(x, row, SO_DIFF))
    PROPAGATOR(set_symdiff, prop_set_op(x, row, SO_SYMDIFF))
    PROPAGATOR(array_set_element, prop_set_element_const(x, row))
    PROPAGATOR(array_var_set_element, prop_set_element_var(x, row))
#ifdef FZN_FLOATS
    FREL3(float_eq, FR_EQ)
    FREL3(float_ne, FR_NE)
    FREL3(float_le, FR_LE)
    FREL3(float_lt, FR_LT)
    FLIN3(float_lin_eq, FL_EQ)
    FLIN3(float_lin_ne, FL_NE)
    FLIN3(float_lin_le, FL_LE)
    FLIN3(float_lin_lt, FL_LT)
    PROPAGATOR(float_plus, prop_fplus(x, row[0], row[1], row[2]))
    PROPAGATOR(float_times, prop_ftimes(x, row[0], row[1], row[2]))
    PROPAGATOR(float_div, prop_fdiv(x, row[0], row[1], row[2]))
    PROPAGATOR(float_min, prop_fminmax(x, row[0], row[1], row[2], 0))
    PROPAGATOR(float_max, prop_fminmax(x, row[0], row[1], row[2], 1))
    PROPAGATOR(float_pow, prop_fpow(x, row[0], row[1], row[2]))
    PROPAGATOR(float_abs, prop_fabs(x, row[0], row[1]))
    PROPAGATOR(float_sqrt, prop_fsqrt_exact(x, row[0], row[1]))
    PROPAGATOR(float_exp, prop_fexp(x, row[0], row[1]))
    PROPAGATOR(float_ln, prop_fln(x, row[0], row[1]))
    PROPAGATOR(float_log10, prop_flog10(x, row[0], row[1]))
    PROPAGATOR(float_log2, prop_flog2(x, row[0], row[1]))
    PROPAGATOR(float_sin, prop_ftrig(x, row[0], row[1], 0))
    PROPAGATOR(float_cos, prop_ftrig(x, row[0], row[1], 1))
    PROPAGATOR(float_tan, prop_ftrig(x, row[0], row[1], 2))
    PROPAGATOR(float_asin, prop_fasin(x, row[0], row[1]))
    PROPAGATOR(float_acos, prop_facos(x, row[0], row[1]))
    PROPAGATOR(float_atan, prop_fatan(x, row[0], row[1]))
    PROPAGATOR(float_sinh, prop_fsinh(x, row[0], row[1]))
    PROPAGATOR(float_cosh, prop_fcosh(x, row[0], row[1]))
    PROPAGATOR(float_tanh, prop_ftanh(x, row[0], row[1]))
    PROPAGATOR(float_asinh, prop_fasinh(x, row[0], row[1]))
    PROPAGATOR(float_acosh, prop_facosh(x, row[0], row[1]))
    PROPAGATOR(float_atanh, prop_fatanh(x, row[0], row[1]))
    PROPAGATOR(int2float, prop_int2float(x, row[0], row[1]))
    PROPAGATOR(float_in, prop_fin(x, row, 0, 0))
    PROPAGATOR(float_in_reif, prop_fin(x, row, 1, 0))
    PROPAGATOR(float_in_imp, prop_fin(x, row, 1, 1))
    PROPAGATOR(float_dom, prop_fdom(x, row[0], row[1], row + 2))
    PROPAGATOR(array_float_element, prop_felement_const(x, row))
    PROPAGATOR(array_var_float_element, prop_felement_var(x, row))
    PROPAGATOR(array_float_maximum, prop_fextremum(x, row, 1))
    PROPAGATOR(array_float_minimum, prop_fextremum(x, row, 0))
#endif
    default:
        return false;   // unreachable: the host builds a kernel for every kind its model holds
    }
}

#ifdef FZN_GROUP
// Part p of `parts` of constraint c, the parts of one constraint running side by side on a
// group's work-items (registry.SHARED_BY_VARIABLE lists the kinds below; parts <= 1: the
// whole propagator, as for a row the group may walk together but that was woken short).
bool propagate_part(Ctx *x, int c, int p, int parts) {
    if (parts <= 1) return propagate_one(x, c);
    __global const int *row = &M_CD(x, M_COFF(x, c));
    switch (M_CKIND(x, c)) {
    PROPAGATOR(fzn_all_different_int, prop_alldiff(x, row, p, parts))
    default:
        return false;   // unreachable: only those kinds get parts (engine/pack.py)
    }
}
#endif
