/* Prints its arguments as the Microsoft C runtime splits them (what a Windows program such as cudaswitch.exe or
   conda.exe receives), one per line between [ and ], UTF-8: tests/core/test_shellquote.py pastes lines into cmd.exe
   and reads them back. Built by mingw: x86_64-w64-mingw32-gcc -municode printargv.c */
#include <windows.h>
#include <stdio.h>

int wmain(int argc, wchar_t **argv) {
    char buf[8192];
    for (int i = 1; i < argc; i++) {
        int n = WideCharToMultiByte(CP_UTF8, 0, argv[i], -1, buf, sizeof buf, NULL, NULL);
        if (n <= 0) buf[0] = 0;
        printf("[%s]\n", buf);
    }
    return 0;
}
