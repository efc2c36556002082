// Outside kernels as backends: any program behind a command ("exec:COMMAND"), or any
// callable (the Python package wraps Python kernels with it). Both are judged by the
// whole suite exactly like the built-in backends.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"

namespace ixo {

// Splits a command line into words like a POSIX shell does (blanks separate words;
// '...' is literal; "..." keeps blanks and honours \" \\ \$ \`; a backslash outside
// quotes escapes the next character), without expanding anything. Throws
// InputError(field) for an unterminated quote or an empty command.
std::vector<std::string> split_command(const std::string& command, const std::string& field = "--backend");

// "exec:COMMAND": for each case, writes the case directory into a fresh temporary folder
// and runs `COMMAND CASE_DIR OUT_DIR` (no shell). Exit 0: OUT_DIR/topk_idx.npy (int32
// [Hq,R,topk]) and optionally OUT_DIR/scores.npy are judged. Exit 77: Unsupported.
// Anything else, a timeout, or missing/malformed outputs: KernelFailure with the tail of
// the command's stderr. The temporary folder is removed afterwards.
std::unique_ptr<Backend> make_exec_backend(const std::string& command, double timeout_s);

// A kernel given as a function (Case -> Observed). It may throw Unsupported or
// KernelFailure; it is not in-tree (no poison contract, RunOptions ignored).
std::unique_ptr<Backend> make_callable_backend(std::string name, std::function<Observed(const Case&)> kernel);

}  // namespace ixo
