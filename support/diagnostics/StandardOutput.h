// StandardOutput — standard output as an output like any other: where it cannot be written
// (`> /dev/full`, a closed descriptor), the command says so and exits kExitIoError instead of
// exiting 0 with the data lost. (A pipe whose reader is gone ends the process by SIGPIPE, as
// for any command.) Used by both drivers (schedc,
// schedc-llvm) and by compiled programs (rt/Main.cpp).
#pragma once

namespace schedc {

// At the start of a process: a closed standard output or error gets /dev/null opened read-only
// in its place, so no file the process opens later takes the descriptor (writing a report
// into a user's -o file), and every write to it fails and is seen by finishStandardOutput.
void guardStandardStreams();

// At the end: flushes std::cout and stdout. Where anything written to them was lost, prints
// `PROGRAM: error: cannot write to standard output: REASON` on standard error and returns
// kExitIoError in place of a success or a verdict (0 or 1); otherwise returns `exitCode`.
int finishStandardOutput(int exitCode, const char *program);

} // namespace schedc
