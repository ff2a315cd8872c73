/* Which frames of a stack are the caller's: jitstall's, the driver's, the CUDA
 * runtime's and Python's own frames are plumbing (symclass.h), and the call
 * site is the first frame that is not; with the words a frame is shown in. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "symbolize.h"
#include "symclass.h"

const char *jst_sym_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* libcuda* (the driver, the simulated one, libcudart, libcudadebugger) and jitstall. */
int jst_sym_internal_path(const char *path)
{
    const char *b = jst_sym_base(path);
    return strncmp(b, "libcuda", 7) == 0 || strncmp(b, "libjitstall", 11) == 0 ||
           strncmp(b, "libnvidia-ptxjitcompiler", 24) == 0;
}

int jst_sym_python_path(const char *path)
{
    const char *b = jst_sym_base(path);
    return strncmp(b, "libpython", 9) == 0 ||
           (strncmp(b, "python", 6) == 0 && (b[6] == '\0' || isdigit((unsigned char)b[6])));
}

/* Native code that runs Python's machinery rather than the user's own code:
 * ctypes and libffi, extension modules (Cython, pybind11: "*.cpython-*.so",
 * "*.abi3.so"), and any library of an installed package (site-packages,
 * dist-packages, lib-dynload). The interpreter itself is jst_sym_python_path. */
int jst_sym_pyglue_path(const char *path)
{
    const char *b = jst_sym_base(path);
    size_t n = strlen(b);
    return strncmp(b, "_ctypes", 7) == 0 || strncmp(b, "libffi", 6) == 0 ||
           strstr(b, ".cpython-") != NULL || (n > 8 && strcmp(b + n - 8, ".abi3.so") == 0) ||
           strstr(path, "/site-packages/") != NULL || strstr(path, "/dist-packages/") != NULL ||
           strstr(path, "/lib-dynload/") != NULL;
}

/* A Python file that is not the user's: the standard library (under
 * .../lib/python3.N/ or frozen into the interpreter) or an installed package
 * (site-packages, dist-packages). */
int jst_sym_pylib_file(const char *file)
{
    return strncmp(file, "<frozen ", 8) == 0 || strstr(file, "/site-packages/") != NULL ||
           strstr(file, "/dist-packages/") != NULL || strstr(file, "/lib/python3") != NULL ||
           strstr(file, "/lib64/python3") != NULL;
}

/* A file of Python's standard library (not an installed package): the
 * plumbing between a framework and what it runs (subprocess.py's wait). */
int jst_sym_pystd_file(const char *file)
{
    if (strncmp(file, "<frozen ", 8) == 0)
        return 1;
    if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
        return 0;
    return strstr(file, "/lib/python3") != NULL || strstr(file, "/lib64/python3") != NULL;
}

/* Frames of the CUDA runtime linked statically into the program (nvcc's
 * default; CUDA 13 names its functions libcudart_static_<hash>), the launch
 * helpers of the toolkit's headers (__cudaLaunchKernel_helper, the
 * cudaLaunchKernel<T> template) and the stubs nvcc generates
 * (__device_stub_*): plumbing, not the caller. */
int jst_sym_internal_func(const char *func, const char *file)
{
    if (strncmp(func, "cudart::", 8) == 0 || strncmp(func, "__cudart", 8) == 0 ||
        strncmp(func, "libcudart_static_", 17) == 0 || strncmp(func, "__device_stub_", 14) == 0 ||
        strncmp(func, "__cuda", 6) == 0)
        return 1;
    /* cudaMalloc, or "cudaError cudaLaunchKernel<char>(...)" from cuda_runtime.h */
    if (strncmp(func, "cuda", 4) == 0 && isupper((unsigned char)func[4]))
        return file[0] == '\0' || strstr(file, "/cuda_runtime") != NULL ||
               strstr(file, "/crt/") != NULL;
    return 0;
}

/* nvcc turns kern<<<...>>>(args) into a call of a host function named like
 * the kernel (declared at the __global__ line), which calls
 * __device_stub_<mangled>: that host function is plumbing too, so that the
 * call site is the line with the launch. */
void jst_sym_mark_kernel_stubs(struct jst_frame *f, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (strncmp(f[i - 1].func, "__device_stub_", 14) == 0 &&
            strncmp(f[i].func, "__device_stub_", 14) != 0)
            f[i].internal = 1;
}

int jst_call_site(const struct jst_frame *f, size_t n)
{
    size_t i = 0;
    while (i < n && f[i].internal)
        i++;
    if (i == n)
        return -1;
    if (!f[i].pyglue && !f[i].python)
        return (int)i;
    for (size_t j = i; j < n; j++)
        if (f[j].python && !f[j].pylib)
            return (int)j;
    for (size_t j = i; j < n; j++)
        if (f[j].python)
            return (int)j;
    return (int)i;
}

const char *jst_frame_str(const struct jst_frame *f, char *buf, size_t n)
{
    if (!n)
        return buf;
    if (f->python) {
        if (f->line)
            snprintf(buf, n, "%s (%s:%u) in Python", f->func, f->file, f->line);
        else
            snprintf(buf, n, "%s (%s) in Python", f->func, f->file);
    } else if (!f->module) {
        snprintf(buf, n, "0x%" PRIx64 " (%s)", f->ip, f->note ? f->note : SYM_NOTE_UNKNOWN);
    } else if (f->func[0] && f->file[0]) {
        snprintf(buf, n, "%s (%s:%u) in %s", f->func, f->file, f->line, f->module);
    } else if (f->func[0]) {
        snprintf(buf, n, "%s in %s", f->func, f->module);
    } else if (f->file[0]) {
        snprintf(buf, n, "%s+0x%" PRIx64 " (%s:%u)", f->module, f->offset, f->file, f->line);
    } else {
        snprintf(buf, n, "%s+0x%" PRIx64 " (%s)", f->module, f->offset,
                 f->note ? f->note : SYM_NOTE_NOSYMS);
    }
    return buf;
}
