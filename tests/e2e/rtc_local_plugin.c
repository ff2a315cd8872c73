/*
 * A plugin linked with the (fake) libnvrtc, which prog_rtc_local dlopens
 * RTLD_LOCAL: libnvrtc is then in the plugin's scope only, not in the global
 * one, yet the plugin's call binds to the preload's nvrtcCompileProgram (the
 * preload comes first in every scope), which must find the real function
 * among the loaded objects.
 */
#include <nvrtc.h>

int rtc_local_compile(void);

int rtc_local_compile(void)
{
    return (int)nvrtcCompileProgram((nvrtcProgram)0x1234, 0, NULL);
}
