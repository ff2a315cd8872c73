/*
 * The size of the first-launch set (interpose/launch.c), shared by the C code
 * and the x86-64 launch stubs (interpose/launch_x86_64.S): plain #defines, so
 * that the assembler can include it.
 */
#ifndef JST_INTERPOSE_LAUNCH_SEEN_H
#define JST_INTERPOSE_LAUNCH_SEEN_H

#define JST_SEEN_BITS 18
#define JST_SEEN_SIZE (1u << JST_SEEN_BITS)

#endif
