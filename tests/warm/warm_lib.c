/*
 * A shared library that carries a CUDA fatbin (tests/fixtures/ptx75.fatbin,
 * PTX for compute_75 only) in an allocated .nv_fatbin section, as nvcc's
 * output does: the library case of `jitstall warm`.
 */
__asm__(".section .nv_fatbin,\"a\"\n"
        ".balign 8\n"
        ".incbin \"" JST_WARM_FATBIN "\"\n"
        ".previous\n");

int jst_warm_lib_marker(void)
{
    return 1;
}
