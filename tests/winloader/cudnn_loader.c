/* The Windows cuDNN load check as Python's ctypes does it, for wine: os.add_dll_directory(dir) is AddDllDirectory,
   ctypes.CDLL(full path) is LoadLibraryExW with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR.
   Prints cudnnGetVersion(). Built with Debian's x86_64-w64-mingw32-gcc by tests/winfiles.py (wine_loader). */
#include <windows.h>
#include <stdio.h>
#include <wchar.h>
int wmain(int argc, wchar_t **argv) {
    if (argc < 3) { fwprintf(stderr, L"usage: loader DLL DIR\n"); return 2; }
    if (!AddDllDirectory(argv[2])) { fwprintf(stderr, L"AddDllDirectory failed: %lu\n", GetLastError()); return 3; }
    HMODULE h = LoadLibraryExW(argv[1], NULL, 0x00001000 | 0x00000100);
    if (!h) { fwprintf(stderr, L"LoadLibraryExW failed: error %lu\n", GetLastError()); return 4; }
    typedef size_t (*getv)(void);
    getv f = (getv)GetProcAddress(h, "cudnnGetVersion");
    if (!f) { fwprintf(stderr, L"no cudnnGetVersion\n"); return 5; }
    printf("%zu\n", f());
    return 0;
}
