package main

// int80 makes an i386 system call (int $0x80) from a 64-bit process.
func int80(trap, a1, a2, a3 uintptr) uintptr
