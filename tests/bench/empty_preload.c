/*
 * The floors of the idle benchmark: a shared object with nothing in it,
 * built twice (tests/bench/CMakeLists.txt): with the toolchain's defaults,
 * and as bare as the loader takes it. Preloading them costs what the loader
 * charges for any preloaded library (open, map, relocate, protect).
 */
int jst_bench_empty_preload;
