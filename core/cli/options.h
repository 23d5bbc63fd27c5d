// Command lines through CLI11: a command declares each option once on a CLI::App, with its type
// (the variable it fills), default (the variable's value, shown in --help), range (a check) and
// help text; --help is generated from those declarations.
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>

#include "switchyard/common/error.h"

namespace sy::cli {

// A bad command line: main prints "switchyard <command>: <message>" and exits 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A command's parser, named "switchyard <command>" in its help and errors; every option's
// default shows in --help.
class Command : public CLI::App {
 public:
  Command(const std::string& name, const std::string& what);
};

// Parses argv[2..] (argv[1] is the command). Returns false when --help was asked for (the help
// is printed on stdout); throws UsageError ("unknown option --x", or CLI11's message naming the
// option) on a bad command line.
bool parse(CLI::App& app, int argc, char** argv);

}  // namespace sy::cli
