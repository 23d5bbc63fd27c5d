// State shared by the translation units of the plugin boilerplate (not for plugins to use).
#pragma once

#include <string>

namespace sy::plugin::internal {

// Errors of calls without a backend handle (create, or a NULL handle), per thread as the ABI's
// last_error(NULL) promises. A fixed buffer: a thread_local with a destructor would keep the
// plugin mapped after dlclose until the thread exits.
const char* thread_error();
void set_thread_error(const char* message) noexcept;

// Stores `message` in a handle's slot without throwing (an allocation failure leaves it empty).
void set_error(std::string& slot, const char* message) noexcept;

}  // namespace sy::plugin::internal
