/*
 * The floor of the idle benchmark: a shared object with nothing in it, built
 * with the toolchain's defaults. Preloading it costs what the loader charges
 * for any preloaded library (open, map, relocate); what libjitstall.so costs
 * beyond it is jitstall's own.
 */
int jst_bench_empty_preload;
