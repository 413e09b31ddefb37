/*
 * A test-only stand-in for bcryptprimitives.dll, for running the Windows build under wine 8
 * (Debian 12), which lacks that DLL. Rust's standard library takes its random numbers from
 * bcryptprimitives!ProcessPrng (Windows 10 and later); this forwards to advapi32's RtlGenRandom
 * (SystemFunction036), which wine has. Never shipped: real Windows has the real DLL.
 *
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c
 */
#include <windows.h>

typedef BOOLEAN(WINAPI *RtlGenRandomFn)(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    static RtlGenRandomFn gen = NULL;
    if (gen == NULL) {
        HMODULE advapi = LoadLibraryA("advapi32.dll");
        if (advapi == NULL) {
            return FALSE;
        }
        gen = (RtlGenRandomFn)(void *)GetProcAddress(advapi, "SystemFunction036");
        if (gen == NULL) {
            return FALSE;
        }
    }
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!gen(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
