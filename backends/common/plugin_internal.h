// State shared by the translation units of the plugin boilerplate (not for plugins to use).
#pragma once

#include <string>

namespace sy::plugin::internal {

// Errors of calls without a backend handle (create, or a NULL handle): per thread, as the ABI's
// last_error(NULL) promises.
std::string& thread_error();

// Stores `message` without throwing (an allocation failure keeps a fixed text).
void set_error(std::string& slot, const char* message) noexcept;

}  // namespace sy::plugin::internal
