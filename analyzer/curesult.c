/*
 * The names of the CUDA driver's results (CUresult, cuda.h's enum
 * cudaError_enum): "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" for 222. One table for
 * every place the analyzer shows a result. The preload records numbers only.
 */
#include <cuda.h>
#include <stddef.h>
#include <stdio.h>
#include "curesult.h"

_Static_assert(CUDA_ERROR_UNSUPPORTED_PTX_VERSION == JST_CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
               "cuda.h and curesult.h disagree");

#define R(name) {name, #name},
static const struct {
    int value;
    const char *name;
} results[] = {
    R(CUDA_SUCCESS) R(CUDA_ERROR_INVALID_VALUE) R(CUDA_ERROR_OUT_OF_MEMORY) R(
        CUDA_ERROR_NOT_INITIALIZED) R(CUDA_ERROR_DEINITIALIZED) R(CUDA_ERROR_PROFILER_DISABLED)
        R(CUDA_ERROR_PROFILER_NOT_INITIALIZED) R(CUDA_ERROR_PROFILER_ALREADY_STARTED) R(
            CUDA_ERROR_PROFILER_ALREADY_STOPPED) R(CUDA_ERROR_STUB_LIBRARY)
            R(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER) R(CUDA_ERROR_DEVICE_UNAVAILABLE) R(
                CUDA_ERROR_NO_DEVICE) R(CUDA_ERROR_INVALID_DEVICE) R(CUDA_ERROR_DEVICE_NOT_LICENSED)
                R(CUDA_ERROR_INVALID_IMAGE) R(CUDA_ERROR_INVALID_CONTEXT) R(
                    CUDA_ERROR_CONTEXT_ALREADY_CURRENT) R(CUDA_ERROR_MAP_FAILED)
                    R(CUDA_ERROR_UNMAP_FAILED) R(CUDA_ERROR_ARRAY_IS_MAPPED) R(
                        CUDA_ERROR_ALREADY_MAPPED) R(CUDA_ERROR_NO_BINARY_FOR_GPU)
                        R(CUDA_ERROR_ALREADY_ACQUIRED) R(CUDA_ERROR_NOT_MAPPED) R(
                            CUDA_ERROR_NOT_MAPPED_AS_ARRAY) R(CUDA_ERROR_NOT_MAPPED_AS_POINTER)
                            R(CUDA_ERROR_ECC_UNCORRECTABLE) R(CUDA_ERROR_UNSUPPORTED_LIMIT) R(
                                CUDA_ERROR_CONTEXT_ALREADY_IN_USE) R(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED)
                                R(CUDA_ERROR_INVALID_PTX) R(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT) R(
                                    CUDA_ERROR_NVLINK_UNCORRECTABLE) R(CUDA_ERROR_JIT_COMPILER_NOT_FOUND)
                                    R(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) R(
                                        CUDA_ERROR_JIT_COMPILATION_DISABLED) R(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY)
                                        R(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC) R(CUDA_ERROR_CONTAINED) R(
                                            CUDA_ERROR_INVALID_SOURCE) R(CUDA_ERROR_FILE_NOT_FOUND)
                                            R(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND) R(
                                                CUDA_ERROR_SHARED_OBJECT_INIT_FAILED)
                                                R(CUDA_ERROR_OPERATING_SYSTEM) R(
                                                    CUDA_ERROR_INVALID_HANDLE) R(CUDA_ERROR_ILLEGAL_STATE)
                                                    R(
                                                        CUDA_ERROR_LOSSY_QUERY) R(CUDA_ERROR_NOT_FOUND)
                                                        R(
                                                            CUDA_ERROR_NOT_READY) R(CUDA_ERROR_ILLEGAL_ADDRESS)
                                                            R(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) R(
                                                                CUDA_ERROR_LAUNCH_TIMEOUT) R(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING)
                                                                R(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) R(
                                                                    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) R(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE)
                                                                    R(CUDA_ERROR_CONTEXT_IS_DESTROYED) R(
                                                                        CUDA_ERROR_ASSERT) R(CUDA_ERROR_TOO_MANY_PEERS)
                                                                        R(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) R(
                                                                            CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
                                                                            R(CUDA_ERROR_HARDWARE_STACK_ERROR) R(
                                                                                CUDA_ERROR_ILLEGAL_INSTRUCTION)
                                                                                R(CUDA_ERROR_MISALIGNED_ADDRESS) R(
                                                                                    CUDA_ERROR_INVALID_ADDRESS_SPACE)
                                                                                    R(CUDA_ERROR_INVALID_PC) R(
                                                                                        CUDA_ERROR_LAUNCH_FAILED) R(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
                                                                                        R(CUDA_ERROR_TENSOR_MEMORY_LEAK) R(CUDA_ERROR_NOT_PERMITTED) R(CUDA_ERROR_NOT_SUPPORTED) R(CUDA_ERROR_SYSTEM_NOT_READY) R(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) R(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) R(CUDA_ERROR_MPS_CONNECTION_FAILED) R(CUDA_ERROR_MPS_RPC_FAILURE) R(CUDA_ERROR_MPS_SERVER_NOT_READY) R(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED) R(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED) R(CUDA_ERROR_MPS_CLIENT_TERMINATED) R(CUDA_ERROR_CDP_NOT_SUPPORTED) R(CUDA_ERROR_CDP_VERSION_MISMATCH) R(
                                                                                            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) R(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
                                                                                            R(CUDA_ERROR_STREAM_CAPTURE_MERGE) R(
                                                                                                CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)
                                                                                                R(CUDA_ERROR_STREAM_CAPTURE_UNJOINED) R(
                                                                                                    CUDA_ERROR_STREAM_CAPTURE_ISOLATION)
                                                                                                    R(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) R(
                                                                                                        CUDA_ERROR_CAPTURED_EVENT) R(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
                                                                                                        R(CUDA_ERROR_TIMEOUT) R(
                                                                                                            CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
                                                                                                            R(CUDA_ERROR_EXTERNAL_DEVICE) R(
                                                                                                                CUDA_ERROR_INVALID_CLUSTER_SIZE)
                                                                                                                R(CUDA_ERROR_FUNCTION_NOT_LOADED)
                                                                                                                    R(CUDA_ERROR_INVALID_RESOURCE_TYPE)
                                                                                                                        R(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)
                                                                                                                            R(CUDA_ERROR_KEY_ROTATION)
                                                                                                                                R(CUDA_ERROR_UNKNOWN)};
#undef R

const char *jst_curesult_name(long long r)
{
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
        if (results[i].value == r)
            return results[i].name;
    return NULL;
}

const char *jst_curesult_str(char *buf, size_t n, long long r)
{
    const char *name = jst_curesult_name(r);
    if (name)
        snprintf(buf, n, "%s (%lld)", name, r);
    else
        snprintf(buf, n, "CUresult %lld", r);
    return buf;
}
